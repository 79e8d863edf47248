// Pins the CoreApiTable layout the Rust mirror (rust/hsa-hotswap/src/hsa/table.rs)
// asserts, against the real hsa_api_trace.h. Compile-time checks; the program
// prints the offsets so a failure on a new ROCm shows what moved.
#include <cstddef>
#include <cstdio>

#include "hsa_headers.hpp"

#define PIN(member, offset)                                                    \
  static_assert(offsetof(CoreApiTable, member) == (offset), #member " moved"); \
  std::printf("%-46s %4zu\n", #member, offsetof(CoreApiTable, member))

static_assert(sizeof(ApiTableVersion) == 16, "ApiTableVersion");
static_assert(offsetof(HsaApiTable, core_) == 16, "HsaApiTable.core_");
static_assert(offsetof(CoreApiTable, hsa_init_fn) == 16, "first slot");
static_assert(sizeof(CoreApiTable) >= 1016, "CoreApiTable has at least 125 slots");

int main() {
  PIN(hsa_iterate_agents_fn, 56);
  PIN(hsa_agent_get_info_fn, 64);
  PIN(hsa_executable_destroy_fn, 688);
  PIN(hsa_agent_iterate_isas_fn, 880);
  PIN(hsa_isa_get_info_alt_fn, 888);
  PIN(hsa_code_object_reader_create_from_file_fn, 936);
  PIN(hsa_code_object_reader_create_from_memory_fn, 944);
  PIN(hsa_code_object_reader_destroy_fn, 952);
  PIN(hsa_executable_load_agent_code_object_fn, 976);
  std::printf("sizeof(CoreApiTable) %zu (%zu pointers), sizeof(HsaApiTable) %zu\n",
              sizeof(CoreApiTable), (sizeof(CoreApiTable) - 16) / sizeof(void *),
              sizeof(HsaApiTable));
  static_assert(HSA_AMD_AGENT_INFO_ASIC_REVISION == 0xA012, "ASIC revision attribute");
  static_assert(HSA_AGENT_INFO_DEVICE == 17, "device attribute");
  return sizeof(CoreApiTable) == 1016 ? 0 : 1;
}
