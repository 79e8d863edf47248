/* Every rewriter outcome through the C API (hotswap_retarget_code_object), one
 * mode per process because the rewriter is resolved once per process:
 *
 *   retarget_test MODE GFX1250_OBJECT [EXPECTED_OUTPUT]
 *
 * MODE is a test-rewriter mode (change, unchanged, error, stub, empty, garbage,
 * missing, prototype; the library comes from HSA_HOTSWAP_REWRITER), "comgr"
 * (HSA_HOTSWAP_REWRITER unset: Debian's COMGR 2.4 has no rewriter and no
 * rocjitsu translator is installed, so the native rewriter is used; the object
 * needs no change), "relative" or "absent" (HSA_HOTSWAP_REWRITER is not an
 * absolute path, or names no file: no rewriter at all), "native-fixed" (the
 * native rewriter on an object whose sites it fixes: the output must be
 * EXPECTED_OUTPUT byte for byte, and rewriting it again changes nothing) or
 * "native-refused" (the native rewriter on an object that needs code growth). */
#include <hotswap/hotswap.h>

#include "hotswap_check.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define SOURCE_ISA "amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific+"
#define TARGET_ISA "amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific-"

/* The test rewriter's call counter (same library instance as the one the
 * hotswap library loaded); -1 when there is none. */
static int rewriter_calls(void) {
  const char *path = getenv("HSA_HOTSWAP_REWRITER");
  if (path == NULL || path[0] != '/')
    return -1;
  void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (lib == NULL)
    return -1;
  unsigned (*calls)(void) = (unsigned (*)(void))dlsym(lib, "test_rewriter_calls");
  int n = calls != NULL ? (int)calls() : -1;
  dlclose(lib);
  return n;
}

static hotswap_status_t retarget(const unsigned char *elf, size_t size, void **out,
                                 size_t *out_size) {
  *out = (void *)0x1; /* must be overwritten */
  *out_size = 0;
  return hotswap_retarget_code_object(elf, size, SOURCE_ISA, TARGET_ISA, out, out_size);
}

/* A failure: the status, and out and out_size still the input. */
static void expect_failure(const unsigned char *elf, size_t size, hotswap_status_t expected) {
  void *out;
  size_t out_size;
  hotswap_status_t status = retarget(elf, size, &out, &out_size);
  if (status != expected)
    fprintf(stderr, "status %s, expected %s\n", hotswap_status_string(status),
            hotswap_status_string(expected));
  CHECK(status == expected);
  CHECK(out == elf);
  CHECK(out_size == size);
}

/* Threads that all make their first call at once: the rewriter must be resolved
 * (and probed) exactly once. */
#define THREADS 8
static pthread_barrier_t start_line;
static const unsigned char *shared_elf;
static size_t shared_size;

static void *concurrent_retarget(void *arg) {
  (void)arg;
  void *out;
  size_t out_size;
  pthread_barrier_wait(&start_line);
  hotswap_status_t status = hotswap_retarget_code_object(shared_elf, shared_size, SOURCE_ISA,
                                                         TARGET_ISA, &out, &out_size);
  if (status == HOTSWAP_STATUS_SUCCESS)
    free(out);
  return (void *)(size_t)status;
}

/* THREADS first calls at once; each must end in `expected`. */
static void race_first_calls(const unsigned char *elf, size_t size, hotswap_status_t expected) {
  shared_elf = elf;
  shared_size = size;
  pthread_barrier_init(&start_line, NULL, THREADS);
  pthread_t threads[THREADS];
  for (int i = 0; i < THREADS; ++i)
    CHECK(pthread_create(&threads[i], NULL, concurrent_retarget, NULL) == 0);
  for (int i = 0; i < THREADS; ++i) {
    void *status = NULL;
    pthread_join(threads[i], &status);
    CHECK((hotswap_status_t)(size_t)status == expected);
  }
  pthread_barrier_destroy(&start_line);
}

static void isa_of(const void *elf, size_t size, char *name, size_t cap) {
  size_t n = cap;
  CHECK(hotswap_code_object_isa_name(elf, size, name, &n) == HOTSWAP_STATUS_SUCCESS);
}

int main(int argc, char **argv) {
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: %s MODE GFX1250_OBJECT [EXPECTED_OUTPUT]\n", argv[0]);
    return 2;
  }
  const char *mode = argv[1];
  size_t size = 0;
  unsigned char *elf = check_read_file(argv[2], &size);
  if (elf == NULL) {
    fprintf(stderr, "cannot read %s\n", argv[2]);
    return 2;
  }
  unsigned char *pristine = malloc(size);
  memcpy(pristine, elf, size);

  /* Argument checks never reach a rewriter. */
  void *out;
  size_t out_size;
  CHECK(hotswap_retarget_code_object(elf, size, SOURCE_ISA, TARGET_ISA, NULL, &out_size) ==
        HOTSWAP_STATUS_INVALID_ARGUMENT);
  CHECK(hotswap_retarget_code_object(elf, size, NULL, TARGET_ISA, &out, &out_size) ==
        HOTSWAP_STATUS_INVALID_ARGUMENT);
  CHECK(out == elf && out_size == size);
  CHECK(hotswap_retarget_code_object(NULL, 0, SOURCE_ISA, TARGET_ISA, &out, &out_size) ==
        HOTSWAP_STATUS_INVALID_ARGUMENT);
  CHECK(out == NULL && out_size == 0);
  CHECK(rewriter_calls() <= 0);

  if (strcmp(mode, "change") == 0) {
    race_first_calls(elf, size, HOTSWAP_STATUS_SUCCESS);
    CHECK(rewriter_calls() == 1 + THREADS); /* one probe, whoever came first */

    char before[128], after[128];
    isa_of(elf, size, before, sizeof before);
    for (int round = 0; round < 2; ++round) {
      hotswap_status_t status = retarget(elf, size, &out, &out_size);
      if (status != HOTSWAP_STATUS_SUCCESS)
        fprintf(stderr, "status %s\n", hotswap_status_string(status));
      CHECK(status == HOTSWAP_STATUS_SUCCESS);
      if (status != HOTSWAP_STATUS_SUCCESS)
        break;
      CHECK(out != elf && out != NULL);
      CHECK(out_size == size);
      CHECK(memcmp(out, elf, size) != 0);
      CHECK(memcmp((const unsigned char *)out + 9, "HOTSWAP", 7) == 0); /* the marker */
      isa_of(out, out_size, after, sizeof after);
      CHECK(strcmp(before, after) == 0); /* still a valid AMDGPU ELF, same ISA */
      free(out);
    }
    CHECK(rewriter_calls() == 1 + THREADS + 2);
  } else if (strcmp(mode, "unchanged") == 0) {
    hotswap_status_t status = retarget(elf, size, &out, &out_size);
    if (status != HOTSWAP_STATUS_UNCHANGED)
      fprintf(stderr, "status %s\n", hotswap_status_string(status));
    CHECK(status == HOTSWAP_STATUS_UNCHANGED);
    CHECK(out == elf && out_size == size);
    CHECK(rewriter_calls() == 2);
  } else if (strcmp(mode, "error") == 0 || strcmp(mode, "empty") == 0 ||
             strcmp(mode, "garbage") == 0) {
    expect_failure(elf, size, HOTSWAP_STATUS_REWRITE_FAILED);
    expect_failure(elf, size, HOTSWAP_STATUS_REWRITE_FAILED);
    CHECK(rewriter_calls() == 3);
  } else if (strcmp(mode, "stub") == 0) {
    /* Detected by the one probe, even when the first calls race; never called again. */
    race_first_calls(elf, size, HOTSWAP_STATUS_REWRITER_UNAVAILABLE);
    for (int i = 0; i < 3; ++i)
      expect_failure(elf, size, HOTSWAP_STATUS_REWRITER_UNAVAILABLE);
    CHECK(rewriter_calls() == 1);
  } else if (strcmp(mode, "prototype") == 0) {
    /* Refused from its exports; its raw-buffer rewrite is never called. */
    for (int i = 0; i < 3; ++i)
      expect_failure(elf, size, HOTSWAP_STATUS_REWRITER_UNAVAILABLE);
    CHECK(rewriter_calls() == 0);
  } else if (strcmp(mode, "missing") == 0 || strcmp(mode, "relative") == 0 ||
             strcmp(mode, "absent") == 0) {
    expect_failure(elf, size, HOTSWAP_STATUS_REWRITER_UNAVAILABLE);
    expect_failure(elf, size, HOTSWAP_STATUS_REWRITER_UNAVAILABLE);
    CHECK(rewriter_calls() <= 0);
  } else if (strcmp(mode, "comgr") == 0) {
    for (int i = 0; i < 2; ++i) {
      hotswap_status_t status = retarget(elf, size, &out, &out_size);
      if (status != HOTSWAP_STATUS_UNCHANGED)
        fprintf(stderr, "status %s\n", hotswap_status_string(status));
      CHECK(status == HOTSWAP_STATUS_UNCHANGED);
      CHECK(out == elf && out_size == size);
    }
  } else if (strcmp(mode, "native-fixed") == 0) {
    size_t expected_size = 0;
    unsigned char *expected = argc == 4 ? check_read_file(argv[3], &expected_size) : NULL;
    CHECK(expected != NULL && expected_size == size);
    race_first_calls(elf, size, HOTSWAP_STATUS_SUCCESS);
    for (int round = 0; round < 2 && expected != NULL; ++round) {
      hotswap_status_t status = retarget(elf, size, &out, &out_size);
      if (status != HOTSWAP_STATUS_SUCCESS)
        fprintf(stderr, "status %s\n", hotswap_status_string(status));
      CHECK(status == HOTSWAP_STATUS_SUCCESS);
      if (status != HOTSWAP_STATUS_SUCCESS)
        break;
      CHECK(out != elf && out_size == size);
      CHECK(memcmp(out, expected, size) == 0); /* the driver's output, checked by native.invariants */
      /* Rewriting the output again changes nothing. */
      void *again;
      size_t again_size;
      CHECK(retarget(out, out_size, &again, &again_size) == HOTSWAP_STATUS_UNCHANGED);
      CHECK(again == out && again_size == out_size);
      free(out);
    }
    free(expected);
  } else if (strcmp(mode, "native-refused") == 0) {
    race_first_calls(elf, size, HOTSWAP_STATUS_REWRITE_REFUSED);
    expect_failure(elf, size, HOTSWAP_STATUS_REWRITE_REFUSED);
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  CHECK(memcmp(elf, pristine, size) == 0); /* the input is never modified */
  free(pristine);
  free(elf);
  printf("retarget %s\n", mode);
  return check_finish("retarget");
}
