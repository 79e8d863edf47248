/* A test double for a COMGR that exports the hotswap rewriter: the Gen-2
 * data-object ABI (amd_comgr_hotswap_rewrite at node amd_comgr_3.2,
 * amd_comgr_hotswap_rewrite_with_options at amd_comgr_3.4) plus the data-object
 * functions a client needs (create/set/get/release data, get_data_isa_name),
 * with COMGR's own types from Debian's amd_comgr.h.
 *
 * One source, one mode per library (compile definition TEST_REWRITER_MODE_*):
 *   change     SUCCESS; the output is the input with TEST_REWRITER_MARKER written
 *              into e_ident[EI_PAD..EI_NIDENT) (bytes 9..15, padding that every ELF
 *              reader ignores): a valid AMDGPU ELF with the same ISA that differs
 *              from the input, and that a test recognises by the marker.
 *   unchanged  SUCCESS; the output is a byte-for-byte copy of the input.
 *   error      AMD_COMGR_STATUS_ERROR for every rewrite.
 *   stub       AMD_COMGR_STATUS_ERROR_INVALID_ARGUMENT for everything, *output
 *              untouched: COMGR's deprecated stubs (Gen 3).
 *   empty      SUCCESS with an output data object of zero bytes.
 *   garbage    SUCCESS with 256 bytes that are not an ELF.
 *   missing    the data-object functions only, no hotswap symbols.
 *   prototype  the raw-buffer Gen-1 amd_comgr_hotswap_rewrite plus
 *              amd_comgr_hotswap_needs_transpile, both at amd_comgr_3.2.
 *
 * Every call of a hotswap entry point increments a counter that tests read with
 * test_rewriter_calls() (dlopen the same path; the loader returns the same
 * instance). The ISA arguments of the last call are kept for
 * test_rewriter_last_isas(), its flags for test_rewriter_last_flags().
 */
#include "hotswap_comgr.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TEST_REWRITER_MARKER "HOTSWAP" /* 7 bytes: e_ident[9..16) */
#define EI_PAD 9

#define EXPORT __attribute__((visibility("default")))

/* ---- data objects --------------------------------------------------------- */

typedef struct test_data {
  uint64_t magic;
  amd_comgr_data_kind_t kind;
  size_t size;
  char *bytes;
} test_data;

#define TEST_DATA_MAGIC 0x7465737464617461ull /* "testdata" */

static test_data *data_of(amd_comgr_data_t handle) {
  test_data *d = (test_data *)(uintptr_t)handle.handle;
  return d != NULL && d->magic == TEST_DATA_MAGIC ? d : NULL;
}

EXPORT amd_comgr_status_t amd_comgr_create_data(amd_comgr_data_kind_t kind,
                                                amd_comgr_data_t *data) {
  if (data == NULL || kind <= AMD_COMGR_DATA_KIND_UNDEF || kind > AMD_COMGR_DATA_KIND_LAST)
    return AMD_COMGR_STATUS_ERROR_INVALID_ARGUMENT;
  test_data *d = calloc(1, sizeof *d);
  if (d == NULL)
    return AMD_COMGR_STATUS_ERROR_OUT_OF_RESOURCES;
  d->magic = TEST_DATA_MAGIC;
  d->kind = kind;
  data->handle = (uint64_t)(uintptr_t)d;
  return AMD_COMGR_STATUS_SUCCESS;
}

EXPORT amd_comgr_status_t amd_comgr_release_data(amd_comgr_data_t data) {
  test_data *d = data_of(data);
  if (d == NULL)
    return AMD_COMGR_STATUS_ERROR_INVALID_ARGUMENT;
  d->magic = 0;
  free(d->bytes);
  free(d);
  return AMD_COMGR_STATUS_SUCCESS;
}

EXPORT amd_comgr_status_t amd_comgr_set_data(amd_comgr_data_t data, size_t size,
                                             const char *bytes) {
  test_data *d = data_of(data);
  if (d == NULL || size == 0 || bytes == NULL)
    return AMD_COMGR_STATUS_ERROR_INVALID_ARGUMENT;
  char *copy = malloc(size);
  if (copy == NULL)
    return AMD_COMGR_STATUS_ERROR_OUT_OF_RESOURCES;
  memcpy(copy, bytes, size);
  free(d->bytes);
  d->bytes = copy;
  d->size = size;
  return AMD_COMGR_STATUS_SUCCESS;
}

/* COMGR's size-query convention: bytes NULL sets *size; otherwise copies
 * min(*size, data size) and sets *size to the data size. */
EXPORT amd_comgr_status_t amd_comgr_get_data(amd_comgr_data_t data, size_t *size, char *bytes) {
  test_data *d = data_of(data);
  if (d == NULL || size == NULL)
    return AMD_COMGR_STATUS_ERROR_INVALID_ARGUMENT;
  if (bytes != NULL && d->size != 0)
    memcpy(bytes, d->bytes, *size < d->size ? *size : d->size);
  *size = d->size;
  return AMD_COMGR_STATUS_SUCCESS;
}

/* Only what a rewriter-only library (e.g. rocjitsu's shim) offers: the
 * processor-less answer is not needed by the tests, so this refuses. */
EXPORT amd_comgr_status_t amd_comgr_get_data_isa_name(amd_comgr_data_t data, size_t *size,
                                                      char *isa_name) {
  (void)isa_name;
  if (data_of(data) == NULL || size == NULL)
    return AMD_COMGR_STATUS_ERROR_INVALID_ARGUMENT;
  return AMD_COMGR_STATUS_ERROR;
}

/* ---- call accounting ------------------------------------------------------ */

static pthread_mutex_t calls_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned calls;
static char last_source[256], last_target[256];
static uint64_t last_flags = UINT64_MAX; /* UINT64_MAX: the plain rewrite */

/* TEST_REWRITER_DELAY_MS (tests/cache): each call takes that long, so that
 * processes starting together overlap while one of them rewrites. */
__attribute__((unused)) static void count_call(const char *source, const char *target) {
  const char *delay = getenv("TEST_REWRITER_DELAY_MS");
  if (delay != NULL && atoi(delay) > 0) {
    struct timespec pause = {atoi(delay) / 1000, (long)(atoi(delay) % 1000) * 1000000L};
    nanosleep(&pause, NULL);
  }
  pthread_mutex_lock(&calls_lock);
  ++calls;
  snprintf(last_source, sizeof last_source, "%s", source != NULL ? source : "(null)");
  snprintf(last_target, sizeof last_target, "%s", target != NULL ? target : "(null)");
  pthread_mutex_unlock(&calls_lock);
}

/* Number of calls of amd_comgr_hotswap_rewrite(_with_options) so far. */
EXPORT unsigned test_rewriter_calls(void) {
  pthread_mutex_lock(&calls_lock);
  unsigned n = calls;
  pthread_mutex_unlock(&calls_lock);
  return n;
}

/* The flags of the last call: UINT64_MAX when it was the plain
 * amd_comgr_hotswap_rewrite, else the options' flags. */
EXPORT uint64_t test_rewriter_last_flags(void) {
  pthread_mutex_lock(&calls_lock);
  uint64_t flags = last_flags;
  pthread_mutex_unlock(&calls_lock);
  return flags;
}

/* Copies the ISA names of the last call into the caller's buffers (each at
 * least 256 bytes). */
EXPORT void test_rewriter_last_isas(char *source, char *target) {
  pthread_mutex_lock(&calls_lock);
  memcpy(source, last_source, sizeof last_source);
  memcpy(target, last_target, sizeof last_target);
  pthread_mutex_unlock(&calls_lock);
}

/* ---- the rewriter --------------------------------------------------------- */

#if defined(TEST_REWRITER_MODE_PROTOTYPE)

/* Gen 1 (raw buffers). Never to be called by a Gen-2 client: this one only
 * counts and fails. */
EXPORT amd_comgr_status_t amd_comgr_hotswap_rewrite(const void *elf_data, size_t elf_size,
                                                    const char *source_isa,
                                                    const char *target_isa, uint32_t flags,
                                                    const char *rules_json, void **out_elf,
                                                    size_t *out_elf_size, void *result) {
  (void)elf_data, (void)elf_size, (void)flags, (void)rules_json, (void)out_elf,
      (void)out_elf_size, (void)result;
  count_call(source_isa, target_isa);
  return AMD_COMGR_STATUS_ERROR;
}

EXPORT amd_comgr_status_t amd_comgr_hotswap_needs_transpile(const char *source_isa,
                                                            const char *target_isa,
                                                            bool *needs_transpile) {
  count_call(source_isa, target_isa);
  if (needs_transpile != NULL)
    *needs_transpile = false;
  return AMD_COMGR_STATUS_SUCCESS;
}

#elif !defined(TEST_REWRITER_MODE_MISSING)

typedef struct amd_comgr_hotswap_rewrite_options_s {
  size_t size;
  uint64_t flags;
} amd_comgr_hotswap_rewrite_options_t;

#define KNOWN_FLAGS 0x3u /* ENTRY_TRAMPOLINES | STRICT_MODE */

__attribute__((unused)) static amd_comgr_status_t new_output(const char *bytes, size_t size, amd_comgr_data_t *output) {
  amd_comgr_data_t out;
  amd_comgr_status_t status = amd_comgr_create_data(AMD_COMGR_DATA_KIND_EXECUTABLE, &out);
  if (status != AMD_COMGR_STATUS_SUCCESS)
    return status;
  if (size != 0) {
    status = amd_comgr_set_data(out, size, bytes);
    if (status != AMD_COMGR_STATUS_SUCCESS) {
      amd_comgr_release_data(out);
      return status;
    }
  }
  *output = out;
  return AMD_COMGR_STATUS_SUCCESS;
}

static void note_flags(uint64_t flags) {
  pthread_mutex_lock(&calls_lock);
  last_flags = flags;
  pthread_mutex_unlock(&calls_lock);
}

static amd_comgr_status_t rewrite(amd_comgr_data_t input, const char *source_isa,
                                  const char *target_isa, amd_comgr_data_t *output) {
  count_call(source_isa, target_isa);
#if defined(TEST_REWRITER_MODE_STUB)
  (void)input, (void)output;
  return AMD_COMGR_STATUS_ERROR_INVALID_ARGUMENT;
#else
  test_data *in = data_of(input);
  if (in == NULL || in->kind != AMD_COMGR_DATA_KIND_EXECUTABLE || in->size == 0 ||
      source_isa == NULL || target_isa == NULL || output == NULL)
    return AMD_COMGR_STATUS_ERROR_INVALID_ARGUMENT;
#if defined(TEST_REWRITER_MODE_ERROR)
  return AMD_COMGR_STATUS_ERROR;
#elif defined(TEST_REWRITER_MODE_EMPTY)
  return new_output(NULL, 0, output);
#elif defined(TEST_REWRITER_MODE_GARBAGE)
  char garbage[256];
  memset(garbage, 0xa5, sizeof garbage);
  return new_output(garbage, sizeof garbage, output);
#elif defined(TEST_REWRITER_MODE_UNCHANGED)
  return new_output(in->bytes, in->size, output);
#elif defined(TEST_REWRITER_MODE_CHANGE)
  if (in->size < 16)
    return AMD_COMGR_STATUS_ERROR;
  char *copy = malloc(in->size);
  if (copy == NULL)
    return AMD_COMGR_STATUS_ERROR_OUT_OF_RESOURCES;
  memcpy(copy, in->bytes, in->size);
  memcpy(copy + EI_PAD, TEST_REWRITER_MARKER, 7);
  amd_comgr_status_t status = new_output(copy, in->size, output);
  free(copy);
  return status;
#else
#error "unknown TEST_REWRITER_MODE"
#endif
#endif
}

EXPORT amd_comgr_status_t amd_comgr_hotswap_rewrite(amd_comgr_data_t input,
                                                    const char *source_isa_name,
                                                    const char *target_isa_name,
                                                    amd_comgr_data_t *output) {
  note_flags(UINT64_MAX);
  return rewrite(input, source_isa_name, target_isa_name, output);
}

EXPORT amd_comgr_status_t amd_comgr_hotswap_rewrite_with_options(
    amd_comgr_data_t input, const char *source_isa_name, const char *target_isa_name,
    const amd_comgr_hotswap_rewrite_options_t *rewrite_options, amd_comgr_data_t *output) {
  note_flags(rewrite_options != NULL ? rewrite_options->flags : UINT64_MAX - 1);
#if !defined(TEST_REWRITER_MODE_STUB)
  if (rewrite_options == NULL || rewrite_options->size < sizeof *rewrite_options ||
      (rewrite_options->flags & ~(uint64_t)KNOWN_FLAGS) != 0) {
    count_call(source_isa_name, target_isa_name);
    return AMD_COMGR_STATUS_ERROR_INVALID_ARGUMENT;
  }
#else
  (void)rewrite_options;
#endif
  return rewrite(input, source_isa_name, target_isa_name, output);
}

#endif
