// The real hsa_api_trace.h of the hsa-runtime64 package CMake found. It is C++
// only and, in ROCm 5.x, includes its siblings without the "inc/" prefix only
// with AMD_INTERNAL_BUILD (defined by CMake for every stand-in source).
#pragma once
#if __has_include(<hsa/hsa_api_trace.h>)
#include <hsa/hsa_api_trace.h>
#include <hsa/hsa_ext_amd.h>
#else
#include <hsa_api_trace.h>
#include <hsa_ext_amd.h>
#endif
