// A test double of ROCr's own hotswap tool, libhsa_hotswap_rocjitsu.so
// (rocm-systems PR 9856; reference current-rocm.md §3): an HSA tool that ROCr
// installs before any HSA_TOOLS_LIB tool on a machine with an A0 GPU. Like the
// real one it exports only OnLoad/OnUnload, wraps the reader and load slots (a
// superset of libhsa-hotswap.so's), refuses a second OnLoad ("already
// installed"), and on OnUnload restores a slot only if it still holds its own
// wrapper. It translates nothing: its wrappers count calls and forward, which
// is all a test needs to see that libhsa-hotswap.so stands back.
// rocr_hook_loads() (dlsym) reports the number of load calls it saw.
#include <atomic>
#include <cstdint>

#include "hsa_headers.hpp"

namespace {

CoreApiTable *g_core = nullptr;
bool g_installed = false;
std::atomic<unsigned> g_loads{0};

decltype(hsa_code_object_reader_create_from_memory) *g_create_from_memory;
decltype(hsa_code_object_reader_create_from_file) *g_create_from_file;
decltype(hsa_code_object_reader_destroy) *g_destroy;
decltype(hsa_executable_load_agent_code_object) *g_load;

hsa_status_t create_from_memory(const void *bytes, size_t size, hsa_code_object_reader_t *reader) {
  return g_create_from_memory(bytes, size, reader);
}
hsa_status_t create_from_file(hsa_file_t file, hsa_code_object_reader_t *reader) {
  return g_create_from_file(file, reader);
}
hsa_status_t destroy(hsa_code_object_reader_t reader) { return g_destroy(reader); }
hsa_status_t load(hsa_executable_t executable, hsa_agent_t agent, hsa_code_object_reader_t reader,
                  const char *options, hsa_loaded_code_object_t *loaded) {
  ++g_loads;
  return g_load(executable, agent, reader, options, loaded);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) bool OnLoad(HsaApiTable *table, uint64_t, uint64_t, const char *const *) {
  if (g_installed || table == nullptr || table->core_ == nullptr) return false;
  g_core = table->core_;
  g_create_from_memory = g_core->hsa_code_object_reader_create_from_memory_fn;
  g_create_from_file = g_core->hsa_code_object_reader_create_from_file_fn;
  g_destroy = g_core->hsa_code_object_reader_destroy_fn;
  g_load = g_core->hsa_executable_load_agent_code_object_fn;
  g_core->hsa_code_object_reader_create_from_memory_fn = create_from_memory;
  g_core->hsa_code_object_reader_create_from_file_fn = create_from_file;
  g_core->hsa_code_object_reader_destroy_fn = destroy;
  g_core->hsa_executable_load_agent_code_object_fn = load;
  g_installed = true;
  return true;
}

__attribute__((visibility("default"))) void OnUnload() {
  if (!g_installed) return;
  if (g_core->hsa_code_object_reader_create_from_memory_fn == create_from_memory)
    g_core->hsa_code_object_reader_create_from_memory_fn = g_create_from_memory;
  if (g_core->hsa_code_object_reader_create_from_file_fn == create_from_file)
    g_core->hsa_code_object_reader_create_from_file_fn = g_create_from_file;
  if (g_core->hsa_code_object_reader_destroy_fn == destroy) g_core->hsa_code_object_reader_destroy_fn = g_destroy;
  if (g_core->hsa_executable_load_agent_code_object_fn == load)
    g_core->hsa_executable_load_agent_code_object_fn = g_load;
  g_installed = false;
}

__attribute__((visibility("default"))) unsigned rocr_hook_loads() { return g_loads.load(); }

}  // extern "C"
