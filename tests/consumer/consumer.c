/* SPDX-License-Identifier: MIT */
#include <hotswap/hotswap.h>

#include <stdio.h>
#include <string.h>

int main(void) {
  const int gate = hotswap_isa_is_gfx("amdgcn-amd-amdhsa--gfx1250:sramecc+", "gfx1250") &&
                   hotswap_is_supported_pair("gfx1250", "gfx1250") &&
                   hotswap_tools_lib_names_hotswap(HOTSWAP_TOOL_LIBRARY_NAME);
  printf("C consumer: hotswap %s, gate %s\n", hotswap_version(), gate ? "ok" : "BROKEN");
  return gate && strcmp(hotswap_status_string(HOTSWAP_STATUS_SUCCESS), "success") == 0 ? 0 : 1;
}
