// SPDX-License-Identifier: MIT
// The C API tests compiled as C++17: proves the header (extern "C", the
// hotswap_status_t enum with its fixed uint32_t type) works from C++.
#include "capi_test.c"
