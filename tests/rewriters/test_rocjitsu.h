/* The C API of rocjitsu's gfx1250 B0->A0 translator library
 * (librocjitsu_gfx1250_b0_to_a0.so.0), restated from its documented
 * declarations for the test doubles (test_rocjitsu.c): the status codes, the
 * translation-info and diagnostic structs, the diagnostic callback, and the
 * entry points of each API shape. One symbol name, rj_gfx1250_b0_to_a0_translate,
 * has two declarations across the shapes, so a translation unit selects one
 * shape with TEST_ROCJITSU_SHAPE_A, _B or _C:
 *
 *   (a) the first API: translate with four arguments;
 *   (b) translate_with_info (info required), and translate as a four-argument
 *       wrapper around it;
 *   (c) the current API: translate with seven arguments (info, an optional
 *       synchronous diagnostic callback and its user data); no _with_info.
 *
 *
 * TEST_ROCJITSU_SHAPE_CW is shape (c) whose library also still exports the
 * five-argument translate_with_info, as one version of the real export map does
 * (rocm-systems @04b2f12a names it; the current map does not).
 *
 * rj_gfx1250_b0_to_a0_free is the same in every shape. */
#ifndef HOTSWAP_TEST_ROCJITSU_H
#define HOTSWAP_TEST_ROCJITSU_H

#include <stddef.h>
#include <stdint.h>

#if defined(TEST_ROCJITSU_SHAPE_CW)
#define TEST_ROCJITSU_SHAPE_C
#define TEST_ROCJITSU_EXPORTS_WITH_INFO
#elif defined(TEST_ROCJITSU_SHAPE_B)
#define TEST_ROCJITSU_EXPORTS_WITH_INFO
#endif

/* rj_status_t: the result of every rocjitsu call. */
typedef enum rj_status {
  ROCJITSU_STATUS_SUCCESS = 0,
  ROCJITSU_STATUS_ERROR = 1,               /* the translator failed (threw) */
  ROCJITSU_STATUS_INVALID_ARGUMENT = 2,    /* a NULL or empty argument (in (b)/(c): info NULL too) */
  ROCJITSU_STATUS_OUT_OF_RESOURCES = 3,    /* the output could not be allocated */
  ROCJITSU_STATUS_INVALID_CODE_OBJECT = 4, /* not a valid gfx1250 object, or nothing dispatchable */
  ROCJITSU_STATUS_INVALID_FILE = 5,
} rj_status_t;

/* Provenance of one translation (shapes (b) and (c)); 16 bytes, no size or
 * version member. Cleared before the arguments are validated; the id is set,
 * before the input is parsed, once the arguments are valid. */
typedef struct rj_gfx1250_b0_to_a0_translation_info {
  uint64_t source_code_object_id;   /* FNV-1a-64 of the whole input */
  size_t changed_instruction_count; /* instructions the translation changed */
} rj_gfx1250_b0_to_a0_translation_info_t;

/* One diagnostic (shape (c)). Every string is valid only during the callback.
 * severity is "warning" or "error"; kind is one of a documented, growing set
 * (consumers accept kinds they do not know); each required-work item is a
 * separate diagnostic with required_work = 1. */
typedef struct rj_gfx1250_b0_to_a0_diagnostic {
  const char *severity;
  const char *kind;
  int has_guest_offset;
  uint64_t guest_offset; /* meaningful when has_guest_offset != 0 */
  const char *mnemonic;
  const char *message;
  int required_work;
} rj_gfx1250_b0_to_a0_diagnostic_t;

/* Called synchronously, during translate, for each diagnostic; optional. */
typedef void (*rj_gfx1250_b0_to_a0_diagnostic_callback_t)(
    const rj_gfx1250_b0_to_a0_diagnostic_t *diagnostic, void *user_data);

/* Ownership, every shape: on SUCCESS *translated_elf is a malloc'd buffer of
 * *translated_size bytes, released with rj_gfx1250_b0_to_a0_free (free(); NULL
 * accepted); on failure both outputs are cleared. The input is never modified. */
#if defined(TEST_ROCJITSU_SHAPE_A) || defined(TEST_ROCJITSU_SHAPE_B)
rj_status_t rj_gfx1250_b0_to_a0_translate(const void *source_elf, size_t source_size,
                                          uint8_t **translated_elf, size_t *translated_size);
#endif
#if defined(TEST_ROCJITSU_EXPORTS_WITH_INFO)
rj_status_t rj_gfx1250_b0_to_a0_translate_with_info(const void *source_elf, size_t source_size,
                                                    uint8_t **translated_elf,
                                                    size_t *translated_size,
                                                    rj_gfx1250_b0_to_a0_translation_info_t *info);
#endif
#if defined(TEST_ROCJITSU_SHAPE_C)
rj_status_t rj_gfx1250_b0_to_a0_translate(
    const void *source_elf, size_t source_size, uint8_t **translated_elf, size_t *translated_size,
    rj_gfx1250_b0_to_a0_translation_info_t *info,
    rj_gfx1250_b0_to_a0_diagnostic_callback_t diagnostic_callback, void *user_data);
#endif
void rj_gfx1250_b0_to_a0_free(void *translated_elf);

#endif /* HOTSWAP_TEST_ROCJITSU_H */
