/* One hotswap_retarget_code_object call through the persistent rewrite cache
 * (tests/cache/check_cache.py drives it):
 *
 *   cache_capi OBJECT OUT
 *
 * Rewrites OBJECT (gfx1250 B0 -> A0) with the rewriter HSA_HOTSWAP_REWRITER
 * names, writes the result (the input when unchanged) to OUT and prints
 * "cache-load: rewriter calls N (probe P), load NS ns, SIZE bytes" like the
 * stand-in's cache-load scenario. The probe (the rewriter's availability check)
 * runs inside the first call, so P is 1 for a COMGR-ABI rewriter and N counts
 * the calls beyond it. */
#include <hotswap/hotswap.h>

#include "hotswap_check.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned rewriter_calls(void) {
  const char *path = getenv("HSA_HOTSWAP_REWRITER");
  void *lib = path != NULL ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
  if (lib == NULL)
    return 0;
  unsigned (*calls)(void) = (unsigned (*)(void))dlsym(lib, "test_rewriter_calls");
  unsigned n = calls != NULL ? calls() : 0;
  dlclose(lib);
  return n;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: cache_capi OBJECT OUT\n");
    return 2;
  }
  size_t size = 0;
  unsigned char *elf = check_read_file(argv[1], &size);
  if (elf == NULL) {
    fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  struct timespec t0, t1;
  void *out = NULL;
  size_t out_size = 0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  hotswap_status_t status =
      hotswap_retarget_code_object(elf, size, "amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific+",
                                   "amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific-", &out, &out_size);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  CHECK(status == HOTSWAP_STATUS_SUCCESS || status == HOTSWAP_STATUS_UNCHANGED);
  FILE *f = fopen(argv[2], "wb");
  CHECK(f != NULL && fwrite(out, 1, out_size, f) == out_size);
  if (f != NULL)
    fclose(f);
  unsigned calls = rewriter_calls();
  unsigned probe = calls > 0 ? 1 : 0;
  printf("cache-load: rewriter calls %u (probe %u), load %lld ns, %zu bytes\n", calls - probe, probe,
         (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec), size);
  if (out != elf)
    free(out);
  free(elf);
  return check_failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
