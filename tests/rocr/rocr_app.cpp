// SPDX-License-Identifier: MIT
// The real-ROCr test application: Debian's libhsa-runtime64.so.1 (ROCr 5.2.3)
// over the libhsakmt.so.1 test double (kmt_double.c), with the installed
// libhsa-hotswap.so and the test tools (test_tool.cpp) loaded by ROCr itself
// through HSA_TOOLS_LIB. It uses the public HSA API as a HIP runtime does and
// checks what the application and the tools observe.
//
//   rocr_app <scenario> <code object> <expected load: ok | invalid-code-object>
//
// Scenarios (the HSA_TOOLS_LIB each expects is set by CMakeLists.txt):
//   baseline         no tool: the statuses, bytes and offsets the other scenarios
//                    expect are ROCr's own
//   load-unload      "first hotswap last": OnLoad on ROCr's table, OnUnload at
//                    hsa_shut_down puts ROCr's functions back
//   pass-through     "first hotswap last": memory and file readers on the gfx90a
//                    agent; the tool leaves the table after the first call
//   chain-before     "first hotswap wrap": hotswap chained before another tool
//   chain-after      "wrap hotswap last": hotswap chained after another tool
//   listed-twice     "hotswap hotswap last": the second OnLoad is refused
//   refused          "truncate hotswap last": hotswap refuses a short table
//   refusing-tool    "refuse hotswap last": another tool's OnLoad returns false
//   disabled         "first hotswap last" with HSA_HOTSWAP_DISABLE=1
//   reinit           "first hotswap last": hsa_shut_down, hsa_init again, and a
//                    nested hsa_init / hsa_shut_down pair
//   soak             "hotswap": 1,000 hsa_init / hsa_shut_down cycles with a
//                    load each; memory must stay flat
//
// Environment: ROCR_APP_HOTSWAP (the installed tool's path); ROCR_APP_HOLD
// (comma-separated: "tool" to keep a reference to the tool as CLR's hotswap
// gate does, "comgr" to keep COMGR loaded as HIP's runtime does; README.md says
// why some scenarios need one). Exit status 0 when every check passed.
#include <dlfcn.h>
#include <malloc.h>
#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <hsa.h>
#include <hsa_api_trace.h>
#include <hsa_ext_amd.h>

#include <algorithm>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hotswap_check.h"
#include "kmt_double.h"
#include "test_tool.h"

namespace {

// ---- output ---------------------------------------------------------------------
// Everything goes to stderr, unbuffered, so it interleaves in order with the
// tools' lines (hotswap: ..., test-tool ...: ...) and ROCr's own.

void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fputs("app: ", stderr);
  std::vfprintf(stderr, fmt, ap);
  std::fputc('\n', stderr);
  va_end(ap);
}

#define CHECK_STATUS(call, expected)                                                   \
  do {                                                                                 \
    hsa_status_t got_ = (call);                                                        \
    CHECK(got_ == (expected));                                                         \
    if (got_ != (expected))                                                            \
      say("  %s returned %#x, expected %#x", #call, unsigned(got_), unsigned(expected)); \
  } while (0)

// ---- the code object ----------------------------------------------------------------

struct CodeObject {
  std::string path;
  std::vector<uint8_t> bytes;
  size_t kd_offset = 0;  // file offset of the kernel descriptor (symbol hotswap_kernel.kd)
};

// The file offset of symbol `name` in an ELF64 relocatable or shared object, by
// its section; 0 when absent. Bounded reads only.
size_t symbol_file_offset(const std::vector<uint8_t> &elf, const char *name) {
  auto in = [&](uint64_t off, uint64_t len) { return off <= elf.size() && len <= elf.size() - off; };
  if (!in(0, sizeof(Elf64_Ehdr))) return 0;
  Elf64_Ehdr eh;
  std::memcpy(&eh, elf.data(), sizeof eh);
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || !in(eh.e_shoff, uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr))) return 0;
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  std::memcpy(sh.data(), elf.data() + eh.e_shoff, sh.size() * sizeof(Elf64_Shdr));
  for (const Elf64_Shdr &s : sh) {
    if (s.sh_type != SHT_SYMTAB || s.sh_link >= sh.size() || s.sh_entsize != sizeof(Elf64_Sym)) continue;
    const Elf64_Shdr &strtab = sh[s.sh_link];
    if (!in(s.sh_offset, s.sh_size) || !in(strtab.sh_offset, strtab.sh_size)) continue;
    for (uint64_t i = 0; i < s.sh_size / sizeof(Elf64_Sym); ++i) {
      Elf64_Sym sym;
      std::memcpy(&sym, elf.data() + s.sh_offset + i * sizeof(Elf64_Sym), sizeof sym);
      if (sym.st_name >= strtab.sh_size || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= sh.size()) continue;
      const char *n = reinterpret_cast<const char *>(elf.data() + strtab.sh_offset + sym.st_name);
      if (strnlen(n, strtab.sh_size - sym.st_name) == strtab.sh_size - sym.st_name || std::strcmp(n, name) != 0)
        continue;
      const Elf64_Shdr &sec = sh[sym.st_shndx];
      uint64_t off = sec.sh_offset + (sym.st_value - sec.sh_addr);
      return in(off, 64) ? size_t(off) : 0;
    }
  }
  return 0;
}

CodeObject read_code_object(const char *path) {
  CodeObject co;
  co.path = path;
  size_t size = 0;
  unsigned char *bytes = check_read_file(path, &size);
  if (bytes == nullptr) {
    say("cannot read the code object %s", path);
    std::exit(2);
  }
  co.bytes.assign(bytes, bytes + size);
  std::free(bytes);
  co.kd_offset = symbol_file_offset(co.bytes, "hotswap_kernel.kd");
  if (co.kd_offset == 0) {
    say("%s has no symbol hotswap_kernel.kd", path);
    std::exit(2);
  }
  return co;
}

// ---- agents --------------------------------------------------------------------

struct Agents {
  hsa_agent_t gpu{}, cpu{};
  int gpus = 0, cpus = 0;
};

Agents find_agents() {
  Agents a;
  auto visit = [](hsa_agent_t agent, void *data) {
    auto *found = static_cast<Agents *>(data);
    hsa_device_type_t type;
    if (hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) != HSA_STATUS_SUCCESS) return HSA_STATUS_ERROR;
    if (type == HSA_DEVICE_TYPE_GPU && found->gpus++ == 0) found->gpu = agent;
    if (type == HSA_DEVICE_TYPE_CPU && found->cpus++ == 0) found->cpu = agent;
    return HSA_STATUS_SUCCESS;
  };
  CHECK_STATUS(hsa_iterate_agents(visit, &a), HSA_STATUS_SUCCESS);
  CHECK(a.gpus == 1 && a.cpus == 1);
  return a;
}

std::string first_isa(hsa_agent_t agent) {
  std::string name;
  auto visit = [](hsa_isa_t isa, void *data) {
    uint32_t length = 0;
    if (hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME_LENGTH, &length) != HSA_STATUS_SUCCESS || length == 0)
      return HSA_STATUS_ERROR;
    std::vector<char> buffer(length);
    if (hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME, buffer.data()) != HSA_STATUS_SUCCESS) return HSA_STATUS_ERROR;
    *static_cast<std::string *>(data) = std::string(buffer.data());
    return HSA_STATUS_INFO_BREAK;
  };
  hsa_status_t s = hsa_agent_iterate_isas(agent, visit, &name);
  CHECK(s == HSA_STATUS_SUCCESS || s == HSA_STATUS_INFO_BREAK);
  return name;
}

// What the test double's node turns into through ROCr.
void check_agents(const Agents &a) {
  std::string isa = first_isa(a.gpu);
  say("gpu agent %#llx: first ISA %s", (unsigned long long)a.gpu.handle, isa.c_str());
  CHECK(isa == "amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack-");
  CHECK(first_isa(a.cpu).empty());
  hsa_profile_t profile{};
  CHECK_STATUS(hsa_agent_get_info(a.gpu, HSA_AGENT_INFO_PROFILE, &profile), HSA_STATUS_SUCCESS);
  CHECK(profile == HSA_PROFILE_FULL);  // an APU node: code is copied with memcpy
  uint32_t revision = 99;
  CHECK_STATUS(hsa_agent_get_info(a.gpu, hsa_agent_info_t(HSA_AMD_AGENT_INFO_ASIC_REVISION), &revision),
               HSA_STATUS_SUCCESS);
  CHECK(revision == 2);
}

// ---- the loader workload: what a HIP runtime does with a code object -------------

struct Workload {
  const CodeObject *co;
  hsa_status_t expected_load;  // HSA_STATUS_SUCCESS, or ROCr's verdict on the object
  Agents agents;
};

// Loads `reader` on the GPU agent into a new executable, freezes it and compares
// the kernel descriptor ROCr placed with the code object's .kd bytes.
void load_and_check(const Workload &w, hsa_code_object_reader_t reader, const char *what) {
  hsa_executable_t executable{};
  CHECK_STATUS(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, nullptr,
                                         &executable),
               HSA_STATUS_SUCCESS);
  hsa_loaded_code_object_t loaded{};
  hsa_status_t s = hsa_executable_load_agent_code_object(executable, w.agents.gpu, reader, nullptr, &loaded);
  say("%s: load on the gpu agent -> %#x", what, unsigned(s));
  CHECK(s == w.expected_load);
  if (s == HSA_STATUS_SUCCESS) {
    CHECK(loaded.handle != 0);
    CHECK_STATUS(hsa_executable_freeze(executable, nullptr), HSA_STATUS_SUCCESS);
    hsa_executable_symbol_t symbol{};
    hsa_agent_t gpu = w.agents.gpu;
    CHECK_STATUS(hsa_executable_get_symbol_by_name(executable, "hotswap_kernel.kd", &gpu, &symbol),
                 HSA_STATUS_SUCCESS);
    uint64_t kernel_object = 0;
    uint32_t kernarg_size = 0;
    CHECK_STATUS(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &kernel_object),
                 HSA_STATUS_SUCCESS);
    CHECK_STATUS(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                                                &kernarg_size),
                 HSA_STATUS_SUCCESS);
    // The FULL profile puts code in host memory: the descriptor is readable here.
    const uint8_t *kd = reinterpret_cast<const uint8_t *>(kernel_object);
    const uint8_t *expected = w.co->bytes.data() + w.co->kd_offset;
    bool same = kd != nullptr && std::memcmp(kd, expected, 64) == 0;
    uint32_t kd_kernarg_size = 0;
    std::memcpy(&kd_kernarg_size, expected + 8, 4);
    say("%s: kernel descriptor at %#llx, 64 bytes %s the code object's, kernarg size %u", what,
        (unsigned long long)kernel_object, same ? "equal" : "DIFFER from", kernarg_size);
    CHECK(same);
    CHECK(kernarg_size == kd_kernarg_size);
  }
  CHECK_STATUS(hsa_executable_destroy(executable), HSA_STATUS_SUCCESS);
}

// The status ROCr gives for a load on the CPU agent: the code object's ISA is
// not the agent's (after the version check, which a v6 object fails first).
hsa_status_t expected_cpu_load(const Workload &w) {
  return w.expected_load == HSA_STATUS_SUCCESS ? HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS : w.expected_load;
}

// Memory reader: create, load on the GPU (and, failing, on the CPU), destroy.
// `after_first_call` runs right after the first call into the loader API.
template <typename F> void memory_reader(const Workload &w, F after_first_call) {
  const std::vector<uint8_t> before = w.co->bytes;
  hsa_code_object_reader_t reader{};
  CHECK_STATUS(hsa_code_object_reader_create_from_memory(w.co->bytes.data(), w.co->bytes.size(), &reader),
               HSA_STATUS_SUCCESS);
  after_first_call();
  load_and_check(w, reader, "memory reader");
  hsa_executable_t executable{};
  CHECK_STATUS(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, nullptr,
                                         &executable),
               HSA_STATUS_SUCCESS);
  hsa_status_t s = hsa_executable_load_agent_code_object(executable, w.agents.cpu, reader, nullptr, nullptr);
  say("memory reader: load on the cpu agent -> %#x", unsigned(s));
  CHECK(s == expected_cpu_load(w));
  CHECK_STATUS(hsa_executable_destroy(executable), HSA_STATUS_SUCCESS);
  CHECK_STATUS(hsa_code_object_reader_destroy(reader), HSA_STATUS_SUCCESS);
  CHECK(w.co->bytes == before);  // the caller's bytes are never written
}

// File reader, from an offset that is not 0: ROCr maps the file and leaves the
// offset where its lseek(SEEK_END) put it (Linux path of CodeObjectReaderImpl::SetFile).
void file_reader(const Workload &w) {
  int fd = open(w.co->path.c_str(), O_RDONLY | O_CLOEXEC);
  CHECK(fd >= 0);
  CHECK(lseek(fd, 123, SEEK_SET) == 123);
  hsa_code_object_reader_t reader{};
  CHECK_STATUS(hsa_code_object_reader_create_from_file(fd, &reader), HSA_STATUS_SUCCESS);
  off_t offset = lseek(fd, 0, SEEK_CUR);
  say("file reader: offset %ld after create (file size %zu)", long(offset), w.co->bytes.size());
  CHECK(offset == off_t(w.co->bytes.size()));
  load_and_check(w, reader, "file reader");
  CHECK_STATUS(hsa_code_object_reader_destroy(reader), HSA_STATUS_SUCCESS);
  CHECK(close(fd) == 0);
}

// Invalid arguments: ROCr's own verdicts, whoever sits in the table.
void invalid_arguments(const Workload &w) {
  hsa_code_object_reader_t reader{};
  CHECK_STATUS(hsa_code_object_reader_create_from_memory(nullptr, 64, &reader), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_code_object_reader_create_from_memory(w.co->bytes.data(), 0, &reader),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_code_object_reader_create_from_file(-1, &reader), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  char empty[] = "/tmp/hotswap-rocr-empty-XXXXXX";
  int fd = mkstemp(empty);
  CHECK(fd >= 0);
  CHECK_STATUS(hsa_code_object_reader_create_from_file(fd, &reader), HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
  close(fd);
  unlink(empty);
  int closed = open(w.co->path.c_str(), O_RDONLY);
  close(closed);
  CHECK_STATUS(hsa_code_object_reader_create_from_file(closed, &reader), HSA_STATUS_ERROR_INVALID_FILE);
  // ROCr's reader handles are pointers: 0 is the one handle it can tell invalid.
  CHECK_STATUS(hsa_code_object_reader_destroy(hsa_code_object_reader_t{0}),
               HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER);
  hsa_executable_t executable{};
  CHECK_STATUS(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, nullptr,
                                         &executable),
               HSA_STATUS_SUCCESS);
  CHECK_STATUS(hsa_executable_load_agent_code_object(executable, w.agents.gpu, hsa_code_object_reader_t{0},
                                                     nullptr, nullptr),
               HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER);
  CHECK_STATUS(hsa_executable_destroy(executable), HSA_STATUS_SUCCESS);
}

template <typename F> void run_workload(const Workload &w, F after_first_call) {
  memory_reader(w, after_first_call);
  file_reader(w);
  invalid_arguments(w);
}

void run_workload(const Workload &w) {
  run_workload(w, [] {});
}

// ---- the tables the tools saw ---------------------------------------------------------

constexpr size_t kSlots = (sizeof(CoreApiTable) - sizeof(ApiTableVersion)) / sizeof(void *);
const size_t kPatchedOffsets[test_tool::kPatched] = {
    offsetof(CoreApiTable, hsa_code_object_reader_create_from_memory_fn),
    offsetof(CoreApiTable, hsa_code_object_reader_create_from_file_fn),
    offsetof(CoreApiTable, hsa_code_object_reader_destroy_fn),
    offsetof(CoreApiTable, hsa_executable_load_agent_code_object_fn),
    offsetof(CoreApiTable, hsa_executable_destroy_fn),
};

void *slot_at(const CoreApiTable &core, size_t offset) {
  void *fn;
  std::memcpy(&fn, reinterpret_cast<const char *>(&core) + offset, sizeof fn);
  return fn;
}

void *slot(const CoreApiTable &core, size_t index) {
  return slot_at(core, sizeof(ApiTableVersion) + index * sizeof(void *));
}

bool is_patched(size_t index) {
  size_t offset = sizeof(ApiTableVersion) + index * sizeof(void *);
  for (size_t p : kPatchedOffsets)
    if (p == offset) return true;
  return false;
}

// The library a function pointer lies in: "rocr", "hotswap", or its file name.
std::string owner(void *fn) {
  Dl_info info{};
  if (fn == nullptr) return "(null)";
  if (dladdr(fn, &info) == 0 || info.dli_fname == nullptr) return "(unknown)";
  std::string file = info.dli_fname;
  file = file.substr(file.rfind('/') + 1);
  if (file.rfind("libhsa-runtime64.so", 0) == 0) return "rocr";
  if (file == "libhsa-hotswap.so") return "hotswap";
  return file;
}

// Every slot of `core` that `expected_owner(index)` does not name; prints them.
template <typename F> int misplaced_slots(const CoreApiTable &core, const char *what, F expected_owner) {
  int bad = 0;
  for (size_t i = 0; i < kSlots; ++i) {
    std::string want = expected_owner(i), got = owner(slot(core, i));
    if (got != want) {
      if (bad++ < 8) say("  %s: slot %zu is in %s, expected %s", what, i, got.c_str(), want.c_str());
    }
  }
  return bad;
}

// ROCr's own table: every slot one of ROCr's functions.
bool all_rocr(const CoreApiTable &core, const char *what) {
  return misplaced_slots(core, what, [](size_t) { return std::string("rocr"); }) == 0;
}

// Patched by `who` (the five slots), ROCr's everywhere else.
bool patched_by(const CoreApiTable &core, const char *who, const char *what) {
  return misplaced_slots(core, what, [&](size_t i) { return std::string(is_patched(i) ? who : "rocr"); }) == 0;
}

bool same_slots(const CoreApiTable &a, const CoreApiTable &b) {
  for (size_t i = 0; i < kSlots; ++i)
    if (slot(a, i) != slot(b, i)) return false;
  return true;
}

bool same_version(const ApiTableVersion &v, uint32_t major, uint32_t minor, uint32_t step) {
  return v.major_id == major && v.minor_id == minor && v.step_id == step;
}

// The record of a test tool ROCr loaded, by its soname; exits when absent.
const test_tool::Record &tool(const char *soname) {
  void *handle = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
  auto get = handle ? reinterpret_cast<decltype(&test_tool_record)>(dlsym(handle, "test_tool_record")) : nullptr;
  if (get == nullptr) {
    say("the test tool %s is not loaded (HSA_TOOLS_LIB=%s)", soname, std::getenv("HSA_TOOLS_LIB"));
    std::exit(2);
  }
  const test_tool::Record *r = get();
  dlclose(handle);
  return *r;
}

const test_tool::Record &first() { return tool("librocr-tool-first.so"); }
const test_tool::Record &last() { return tool("librocr-tool-last.so"); }
const test_tool::Record &wrap() { return tool("librocr-tool-wrap.so"); }

// The table ROCr handed to its tools, as it is now.
const CoreApiTable &live(const test_tool::Record &r) { return *r.table->core_; }

// What every tool sees of ROCr 5.2.3's table at OnLoad (hsa_api_trace.cpp).
void check_table_versions(const test_tool::Record &r, int cycle) {
  CHECK(r.runtime_version == HSA_API_TABLE_MAJOR_VERSION);
  CHECK(same_version(r.root_version[cycle], HSA_API_TABLE_MAJOR_VERSION, sizeof(HsaApiTable), 0));
  CHECK(same_version(r.core_at_load[cycle].version, HSA_CORE_API_TABLE_MAJOR_VERSION, sizeof(CoreApiTable), 0));
  CHECK(same_version(r.amd_ext_version[cycle], HSA_AMD_EXT_API_TABLE_MAJOR_VERSION, sizeof(AmdExtTable), 0));
}

std::string hotswap_path() {
  const char *p = std::getenv("ROCR_APP_HOTSWAP");
  return p ? p : "";
}

// After the last hsa_shut_down ROCr has given everything back to the kernel
// driver: the device is closed, no memory or event is left.
void check_driver_released() {
  kmt_double_state state{};
  kmt_double_query(&state);
  say("kernel driver after hsa_shut_down: %u open(s), %u allocation(s), %u event(s), %u unexpected call(s)",
      state.kfd_opens, state.live_allocations, state.live_events, state.unexpected_calls);
  CHECK(state.kfd_opens == 0);
  CHECK(state.live_allocations == 0);
  CHECK(state.live_events == 0);
  CHECK(state.unexpected_calls == 0);
}

// hsa_init, then the agents and what ROCr made of the double's node.
Agents init(const char *what) {
  say("hsa_init (%s)", what);
  CHECK_STATUS(hsa_init(), HSA_STATUS_SUCCESS);
  Agents a = find_agents();
  check_agents(a);
  return a;
}

void shut_down(const char *what) {
  say("hsa_shut_down (%s)", what);
  CHECK_STATUS(hsa_shut_down(), HSA_STATUS_SUCCESS);
  say("hsa_shut_down returned (%s)", what);
}

// ---- scenarios ---------------------------------------------------------------------

void scenario_baseline(const Workload &base) {
  CHECK(std::getenv("HSA_TOOLS_LIB") == nullptr);
  Workload w = base;
  w.agents = init("no tool");
  run_workload(w);
  shut_down("no tool");
  check_driver_released();
}

// "first hotswap last", no loader call: the hooks are in place until OnUnload,
// which gives ROCr's functions back before ROCr resets the table.
void scenario_load_unload(const Workload &base) {
  Workload w = base;
  w.agents = init("load-unload");
  const test_tool::Record &f = first(), &l = last();
  check_table_versions(f, 0);
  check_table_versions(l, 0);
  CHECK(f.failed_count == 0 && l.failed_count == 0);
  CHECK(f.table == l.table);
  CHECK(all_rocr(f.core_at_load[0], "first tool's OnLoad"));
  CHECK(patched_by(l.core_at_load[0], "hotswap", "last tool's OnLoad"));
  CHECK(patched_by(live(l), "hotswap", "the table before any loader call"));
  shut_down("load-unload");
  CHECK(l.on_unload_calls == 1 && f.on_unload_calls == 1);
  // Tools unload in reverse order: the last tool still sees the hooks, the
  // first sees the table after hotswap's OnUnload: ROCr's own functions. (The
  // tool is unmapped by now: its hooks are compared by address.)
  CHECK(same_slots(l.core_at_unload[0], l.core_at_load[0]));
  CHECK(same_slots(f.core_at_unload[0], f.core_at_load[0]));
  check_driver_released();
}

// "first hotswap last": on the gfx90a agent no rewrite is possible, so after the
// first call the table holds exactly what ROCr put there.
void scenario_pass_through(const Workload &base) {
  Workload w = base;
  w.agents = init("pass-through");
  const test_tool::Record &f = first(), &l = last();
  const CoreApiTable &rocr = f.core_at_load[0];
  CHECK(all_rocr(rocr, "first tool's OnLoad"));
  CHECK(patched_by(l.core_at_load[0], "hotswap", "last tool's OnLoad"));
  run_workload(w, [&] {
    bool left = same_slots(live(f), rocr);
    say("after the first call the table %s ROCr's own", left ? "is" : "is NOT");
    CHECK(left);
  });
  CHECK(same_slots(live(f), rocr));
  shut_down("pass-through");
  CHECK(same_slots(f.core_at_unload[0], rocr));
  check_driver_released();
}

// "first hotswap wrap": a later tool wraps hotswap's hooks, so hotswap cannot
// leave the table; every call goes wrap -> hotswap -> ROCr.
void scenario_chain_before(const Workload &base) {
  Workload w = base;
  w.agents = init("chain-before");
  const test_tool::Record &f = first(), &t = wrap();
  const CoreApiTable &rocr = f.core_at_load[0];
  CHECK(patched_by(t.core_at_load[0], "hotswap", "wrap tool's OnLoad"));
  CHECK(patched_by(live(f), "librocr-tool-wrap.so", "the table after the wrap tool's OnLoad"));
  run_workload(w, [&] {
    CHECK(patched_by(live(f), "librocr-tool-wrap.so", "the table after the first call"));
  });
  for (int i = 0; i < test_tool::kPatched; ++i) {
    say("wrap tool: slot %d called %llu time(s)", i, (unsigned long long)t.calls[i]);
    CHECK(t.calls[i] > 0);
    CHECK(owner(t.next[i]) == "hotswap");
  }
  shut_down("chain-before");
  // wrap's OnUnload saw its wrappers and put hotswap's hooks back; hotswap's
  // OnUnload then put ROCr's functions back: the first tool sees them.
  CHECK(patched_by(t.core_at_unload[0], "librocr-tool-wrap.so", "wrap tool's OnUnload"));
  CHECK(same_slots(f.core_at_unload[0], rocr));
  check_driver_released();
}

// "wrap hotswap last": hotswap wraps another tool's wrappers; after the first
// call it leaves the table, giving the wrap tool's functions back.
void scenario_chain_after(const Workload &base) {
  Workload w = base;
  w.agents = init("chain-after");
  const test_tool::Record &t = wrap(), &l = last();
  CHECK(all_rocr(t.core_at_load[0], "wrap tool's OnLoad"));
  CHECK(patched_by(l.core_at_load[0], "hotswap", "last tool's OnLoad"));
  uint64_t before[test_tool::kPatched];
  std::memcpy(before, t.calls, sizeof before);
  run_workload(w, [&] {
    bool back = patched_by(live(l), "librocr-tool-wrap.so", "the table after the first call");
    for (int i = 0; i < test_tool::kPatched; ++i)
      back = back && slot_at(live(l), kPatchedOffsets[i]) == t.wrappers[i];
    say("after the first call the five slots %s the wrap tool's", back ? "hold" : "do NOT hold");
    CHECK(back);
  });
  for (int i = 0; i < test_tool::kPatched; ++i) {
    say("wrap tool: slot %d called %llu time(s)", i, (unsigned long long)(t.calls[i] - before[i]));
    CHECK(t.calls[i] > before[i]);
    CHECK(owner(t.next[i]) == "rocr");
  }
  shut_down("chain-after");
  CHECK(patched_by(l.core_at_unload[0], "librocr-tool-wrap.so", "last tool's OnUnload"));
  CHECK(patched_by(t.core_at_unload[0], "librocr-tool-wrap.so", "wrap tool's OnUnload"));
  check_driver_released();
}

// "hotswap hotswap last": ROCr dlopens the same library again and calls its
// OnLoad on the table it already patched; that OnLoad refuses, ROCr lists it
// as failed, and the table the last tool sees carries one set of hooks.
void scenario_listed_twice(const Workload &base) {
  Workload w = base;
  w.agents = init("listed-twice");
  const test_tool::Record &l = last();
  say("last tool: %llu failed tool(s)%s%s", (unsigned long long)l.failed_count, l.failed_count ? ": " : "",
      l.failed[0]);
  CHECK(l.failed_count == 1);
  CHECK(hotswap_path() == l.failed[0]);
  CHECK(patched_by(l.core_at_load[0], "hotswap", "last tool's OnLoad"));
  run_workload(w, [&] { CHECK(all_rocr(live(l), "the table after the first call")); });
  shut_down("listed-twice");
  check_driver_released();
}

// "truncate hotswap last": the table hotswap gets ends before a slot it needs;
// it refuses, and the table ROCr goes on with is the one it was given.
void scenario_refused(const Workload &base) {
  Workload w = base;
  w.agents = init("refused");
  const test_tool::Record &t = tool("librocr-tool-truncate.so"), &l = last();
  CHECK(l.failed_count == 1);
  CHECK(hotswap_path() == l.failed[0]);
  CHECK(l.core_at_load[0].version.minor_id == offsetof(CoreApiTable, hsa_executable_load_agent_code_object_fn));
  CHECK(all_rocr(l.core_at_load[0], "last tool's OnLoad"));
  CHECK(same_slots(l.core_at_load[0], t.core_at_load[0]));
  run_workload(w);
  CHECK(same_slots(live(l), t.core_at_load[0]));
  shut_down("refused");
  check_driver_released();
}

// "refuse hotswap last": another tool's OnLoad returns false. ROCr 5.2.3 lists
// it as failed to the later tools, dlcloses it, and still calls its OnUnload at
// hsa_shut_down (it keeps the handle): README.md.
void scenario_refusing_tool(const Workload &base) {
  Workload w = base;
  w.agents = init("refusing-tool");
  const test_tool::Record &r = tool("librocr-tool-refuse.so"), &l = last();
  CHECK(r.on_load_calls == 1 && !r.returned);
  CHECK(l.failed_count == 1);
  CHECK(std::string(l.failed[0]).find("librocr-tool-refuse.so") != std::string::npos);
  CHECK(patched_by(l.core_at_load[0], "hotswap", "last tool's OnLoad"));
  run_workload(w, [&] { CHECK(all_rocr(live(l), "the table after the first call")); });
  shut_down("refusing-tool");
  say("refusing tool: OnUnload called %d time(s)", r.on_unload_calls);
  CHECK(r.on_unload_calls == 1);
  check_driver_released();
}

// "first hotswap last" with HSA_HOTSWAP_DISABLE=1: OnLoad returns true and
// writes nothing.
void scenario_disabled(const Workload &base) {
  Workload w = base;
  w.agents = init("disabled");
  const test_tool::Record &f = first(), &l = last();
  CHECK(l.failed_count == 0);
  CHECK(all_rocr(l.core_at_load[0], "last tool's OnLoad"));
  CHECK(same_slots(l.core_at_load[0], f.core_at_load[0]));
  CHECK(std::memcmp(&l.core_at_load[0].version, &f.core_at_load[0].version, sizeof(ApiTableVersion)) == 0);
  run_workload(w);
  CHECK(same_slots(live(f), f.core_at_load[0]));
  shut_down("disabled");
  check_driver_released();
}

// "first hotswap last", twice in one process, plus a nested pair.
void scenario_reinit(const Workload &base) {
  const bool kept_open = std::getenv("HSA_RUNNING_UNDER_VALGRIND") != nullptr &&
                         std::strcmp(std::getenv("HSA_RUNNING_UNDER_VALGRIND"), "1") == 0;
  Workload w = base;
  w.agents = init("first runtime");
  const test_tool::Record &f = first(), &l = last();
  const CoreApiTable rocr = f.core_at_load[0];
  void *hooks[test_tool::kPatched];
  for (int i = 0; i < test_tool::kPatched; ++i) hooks[i] = slot_at(l.core_at_load[0], kPatchedOffsets[i]);
  CHECK(patched_by(l.core_at_load[0], "hotswap", "last tool's first OnLoad"));
  run_workload(w, [&] { CHECK(same_slots(live(f), rocr)); });
  shut_down("first runtime");
  check_driver_released();
  CHECK(f.on_unload_calls == 1 && l.on_unload_calls == 1);
  // Between runtimes every call is refused by ROCr itself.
  hsa_code_object_reader_t reader{};
  CHECK_STATUS(hsa_code_object_reader_create_from_memory(w.co->bytes.data(), w.co->bytes.size(), &reader),
               HSA_STATUS_ERROR_NOT_INITIALIZED);
  void *still_mapped = dlopen(hotswap_path().c_str(), RTLD_NOW | RTLD_NOLOAD);
  say("after hsa_shut_down the tool is %s", still_mapped ? "still mapped" : "unmapped");
  if (kept_open) CHECK(still_mapped != nullptr);  // HSA_RUNNING_UNDER_VALGRIND=1: ROCr skips dlclose
  if (still_mapped) dlclose(still_mapped);

  w.agents = init("second runtime");
  CHECK(f.on_load_calls == 2 && l.on_load_calls == 2);
  // ROCr keeps one API table: the second OnLoad gets the same one, reset.
  CHECK(f.tables[1] == f.tables[0]);
  CHECK(same_slots(f.core_at_load[1], rocr));
  check_table_versions(f, 1);
  CHECK(patched_by(l.core_at_load[1], "hotswap", "last tool's second OnLoad"));
  bool same_hooks = true;
  for (int i = 0; i < test_tool::kPatched; ++i)
    same_hooks = same_hooks && slot_at(l.core_at_load[1], kPatchedOffsets[i]) == hooks[i];
  if (kept_open) CHECK(same_hooks);  // one library instance, a second session
  run_workload(w, [&] { CHECK(same_slots(live(f), rocr)); });

  // Nested: a second hsa_init only counts; OnUnload waits for the last shut-down.
  CHECK_STATUS(hsa_init(), HSA_STATUS_SUCCESS);
  CHECK(f.on_load_calls == 2);
  CHECK_STATUS(hsa_shut_down(), HSA_STATUS_SUCCESS);
  CHECK(f.on_unload_calls == 1);
  CHECK_STATUS(hsa_code_object_reader_create_from_memory(w.co->bytes.data(), w.co->bytes.size(), &reader),
               HSA_STATUS_SUCCESS);
  CHECK_STATUS(hsa_code_object_reader_destroy(reader), HSA_STATUS_SUCCESS);
  shut_down("second runtime");
  CHECK(f.on_unload_calls == 2 && l.on_unload_calls == 2);
  CHECK(same_slots(f.core_at_unload[1], rocr));
  check_driver_released();
}

// ---- soak ---------------------------------------------------------------------------

size_t resident_bytes() {
  long pages = 0, resident = 0;
  if (FILE *f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return size_t(resident) * size_t(sysconf(_SC_PAGESIZE));
}

// ROCR_APP_CYCLES (default 1000) hsa_init / hsa_shut_down cycles, each with a
// memory reader loaded into an executable on the GPU agent and both destroyed:
// resident memory and heap bytes in use (mallinfo2: ROCr's, the tool's, the
// double's) after a warm-up of a tenth of the cycles and at the end. Fails when
// either grows by more than ROCR_APP_SOAK_BOUND (default 256) bytes per cycle
// (one leaked session per cycle, what this guards against, is about 900);
// 0 prints the figures only (valgrind has an allocator of its own).
void scenario_soak(const Workload &base) {
  const char *n = std::getenv("ROCR_APP_CYCLES");
  const char *b = std::getenv("ROCR_APP_SOAK_BOUND");
  const int cycles = n ? std::atoi(n) : 1000;
  const double bound = b ? std::atof(b) : 256;
  const int warmup = std::max(1, cycles / 10);
  int failures = 0;
  auto cycle = [&] {
    if (hsa_init() != HSA_STATUS_SUCCESS) {
      ++failures;
      return;
    }
    Agents a = find_agents();
    hsa_code_object_reader_t reader{};
    hsa_executable_t executable{};
    if (hsa_code_object_reader_create_from_memory(base.co->bytes.data(), base.co->bytes.size(), &reader) !=
            HSA_STATUS_SUCCESS ||
        hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, nullptr,
                                  &executable) != HSA_STATUS_SUCCESS ||
        hsa_executable_load_agent_code_object(executable, a.gpu, reader, nullptr, nullptr) != base.expected_load ||
        hsa_executable_destroy(executable) != HSA_STATUS_SUCCESS ||
        hsa_code_object_reader_destroy(reader) != HSA_STATUS_SUCCESS)
      ++failures;
    if (hsa_shut_down() != HSA_STATUS_SUCCESS) ++failures;
  };
  for (int i = 0; i < warmup; ++i) cycle();
  const size_t rss0 = resident_bytes(), heap0 = mallinfo2().uordblks;
  for (int i = 0; i < cycles; ++i) cycle();
  const size_t rss1 = resident_bytes(), heap1 = mallinfo2().uordblks;
  const double rss_per = (double(rss1) - double(rss0)) / cycles, heap_per = (double(heap1) - double(heap0)) / cycles;
  say("soak: %d hsa_init/hsa_shut_down cycles after %d warm-up; resident %.1f MiB -> %.1f MiB (%+.1f bytes/cycle); "
      "heap in use %zu -> %zu bytes (%+.2f bytes/cycle)",
      cycles, warmup, rss0 / 1048576.0, rss1 / 1048576.0, rss_per, heap0, heap1, heap_per);
  CHECK(failures == 0);
  if (bound > 0) {
    CHECK(rss_per <= bound);
    CHECK(heap_per <= bound);
  }
  check_driver_released();
}

// The libhsakmt.so.1 ROCr uses must be the double: the real one would fail
// hsaKmtOpenKFD here (no /dev/kfd) or drive a real GPU.
void require_kmt_double() {
  Dl_info kmt{}, query{};
  void *open_kfd = dlsym(RTLD_DEFAULT, "hsaKmtOpenKFD");
  if (open_kfd == nullptr || dladdr(open_kfd, &kmt) == 0 ||
      dladdr(reinterpret_cast<void *>(&kmt_double_query), &query) == 0 || kmt.dli_fbase != query.dli_fbase) {
    say("libhsakmt.so.1 in this process is not the test double (%s)", kmt.dli_fname ? kmt.dli_fname : "none");
    std::exit(2);
  }
}

// ROCR_APP_HOLD: references a HIP process would hold anyway (README.md).
void hold_references() {
  const char *hold = std::getenv("ROCR_APP_HOLD");
  std::string list = hold ? hold : "";
  if (list.find("comgr") != std::string::npos) {
    // HIP's runtime links COMGR; with it loaded, ROCr's dlclose of the tool
    // does not unload COMGR.
    CHECK(dlopen("libamd_comgr.so.2", RTLD_NOW | RTLD_GLOBAL) != nullptr);
    say("holding libamd_comgr.so.2, as HIP's runtime does");
  }
  if (list.find("tool") != std::string::npos) {
    // CLR's hotswap gate asks the tool library whether it is enabled.
    void *tool = dlopen(hotswap_path().c_str(), RTLD_NOW);
    auto enabled = tool ? reinterpret_cast<bool (*)()>(dlsym(tool, "hotswap_enabled")) : nullptr;
    CHECK(enabled != nullptr && enabled());
    say("holding %s, as CLR's hotswap gate does", hotswap_path().c_str());
  }
}

}  // namespace

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  if (argc != 4) {
    std::fprintf(stderr, "usage: rocr_app <scenario> <code object> <ok|invalid-code-object>\n");
    return 2;
  }
  const std::string scenario = argv[1];
  const CodeObject co = read_code_object(argv[2]);
  const std::string expect = argv[3];
  Workload w{&co, expect == "ok" ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_CODE_OBJECT, {}};
  say("scenario %s, %s (%zu bytes), load expected %s", scenario.c_str(), co.path.c_str(), co.bytes.size(),
      expect.c_str());
  require_kmt_double();
  hold_references();
  if (scenario == "baseline") scenario_baseline(w);
  else if (scenario == "load-unload") scenario_load_unload(w);
  else if (scenario == "pass-through") scenario_pass_through(w);
  else if (scenario == "chain-before") scenario_chain_before(w);
  else if (scenario == "chain-after") scenario_chain_after(w);
  else if (scenario == "listed-twice") scenario_listed_twice(w);
  else if (scenario == "refused") scenario_refused(w);
  else if (scenario == "refusing-tool") scenario_refusing_tool(w);
  else if (scenario == "disabled") scenario_disabled(w);
  else if (scenario == "reinit") scenario_reinit(w);
  else if (scenario == "soak") scenario_soak(w);
  else {
    std::fprintf(stderr, "unknown scenario %s\n", scenario.c_str());
    return 2;
  }
  return check_finish(("rocr." + scenario).c_str());
}
