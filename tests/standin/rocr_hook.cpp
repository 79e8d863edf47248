// A test double of ROCr's own hotswap tool, libhsa_hotswap_rocjitsu.so
// (rocm-systems PR 9856; reference current-rocm.md §3, §5b): an HSA tool that
// ROCr installs before any HSA_TOOLS_LIB tool on a machine with an A0 GPU (the
// stand-in's runtime applies ROCr's gate, see load_rocr_hook), or that
// HSA_TOOLS_LIB names. Like the real one it exports only OnLoad/OnUnload, wraps
// the reader and load slots (a superset of libhsa-hotswap.so's), refuses a
// second OnLoad ("already installed"), and on OnUnload restores a slot only if
// it still holds its own wrapper.
//
// Each load follows the hook's own rule (the same as hsa-hotswap's
// coexist::hook_load, which the Rust fake follows): the agent's first ISA name,
// the text after its last '-' cut at ':', must be "gfx1250" (so an A0 reported
// as gfx1250-strict is passed through), then its ASIC revision (unreadable:
// HSA_STATUS_ERROR_INVALID_AGENT; not 0: passed through); on A0 a gfx1250
// (EF_AMDGPU_MACH 0x49) object is "translated" (a copy with ROCRHK! in
// e_ident[9..16)) and any other object loaded as an unchanged copy, both
// through a reader of its own. rocr_hook_loads() and rocr_hook_translations()
// (dlsym) count what it saw.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "hsa_headers.hpp"

namespace {

CoreApiTable *g_core = nullptr;
bool g_installed = false;
std::atomic<unsigned> g_loads{0};
std::atomic<unsigned> g_translations{0};

decltype(hsa_code_object_reader_create_from_memory) *g_create_from_memory;
decltype(hsa_code_object_reader_create_from_file) *g_create_from_file;
decltype(hsa_code_object_reader_destroy) *g_destroy;
decltype(hsa_executable_load_agent_code_object) *g_load;
decltype(hsa_agent_get_info) *g_agent_get_info;
decltype(hsa_agent_iterate_isas) *g_iterate_isas;
decltype(hsa_isa_get_info_alt) *g_isa_get_info;

// Memory readers' bytes, copied when created (as the real hook copies them).
struct Saved {
  uint64_t reader;
  std::vector<uint8_t> bytes;
};
std::vector<Saved> g_saved;

hsa_status_t create_from_memory(const void *bytes, size_t size, hsa_code_object_reader_t *reader) {
  hsa_status_t s = g_create_from_memory(bytes, size, reader);
  if (s == HSA_STATUS_SUCCESS) {
    auto *b = static_cast<const uint8_t *>(bytes);
    g_saved.push_back(Saved{reader->handle, std::vector<uint8_t>(b, b + size)});
  }
  return s;
}
hsa_status_t create_from_file(hsa_file_t file, hsa_code_object_reader_t *reader) {
  return g_create_from_file(file, reader);
}
hsa_status_t destroy(hsa_code_object_reader_t reader) {
  for (auto it = g_saved.begin(); it != g_saved.end(); ++it)
    if (it->reader == reader.handle) {
      g_saved.erase(it);
      break;
    }
  return g_destroy(reader);
}

std::string first_isa(hsa_agent_t agent) {
  std::string name;
  g_iterate_isas(
      agent,
      [](hsa_isa_t isa, void *data) -> hsa_status_t {
        auto *out = static_cast<std::string *>(data);
        uint32_t length = 0;
        if (g_isa_get_info(isa, HSA_ISA_INFO_NAME_LENGTH, &length) != HSA_STATUS_SUCCESS) return HSA_STATUS_ERROR;
        out->resize(length);
        if (g_isa_get_info(isa, HSA_ISA_INFO_NAME, out->data()) != HSA_STATUS_SUCCESS) return HSA_STATUS_ERROR;
        if (!out->empty() && out->back() == '\0') out->pop_back();
        return HSA_STATUS_INFO_BREAK;
      },
      &name);
  return name;
}

hsa_status_t load_copy(hsa_executable_t executable, hsa_agent_t agent, std::vector<uint8_t> bytes,
                       const char *options, hsa_loaded_code_object_t *loaded) {
  // Kept for the process, like the hook's per-executable retention.
  auto *kept = new std::vector<uint8_t>(std::move(bytes));
  hsa_code_object_reader_t own{};
  hsa_status_t s = g_create_from_memory(kept->data(), kept->size(), &own);
  if (s != HSA_STATUS_SUCCESS) return s;
  s = g_load(executable, agent, own, options, loaded);
  g_destroy(own);
  return s;
}

hsa_status_t load(hsa_executable_t executable, hsa_agent_t agent, hsa_code_object_reader_t reader,
                  const char *options, hsa_loaded_code_object_t *loaded) {
  ++g_loads;
  std::string target = first_isa(agent);
  size_t dash = target.rfind('-');
  if (dash != std::string::npos) target = target.substr(dash + 1);
  target = target.substr(0, target.find(':'));
  if (target != "gfx1250") return g_load(executable, agent, reader, options, loaded);
  uint32_t revision = 0;
  if (g_agent_get_info(agent, static_cast<hsa_agent_info_t>(0xA012), &revision) != HSA_STATUS_SUCCESS)
    return HSA_STATUS_ERROR_INVALID_AGENT;
  if (revision != 0) return g_load(executable, agent, reader, options, loaded);
  const Saved *saved = nullptr;
  for (const Saved &s : g_saved)
    if (s.reader == reader.handle) saved = &s;
  if (saved == nullptr) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
  std::vector<uint8_t> bytes = saved->bytes;
  bool gfx1250 = bytes.size() >= 64 && (bytes[48] & 0xff) == 0x49;
  if (gfx1250) {
    ++g_translations;
    std::memcpy(bytes.data() + 9, "ROCRHK!", 7);
  }
  return load_copy(executable, agent, std::move(bytes), options, loaded);
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
  g_agent_get_info = g_core->hsa_agent_get_info_fn;
  g_iterate_isas = g_core->hsa_agent_iterate_isas_fn;
  g_isa_get_info = g_core->hsa_isa_get_info_alt_fn;
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
__attribute__((visibility("default"))) unsigned rocr_hook_translations() { return g_translations.load(); }

}  // extern "C"
