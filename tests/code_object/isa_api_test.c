/* hotswap_code_object_isa_name's contract on a real clang-22 gfx1250 object and
 * on malformed variants of it:
 *
 *   isa_api_test GFX1250_OBJECT */
#include <hotswap/hotswap.h>

#include "hotswap_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define EXPECTED "amdgcn-amd-amdhsa--gfx1250"

static hotswap_status_t name_of(const unsigned char *elf, size_t size) {
  char name[64];
  size_t n = sizeof name;
  return hotswap_code_object_isa_name(elf, size, name, &n);
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  size_t size = 0;
  unsigned char *elf = check_read_file(argv[1], &size);
  unsigned char *copy = (unsigned char *)malloc(size);
  if (elf == NULL || copy == NULL)
    return 2;

  /* Size query, exact buffer, too small a buffer. */
  size_t n = 0;
  CHECK(hotswap_code_object_isa_name(elf, size, NULL, &n) == HOTSWAP_STATUS_SUCCESS);
  CHECK(n == sizeof EXPECTED);
  char name[sizeof EXPECTED];
  memset(name, 'x', sizeof name);
  n = sizeof name;
  CHECK(hotswap_code_object_isa_name(elf, size, name, &n) == HOTSWAP_STATUS_SUCCESS);
  CHECK(n == sizeof EXPECTED && strcmp(name, EXPECTED) == 0);
  memset(name, 'x', sizeof name);
  n = sizeof name - 1;
  CHECK(hotswap_code_object_isa_name(elf, size, name, &n) == HOTSWAP_STATUS_BUFFER_TOO_SMALL);
  CHECK(n == sizeof EXPECTED);
  CHECK(name[0] == 'x' && name[sizeof name - 1] == 'x'); /* nothing written */

  /* Arguments. */
  CHECK(hotswap_code_object_isa_name(NULL, size, name, &n) == HOTSWAP_STATUS_INVALID_ARGUMENT);
  CHECK(hotswap_code_object_isa_name(elf, 0, name, &n) == HOTSWAP_STATUS_INVALID_ARGUMENT);
  CHECK(hotswap_code_object_isa_name(elf, size, name, NULL) == HOTSWAP_STATUS_INVALID_ARGUMENT);

  /* Truncated anywhere inside the header; header tables past the end. */
  for (size_t len = 1; len < 64; ++len)
    CHECK(name_of(elf, len) == HOTSWAP_STATUS_INVALID_CODE_OBJECT);
  CHECK(name_of(elf, 64) == HOTSWAP_STATUS_INVALID_CODE_OBJECT);

  /* One field at a time. */
  struct {
    size_t at;
    uint8_t value;
    hotswap_status_t expected;
  } const edits[] = {
      {0, 0x7e, HOTSWAP_STATUS_INVALID_CODE_OBJECT},        /* magic */
      {4, 1, HOTSWAP_STATUS_INVALID_CODE_OBJECT},           /* ELFCLASS32 */
      {5, 2, HOTSWAP_STATUS_INVALID_CODE_OBJECT},           /* big-endian */
      {18, 62, HOTSWAP_STATUS_NOT_AMDGPU_CODE_OBJECT},      /* e_machine x86-64 */
      {7, 0, HOTSWAP_STATUS_NOT_AMDGPU_CODE_OBJECT},        /* OS ABI none */
      {7, 65, HOTSWAP_STATUS_NOT_AMDGPU_CODE_OBJECT},       /* OS ABI PAL */
      {8, 1, HOTSWAP_STATUS_UNSUPPORTED_CODE_OBJECT_VERSION}, /* v3 */
      {8, 5, HOTSWAP_STATUS_UNSUPPORTED_CODE_OBJECT_VERSION}, /* v7 */
      {48, 0x27, HOTSWAP_STATUS_UNKNOWN_PROCESSOR},         /* reserved MACH */
      {48, 0x00, HOTSWAP_STATUS_UNKNOWN_PROCESSOR},         /* MACH_NONE */
      {41, 0x7f, HOTSWAP_STATUS_INVALID_CODE_OBJECT},       /* e_shoff far away */
      {33, 0x7f, HOTSWAP_STATUS_INVALID_CODE_OBJECT},       /* e_phoff far away */
  };
  for (size_t i = 0; i < sizeof edits / sizeof *edits; ++i) {
    memcpy(copy, elf, size);
    copy[edits[i].at] = edits[i].value;
    hotswap_status_t status = name_of(copy, size);
    if (status != edits[i].expected)
      fprintf(stderr, "edit %zu: %s\n", i, hotswap_status_string(status));
    CHECK(status == edits[i].expected);
  }
  /* Unedited, the copy is named (the edits, not the copying, failed above). */
  memcpy(copy, elf, size);
  CHECK(name_of(copy, size) == HOTSWAP_STATUS_SUCCESS);

  free(copy);
  free(elf);
  return check_finish("isa_name");
}
