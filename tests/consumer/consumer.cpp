// SPDX-License-Identifier: MIT
#include <hotswap/hotswap.h>

#include <cstdio>
#include <string>

int main() {
  const std::string version = hotswap_version();
  const bool ok = version == std::to_string(HOTSWAP_VERSION_MAJOR) + "." +
                                 std::to_string(HOTSWAP_VERSION_MINOR) + "." +
                                 std::to_string(HOTSWAP_VERSION_PATCH) &&
                  !hotswap_isa_is_gfx("amdgcn-amd-amdhsa--gfx12500", "gfx1250");
  std::printf("C++ consumer: hotswap %s, %s\n", version.c_str(), ok ? "ok" : "BROKEN");
  return ok ? 0 : 1;
}
