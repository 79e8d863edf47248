/* SPDX-License-Identifier: MIT */
#include <hotswap/hotswap.h>
#include <hotswap/hotswap_gate.h>

#include <stdio.h>
#include <string.h>

/* The header-only gate (hotswap_gate.h) against the library's own answers. */
static int gate_header_agrees(void) {
  int ok = hotswap_tools_lib_names_hotswap(HOTSWAP_TOOL_LIBRARY_NAME) &&
           strcmp(HOTSWAP_GATE_ENV_TOOLS_LIB, "HSA_TOOLS_LIB") == 0 &&
           strcmp(HOTSWAP_GATE_ENV_DISABLE, "HSA_HOTSWAP_DISABLE") == 0;
  int count = 0;
#define HOTSWAP_GATE_PAIR(source, target)                                            \
  ok = ok && hotswap_is_supported_pair(source, target) &&                            \
       hotswap_gate_is_supported_pair(source, target);                               \
  ++count;
  HOTSWAP_GATE_SUPPORTED_PAIRS
#undef HOTSWAP_GATE_PAIR
  /* Pairs the library refuses, the gate refuses too. */
  static const char *const processors[] = {"gfx1250", "gfx1251", "gfx942", "gfx12-5-generic", ""};
  for (size_t i = 0; i < sizeof processors / sizeof *processors; ++i) {
    for (size_t j = 0; j < sizeof processors / sizeof *processors; ++j) {
      ok = ok && hotswap_is_supported_pair(processors[i], processors[j]) ==
                     (bool)hotswap_gate_is_supported_pair(processors[i], processors[j]);
    }
  }
  return ok && count == HOTSWAP_GATE_SUPPORTED_PAIR_COUNT;
}

int main(void) {
  const int gate = hotswap_isa_is_gfx("amdgcn-amd-amdhsa--gfx1250:sramecc+", "gfx1250") &&
                   hotswap_is_supported_pair("gfx1250", "gfx1250") &&
                   hotswap_tools_lib_names_hotswap(HOTSWAP_TOOL_LIBRARY_NAME);
  const int agrees = gate_header_agrees();
  printf("C consumer: hotswap %s, gate %s, hotswap_gate.h %s\n", hotswap_version(),
         gate ? "ok" : "BROKEN", agrees ? "agrees with the library" : "DISAGREES with the library");
  return gate && agrees && strcmp(hotswap_status_string(HOTSWAP_STATUS_SUCCESS), "success") == 0 ? 0 : 1;
}
