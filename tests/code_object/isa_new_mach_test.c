/* hotswap_code_object_isa_name on the EF_AMDGPU_MACH values LLVM 22 cannot emit:
 * those named or reserved since LLVM 22.1 (gfx1310, gfx1154, gfx1170-gfx1172,
 * gfx12-5-generic, gfx11-7-generic, gfx13-generic, 0x60, 0x61) and gfx1250-strict
 * (0xeb) under each XNACK encoding and with SRAMECC bits set. Each case is a real
 * clang-22 gfx1250 code object whose e_flags are replaced, as a newer compiler
 * would write them; the expected names are those of the project's facts
 * (LLVM 24's ELF.h and the amdhsa.target it writes: 0x1eb is gfx1250-strict,
 * 0x3eb gfx1250-strict:xnack+, 0x2eb gfx1250-strict:xnack-).
 *
 *   isa_new_mach_test GFX1250_OBJECT */
#include <hotswap/hotswap.h>

#include "hotswap_check.h"
#include "hotswap_isa_name.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define E_FLAGS_OFFSET 48
#define GENERIC_V1 0x01000000u

static void set_e_flags(unsigned char *elf, uint32_t e_flags) {
  unsigned char bytes[4] = {(unsigned char)e_flags, (unsigned char)(e_flags >> 8),
                            (unsigned char)(e_flags >> 16), (unsigned char)(e_flags >> 24)};
  memcpy(elf + E_FLAGS_OFFSET, bytes, sizeof bytes);
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  size_t size = 0;
  unsigned char *elf = check_read_file(argv[1], &size);
  if (elf == NULL || size < 64)
    return 2;

  static const struct {
    uint32_t e_flags;
    const char *isa_name;
  } named[] = {
      {0x050, "amdgcn-amd-amdhsa--gfx1310"},
      {0x057, "amdgcn-amd-amdhsa--gfx1154"},
      {0x05c, "amdgcn-amd-amdhsa--gfx1172"},
      {0x05d, "amdgcn-amd-amdhsa--gfx1170"},
      {0x05e, "amdgcn-amd-amdhsa--gfx1171"},
      {GENERIC_V1 | 0x05b, "amdgcn-amd-amdhsa--gfx12-5-generic"},
      {GENERIC_V1 | 0x062, "amdgcn-amd-amdhsa--gfx11-7-generic"},
      {GENERIC_V1 | 0x063, "amdgcn-amd-amdhsa--gfx13-generic"},
      /* gfx1250-strict: XNACK UNSUPPORTED (ROCm's compiler), ANY (LLVM 24's
       * default), OFF, ON ... */
      {0x0eb, "amdgcn-amd-amdhsa--gfx1250-strict"},
      {0x1eb, "amdgcn-amd-amdhsa--gfx1250-strict"},
      {0x2eb, "amdgcn-amd-amdhsa--gfx1250-strict:xnack-"},
      {0x3eb, "amdgcn-amd-amdhsa--gfx1250-strict:xnack+"},
      /* ... and SRAMECC bits, which are not a strict feature and are ignored. */
      {0x4eb, "amdgcn-amd-amdhsa--gfx1250-strict"},
      {0x8eb, "amdgcn-amd-amdhsa--gfx1250-strict"},
      {0xceb, "amdgcn-amd-amdhsa--gfx1250-strict"},
      {0xaeb, "amdgcn-amd-amdhsa--gfx1250-strict:xnack-"},
      {0xfeb, "amdgcn-amd-amdhsa--gfx1250-strict:xnack+"},
  };
  for (size_t i = 0; i < sizeof named / sizeof *named; ++i) {
    char name[128] = "";
    set_e_flags(elf, named[i].e_flags);
    hotswap_status_t status = isa_name_of(elf, size, name, sizeof name);
    if (status != HOTSWAP_STATUS_SUCCESS || strcmp(name, named[i].isa_name) != 0)
      fprintf(stderr, "e_flags 0x%x: expected %s, got %s (%s)\n", (unsigned)named[i].e_flags,
              named[i].isa_name, status == HOTSWAP_STATUS_SUCCESS ? name : "-",
              hotswap_status_string(status));
    CHECK(status == HOTSWAP_STATUS_SUCCESS && strcmp(name, named[i].isa_name) == 0);
  }

  /* Reserved since LLVM 22.1: not named by the table, and the linked COMGR (asked
   * for values the table lacks) names them neither. */
  static const uint32_t reserved[] = {0x060, 0x061, GENERIC_V1 | 0x060, GENERIC_V1 | 0x061};
  for (size_t i = 0; i < sizeof reserved / sizeof *reserved; ++i) {
    char name[128] = "";
    set_e_flags(elf, reserved[i]);
    hotswap_status_t status = isa_name_of(elf, size, name, sizeof name);
    if (status != HOTSWAP_STATUS_UNKNOWN_PROCESSOR)
      fprintf(stderr, "e_flags 0x%x: expected no name, got %s (%s)\n", (unsigned)reserved[i],
              name, hotswap_status_string(status));
    CHECK(status == HOTSWAP_STATUS_UNKNOWN_PROCESSOR);
  }

  free(elf);
  return check_finish("isa_new_mach");
}
