/* SPDX-License-Identifier: MIT */
/* Loads hotswap_TOOL_LIBRARY the way ROCr loads an HSA_TOOLS_LIB entry
 * (dlopen with RTLD_LAZY) and finds the tool entry points. */
#include <dlfcn.h>
#include <stdio.h>

int main(void) {
  void *lib = dlopen(TOOL_LIBRARY, RTLD_LAZY);
  if (!lib) {
    fprintf(stderr, "dlopen(%s) failed: %s\n", TOOL_LIBRARY, dlerror());
    return 1;
  }
  if (!dlsym(lib, "OnLoad") || !dlsym(lib, "OnUnload")) {
    fprintf(stderr, "%s lacks OnLoad/OnUnload\n", TOOL_LIBRARY);
    return 1;
  }
  printf("dlopen consumer: %s loads and exports OnLoad and OnUnload\n", TOOL_LIBRARY);
  return dlclose(lib) == 0 ? 0 : 1;
}
