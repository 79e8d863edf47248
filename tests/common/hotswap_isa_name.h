/* SPDX-License-Identifier: MIT */
/* What the code-object C tests share: a code object's ISA name through the C
 * API, the way a careful caller asks for it. Header-only. */
#ifndef HOTSWAP_TESTS_ISA_NAME_H
#define HOTSWAP_TESTS_ISA_NAME_H

#include <hotswap/hotswap.h>

#include <string.h>

/* The size query, then the copy into a buffer of exactly the size it gave;
 * the name must fill it to its NUL. `cap` is the capacity of `name`. */
static inline hotswap_status_t isa_name_of(const unsigned char *elf, size_t size, char *name, size_t cap) {
  size_t needed = 0;
  size_t got;
  hotswap_status_t status = hotswap_code_object_isa_name(elf, size, NULL, &needed);
  if (status != HOTSWAP_STATUS_SUCCESS)
    return status;
  if (needed > cap)
    return HOTSWAP_STATUS_BUFFER_TOO_SMALL;
  got = needed;
  status = hotswap_code_object_isa_name(elf, size, name, &got);
  if (status == HOTSWAP_STATUS_SUCCESS && (got != needed || strlen(name) + 1 != needed))
    return HOTSWAP_STATUS_INTERNAL_ERROR;
  return status;
}

#endif
