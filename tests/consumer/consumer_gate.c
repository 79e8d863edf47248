/* SPDX-License-Identifier: MIT */
/* What CLR's hotswap gate needs, from the header-only hotswap::gate: no symbol
 * of libhsa-hotswap.so, so the program links neither it, nor ROCr, nor COMGR. */
#include <hotswap/hotswap_gate.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  const char *tools = getenv(HOTSWAP_GATE_ENV_TOOLS_LIB);
  const int named = tools && strstr(tools, HOTSWAP_TOOL_LIBRARY_NAME) != NULL;
  const int ok = hotswap_gate_is_supported_pair("gfx1250", "gfx1250") &&
                 !hotswap_gate_is_supported_pair("gfx1250", "gfx942") &&
                 !hotswap_gate_is_supported_pair(NULL, "gfx1250") &&
                 strcmp(HOTSWAP_TOOL_LIBRARY_NAME, "libhsa-hotswap.so") == 0;
  printf("gate consumer: %d supported pair(s), %s %s, %s\n", HOTSWAP_GATE_SUPPORTED_PAIR_COUNT,
         HOTSWAP_GATE_ENV_TOOLS_LIB, named ? "names the tool" : "does not name the tool",
         ok ? "ok" : "BROKEN");
  return ok ? 0 : 1;
}
