/* The rocjitsu translator backend through the C API
 * (hotswap_retarget_code_object), one test-double library per process (the
 * rewriter is resolved once per process):
 *
 *   rocjitsu_test SHAPE MODE GFX1250_OBJECT PROBE_OBJECT
 *
 * SHAPE MODE is a rocjitsu test double (tests/rewriters/test_rocjitsu.c: shape
 * a, b, c or cw; mode change, refuse, error, oom, invalid, invalid-file, unknown,
 * garbage, empty, null, or c nofree), the library given by HSA_HOTSWAP_REWRITER
 * or, with HSA_HOTSWAP_REWRITER unset, found by its SONAME on LD_LIBRARY_PATH
 * (the linked COMGR, Debian's 2.4, has no rewriter). SHAPE "-" with MODE
 * "neither" (HSA_HOTSWAP_REWRITER names a library exporting neither rewriter
 * ABI) or "none" (unset, and no translator on the search path): no rewriter.
 *
 * The tool's log (HSA_HOTSWAP_LOG_LEVEL=debug) is captured from stderr and
 * checked, then printed. PROBE_OBJECT is the object the tool's probe translation
 * hands the translator (rust/hotswap-code-object/data/gfx1250-probe.co), whose
 * source id the probe's summary shows. */
#include <hotswap/hotswap.h>

#include "hotswap_check.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SOURCE_ISA "amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific+"
#define TARGET_ISA "amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific-"
#define SAME_ISA "amdgcn-amd-amdhsa--gfx1250"
#define SONAME "librocjitsu_gfx1250_b0_to_a0.so.0"

/* ---- the double's counters (same library instance as the tool's) ----------------- */

static const char *rewriter_env(void) {
  const char *path = getenv("HSA_HOTSWAP_REWRITER");
  return path != NULL && path[0] != '\0' ? path : NULL;
}

/* The counter `name` of the loaded double; -1 when it is not loaded or lacks it. */
static int counter(const char *name) {
  const char *path = rewriter_env();
  void *lib = dlopen(path != NULL ? path : SONAME, RTLD_NOW | RTLD_NOLOAD);
  if (lib == NULL)
    return -1;
  unsigned (*fn)(void) = (unsigned (*)(void))dlsym(lib, name);
  int n = fn != NULL ? (int)fn() : -1;
  dlclose(lib);
  return n;
}

/* ---- the captured log ---------------------------------------------------------------- */

static FILE *log_file;
static int saved_stderr = -1;

static void capture_log(void) {
  log_file = tmpfile();
  fflush(stderr);
  saved_stderr = dup(2);
  if (log_file == NULL || saved_stderr < 0 || dup2(fileno(log_file), 2) < 0) {
    fprintf(stderr, "cannot capture stderr\n");
    exit(2);
  }
}

/* Restores stderr; the log in a malloc'd string. */
static char *end_capture(void) {
  fflush(stderr);
  dup2(saved_stderr, 2);
  close(saved_stderr);
  long n = ftell(log_file);
  char *text = calloc(1, n > 0 ? (size_t)n + 1 : 1);
  rewind(log_file);
  if (n > 0 && fread(text, 1, (size_t)n, log_file) != (size_t)n)
    text[0] = '\0';
  fclose(log_file);
  return text;
}

/* Number of `hotswap:` log lines containing `needle`. */
static int log_lines(const char *log, const char *needle) {
  int n = 0;
  for (const char *line = log; *line != '\0';) {
    const char *end = strchr(line, '\n');
    size_t len = end != NULL ? (size_t)(end - line) : strlen(line);
    if (strncmp(line, "hotswap: ", 9) == 0) {
      char *copy = strndup(line, len);
      n += strstr(copy, needle) != NULL;
      free(copy);
    }
    line += len + (end != NULL);
  }
  return n;
}

#define CHECK_LOG(log, needle, expected)                                                   \
  do {                                                                                     \
    int n_ = log_lines(log, needle);                                                       \
    if (n_ != (expected))                                                                  \
      fprintf(stderr, "log: %d line(s) with \"%s\", expected %d\n", n_, needle, expected); \
    CHECK(n_ == (expected));                                                               \
  } while (0)

#define CHECK_LOG_SOME(log, needle)                                       \
  do {                                                                    \
    if (log_lines(log, needle) == 0)                                      \
      fprintf(stderr, "log: no line with \"%s\"\n", needle);              \
    CHECK(log_lines(log, needle) > 0);                                    \
  } while (0)

/* ---- calls ------------------------------------------------------------------------------ */

static uint64_t fnv1a64(const unsigned char *bytes, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i)
    hash = (hash ^ bytes[i]) * 0x100000001b3ull;
  return hash;
}

/* One retarget; on failure out/out_size must still be the input. */
static hotswap_status_t retarget(const unsigned char *elf, size_t size, const char *source,
                                 const char *target, hotswap_status_t expected) {
  void *out = (void *)0x1;
  size_t out_size = 0;
  hotswap_status_t status = hotswap_retarget_code_object(elf, size, source, target, &out, &out_size);
  if (status != expected)
    fprintf(stderr, "%s -> %s: status %s, expected %s\n", source, target,
            hotswap_status_string(status), hotswap_status_string(expected));
  CHECK(status == expected);
  if (status == HOTSWAP_STATUS_SUCCESS) {
    CHECK(out != NULL && out != elf);
    CHECK(out_size == size);
    CHECK(memcmp((const unsigned char *)out + 9, "HOTSWAP", 7) == 0); /* the double's marker */
    CHECK(memcmp(out, elf, 9) == 0 && memcmp((const unsigned char *)out + 16, elf + 16, size - 16) == 0);
    free(out); /* ours to free() */
  } else {
    CHECK(out == elf && out_size == size);
  }
  return status;
}

struct expectation {
  const char *mode;
  hotswap_status_t status;
  const char *rj_status; /* the status in the summary line, NULL: none */
  bool buffers;          /* the double hands out a buffer on each call */
};

static const struct expectation expectations[] = {
    {"change", HOTSWAP_STATUS_SUCCESS, "SUCCESS (0)", true},
    {"refuse", HOTSWAP_STATUS_REWRITE_REFUSED, "INVALID_CODE_OBJECT (4)", false},
    {"error", HOTSWAP_STATUS_REWRITE_FAILED, "ERROR (1)", false},
    {"oom", HOTSWAP_STATUS_OUT_OF_MEMORY, "OUT_OF_RESOURCES (3)", false},
    {"invalid", HOTSWAP_STATUS_REWRITE_FAILED, "INVALID_ARGUMENT (2)", false},
    {"invalid-file", HOTSWAP_STATUS_REWRITE_FAILED, "INVALID_FILE (5)", false},
    {"unknown", HOTSWAP_STATUS_REWRITE_FAILED, "an unknown status (77)", false},
    {"garbage", HOTSWAP_STATUS_REWRITE_FAILED, "SUCCESS (0)", true},
    {"empty", HOTSWAP_STATUS_REWRITE_FAILED, "SUCCESS (0)", true},
    {"null", HOTSWAP_STATUS_REWRITE_FAILED, "SUCCESS (0)", false},
    {"nofree", HOTSWAP_STATUS_REWRITER_UNAVAILABLE, NULL, false},
};

/* "neither": the library named exports no rewriter ABI, so there is no
 * rewriter: every call says so, the reason is logged once. "none": no
 * translator anywhere (and Debian's COMGR has no rewriter), so the native
 * rewriter is used, which leaves this kernel unchanged; why the others were
 * passed over is logged once. */
static void no_rewriter(const unsigned char *elf, size_t size, const char *mode) {
  bool none = strcmp(mode, "none") == 0;
  capture_log();
  for (int i = 0; i < 3; ++i)
    retarget(elf, size, SOURCE_ISA, TARGET_ISA,
             none ? HOTSWAP_STATUS_UNCHANGED : HOTSWAP_STATUS_REWRITER_UNAVAILABLE);
  char *log = end_capture();
  fputs(log, stdout);
  CHECK_LOG(log, "no hotswap rewriter: ", none ? 0 : 1);
  CHECK_LOG(log, "): using the native rewriter", none ? 1 : 0);
  if (!none) {
    CHECK_LOG(log, "exports neither amd_comgr_hotswap_rewrite (COMGR ABI) nor "
                   "rj_gfx1250_b0_to_a0_translate (rocjitsu translator)", 1);
    CHECK(counter("test_rewriter_calls") == 0);
  } else {
    CHECK_LOG(log, "no rocjitsu translator: ", 1);
    CHECK_LOG(log, SONAME ": cannot open shared object file", 1);
  }
  free(log);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s SHAPE MODE GFX1250_OBJECT PROBE_OBJECT\n", argv[0]);
    return 2;
  }
  const char *shape = argv[1], *mode = argv[2];
  size_t size = 0;
  unsigned char *elf = check_read_file(argv[3], &size);
  if (elf == NULL || size < 64) {
    fprintf(stderr, "cannot read %s\n", argv[3]);
    return 2;
  }
  size_t probe_size = 0;
  unsigned char *probe = check_read_file(argv[4], &probe_size);
  if (probe == NULL) {
    fprintf(stderr, "cannot read %s\n", argv[4]);
    return 2;
  }
  uint64_t probe_id = fnv1a64(probe, probe_size);
  free(probe);
  unsigned char *pristine = malloc(size);
  memcpy(pristine, elf, size);

  if (strcmp(shape, "-") == 0) {
    no_rewriter(elf, size, mode);
  } else {
    const struct expectation *e = NULL;
    for (size_t i = 0; i < sizeof expectations / sizeof *expectations; ++i)
      if (strcmp(expectations[i].mode, mode) == 0)
        e = &expectations[i];
    if (e == NULL || (strcmp(shape, "a") != 0 && strcmp(shape, "b") != 0 &&
                      strcmp(shape, "c") != 0 && strcmp(shape, "cw") != 0)) {
      fprintf(stderr, "unknown shape/mode %s %s\n", shape, mode);
      return 2;
    }
    bool usable = e->status != HOTSWAP_STATUS_REWRITER_UNAVAILABLE;
    /* The API shape the tool must detect: cw (the seven-argument translate with
     * _with_info still exported) is shape (c), its diagnostics included. */
    const char api = shape[0];
    capture_log();

    /* The first call resolves the rewriter: one probe translation, then the call. */
    retarget(elf, size, SOURCE_ISA, TARGET_ISA, e->status);
    CHECK(counter("test_rewriter_calls") == (usable ? 2 : 0));
    retarget(elf, size, SOURCE_ISA, TARGET_ISA, e->status);
    CHECK(counter("test_rewriter_calls") == (usable ? 3 : 0));

    /* What the translator does not translate never reaches it: a same-target pair,
     * and a code object that is not gfx1250 (EF_AMDGPU_MACH 0x4c, gfx942). */
    hotswap_status_t unsupported =
        usable ? HOTSWAP_STATUS_REWRITE_UNSUPPORTED : HOTSWAP_STATUS_REWRITER_UNAVAILABLE;
    retarget(elf, size, SAME_ISA, SAME_ISA, unsupported);
    retarget(elf, size, SOURCE_ISA, SOURCE_ISA, unsupported);
    unsigned char *other = malloc(size);
    memcpy(other, elf, size);
    other[48] = 0x4c;
    retarget(other, size, SOURCE_ISA, TARGET_ISA, unsupported);
    free(other);
    CHECK(counter("test_rewriter_calls") == (usable ? 3 : 0));

    /* Every buffer the translator handed out went back through its own free. */
    CHECK(counter("test_rocjitsu_outstanding") == 0);
    CHECK(counter("test_rocjitsu_bad_releases") == 0);
    CHECK(counter("test_rocjitsu_releases") == (e->buffers ? 3 : 0));
    /* (b), (c): info always given; (c): the callback always given. */
    CHECK(counter("test_rocjitsu_null_info_calls") == 0);
    CHECK(counter("test_rocjitsu_callback_calls") == (api == 'c' && usable ? 3 : 0));

    char *log = end_capture();
    fputs(log, stdout);
    char needle[256];
    if (!usable) {
      CHECK_LOG(log, "no hotswap rewriter", 1);
      CHECK_LOG(log, "exports rj_gfx1250_b0_to_a0_translate but not rj_gfx1250_b0_to_a0_free", 1);
    } else {
      snprintf(needle, sizeof needle, "rewriter: rocjitsu translator %s, API shape (%c)",
               rewriter_env() != NULL ? rewriter_env() : SONAME, api);
      CHECK_LOG(log, needle, 1);
      CHECK_LOG(log, "(probe translation: ", 1);
      if (rewriter_env() == NULL)
        CHECK_LOG(log, "not using the linked COMGR: ", 1);
      /* A summary per call, the probe's included. */
      snprintf(needle, sizeof needle, "translate: status %s, ", e->rj_status);
      CHECK_LOG(log, needle, 3);
      CHECK_LOG(log, "translate: status ", 3);
      /* The probe goes through the plain symbol: shape (b)'s is the four-argument
       * wrapper, so its probe has no translation info; later calls use _with_info. */
      int probe_info = api == 'a' || api == 'b' ? 0 : 1;
      if (api == 'a') {
        CHECK_LOG(log, "no translation info in this shape", 3);
      } else if (strcmp(mode, "invalid") == 0) {
        CHECK_LOG(log, "no translation info in this shape", 1 - probe_info);
        CHECK_LOG(log, "source id fnv1a64:0000000000000000, 0 changed instruction(s)",
                  2 + probe_info);
      } else {
        /* The probe's id, then the input's (the same when the input is the probe). */
        CHECK_LOG(log, "no translation info in this shape", 1 - probe_info);
        int changed = strcmp(mode, "change") == 0 ? 3 : strcmp(mode, "garbage") == 0 ? 1 : 0;
        uint64_t id = fnv1a64(elf, size);
        snprintf(needle, sizeof needle, "source id fnv1a64:%016" PRIx64 ", %d changed", probe_id,
                 changed);
        CHECK_LOG(log, needle, id == probe_id ? 2 + probe_info : probe_info);
        snprintf(needle, sizeof needle, "source id fnv1a64:%016" PRIx64 ", %d changed", id, changed);
        CHECK_LOG(log, needle, id == probe_id ? 2 + probe_info : 2);
      }
      /* Diagnostics: shape (c) only, for every outcome. */
      if (api != 'c') {
        CHECK_LOG(log, "rocjitsu diagnostic: ", 0);
      } else if (strcmp(mode, "change") == 0) {
        CHECK_LOG(log, "rocjitsu diagnostic: warning translator-residual-rewrite at guest offset "
                       "0x100 (s_wait_tensorcnt): test double: rewrote 3 instructions", 3);
        CHECK_LOG(log, "rocjitsu diagnostic: warning translator-legalization: test double: one "
                       "required-work item [required work]", 3);
        CHECK_LOG(log, "rocjitsu diagnostic: warning test-double-undocumented-kind: (no message)", 3);
      } else {
        CHECK_LOG(log, "rocjitsu diagnostic: ", 3);
        if (strcmp(mode, "refuse") == 0)
          CHECK_LOG(log, "rocjitsu diagnostic: error result-not-dispatchable: test double: "
                         "nothing dispatchable after translation", 3);
      }
      /* A warning naming the status of every failed call (the probe is not one). */
      if (e->status != HOTSWAP_STATUS_SUCCESS) {
        if (strcmp(e->rj_status, "SUCCESS (0)") != 0) {
          snprintf(needle, sizeof needle, "translate returned %s", e->rj_status);
          CHECK_LOG(log, needle, 2);
        } else if (strcmp(mode, "garbage") == 0) {
          CHECK_LOG(log, "returned 256 bytes that are not an AMDGPU ELF", 2);
        } else {
          CHECK_LOG(log, "translate returned SUCCESS with ", 2);
        }
      }
      if (strcmp(mode, "refuse") == 0)
        CHECK_LOG(log, api == 'c' ? "refused: the rocjitsu translator reports "
                                         "INVALID_CODE_OBJECT: result-not-dispatchable: test "
                                         "double: nothing dispatchable after translation"
                                       : "refused: the rocjitsu translator reports "
                                         "INVALID_CODE_OBJECT: not a translatable",
                  2);
    }
    free(log);
  }
  CHECK(memcmp(elf, pristine, size) == 0); /* the input is never modified */
  free(pristine);
  free(elf);
  printf("rocjitsu %s %s\n", shape, mode);
  return check_finish("rocjitsu");
}
