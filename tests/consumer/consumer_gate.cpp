// SPDX-License-Identifier: MIT
// hotswap_gate.h from C++17 (as CLR includes it), header-only.
#include <hotswap/hotswap_gate.h>

#include <cstdio>
#include <string>

int main() {
  const bool ok = hotswap_gate_is_supported_pair("gfx1250", "gfx1250") &&
                  !hotswap_gate_is_supported_pair("gfx1251", "gfx1250") &&
                  std::string(HOTSWAP_TOOL_LIBRARY_NAME) == "libhsa-hotswap.so";
  std::printf("C++ gate consumer: %s\n", ok ? "ok" : "BROKEN");
  return ok ? 0 : 1;
}
