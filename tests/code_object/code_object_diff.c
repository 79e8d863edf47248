/* Differential tests of hotswap_code_object_isa_name over the objects that
 * generate_objects.sh built with clang-22 for every LLVM 22 processor.
 *
 *   code_object_diff llvm  MANIFEST  every object: our name == the amdhsa.target
 *                                    LLVM wrote into its metadata ("-": must fail
 *                                    with HOTSWAP_STATUS_UNKNOWN_PROCESSOR)
 *   code_object_diff comgr MANIFEST  every object Debian's COMGR names:
 *                                    amd_comgr_get_data_isa_name == our name
 *
 * A missing manifest means generate_objects.sh skipped (tools absent): SKIP
 * off CI, failure in CI. */
#include <hotswap/hotswap.h>

#include "hotswap_check.h"
#include "hotswap_isa_name.h"
#include "hotswap_comgr.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool is_ci(void) {
  const char *ci = getenv("CI");
  if (ci == NULL || *ci == '\0')
    return false;
  static const char *const falsy[] = {"0", "false", "no", "off", "n", "f"};
  for (size_t i = 0; i < sizeof falsy / sizeof *falsy; ++i)
    if (strcasecmp(ci, falsy[i]) == 0)
      return false;
  return true;
}

/* COMGR's name, exactly as ROCr asks for it. */
static amd_comgr_status_t comgr_name(const unsigned char *elf, size_t size, char *name,
                                     size_t cap) {
  amd_comgr_data_t data;
  amd_comgr_status_t status = amd_comgr_create_data(AMD_COMGR_DATA_KIND_EXECUTABLE, &data);
  if (status != AMD_COMGR_STATUS_SUCCESS)
    return status;
  status = amd_comgr_set_data(data, size, (const char *)elf);
  size_t needed = 0;
  if (status == AMD_COMGR_STATUS_SUCCESS)
    status = amd_comgr_get_data_isa_name(data, &needed, NULL);
  if (status == AMD_COMGR_STATUS_SUCCESS && (needed == 0 || needed > cap))
    status = AMD_COMGR_STATUS_ERROR;
  if (status == AMD_COMGR_STATUS_SUCCESS) {
    status = amd_comgr_get_data_isa_name(data, &needed, name);
    name[needed - 1] = '\0';
  }
  amd_comgr_release_data(data);
  return status;
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "llvm") != 0 && strcmp(argv[1], "comgr") != 0)) {
    fprintf(stderr, "usage: %s llvm|comgr MANIFEST\n", argv[0]);
    return 2;
  }
  const bool llvm = strcmp(argv[1], "llvm") == 0;
  FILE *manifest = fopen(argv[2], "r");
  if (manifest == NULL) {
    if (is_ci()) {
      fprintf(stderr, "FAIL: no manifest %s (generate_objects.sh did not run)\n", argv[2]);
      return 1;
    }
    printf("SKIP: no manifest %s (clang-22/llvm-22 absent)\n", argv[2]);
    return 0;
  }
  char line[4096];
  unsigned objects = 0, compared = 0, comgr_refused = 0, failures = 0;
  while (fgets(line, sizeof line, manifest) != NULL) {
    char *path = strtok(line, "\t\n"), *expected = strtok(NULL, "\t\n");
    if (path == NULL || expected == NULL)
      continue;
    ++objects;
    size_t size = 0;
    unsigned char *elf = check_read_file(path, &size);
    if (elf == NULL) {
      fprintf(stderr, "FAIL: cannot read %s\n", path);
      ++failures;
      continue;
    }
    char ours[256] = "", theirs[256] = "";
    hotswap_status_t status = isa_name_of(elf, size, ours, sizeof ours);
    if (llvm) {
      bool ok = strcmp(expected, "-") == 0
                    ? status == HOTSWAP_STATUS_UNKNOWN_PROCESSOR
                    : status == HOTSWAP_STATUS_SUCCESS && strcmp(ours, expected) == 0;
      if (!ok) {
        fprintf(stderr, "FAIL: %s: LLVM says %s, we say %s (%s)\n", path, expected,
                status == HOTSWAP_STATUS_SUCCESS ? ours : "-", hotswap_status_string(status));
        ++failures;
      }
      ++compared;
    } else if (comgr_name(elf, size, theirs, sizeof theirs) == AMD_COMGR_STATUS_SUCCESS) {
      if (status != HOTSWAP_STATUS_SUCCESS || strcmp(ours, theirs) != 0) {
        fprintf(stderr, "FAIL: %s: COMGR says %s, we say %s (%s)\n", path, theirs,
                status == HOTSWAP_STATUS_SUCCESS ? ours : "-", hotswap_status_string(status));
        ++failures;
      }
      ++compared;
    } else {
      ++comgr_refused;
    }
    free(elf);
  }
  fclose(manifest);
  if (llvm)
    printf("LLVM 22 differential: %u objects, %u match, %u differ\n", objects,
           compared - failures, failures);
  else
    printf("COMGR differential: %u objects, %u named by COMGR (all compared), %u refused by COMGR, "
           "%u differ\n",
           objects, compared, comgr_refused, failures);
  /* Teeth: an empty or tiny manifest proves nothing. */
  unsigned minimum = llvm ? 300 : 100;
  if (compared < minimum) {
    fprintf(stderr, "FAIL: only %u objects compared (expected at least %u)\n", compared, minimum);
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
