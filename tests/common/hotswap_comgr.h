/* SPDX-License-Identifier: MIT */
/* COMGR's header, wherever this COMGR keeps it: ROCm 6+ installs
 * include/amd_comgr/amd_comgr.h, Debian 12 (COMGR 2.4) a flat include/amd_comgr.h. */
#ifndef HOTSWAP_TESTS_COMGR_H
#define HOTSWAP_TESTS_COMGR_H

#if defined(__has_include)
#if __has_include(<amd_comgr/amd_comgr.h>)
#include <amd_comgr/amd_comgr.h>
#else
#include <amd_comgr.h>
#endif
#else
#include <amd_comgr.h>
#endif

#endif /* HOTSWAP_TESTS_COMGR_H */
