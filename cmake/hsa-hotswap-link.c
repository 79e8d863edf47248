/* SPDX-License-Identifier: MIT */
/* libhsa-hotswap.so is built from the Rust static library (rust/hsa-hotswap). CMake
 * needs one source file to make a SHARED target; this one defines nothing. */
typedef int hotswap_link_unit_is_empty;
