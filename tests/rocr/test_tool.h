// SPDX-License-Identifier: MIT
// The other HSA_TOOLS_LIB tools of the real-ROCr tests (test_tool.cpp): what
// each one saw, for the test application to read after the fact. One source,
// built once per role (CMakeLists.txt):
//   probe     records and changes nothing (listed first it sees ROCr's own
//             table; listed last, the table as the tools before it left it)
//   wrap      also wraps the five slots the hotswap tool patches, counting the
//             calls, and puts its slots back at OnUnload as hotswap does
//   refuse    records, then returns false from OnLoad
//   truncate  presents a core table that ends before
//             hsa_executable_load_agent_code_object_fn (as an older runtime's
//             would), so a tool listed after it must refuse the table
// Each library exports test_tool_record() and is linked with -z nodelete: ROCr
// dlcloses its tools at hsa_shut_down, and the records must outlive that.
#pragma once

#include <hsa_api_trace.h>

#include <cstdint>

namespace test_tool {

// Index of a patched slot in TestToolRecord::wrappers and friends.
enum Patched {
  kCreateFromMemory,
  kCreateFromFile,
  kReaderDestroy,
  kLoadAgentCodeObject,
  kExecutableDestroy,
  kPatched
};

// Up to this many OnLoad / OnUnload calls are kept (hsa_init twice).
constexpr int kCycles = 2;

struct Record {
  const char *role;
  int on_load_calls;
  int on_unload_calls;
  bool returned;               // what the last OnLoad returned
  HsaApiTable *table;          // the table of the last OnLoad: ROCr's own, live
  uint64_t runtime_version;    // OnLoad's arguments, last call
  uint64_t failed_count;
  char failed[4][512];
  // Per OnLoad / OnUnload call, as the table was when the call began.
  HsaApiTable *tables[kCycles];
  ApiTableVersion root_version[kCycles];
  ApiTableVersion amd_ext_version[kCycles];
  CoreApiTable core_at_load[kCycles];
  CoreApiTable core_at_unload[kCycles];
  // wrap: its wrappers, what they call, and how often they were called.
  void *wrappers[kPatched];
  void *next[kPatched];
  uint64_t calls[kPatched];
};

}  // namespace test_tool

// The record of the library it is called in (dlsym it through that library's handle).
extern "C" const test_tool::Record *test_tool_record();
