/* SPDX-License-Identifier: MIT */
/* Unit tests of the hotswap C API through the public header and the built
 * libhsa-hotswap.so. Compiled as C11 (capi_test.c) and as C++17 (capi_test.cpp
 * includes this file), both with -Wall -Wextra -Werror -pedantic, which is also
 * the header's compile test. */
#if !defined(__cplusplus)
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#endif
#include <hotswap/hotswap.h>

#include "hotswap_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>


#define STR2(x) #x
#define STR(x) STR2(x)

static void test_version(void) {
  CHECK(HOTSWAP_VERSION_MAJOR == EXPECTED_VERSION_MAJOR);
  CHECK(HOTSWAP_VERSION_MINOR == EXPECTED_VERSION_MINOR);
  CHECK(HOTSWAP_VERSION_PATCH == EXPECTED_VERSION_PATCH);
  CHECK(strcmp(hotswap_version(), EXPECTED_VERSION_STRING) == 0);
  CHECK(strcmp(hotswap_version(), STR(HOTSWAP_VERSION_MAJOR) "." STR(HOTSWAP_VERSION_MINOR) "." STR(
                                      HOTSWAP_VERSION_PATCH)) == 0);
  CHECK(strcmp(HOTSWAP_TOOL_LIBRARY_NAME, "libhsa-hotswap.so") == 0);
  CHECK(hotswap_tools_lib_names_hotswap(HOTSWAP_TOOL_LIBRARY_NAME));
}

static void test_status_strings(void) {
  uint32_t s;
  CHECK(HOTSWAP_STATUS_SUCCESS == 0);
  CHECK(strcmp(hotswap_status_string(HOTSWAP_STATUS_SUCCESS), "success") == 0);
  for (s = HOTSWAP_STATUS_SUCCESS; s <= HOTSWAP_STATUS_REWRITE_REFUSED; ++s) {
    const char *text = hotswap_status_string(s);
    CHECK(text != NULL && text[0] != '\0');
    CHECK(strcmp(text, "unknown hotswap status") != 0);
  }
  CHECK(strcmp(hotswap_status_string(HOTSWAP_STATUS_REWRITE_REFUSED + 1), "unknown hotswap status") == 0);
  CHECK(strcmp(hotswap_status_string(0xffffffffu), "unknown hotswap status") == 0);
}

/* The wiring only: ROCr's parsing itself is tested in Rust, against a model of
 * ROCr's parser (rust/hsa-hotswap/tests/tools_lib_rocr_model.rs). */
static void test_tools_lib_names_hotswap(void) {
  CHECK(hotswap_tools_lib_names_hotswap("libother.so /opt/rocm/lib/libhsa-hotswap.so"));
  CHECK(!hotswap_tools_lib_names_hotswap("libother.so"));
  CHECK(!hotswap_tools_lib_names_hotswap(""));
  CHECK(!hotswap_tools_lib_names_hotswap(NULL));
  /* A value that is not UTF-8 is parsed, not refused. */
  CHECK(hotswap_tools_lib_names_hotswap("\xff libhsa-hotswap.so"));
  /* ROCr never returns for a trailing backslash; this call does, with false. */
  CHECK(!hotswap_tools_lib_names_hotswap("libhsa-hotswap.so \\"));
}

static void set_env(const char *name, const char *value) {
  if (value) {
    setenv(name, value, 1);
  } else {
    unsetenv(name);
  }
}

/* hotswap_enabled() reads the environment once per process: each case runs in
 * a child forked before this process made any C API call that reads it. */
static bool enabled_in_child(const char *tools_lib, const char *disable, const char *tool_enable) {
  int status = 0;
  pid_t pid;
  set_env("HSA_TOOLS_LIB", tools_lib);
  set_env("HSA_HOTSWAP_DISABLE", disable);
  set_env("HSA_HOTSWAP_TOOL_ENABLE", tool_enable);
  fflush(stdout);
  pid = fork();
  if (pid == 0) {
    bool first = hotswap_enabled();
    /* A changed environment does not change the answer. */
    set_env("HSA_TOOLS_LIB", first ? NULL : "libhsa-hotswap.so");
    _exit(hotswap_enabled() == first ? (first ? 1 : 0) : 2);
  }
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) != 2);
  return WIFEXITED(status) && WEXITSTATUS(status) == 1;
}

static void test_enabled(void) {
  static const char *const falsy[] = {NULL, "", "0", "off", "OFF", "false", "False", "no", "n", "F"};
  static const char *const truthy[] = {"1", "yes", "on", "true", "disable"};
  static const char *const named = "libother.so /opt/rocm/lib/libhsa-hotswap.so";
  size_t i;
  CHECK(!enabled_in_child(NULL, NULL, NULL));
  CHECK(!enabled_in_child("libother.so", NULL, NULL));
  CHECK(!enabled_in_child("libhsa-hotswap.so.bak", NULL, NULL));
  for (i = 0; i < sizeof falsy / sizeof falsy[0]; ++i) CHECK(enabled_in_child(named, falsy[i], NULL));
  for (i = 0; i < sizeof truthy / sizeof truthy[0]; ++i) CHECK(!enabled_in_child(named, truthy[i], NULL));
  /* HSA_HOTSWAP_TOOL_ENABLE keeps this tool on despite HSA_HOTSWAP_DISABLE. */
  CHECK(enabled_in_child(named, "1", "1"));
  CHECK(!enabled_in_child(named, "1", "0"));
  set_env("HSA_TOOLS_LIB", NULL);
  set_env("HSA_HOTSWAP_DISABLE", NULL);
  set_env("HSA_HOTSWAP_TOOL_ENABLE", NULL);
}

/* The wiring and the NULL cases; the ISA-name parser itself is tested in Rust
 * (rust/hotswap-code-object/src/isa_name.rs). */
static void test_isa_is_gfx(void) {
  CHECK(hotswap_isa_is_gfx("amdgcn-amd-amdhsa--gfx1250:sramecc+", "gfx1250"));
  CHECK(!hotswap_isa_is_gfx("amdgcn-amd-amdhsa--gfx12500", "gfx1250"));
  CHECK(!hotswap_isa_is_gfx(NULL, "gfx1250"));
  CHECK(!hotswap_isa_is_gfx("amdgcn-amd-amdhsa--gfx1250", NULL));
  CHECK(!hotswap_isa_is_gfx("amdgcn-amd-amdhsa--gfx1250", ""));
  /* Bytes are compared exactly: two different invalid UTF-8 strings never
   * match (a lossy conversion would turn both into U+FFFD). */
  CHECK(!hotswap_isa_is_gfx("amdgcn-amd-amdhsa--\xfe", "\xff"));
  CHECK(hotswap_isa_is_gfx("amdgcn-amd-amdhsa--\xfe", "\xfe"));
}

static void test_supported_pairs(void) {
  CHECK(hotswap_is_supported_pair("gfx1250", "gfx1250"));
  CHECK(!hotswap_is_supported_pair("gfx1250", "gfx942"));
  CHECK(!hotswap_is_supported_pair(NULL, "gfx1250"));
  CHECK(!hotswap_is_supported_pair("gfx1250", NULL));
}

static void test_code_object_argument_checks(void) {
  static const unsigned char bytes[64] = {0x7f, 'E', 'L', 'F'};
  size_t size = 0;
  void *out = NULL;
  size_t out_size = 0;
  /* ISA name: NULL object, zero size, NULL size pointer. */
  CHECK(hotswap_code_object_isa_name(NULL, sizeof bytes, NULL, &size) == HOTSWAP_STATUS_INVALID_ARGUMENT);
  CHECK(hotswap_code_object_isa_name(bytes, 0, NULL, &size) == HOTSWAP_STATUS_INVALID_ARGUMENT);
  CHECK(hotswap_code_object_isa_name(bytes, sizeof bytes, NULL, NULL) == HOTSWAP_STATUS_INVALID_ARGUMENT);
  /* Retarget: NULL outputs are rejected; otherwise outputs are the input on failure. */
  CHECK(hotswap_retarget_code_object(bytes, sizeof bytes, "a", "b", NULL, &out_size) ==
        HOTSWAP_STATUS_INVALID_ARGUMENT);
  CHECK(hotswap_retarget_code_object(bytes, sizeof bytes, "a", "b", &out, NULL) ==
        HOTSWAP_STATUS_INVALID_ARGUMENT);
  CHECK(hotswap_retarget_code_object(bytes, sizeof bytes, NULL, "b", &out, &out_size) ==
        HOTSWAP_STATUS_INVALID_ARGUMENT);
  CHECK(out == (const void *)bytes && out_size == sizeof bytes);
  out = NULL;
  out_size = 0;
  CHECK(hotswap_retarget_code_object(bytes, 0, "a", "b", &out, &out_size) == HOTSWAP_STATUS_INVALID_ARGUMENT);
  CHECK(out == (const void *)bytes && out_size == 0);
}

int main(void) {
  test_enabled(); /* first: before any call that reads the environment */
  test_version();
  test_status_strings();
  test_tools_lib_names_hotswap();
  test_isa_is_gfx();
  test_supported_pairs();
  test_code_object_argument_checks();
  return check_finish("capi");
}
