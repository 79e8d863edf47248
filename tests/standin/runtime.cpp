// The ROCr stand-in's runtime half: see runtime.hpp.
#include "runtime.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <new>
#include <sstream>
#include <unordered_map>

namespace standin {
namespace {

// ---- agents ---------------------------------------------------------------------

const std::vector<Agent> kAllAgents = {
    {"gfx1250-A0", true, "amdgcn-amd-amdhsa--gfx1250", 0, 0x5100},
    // A0 as ROCr reports it with HSA_DISABLE_GFX12_STRICT=0 (rocm-systems #10978,
    // #11317): first ISA gfx1250-strict, ASIC revision still 0.
    {"gfx1250-strict-A0", true, "amdgcn-amd-amdhsa--gfx1250-strict", 0, 0x5180},
    {"gfx1250-B0", true, "amdgcn-amd-amdhsa--gfx1250", 1, 0x5200},
    {"gfx1250-rev?", true, "amdgcn-amd-amdhsa--gfx1250", -1, 0x5300},
    {"gfx1251", true, "amdgcn-amd-amdhsa--gfx1251", 0, 0x5400},
    {"gfx12-5-generic", true, "amdgcn-amd-amdhsa--gfx12-5-generic", 0, 0x5500},
    {"gfx942", true, "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", 0, 0x5600},
    {"cpu", false, "", -1, 0x5700},
};
std::vector<Agent> g_agents = kAllAgents;

const Agent *find_agent(uint64_t handle) {
  for (const Agent &a : g_agents)
    if (a.handle == handle) return &a;
  return nullptr;
}

Counters g_counters;

// hsa_init calls not yet matched by hsa_shut_down (Runtime::Acquire/Release).
// While it is 0 every ROCr function returns HSA_STATUS_ERROR_NOT_INITIALIZED
// (its IS_OPEN check, before any argument check).
std::atomic<int> g_refs{0};
bool closed() { return g_refs.load() == 0; }
// Set by hsa_shut_down just before it drops the readers left (after the
// tools' OnUnload and Reset); cleared by the next hsa_init.
std::atomic<bool> g_readers_dropped{false};

// ---- loader ----------------------------------------------------------------------

struct Reader {
  const uint8_t *ptr;
  size_t size;
  bool from_file;
  std::shared_ptr<std::vector<uint8_t>> own;  // file readers own their bytes
};

struct Range {
  const uint8_t *ptr;
  size_t size;
  uint64_t hash;
  std::shared_ptr<std::vector<uint8_t>> own;  // keeps a file reader's bytes
  uint64_t executable;                        // the executable that loaded them
};

std::mutex g_loader_lock;
std::unordered_map<uint64_t, Reader> g_readers;
uint64_t g_next_reader = 0x7000;
std::vector<Range> g_ranges;
size_t g_ranges_checked = 0;
std::atomic<bool> g_record_ranges{true};
thread_local LoadRecord t_last;

uint64_t fnv1a(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

template <typename T> T read_le(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The checks ROCr's loader makes before it uses an ELF: ELF64 little endian,
// EM_AMDGPU, program and section header tables inside the bytes.
bool valid_elf(const uint8_t *p, size_t n) {
  if (p == nullptr || n < 64 || std::memcmp(p, "\x7f" "ELF", 4) != 0 || p[4] != 2 || p[5] != 1)
    return false;
  if (read_le<uint16_t>(p + 18) != 224) return false;
  uint64_t phoff = read_le<uint64_t>(p + 32), shoff = read_le<uint64_t>(p + 40);
  uint64_t phsize = uint64_t(read_le<uint16_t>(p + 54)) * read_le<uint16_t>(p + 56);
  uint64_t shsize = uint64_t(read_le<uint16_t>(p + 58)) * read_le<uint16_t>(p + 60);
  return phoff <= n && phsize <= n - phoff && shoff <= n && shsize <= n - shoff;
}

hsa_status_t create_from_memory(const void *code_object, size_t size,
                                hsa_code_object_reader_t *reader) {
  if (closed()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (code_object == nullptr || size == 0 || reader == nullptr)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  ++g_counters.creates_memory;
  std::lock_guard<std::mutex> lock(g_loader_lock);
  uint64_t handle = g_next_reader++;
  g_readers[handle] = Reader{static_cast<const uint8_t *>(code_object), size, false, nullptr};
  ++g_counters.live_readers;
  reader->handle = handle;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t create_from_file(hsa_file_t file, hsa_code_object_reader_t *reader) {
  if (closed()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (reader == nullptr) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  // CodeObjectReaderImpl::SetFile on Linux: -1 is an invalid argument; the size
  // comes from lseek(SEEK_END), which leaves the file offset at the end (the
  // seek back to 0 is on the Windows path only); an empty file is an invalid
  // code object; then the file is mapped (copied here).
  if (file == -1) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  off_t size = lseek(file, 0, SEEK_END);
  if (size == off_t(-1)) return HSA_STATUS_ERROR_INVALID_FILE;
  if (size == 0) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  auto bytes = std::make_shared<std::vector<uint8_t>>(size_t(size));
  if (pread(file, bytes->data(), bytes->size(), 0) != size) return HSA_STATUS_ERROR_INVALID_FILE;
  ++g_counters.creates_file;
  std::lock_guard<std::mutex> lock(g_loader_lock);
  uint64_t handle = g_next_reader++;
  g_readers[handle] = Reader{bytes->data(), bytes->size(), true, bytes};
  ++g_counters.live_readers;
  reader->handle = handle;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t reader_destroy(hsa_code_object_reader_t reader) {
  if (closed()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  ++g_counters.destroys;
  std::lock_guard<std::mutex> lock(g_loader_lock);
  if (g_readers.erase(reader.handle) == 0) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
  --g_counters.live_readers;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t load_agent_code_object(hsa_executable_t executable, hsa_agent_t agent,
                                    hsa_code_object_reader_t reader, const char *options,
                                    hsa_loaded_code_object_t *loaded) {
  if (closed()) {
    t_last = LoadRecord{HSA_STATUS_ERROR_NOT_INITIALIZED, agent.handle};
    return t_last.status;
  }
  (void)options;
  ++g_counters.loads;
  LoadRecord record;
  record.agent = agent.handle;
  Reader r{};
  {
    std::lock_guard<std::mutex> lock(g_loader_lock);
    auto it = g_readers.find(reader.handle);
    if (it == g_readers.end()) {
      record.status = HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
      t_last = record;
      return record.status;
    }
    r = it->second;
  }
  record.ptr = r.ptr;
  record.size = r.size;
  record.from_file_reader = r.from_file;
  record.marked = has_marker(r.ptr, r.size);
  if (find_agent(agent.handle) == nullptr) {
    record.status = HSA_STATUS_ERROR_INVALID_AGENT;
  } else if (executable.handle == kFailingExecutable) {
    record.status = HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  } else if (!valid_elf(r.ptr, r.size)) {
    record.status = HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  } else {
    record.status = HSA_STATUS_SUCCESS;
    // ROCr's loaded code object keeps pointing into these bytes.
    if (g_record_ranges) {
      Range range{r.ptr, r.size, fnv1a(r.ptr, r.size), r.own, executable.handle};
      std::lock_guard<std::mutex> lock(g_loader_lock);
      g_ranges.push_back(range);
    }
    if (loaded != nullptr) loaded->handle = reinterpret_cast<uint64_t>(r.ptr);
  }
  t_last = record;
  return record.status;
}

// The loader reads the ranges of the executables selected by `which` a last
// time (they must be unchanged: under valgrind, also still allocated), then
// forgets them, as ROCr's loader does when it destroys an executable.
template <typename Which> void release_ranges(Which which, const char *when) {
  std::lock_guard<std::mutex> lock(g_loader_lock);
  size_t bad = 0, checked = 0;
  auto keep = std::remove_if(g_ranges.begin(), g_ranges.end(), [&](const Range &r) {
    if (!which(r)) return false;
    ++checked;
    if (fnv1a(r.ptr, r.size) != r.hash) ++bad;
    return true;
  });
  g_ranges.erase(keep, g_ranges.end());
  g_ranges_checked += checked;
  if (bad != 0) {
    std::fprintf(stderr, "standin: FAIL: %zu of %zu loaded byte ranges changed %s\n", bad, checked, when);
    std::_Exit(4);
  }
}

// hsa_executable_destroy: the executable's loaded code objects are read a last
// time and dropped; afterwards ROCr reads none of their bytes.
hsa_status_t executable_destroy(hsa_executable_t executable) {
  if (closed()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (executable.handle == kFailingExecutable) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  ++g_counters.executable_destroys;
  release_ranges([&](const Range &r) { return r.executable == executable.handle; },
                 "when their executable was destroyed");
  return HSA_STATUS_SUCCESS;
}

// ---- agent queries -------------------------------------------------------------

hsa_status_t iterate_agents(hsa_status_t (*callback)(hsa_agent_t, void *), void *data) {
  if (closed()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  ++g_counters.agent_queries;
  if (callback == nullptr) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  // ROCr (Runtime::IterateAgent) lists its CPU agents first, then its GPUs.
  for (bool gpus : {false, true}) {
    for (const Agent &a : g_agents) {
      if (a.gpu != gpus) continue;
      hsa_status_t s = callback(hsa_agent_t{a.handle}, data);
      if (s != HSA_STATUS_SUCCESS) return s;
    }
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t agent_get_info(hsa_agent_t agent, hsa_agent_info_t attribute, void *value) {
  if (closed()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  ++g_counters.agent_queries;
  const Agent *a = find_agent(agent.handle);
  if (a == nullptr || value == nullptr) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (attribute == HSA_AGENT_INFO_DEVICE) {
    *static_cast<hsa_device_type_t *>(value) = a->gpu ? HSA_DEVICE_TYPE_GPU : HSA_DEVICE_TYPE_CPU;
    return HSA_STATUS_SUCCESS;
  }
  if (attribute == static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_ASIC_REVISION)) {
    if (a->revision < 0) return HSA_STATUS_ERROR;
    *static_cast<uint32_t *>(value) = uint32_t(a->revision);
    return HSA_STATUS_SUCCESS;
  }
  return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

// ISA handles: the agent's handle + 1 (agents have at most one ISA here).
hsa_status_t agent_iterate_isas(hsa_agent_t agent, hsa_status_t (*callback)(hsa_isa_t, void *),
                                void *data) {
  if (closed()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  ++g_counters.agent_queries;
  const Agent *a = find_agent(agent.handle);
  if (a == nullptr || callback == nullptr) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (a->isa.empty()) return HSA_STATUS_SUCCESS;
  return callback(hsa_isa_t{a->handle + 1}, data);
}

hsa_status_t isa_get_info_alt(hsa_isa_t isa, hsa_isa_info_t attribute, void *value) {
  if (closed()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  ++g_counters.agent_queries;
  const Agent *a = find_agent(isa.handle - 1);
  if (a == nullptr || a->isa.empty() || value == nullptr) return HSA_STATUS_ERROR_INVALID_ISA;
  if (attribute == HSA_ISA_INFO_NAME_LENGTH) {
    *static_cast<uint32_t *>(value) = uint32_t(a->isa.size() + 1);  // ROCr counts the NUL
    return HSA_STATUS_SUCCESS;
  }
  if (attribute == HSA_ISA_INFO_NAME) {
    std::memcpy(value, a->isa.c_str(), a->isa.size() + 1);
    return HSA_STATUS_SUCCESS;
  }
  return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

// Every other slot: the tool must never call it.
[[noreturn]] void forbidden() {
  ++g_counters.forbidden_calls;
  std::fprintf(stderr, "standin: FAIL: the tool called a table function it must not use\n");
  std::_Exit(5);
}

// ---- tools ---------------------------------------------------------------------

// os::GetExportAddress: a tool's OnLoad/OnUnload count only if the tool
// library itself defines them (dlsym alone also searches its dependencies).
template <typename F> F tool_export(void *handle, const char *name) {
  void *symbol = dlsym(handle, name);
  link_map *map = nullptr;
  Dl_info info{};
  if (symbol == nullptr || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || dladdr(symbol, &info) == 0 ||
      info.dli_fname == nullptr || std::strcmp(info.dli_fname, map->l_name) != 0)
    return nullptr;
  return reinterpret_cast<F>(symbol);
}

using OnLoadFn = bool (*)(HsaApiTable *, uint64_t, uint64_t, const char *const *);
using OnUnloadFn = void (*)();
struct Tool {
  std::string name;
  void *handle;
  OnUnloadFn on_unload;
  bool refused;  // its OnLoad returned false; ROCr closed it but keeps the entry
};
std::vector<Tool> g_tools;
std::vector<std::string> g_failed;
bool g_atexit_registered = false;

void fill_core(CoreApiTable &core) {
  auto **slots = reinterpret_cast<void **>(reinterpret_cast<char *>(&core) + sizeof(ApiTableVersion));
  size_t n = (sizeof(CoreApiTable) - sizeof(ApiTableVersion)) / sizeof(void *);
  for (size_t i = 0; i < n; ++i) slots[i] = reinterpret_cast<void *>(&forbidden);
  core.hsa_iterate_agents_fn = iterate_agents;
  core.hsa_agent_get_info_fn = agent_get_info;
  core.hsa_agent_iterate_isas_fn = agent_iterate_isas;
  core.hsa_isa_get_info_alt_fn = isa_get_info_alt;
  core.hsa_code_object_reader_create_from_memory_fn = create_from_memory;
  core.hsa_code_object_reader_create_from_file_fn = create_from_file;
  core.hsa_code_object_reader_destroy_fn = reader_destroy;
  core.hsa_executable_load_agent_code_object_fn = load_agent_code_object;
  core.hsa_executable_destroy_fn = executable_destroy;
}

// The project's truthiness rule (ROCr's for these flags): unset, empty, 0, off,
// false, no, n, f (any case) are false.
bool truthy(const char *name) {
  const char *v = std::getenv(name);
  if (v == nullptr) return false;
  std::string s(v);
  for (char &c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return !(s.empty() || s == "0" || s == "off" || s == "false" || s == "no" || s == "n" || s == "f");
}

// ROCr's own hotswap tool (Runtime::LoadHotswapTool, rocm-systems #9856): on a
// machine with an A0 GPU (first ISA gfx1250 or gfx1250-strict, ASIC revision 0),
// ROCr installs libhsa_hotswap_rocjitsu.so before any HSA_TOOLS_LIB tool and
// keeps it with the tools (reverse-order OnUnload). STANDIN_ROCR_HOOK names the
// library that plays it here; STANDIN_ROCR_HOOK_GATE picks the ROCr: `disable`
// (default; #9856: loaded unless HSA_HOTSWAP_DISABLE is true) or `enable`
// (#11526/#11576: loaded only with HSA_HOTSWAP_ENABLE true).
void load_rocr_hook() {
  const char *path = std::getenv("STANDIN_ROCR_HOOK");
  if (path == nullptr || *path == '\0') return;
  const char *gate = std::getenv("STANDIN_ROCR_HOOK_GATE");
  bool opt_in = gate != nullptr && std::string(gate) == "enable";
  if (opt_in ? !truthy("HSA_HOTSWAP_ENABLE") : truthy("HSA_HOTSWAP_DISABLE")) return;
  bool a0 = false;
  for (const Agent &a : g_agents) {
    const std::string &isa = a.isa;
    auto ends = [&](const std::string &t) {
      return isa.size() >= t.size() && isa.compare(isa.size() - t.size(), t.size(), t) == 0;
    };
    a0 = a0 || (a.revision == 0 && (ends("--gfx1250") || ends("--gfx1250-strict")));
  }
  if (!a0) return;
  void *handle = dlopen(path, RTLD_LAZY);
  auto on_load = handle ? reinterpret_cast<OnLoadFn>(dlsym(handle, "OnLoad")) : nullptr;
  HsaApiTable *root = runtime().root();
  if (on_load == nullptr || !on_load(root, root->version.major_id, 0, nullptr)) {
    std::fprintf(stderr, "rocjitsu hotswap tool \"%s\" failed to install.\n", path);
    std::exit(2);
  }
  g_tools.push_back(Tool{path, handle, reinterpret_cast<OnUnloadFn>(dlsym(handle, "OnUnload")), false});
}

void load_tools() {
  load_rocr_hook();
  const char *list = std::getenv("HSA_TOOLS_LIB");
  if (list == nullptr) return;
  // What later tools' OnLoad get as failed tools: the earlier tools of this
  // hsa_init whose OnLoad returned false, and only those (a library that does
  // not load is reported on stderr, not listed).
  std::vector<std::string> refused;
  for (const std::string &name : parse_tool_names(list)) {
    void *handle = dlopen(name.c_str(), RTLD_LAZY);
    if (handle == nullptr) {
      // As Debian's ROCr 5.2.3 reports it (built without NDEBUG: os::LoadLib's
      // debug_print, and the summary line only with the variable set to 1;
      // NDEBUG builds print only the summary line, unless it is set to 0).
      std::fprintf(stderr, "LoadLib(%s) failed: %s\n", name.c_str(), dlerror());
      const char *report = std::getenv("HSA_TOOLS_REPORT_LOAD_FAILURE");
      if (report != nullptr && std::strcmp(report, "1") == 0)
        std::fprintf(stderr, "Tool lib \"%s\" failed to load.\n", name.c_str());
      g_failed.push_back(name);
      continue;
    }
    auto on_load = tool_export<OnLoadFn>(handle, "OnLoad");
    auto on_unload = tool_export<OnUnloadFn>(handle, "OnUnload");
    if (on_load != nullptr) {
      std::vector<const char *> failed;
      for (const std::string &f : refused) failed.push_back(f.c_str());
      HsaApiTable *root = runtime().root();
      if (!on_load(root, root->version.major_id, failed.size(), failed.data())) {
        refused.push_back(name);
        g_failed.push_back(name);
        dlclose(handle);
        g_tools.push_back(Tool{name, handle, nullptr, true});
        continue;
      }
    }
    g_tools.push_back(Tool{name, handle, on_unload, false});
  }
}

// Runtime::CloseTools, at the end of the last hsa_shut_down: every tool
// library is dlclosed (a refused one a second time), unless
// HSA_RUNNING_UNDER_VALGRIND=1. A library nothing else holds is unmapped here.
void close_tools() {
  const char *valgrind = std::getenv("HSA_RUNNING_UNDER_VALGRIND");
  if (valgrind == nullptr || std::strcmp(valgrind, "1") != 0) {
    for (const Tool &t : g_tools) {
      if (t.refused) {
        // Its second dlclose is defined only while the library is still loaded.
        void *again = dlopen(t.name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
        if (again == nullptr) continue;
        dlclose(again);
      }
      dlclose(t.handle);
    }
  }
  g_tools.clear();
}

// At exit: OnUnload (after the tools' static destructors, as in HIP), then the
// loader is destroyed (every loaded range of the runtime instance re-read: it
// must be unchanged) and the tools closed. Each final hsa_shut_down does the
// same; this line counts the ranges of every instance.
void teardown() {
  shut_down();
  if (std::getenv("STANDIN_QUIET") == nullptr)
    std::printf("standin: loader destroyed after OnUnload: %zu loaded byte ranges re-read, all intact\n",
                g_ranges_checked);
  std::fflush(stdout);
}

}  // namespace

decltype(hsa_code_object_reader_create_from_memory) *const fake_create_from_memory = create_from_memory;
decltype(hsa_code_object_reader_create_from_file) *const fake_create_from_file = create_from_file;
decltype(hsa_code_object_reader_destroy) *const fake_reader_destroy = reader_destroy;
decltype(hsa_executable_load_agent_code_object) *const fake_load = load_agent_code_object;
decltype(hsa_executable_destroy) *const fake_executable_destroy = executable_destroy;

void configure_agents() {
  const char *selection = std::getenv("STANDIN_AGENTS");
  if (selection == nullptr || *selection == '\0') return;
  g_agents.clear();
  std::stringstream ss(selection);
  std::string label;
  while (std::getline(ss, label, ',')) {
    // "<label>*N": N agents of that kind (distinct handles).
    int copies = 1;
    size_t star = label.find('*');
    if (star != std::string::npos) {
      copies = std::atoi(label.c_str() + star + 1);
      label.resize(star);
    }
    for (const Agent &a : kAllAgents)
      for (int i = 0; a.label == label && i < copies; ++i) {
        Agent copy = a;
        copy.handle += uint64_t(i) * 0x10000;
        g_agents.push_back(copy);
      }
  }
}

const std::vector<Agent> &agents() { return g_agents; }

const Agent *agent_by_label(const std::string &label) {
  for (const Agent &a : g_agents)
    if (a.label == label) return &a;
  return nullptr;
}

Runtime::Runtime() { fill_core(tables.core); }

void Runtime::reset() {
  // ROCr's Reset assigns each entry its value in turn: a thread that reads a
  // slot meanwhile (an application racing hsa_shut_down) sees the tool's hook
  // or the runtime's function, never a placeholder. So the core slots (the
  // only functions here) are built aside and each stored whole; the versions
  // (their reserved fields left as they are) and the root's pointers to the
  // tables are set back as the container's constructor sets them.
  HsaApiTableContainer fresh;
  fill_core(fresh.core);
  auto **to = reinterpret_cast<void **>(reinterpret_cast<char *>(&tables.core) + sizeof(ApiTableVersion));
  void *const *from =
      reinterpret_cast<void *const *>(reinterpret_cast<const char *>(&fresh.core) + sizeof(ApiTableVersion));
  for (size_t i = 0; i < (sizeof(CoreApiTable) - sizeof(ApiTableVersion)) / sizeof(void *); ++i)
    __atomic_store_n(&to[i], from[i], __ATOMIC_RELAXED);
  auto restore = [](ApiTableVersion &v, const ApiTableVersion &built) {
    v.major_id = built.major_id;
    v.minor_id = built.minor_id;
    v.step_id = built.step_id;
  };
  restore(tables.root.version, fresh.root.version);
  restore(tables.core.version, fresh.core.version);
  restore(tables.amd_ext.version, fresh.amd_ext.version);
  restore(tables.finalizer_ext.version, fresh.finalizer_ext.version);
  restore(tables.image_ext.version, fresh.image_ext.version);
  tables.root.core_ = &tables.core;
  tables.root.amd_ext_ = &tables.amd_ext;
  tables.root.finalizer_ext_ = &tables.finalizer_ext;
  tables.root.image_ext_ = &tables.image_ext;
}

bool readers_dropped_at_shut_down() { return g_readers_dropped.load(); }

Runtime &runtime() {
  static Runtime table;  // static storage, trivially destructible: valid until the process ends
  return table;
}

void init() {
  if (!g_atexit_registered) {
    // Registered before any tool is dlopened: runs after the tools' static
    // destructors (registered at dlopen), like HIP's hsa_shut_down.
    std::atexit(teardown);
    g_atexit_registered = true;
  }
  if (g_refs++ > 0) return;
  g_readers_dropped = false;
  load_tools();
}

void shut_down() {
  if (g_refs == 0) return;  // ROCr: HSA_STATUS_ERROR_NOT_INITIALIZED
  if (g_refs > 1) {
    --g_refs;
    return;
  }
  for (auto it = g_tools.rbegin(); it != g_tools.rend(); ++it) {
    if (it->refused) {
      // ROCr 5.2.3 looks OnUnload up through the handle it closed after the
      // refused OnLoad, and calls it. That is defined while the library is
      // still loaded (named twice, or held elsewhere); otherwise ROCr reads a
      // freed handle, which the stand-in does not imitate.
      if (void *again = dlopen(it->name.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
        if (auto on_unload = tool_export<OnUnloadFn>(again, "OnUnload")) on_unload();
        dlclose(again);
      }
      continue;
    }
    if (it->on_unload != nullptr) it->on_unload();
  }
  // Reset(): the table gets the runtime's own functions and versions back.
  runtime().reset();
  // Loader::Destroy (Runtime::Unload, after UnloadTools, before CloseTools):
  // every executable of this instance read a last time and destroyed.
  release_ranges([](const Range &) { return true; }, "after OnUnload");
  {
    // Readers the application did not destroy go with the runtime instance.
    std::lock_guard<std::mutex> lock(g_loader_lock);
    g_readers_dropped = true;
    g_readers.clear();
  }
  close_tools();
  --g_refs;  // after Unload, as Runtime::Release does
}

std::vector<std::string> parse_tool_names(const std::string &value) {
  std::vector<std::string> names;
  std::string current;
  bool quoted = false;
  for (size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    if (c == '\\' && i + 1 < value.size()) {
      current += value[++i];
    } else if (c == '"') {
      if (quoted) {
        names.push_back(current);
        current.clear();
      }
      quoted = !quoted;
    } else if (c == ' ' && !quoted) {
      if (!current.empty()) names.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) names.push_back(current);
  return names;
}

const std::vector<std::string> &failed_tools() { return g_failed; }

LoadRecord last_load() { return t_last; }

Counters &counters() { return g_counters; }

void set_record_ranges(bool on) { g_record_ranges = on; }

size_t recorded_ranges() {
  std::lock_guard<std::mutex> lock(g_loader_lock);
  return g_ranges.size();
}

bool has_marker(const uint8_t *bytes, size_t size) {
  return bytes != nullptr && size >= 16 && std::memcmp(bytes + 9, "HOTSWAP", 7) == 0;
}

std::vector<uint8_t> read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace standin
