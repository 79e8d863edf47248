/* SPDX-License-Identifier: MIT */
/* What the C test programs share: CHECK(), a whole-file reader and the closing
 * "N passed, N failed" line. Header-only; each program includes it once. */
#ifndef HOTSWAP_TESTS_CHECK_H
#define HOTSWAP_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond)                                                                 \
  do {                                                                              \
    ++check_count;                                                                  \
    if (!(cond)) {                                                                  \
      ++check_failures;                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);     \
    }                                                                               \
  } while (0)

/* The whole file at `path` in a malloc'd buffer (free() it), its size in *size;
 * NULL if it cannot be read or is empty. */
static inline unsigned char *check_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  unsigned char *bytes = NULL;
  long n = -1;
  *size = 0;
  if (f == NULL)
    return NULL;
  if (fseek(f, 0, SEEK_END) == 0)
    n = ftell(f);
  if (n > 0 && fseek(f, 0, SEEK_SET) == 0)
    bytes = (unsigned char *)malloc((size_t)n);
  if (bytes != NULL && fread(bytes, 1, (size_t)n, f) != (size_t)n) {
    free(bytes);
    bytes = NULL;
  }
  fclose(f);
  if (bytes != NULL)
    *size = (size_t)n;
  return bytes;
}

/* Prints the closing line (`what: N passed, N failed`, `what` one word); the exit status. */
static inline int check_finish(const char *what) {
  printf("%s: %d passed, %d failed\n", what, check_count - check_failures, check_failures);
  return check_failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif /* HOTSWAP_TESTS_CHECK_H */
