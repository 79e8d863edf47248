// SPDX-License-Identifier: MIT
// Another HSA_TOOLS_LIB tool next to the hotswap tool, in one of the roles
// test_tool.h lists (compile definitions TEST_TOOL_ROLE and TEST_TOOL_<ROLE>).
// It prints "test-tool <role>: OnLoad ..." / "OnUnload ..." to stderr, so the
// order in which ROCr calls the tools shows in the output.
#include "test_tool.h"

#include <cstddef>
#include <cstdio>
#include <cstring>

#ifndef TEST_TOOL_ROLE
#error "TEST_TOOL_ROLE must name the role"
#endif

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using test_tool::Record;

Record g_record = {};

int cycle(int calls) { return calls < test_tool::kCycles ? calls : test_tool::kCycles - 1; }

#ifdef TEST_TOOL_WRAP
void count(test_tool::Patched slot) { __atomic_add_fetch(&g_record.calls[slot], 1, __ATOMIC_RELAXED); }

template <typename F> F next(test_tool::Patched slot) {
  return reinterpret_cast<F>(__atomic_load_n(&g_record.next[slot], __ATOMIC_ACQUIRE));
}

hsa_status_t wrap_create_from_memory(const void *code_object, size_t size, hsa_code_object_reader_t *reader) {
  count(test_tool::kCreateFromMemory);
  return next<decltype(&wrap_create_from_memory)>(test_tool::kCreateFromMemory)(code_object, size, reader);
}

hsa_status_t wrap_create_from_file(hsa_file_t file, hsa_code_object_reader_t *reader) {
  count(test_tool::kCreateFromFile);
  return next<decltype(&wrap_create_from_file)>(test_tool::kCreateFromFile)(file, reader);
}

hsa_status_t wrap_reader_destroy(hsa_code_object_reader_t reader) {
  count(test_tool::kReaderDestroy);
  return next<decltype(&wrap_reader_destroy)>(test_tool::kReaderDestroy)(reader);
}

hsa_status_t wrap_load(hsa_executable_t executable, hsa_agent_t agent, hsa_code_object_reader_t reader,
                       const char *options, hsa_loaded_code_object_t *loaded) {
  count(test_tool::kLoadAgentCodeObject);
  return next<decltype(&wrap_load)>(test_tool::kLoadAgentCodeObject)(executable, agent, reader, options, loaded);
}

hsa_status_t wrap_executable_destroy(hsa_executable_t executable) {
  count(test_tool::kExecutableDestroy);
  return next<decltype(&wrap_executable_destroy)>(test_tool::kExecutableDestroy)(executable);
}

// The slots hotswap patches, in test_tool::Patched order.
void **slot(CoreApiTable &core, test_tool::Patched which) {
  switch (which) {
    case test_tool::kCreateFromMemory:
      return reinterpret_cast<void **>(&core.hsa_code_object_reader_create_from_memory_fn);
    case test_tool::kCreateFromFile:
      return reinterpret_cast<void **>(&core.hsa_code_object_reader_create_from_file_fn);
    case test_tool::kReaderDestroy:
      return reinterpret_cast<void **>(&core.hsa_code_object_reader_destroy_fn);
    case test_tool::kExecutableDestroy:
      return reinterpret_cast<void **>(&core.hsa_executable_destroy_fn);
    default:
      return reinterpret_cast<void **>(&core.hsa_executable_load_agent_code_object_fn);
  }
}

void wrap(CoreApiTable &core) {
  g_record.wrappers[test_tool::kCreateFromMemory] = reinterpret_cast<void *>(&wrap_create_from_memory);
  g_record.wrappers[test_tool::kCreateFromFile] = reinterpret_cast<void *>(&wrap_create_from_file);
  g_record.wrappers[test_tool::kReaderDestroy] = reinterpret_cast<void *>(&wrap_reader_destroy);
  g_record.wrappers[test_tool::kLoadAgentCodeObject] = reinterpret_cast<void *>(&wrap_load);
  g_record.wrappers[test_tool::kExecutableDestroy] = reinterpret_cast<void *>(&wrap_executable_destroy);
  for (int i = 0; i < test_tool::kPatched; ++i) {
    void **s = slot(core, test_tool::Patched(i));
    __atomic_store_n(&g_record.next[i], *s, __ATOMIC_RELEASE);
    *s = g_record.wrappers[i];
  }
}

// As a well-behaved tool does: each slot that still holds this tool's wrapper
// gets back what it held before; a slot a later tool wrapped is left alone.
void unwrap(CoreApiTable &core) {
  for (int i = 0; i < test_tool::kPatched; ++i) {
    void **s = slot(core, test_tool::Patched(i));
    if (*s == g_record.wrappers[i]) *s = g_record.next[i];
  }
}
#endif

}  // namespace

EXPORT bool OnLoad(HsaApiTable *table, uint64_t runtime_version, uint64_t failed_count,
                   const char *const *failed_names) {
  Record &r = g_record;
  int c = cycle(r.on_load_calls);
  r.role = TEST_TOOL_ROLE;
  r.on_load_calls++;
  r.table = table;
  r.tables[c] = table;
  r.runtime_version = runtime_version;
  r.failed_count = failed_count;
  std::memset(r.failed, 0, sizeof r.failed);
  for (uint64_t i = 0; i < failed_count && i < 4 && failed_names != nullptr; ++i)
    std::snprintf(r.failed[i], sizeof r.failed[i], "%s", failed_names[i]);
  if (table != nullptr) {
    r.root_version[c] = table->version;
    if (table->amd_ext_ != nullptr) r.amd_ext_version[c] = table->amd_ext_->version;
    if (table->core_ != nullptr) r.core_at_load[c] = *table->core_;
  }
  std::fprintf(stderr, "test-tool %s: OnLoad #%d (runtime version %llu, %llu failed tool(s))\n", r.role,
               r.on_load_calls, static_cast<unsigned long long>(runtime_version),
               static_cast<unsigned long long>(failed_count));
  bool accept = table != nullptr && table->core_ != nullptr;
#if defined(TEST_TOOL_WRAP)
  if (accept) wrap(*table->core_);
#elif defined(TEST_TOOL_REFUSE)
  accept = false;
#elif defined(TEST_TOOL_TRUNCATE)
  if (accept) table->core_->version.minor_id = offsetof(CoreApiTable, hsa_executable_load_agent_code_object_fn);
#endif
  r.returned = accept;
  return accept;
}

EXPORT void OnUnload() {
  Record &r = g_record;
  int c = cycle(r.on_unload_calls);
  r.on_unload_calls++;
  if (r.table != nullptr && r.table->core_ != nullptr) {
    r.core_at_unload[c] = *r.table->core_;
#if defined(TEST_TOOL_WRAP)
    unwrap(*r.table->core_);
#elif defined(TEST_TOOL_TRUNCATE)
    r.table->core_->version.minor_id = sizeof(CoreApiTable);
#endif
  }
  std::fprintf(stderr, "test-tool %s: OnUnload #%d\n", r.role, r.on_unload_calls);
}

EXPORT const test_tool::Record *test_tool_record() { return &g_record; }
