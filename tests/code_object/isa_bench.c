/* Benchmark (prints figures; always passes): ISA identification of a small
 * (~4 KB) and a ~100 MB code object, natively (hotswap_code_object_isa_name,
 * header only) and through COMGR's data-object path (create, set_data = copy,
 * get_data_isa_name, release: what upstream's tool did).
 *
 *   isa_bench OBJECT   (an object Debian's COMGR 2.4 can name: gfx90a, v4)
 *
 * The ~100 MB object is OBJECT followed by zero padding: same header, same
 * name. The native path must be flat in size (ratio ~1); COMGR's grows. */
#include <hotswap/hotswap.h>

#include "hotswap_comgr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int native(const unsigned char *elf, size_t size) {
  char name[128];
  size_t n = sizeof name;
  return hotswap_code_object_isa_name(elf, size, name, &n) == HOTSWAP_STATUS_SUCCESS;
}

static int comgr(const unsigned char *elf, size_t size) {
  amd_comgr_data_t data;
  char name[128];
  size_t n = 0;
  int ok = amd_comgr_create_data(AMD_COMGR_DATA_KIND_EXECUTABLE, &data) == AMD_COMGR_STATUS_SUCCESS;
  if (!ok)
    return 0;
  ok = amd_comgr_set_data(data, size, (const char *)elf) == AMD_COMGR_STATUS_SUCCESS &&
       amd_comgr_get_data_isa_name(data, &n, NULL) == AMD_COMGR_STATUS_SUCCESS &&
       n <= sizeof name && amd_comgr_get_data_isa_name(data, &n, name) == AMD_COMGR_STATUS_SUCCESS;
  amd_comgr_release_data(data);
  return ok;
}

/* Seconds per call, over at least `min_calls` calls and 0.2 s. */
static double per_call(int (*f)(const unsigned char *, size_t), const unsigned char *elf,
                       size_t size, long min_calls, int *ok) {
  long calls = 0;
  double start = now(), elapsed;
  do {
    *ok &= f(elf, size);
    ++calls;
    elapsed = now() - start;
  } while (calls < min_calls || elapsed < 0.2);
  return elapsed / (double)calls;
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  FILE *f = fopen(argv[1], "rb");
  if (f == NULL)
    return 2;
  const size_t big = 100u << 20;
  unsigned char *elf = calloc(1, big);
  size_t small = fread(elf, 1, big, f);
  fclose(f);
  int ok = 1;
  double native_small = per_call(native, elf, small, 100000, &ok);
  double native_big = per_call(native, elf, big, 100000, &ok);
  int native_ok = ok;
  ok = 1;
  double comgr_small = per_call(comgr, elf, small, 100, &ok);
  double comgr_big = per_call(comgr, elf, big, 3, &ok);
  printf("ISA identification, seconds per call (%s):\n", argv[1]);
  printf("  %-22s %12s %12s %10s\n", "path", "4 KB", "100 MB", "100MB/4KB");
  printf("  %-22s %12.3e %12.3e %10.2f%s\n", "native (header only)", native_small, native_big,
         native_big / native_small, native_ok ? "" : "  (FAILED calls)");
  printf("  %-22s %12.3e %12.3e %10.2f%s\n", "COMGR data object", comgr_small, comgr_big,
         comgr_big / comgr_small, ok ? "" : "  (FAILED calls)");
  printf("  object size %zu bytes; native is %.0fx faster at 4 KB, %.0fx at 100 MB\n", small,
         comgr_small / native_small, comgr_big / native_big);
  free(elf);
  return 0;
}
