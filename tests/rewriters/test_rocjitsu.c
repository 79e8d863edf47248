/* A test double for rocjitsu's gfx1250 B0->A0 translator library
 * (librocjitsu_gfx1250_b0_to_a0.so.0), with the documented declarations of
 * test_rocjitsu.h. Built once per API shape and export map (TEST_ROCJITSU_SHAPE_A,
 * _B, _C, _CW; see the header) and mode (TEST_ROCJITSU_MODE_*), each library in its own directory
 * under its real SONAME, so a test can point HSA_HOTSWAP_REWRITER at it or put
 * its directory on LD_LIBRARY_PATH.
 *
 * What every mode does as the documentation says the translator does:
 *   - info (shapes (b), (c)) is cleared before the arguments are validated; a
 *     NULL source, size 0, NULL outputs or (b)/(c) a NULL info give
 *     INVALID_ARGUMENT;
 *   - once the arguments are valid, info's source id is set to the FNV-1a-64 of
 *     the whole input, before the input is parsed;
 *   - input that is not a gfx1250 code object (ELF64 little-endian, EM_AMDGPU,
 *     EF_AMDGPU_MACH 0x49) gives INVALID_CODE_OBJECT;
 *   - both outputs are cleared on entry and set only on SUCCESS; the input is
 *     never written;
 *   - rj_gfx1250_b0_to_a0_free is free() and accepts NULL;
 *   - shape (c) delivers at least one diagnostic through the callback (when one
 *     is given) for every outcome, success included.
 *
 * Modes (what a valid gfx1250 input gets):
 *   change        SUCCESS; the output is the input with TEST_ROCJITSU_MARKER
 *                 written into e_ident[EI_PAD..EI_NIDENT) (bytes 9..15, padding
 *                 every ELF reader ignores), as the COMGR-ABI double's `change`
 *                 does, so the stand-in's loader recognises it;
 *                 changed_instruction_count 3; diagnostics (c): a warning with a
 *                 guest offset and mnemonic, a required-work item, and a kind no
 *                 documentation lists, with NULL mnemonic and message.
 *   refuse        INVALID_CODE_OBJECT with an error diagnostic
 *                 result-not-dispatchable (the translation left nothing to run).
 *   error         ERROR with an error diagnostic translation-exception.
 *   oom           OUT_OF_RESOURCES with an error diagnostic output-allocation-failed.
 *   invalid       INVALID_ARGUMENT with an error diagnostic api-invalid-argument,
 *                 answered as for a NULL info (which a correct client never
 *                 passes); the source id stays cleared.
 *   invalid-file  INVALID_FILE (a status rj_status_t defines).
 *   unknown       77, a status no declaration defines.
 *   garbage       SUCCESS with 256 bytes that are not an ELF.
 *   empty         SUCCESS with a buffer of size 0.
 *   null          SUCCESS with a NULL buffer and the input's size.
 *   nofree        as change, but the library does not export
 *                 rj_gfx1250_b0_to_a0_free (its version script hides it).
 *
 * Accounting, read by tests through dlopen(RTLD_NOLOAD) of the same library:
 * test_rewriter_calls() (translate calls through any entry point, like the
 * COMGR-ABI doubles' counter), test_rocjitsu_outstanding() (buffers handed out
 * and not yet released), test_rocjitsu_releases() (buffers released),
 * test_rocjitsu_bad_releases() (pointers released that this library did not
 * hand out or had released already; not passed to free()),
 * test_rocjitsu_null_info_calls() and test_rocjitsu_callback_calls() (calls
 * with a NULL info, with a non-NULL callback). */
#include "test_rocjitsu.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TEST_ROCJITSU_MARKER "HOTSWAP" /* 7 bytes: e_ident[9..16) */
#define EI_PAD 9
#define STATUS_UNKNOWN ((rj_status_t)77)

#define EXPORT __attribute__((visibility("default")))

#if !defined(TEST_ROCJITSU_SHAPE_A) && !defined(TEST_ROCJITSU_SHAPE_B) && \
    !defined(TEST_ROCJITSU_SHAPE_C)
#error "define TEST_ROCJITSU_SHAPE_A, _B, _C or _CW"
#endif

typedef rj_gfx1250_b0_to_a0_translation_info_t info_t;
typedef rj_gfx1250_b0_to_a0_diagnostic_t diagnostic_t;
typedef rj_gfx1250_b0_to_a0_diagnostic_callback_t callback_t;

/* ---- accounting --------------------------------------------------------------- */

#define MAX_OUTSTANDING 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned calls, null_info_calls, callback_calls, releases, bad_releases;
static void *outstanding[MAX_OUTSTANDING];

static unsigned read_counter(const unsigned *counter) {
  pthread_mutex_lock(&lock);
  unsigned n = *counter;
  pthread_mutex_unlock(&lock);
  return n;
}

EXPORT unsigned test_rewriter_calls(void) { return read_counter(&calls); }
EXPORT unsigned test_rocjitsu_null_info_calls(void) { return read_counter(&null_info_calls); }
EXPORT unsigned test_rocjitsu_callback_calls(void) { return read_counter(&callback_calls); }
EXPORT unsigned test_rocjitsu_releases(void) { return read_counter(&releases); }
EXPORT unsigned test_rocjitsu_bad_releases(void) { return read_counter(&bad_releases); }

EXPORT unsigned test_rocjitsu_outstanding(void) {
  pthread_mutex_lock(&lock);
  unsigned n = 0;
  for (int i = 0; i < MAX_OUTSTANDING; ++i)
    n += outstanding[i] != NULL;
  pthread_mutex_unlock(&lock);
  return n;
}

static void count_call(bool has_info, bool info_null, bool has_callback) {
  pthread_mutex_lock(&lock);
  ++calls;
  null_info_calls += has_info && info_null;
  callback_calls += has_callback;
  pthread_mutex_unlock(&lock);
}

/* A malloc'd buffer of `size` bytes (at least one allocated), remembered as
 * handed out; NULL when out of memory or too many are outstanding. */
__attribute__((unused)) static uint8_t *new_buffer(size_t size) {
  uint8_t *buffer = malloc(size != 0 ? size : 1);
  if (buffer == NULL)
    return NULL;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < MAX_OUTSTANDING; ++i) {
    if (outstanding[i] == NULL) {
      outstanding[i] = buffer;
      pthread_mutex_unlock(&lock);
      return buffer;
    }
  }
  pthread_mutex_unlock(&lock);
  free(buffer);
  return NULL;
}

/* free(); NULL accepted. */
EXPORT void rj_gfx1250_b0_to_a0_free(void *translated_elf) {
  if (translated_elf == NULL)
    return;
  pthread_mutex_lock(&lock);
  bool ours = false;
  for (int i = 0; i < MAX_OUTSTANDING && !ours; ++i) {
    if (outstanding[i] == translated_elf) {
      outstanding[i] = NULL;
      ours = true;
    }
  }
  if (ours)
    ++releases;
  else
    ++bad_releases;
  pthread_mutex_unlock(&lock);
  if (ours)
    free(translated_elf);
}

/* ---- the translator --------------------------------------------------------------- */

static uint64_t fnv1a64(const uint8_t *bytes, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i)
    hash = (hash ^ bytes[i]) * 0x100000001b3ull;
  return hash;
}

/* ELF64 little-endian, EM_AMDGPU (224), EF_AMDGPU_MACH 0x49 (gfx1250). */
static bool is_gfx1250(const uint8_t *elf, size_t size) {
  if (size < 64 || memcmp(elf, "\x7f" "ELF", 4) != 0 || elf[4] != 2 || elf[5] != 1)
    return false;
  uint16_t machine = (uint16_t)(elf[18] | elf[19] << 8);
  uint32_t flags = (uint32_t)elf[48] | (uint32_t)elf[49] << 8 | (uint32_t)elf[50] << 16 |
                   (uint32_t)elf[51] << 24;
  return machine == 224 && (flags & 0xff) == 0x49;
}

static void diagnose(callback_t callback, void *user_data, const char *severity, const char *kind,
                     bool has_offset, uint64_t offset, const char *mnemonic, const char *message,
                     bool required_work) {
  if (callback == NULL)
    return;
  /* Strings valid only during the callback: copies on this frame, wiped after. */
  char severity_copy[16], kind_copy[64], mnemonic_copy[64], message_copy[256];
  diagnostic_t d = {
      .severity = severity,
      .kind = kind,
      .has_guest_offset = has_offset,
      .guest_offset = offset,
      .mnemonic = mnemonic,
      .message = message,
      .required_work = required_work,
  };
#define COPY(field, buffer)                                                  \
  if (field != NULL) {                                                       \
    strncpy(buffer, field, sizeof buffer - 1);                               \
    buffer[sizeof buffer - 1] = '\0';                                        \
    d.field = buffer;                                                        \
  }
  COPY(severity, severity_copy)
  COPY(kind, kind_copy)
  COPY(mnemonic, mnemonic_copy)
  COPY(message, message_copy)
#undef COPY
  callback(&d, user_data);
  memset(severity_copy, 0, sizeof severity_copy);
  memset(kind_copy, 0, sizeof kind_copy);
  memset(mnemonic_copy, 0, sizeof mnemonic_copy);
  memset(message_copy, 0, sizeof message_copy);
}

#define ERROR_DIAGNOSTIC(kind, message) \
  diagnose(callback, user_data, "error", kind, false, 0, NULL, message, false)

/* The one implementation behind every shape's entry points. `info_required`:
 * shapes (b) and (c); `info` is NULL for shape (a). */
static rj_status_t translate(const void *source_elf, size_t source_size, uint8_t **translated_elf,
                             size_t *translated_size, bool info_required, info_t *info,
                             callback_t callback, void *user_data) {
  if (info != NULL)
    memset(info, 0, sizeof *info);
  if (translated_elf != NULL)
    *translated_elf = NULL;
  if (translated_size != NULL)
    *translated_size = 0;
#if defined(TEST_ROCJITSU_MODE_INVALID)
  const bool answer_invalid = true;
#else
  const bool answer_invalid = false;
#endif
  if (answer_invalid || source_elf == NULL || source_size == 0 || translated_elf == NULL ||
      translated_size == NULL || (info_required && info == NULL)) {
    ERROR_DIAGNOSTIC("api-invalid-argument", "test double: invalid argument");
    return ROCJITSU_STATUS_INVALID_ARGUMENT;
  }
  const uint8_t *source = source_elf;
  if (info != NULL)
    info->source_code_object_id = fnv1a64(source, source_size);
  if (!is_gfx1250(source, source_size)) {
    ERROR_DIAGNOSTIC("input-invalid-code-object", "test double: not a gfx1250 code object");
    return ROCJITSU_STATUS_INVALID_CODE_OBJECT;
  }

#if defined(TEST_ROCJITSU_MODE_CHANGE) || defined(TEST_ROCJITSU_MODE_NOFREE)
  uint8_t *out = new_buffer(source_size);
  if (out == NULL) {
    ERROR_DIAGNOSTIC("output-allocation-failed", "test double: malloc failed");
    return ROCJITSU_STATUS_OUT_OF_RESOURCES;
  }
  memcpy(out, source, source_size);
  memcpy(out + EI_PAD, TEST_ROCJITSU_MARKER, 7);
  diagnose(callback, user_data, "warning", "translator-residual-rewrite", true, 0x100,
           "s_wait_tensorcnt", "test double: rewrote 3 instructions", false);
  diagnose(callback, user_data, "warning", "translator-legalization", false, 0, NULL,
           "test double: one required-work item", true);
  diagnose(callback, user_data, "warning", "test-double-undocumented-kind", false, 0, NULL, NULL,
           false);
  if (info != NULL)
    info->changed_instruction_count = 3;
  *translated_elf = out;
  *translated_size = source_size;
  return ROCJITSU_STATUS_SUCCESS;
#elif defined(TEST_ROCJITSU_MODE_REFUSE)
  ERROR_DIAGNOSTIC("result-not-dispatchable", "test double: nothing dispatchable after translation");
  return ROCJITSU_STATUS_INVALID_CODE_OBJECT;
#elif defined(TEST_ROCJITSU_MODE_ERROR)
  ERROR_DIAGNOSTIC("translation-exception", "test double: the translator threw");
  return ROCJITSU_STATUS_ERROR;
#elif defined(TEST_ROCJITSU_MODE_OOM)
  ERROR_DIAGNOSTIC("output-allocation-failed", "test double: out of memory");
  return ROCJITSU_STATUS_OUT_OF_RESOURCES;
#elif defined(TEST_ROCJITSU_MODE_INVALID_FILE)
  ERROR_DIAGNOSTIC("test-double-invalid-file", "test double: INVALID_FILE");
  return ROCJITSU_STATUS_INVALID_FILE;
#elif defined(TEST_ROCJITSU_MODE_UNKNOWN)
  ERROR_DIAGNOSTIC("test-double-unknown-status", "test double: a status from the future");
  return STATUS_UNKNOWN;
#elif defined(TEST_ROCJITSU_MODE_GARBAGE)
  uint8_t *out = new_buffer(256);
  if (out == NULL)
    return ROCJITSU_STATUS_OUT_OF_RESOURCES;
  memset(out, 0xa5, 256);
  diagnose(callback, user_data, "warning", "translator-residual-rewrite", false, 0, NULL,
           "test double: garbage output", false);
  if (info != NULL)
    info->changed_instruction_count = 1;
  *translated_elf = out;
  *translated_size = 256;
  return ROCJITSU_STATUS_SUCCESS;
#elif defined(TEST_ROCJITSU_MODE_EMPTY)
  uint8_t *out = new_buffer(0);
  if (out == NULL)
    return ROCJITSU_STATUS_OUT_OF_RESOURCES;
  diagnose(callback, user_data, "warning", "translator-nothing-to-translate", false, 0, NULL,
           "test double: empty output", false);
  *translated_elf = out;
  *translated_size = 0;
  return ROCJITSU_STATUS_SUCCESS;
#elif defined(TEST_ROCJITSU_MODE_NULL)
  diagnose(callback, user_data, "warning", "translator-nothing-to-translate", false, 0, NULL,
           "test double: no buffer", false);
  *translated_size = source_size;
  return ROCJITSU_STATUS_SUCCESS;
#elif defined(TEST_ROCJITSU_MODE_INVALID)
  return ROCJITSU_STATUS_INVALID_ARGUMENT; /* answered above */
#else
#error "unknown TEST_ROCJITSU_MODE"
#endif
}

/* ---- the entry points of each shape ------------------------------------------------ */

#if defined(TEST_ROCJITSU_SHAPE_A)

EXPORT rj_status_t rj_gfx1250_b0_to_a0_translate(const void *source_elf, size_t source_size,
                                                 uint8_t **translated_elf,
                                                 size_t *translated_size) {
  count_call(false, false, false);
  return translate(source_elf, source_size, translated_elf, translated_size, false, NULL, NULL,
                   NULL);
}

#elif defined(TEST_ROCJITSU_SHAPE_B)

EXPORT rj_status_t rj_gfx1250_b0_to_a0_translate_with_info(
    const void *source_elf, size_t source_size, uint8_t **translated_elf, size_t *translated_size,
    rj_gfx1250_b0_to_a0_translation_info_t *info) {
  count_call(true, info == NULL, false);
  return translate(source_elf, source_size, translated_elf, translated_size, true, info, NULL,
                   NULL);
}

/* The four-argument wrapper: _with_info with an info of its own. */
EXPORT rj_status_t rj_gfx1250_b0_to_a0_translate(const void *source_elf, size_t source_size,
                                                 uint8_t **translated_elf,
                                                 size_t *translated_size) {
  count_call(false, false, false);
  info_t info;
  return translate(source_elf, source_size, translated_elf, translated_size, true, &info, NULL,
                   NULL);
}

#else /* TEST_ROCJITSU_SHAPE_C, _CW */

#if defined(TEST_ROCJITSU_SHAPE_CW)
/* The map still names _with_info: the five-argument entry beside the
 * seven-argument translate. */
EXPORT rj_status_t rj_gfx1250_b0_to_a0_translate_with_info(
    const void *source_elf, size_t source_size, uint8_t **translated_elf, size_t *translated_size,
    rj_gfx1250_b0_to_a0_translation_info_t *info) {
  count_call(true, info == NULL, false);
  return translate(source_elf, source_size, translated_elf, translated_size, true, info, NULL,
                   NULL);
}
#else
/* The current map's C++ diagnostics entry (rocjitsu::emit_gfx1250_b0_to_a0_diagnostics),
 * under its mangled name; exported only to show the tool ignores it. */
EXPORT void emit_diagnostics(void) __asm__("_ZN8rocjitsu33emit_gfx1250_b0_to_a0_diagnosticsEv");
EXPORT void emit_diagnostics(void) {}
#endif

EXPORT rj_status_t rj_gfx1250_b0_to_a0_translate(
    const void *source_elf, size_t source_size, uint8_t **translated_elf, size_t *translated_size,
    rj_gfx1250_b0_to_a0_translation_info_t *info,
    rj_gfx1250_b0_to_a0_diagnostic_callback_t diagnostic_callback, void *user_data) {
  count_call(true, info == NULL, diagnostic_callback != NULL);
  return translate(source_elf, source_size, translated_elf, translated_size, true, info,
                   diagnostic_callback, user_data);
}

#endif
