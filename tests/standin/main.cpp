// hotswap-standin: drives libhsa-hotswap.so exactly as ROCr does (runtime.cpp)
// through scenarios that check what the application sees.
//
//   hotswap-standin <scenario> [args]
//
// Environment: HSA_TOOLS_LIB (the tool list, as for ROCr), STANDIN_CODE_OBJECTS
// (directory of the code objects built by clang-22), STANDIN_AGENTS (agent
// labels, comma-separated; default all), HSA_HOTSWAP_REWRITER (test rewriter).
// Exit status 0 = every check passed; failed checks are printed as "FAIL:".
#include <dlfcn.h>
#include <malloc.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "runtime.hpp"

using namespace standin;

namespace standin {
// rules.cpp: the shared fake-ROCr rules (tests/common/rocr_rules.txt); failures.
int run_rules(const std::string &rules_path, const std::string &object_path);
}  // namespace standin

namespace {

int g_failures = 0;
#define CHECK(cond, ...)                                       \
  do {                                                         \
    if (!(cond)) {                                             \
      ++g_failures;                                            \
      std::printf("FAIL: %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::printf(__VA_ARGS__);                                \
      std::printf("\n");                                       \
    }                                                          \
  } while (0)

// ---- code objects ------------------------------------------------------------

struct CodeObject {
  std::string name;
  const std::vector<uint8_t> *bytes;  // never freed: loaded ranges outlive main
};
std::map<std::string, CodeObject> g_objects;

const std::vector<uint8_t> &load_object(const std::string &name) {
  const char *dir = std::getenv("STANDIN_CODE_OBJECTS");
  std::string path = std::string(dir ? dir : ".") + "/" + name + ".co";
  auto *bytes = new std::vector<uint8_t>(read_file(path));
  if (bytes->size() < 64) {
    std::printf("FAIL: cannot read code object %s\n", path.c_str());
    std::exit(2);
  }
  return *bytes;
}

// gfx12-5-generic: clang-22 cannot target it, so it is derived from the gfx1250
// code object (code object v6) exactly as LLVM marks a generic target:
// EF_AMDGPU_MACH = 0x05b (gfx12-5-generic), generic version 1 in e_flags[31:24].
std::vector<uint8_t> *make_generic(const std::vector<uint8_t> &gfx1250) {
  auto *bytes = new std::vector<uint8_t>(gfx1250);
  uint32_t flags;
  std::memcpy(&flags, bytes->data() + 48, 4);
  flags = (flags & ~0xffu & 0x00ffffffu) | 0x05bu | (1u << 24);
  std::memcpy(bytes->data() + 48, &flags, 4);
  return bytes;
}

// gfx1250-strict (EF_AMDGPU_MACH 0x0eb, the A0 target, llvm #218543): clang-22
// cannot target it, so it is the gfx1250 code object with the MACH field set as
// ROCm's compiler writes it (XNACK unsupported, current-rocm.md §1.3).
std::vector<uint8_t> *make_strict(const std::vector<uint8_t> &gfx1250) {
  auto *bytes = new std::vector<uint8_t>(gfx1250);
  uint32_t flags = 0x0ebu;
  std::memcpy(bytes->data() + 48, &flags, 4);
  return bytes;
}

// An A0 agent, as ROCr reports it either way (gfx1250 or gfx1250-strict, rev 0).
bool is_a0(const Agent &agent) { return agent.label == "gfx1250-A0" || agent.label == "gfx1250-strict-A0"; }

void load_objects() {
  for (const char *name : {"gfx1250", "gfx1251", "gfx942"})
    g_objects[name] = CodeObject{name, &load_object(name)};
  g_objects["gfx12-5-generic"] = CodeObject{"gfx12-5-generic", make_generic(*g_objects["gfx1250"].bytes)};
  g_objects["gfx1250-strict"] = CodeObject{"gfx1250-strict", make_strict(*g_objects["gfx1250"].bytes)};
  auto *truncated = new std::vector<uint8_t>(g_objects["gfx1250"].bytes->begin(),
                                             g_objects["gfx1250"].bytes->begin() + 200);
  g_objects["truncated"] = CodeObject{"truncated", truncated};
  g_objects["not-elf"] = CodeObject{"not-elf", new std::vector<uint8_t>(4096, 'x')};
}

const std::vector<uint8_t> &object(const std::string &name) { return *g_objects.at(name).bytes; }

// ---- the application side: calls through the table, as hsa_* trampolines do ----

CoreApiTable &api() { return runtime().core(); }

struct Outcome {
  hsa_status_t status;
  bool rewritten;        // the loader got bytes carrying the rewriter's marker
  bool caller_bytes;     // the loader got the caller's own bytes (memory readers)
  bool file_reader;      // the loader saw a file reader
  size_t size;
};

Outcome load_memory(const std::vector<uint8_t> &bytes, const Agent &agent,
                    uint64_t executable = 1) {
  hsa_code_object_reader_t reader{};
  hsa_status_t s = api().hsa_code_object_reader_create_from_memory_fn(bytes.data(), bytes.size(), &reader);
  if (s != HSA_STATUS_SUCCESS) return Outcome{s, false, false, false, 0};
  hsa_loaded_code_object_t loaded{};
  s = api().hsa_executable_load_agent_code_object_fn(hsa_executable_t{executable},
                                                     hsa_agent_t{agent.handle}, reader, nullptr, &loaded);
  LoadRecord r = last_load();
  api().hsa_code_object_reader_destroy_fn(reader);
  return Outcome{s, r.marked, r.ptr == bytes.data(), r.from_file_reader, r.size};
}

std::string temp_file(const std::vector<uint8_t> &bytes) {
  char path[] = "/tmp/hotswap-standin-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0 || write(fd, bytes.data(), bytes.size()) != ssize_t(bytes.size())) std::exit(2);
  close(fd);
  return path;
}

// ---- the test rewriter's own accounting (same library instance as the tool's) ----

unsigned rewriter_calls() {
  const char *path = std::getenv("HSA_HOTSWAP_REWRITER");
  if (path == nullptr) return 0;
  void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return 0;
  auto fn = reinterpret_cast<unsigned (*)()>(dlsym(h, "test_rewriter_calls"));
  unsigned n = fn ? fn() : 0;
  dlclose(h);
  return n;
}

std::pair<std::string, std::string> rewriter_last_pair() {
  char s[256] = "", t[256] = "";
  const char *path = std::getenv("HSA_HOTSWAP_REWRITER");
  if (void *h = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr) {
    if (auto fn = reinterpret_cast<void (*)(char *, char *)>(dlsym(h, "test_rewriter_last_isas"))) fn(s, t);
    dlclose(h);
  }
  return {s, t};
}

// False for a rocjitsu translator double: that API takes no ISA names.
bool rewriter_reports_isas() {
  const char *path = std::getenv("HSA_HOTSWAP_REWRITER");
  void *h = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  bool reports = h != nullptr && dlsym(h, "test_rewriter_last_isas") != nullptr;
  if (h != nullptr) dlclose(h);
  return reports;
}

bool ends_with(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// ---- scenarios -----------------------------------------------------------------

// Every row of the decision table (reference §4.3): argv "off" or "on" says
// whether AMD_COMGR_HOTSWAP_ENTRY_TRAMPOLINES is set to a true value.
void scenario_decision(bool opt_in) {
  init();
  CHECK(failed_tools().empty(), "the tool did not load");
  const std::vector<std::string> gfx12_5_agents = {"gfx1250-A0", "gfx1250-strict-A0", "gfx1250-B0",
                                                   "gfx1250-rev?", "gfx1251", "gfx12-5-generic"};
  const std::vector<std::string> gfx12_5_objects = {"gfx1250", "gfx1251", "gfx12-5-generic"};
  for (const Agent &agent : agents()) {
    for (const char *co : {"gfx1250", "gfx1251", "gfx12-5-generic", "gfx1250-strict", "gfx942"}) {
      bool expect;
      if (is_a0(agent) && std::string(co) == "gfx1250") {
        expect = true;  // the baseline: any opt-in
      } else {
        expect = opt_in &&
                 std::count(gfx12_5_agents.begin(), gfx12_5_agents.end(), agent.label) &&
                 std::count(gfx12_5_objects.begin(), gfx12_5_objects.end(), std::string(co));
      }
      unsigned before = rewriter_calls();
      Outcome o = load_memory(object(co), agent);
      unsigned calls = rewriter_calls() - before;
      std::printf("%-16s %-16s %s%s\n", agent.label.c_str(), co, o.rewritten ? "rewritten" : "original",
                  calls ? "" : " (no rewriter call)");
      CHECK(o.status == HSA_STATUS_SUCCESS, "%s on %s: status %#x", co, agent.label.c_str(), o.status);
      CHECK(o.rewritten == expect, "%s on %s: expected %s", co, agent.label.c_str(),
            expect ? "rewritten" : "original");
      CHECK(o.rewritten != o.caller_bytes, "%s on %s: bytes", co, agent.label.c_str());
      if (calls == 0 || !rewriter_reports_isas()) continue;
      auto pair = rewriter_last_pair();
      if (is_a0(agent) && std::string(co) == "gfx1250") {
        // The same pair for both kinds of A0 agent: the rewriters know A0 as
        // gfx1250 with the A0 pseudo-feature.
        CHECK(pair.first == "amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific+", "source %s", pair.first.c_str());
        CHECK(pair.second == "amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific-", "target %s", pair.second.c_str());
      } else {
        CHECK(pair.first == pair.second, "opt-in pair %s -> %s must be src -> src", pair.first.c_str(),
              pair.second.c_str());
        CHECK(pair.first.find(co) != std::string::npos, "pair %s for %s", pair.first.c_str(), co);
        CHECK(ends_with(pair.first, ":gfx1250-b0-specific+") == (std::string(co) == "gfx1250"),
              "B0 feature only on gfx1250 sources: %s", pair.first.c_str());
      }
    }
  }
  CHECK(counters().forbidden_calls == 0, "forbidden table calls");
}

// The tool with a rewriter that cannot help: the caller's original is loaded on
// gfx1250-A0, and a failing load's status is the caller's own. argv: the number
// of rewriter calls expected in all (the test rewriter counts its availability
// probe too), or nothing for a rewriter that cannot be counted.
void scenario_fallback(const std::string &expected_calls) {
  init();
  CHECK(failed_tools().empty(), "the tool did not load");
  const Agent &a0 = *agent_by_label("gfx1250-A0");
  // A reader created and destroyed first resolves (and probes) the rewriter, so
  // the counts below are of rewrites.
  hsa_code_object_reader_t warm{};
  api().hsa_code_object_reader_create_from_memory_fn(object("gfx942").data(), object("gfx942").size(), &warm);
  api().hsa_code_object_reader_destroy_fn(warm);
  for (int i = 0; i < 3; ++i) {
    unsigned before = rewriter_calls();
    Outcome o = load_memory(object("gfx1250"), a0);
    unsigned calls = rewriter_calls() - before;
    CHECK(o.status == HSA_STATUS_SUCCESS, "status %#x", o.status);
    CHECK(!o.rewritten && o.caller_bytes, "the caller's original must be loaded");
    std::printf("load %d: %u rewriter call(s)\n", i, calls);
  }
  Outcome o = load_memory(object("gfx1250"), a0, kFailingExecutable);
  CHECK(o.status == HSA_STATUS_ERROR_INVALID_EXECUTABLE, "status %#x is not the loader's own", o.status);
  // The test rewriter counts every call, the availability probe included: a
  // deterministic answer is asked once, an error again on every load.
  unsigned calls = rewriter_calls();
  if (!expected_calls.empty())
    CHECK(calls == unsigned(std::stoul(expected_calls)), "%u rewriter calls, expected %s", calls,
          expected_calls.c_str());
  std::printf("gfx1250 on gfx1250-A0: original loaded (status %#x); failing executable: status %#x; "
              "%u rewriter call(s)\n",
              HSA_STATUS_SUCCESS, o.status, calls);
}

// Status pass-through with a rewriter that works: a failing load of the rewritten
// code object falls back to the caller's reader and returns its status.
void scenario_status() {
  init();
  const Agent &a0 = *agent_by_label("gfx1250-A0");
  Outcome o = load_memory(object("gfx1250"), a0, kFailingExecutable);
  CHECK(o.status == HSA_STATUS_ERROR_INVALID_EXECUTABLE, "status %#x", o.status);
  CHECK(o.caller_bytes, "the last load must be the caller's reader");
  hsa_code_object_reader_t bogus{0x1234};
  hsa_status_t s = api().hsa_executable_load_agent_code_object_fn(hsa_executable_t{1}, hsa_agent_t{a0.handle},
                                                                  bogus, nullptr, nullptr);
  CHECK(s == HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER, "unknown reader: status %#x", s);
  s = api().hsa_code_object_reader_create_from_memory_fn(nullptr, 0, &bogus);
  CHECK(s == HSA_STATUS_ERROR_INVALID_ARGUMENT, "NULL memory: status %#x", s);
  s = api().hsa_code_object_reader_destroy_fn(bogus);
  CHECK(s == HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER, "destroy unknown: status %#x", s);
}

// Truncated and non-ELF code objects: the loader's own verdict, no crash.
void scenario_bad_objects() {
  init();
  for (const char *label : {"gfx1250-A0", "gfx942"}) {
    const Agent &agent = *agent_by_label(label);
    for (const char *co : {"truncated", "not-elf"}) {
      Outcome o = load_memory(object(co), agent);
      std::printf("%-10s on %-12s status %#x\n", co, label, o.status);
      CHECK(o.status == HSA_STATUS_ERROR_INVALID_CODE_OBJECT, "%s on %s: status %#x", co, label, o.status);
      CHECK(o.caller_bytes, "the caller's bytes must be what the loader rejected");
    }
  }
  // One byte, and a header claiming tables past the end.
  const Agent &a0 = *agent_by_label("gfx1250-A0");
  auto *one = new std::vector<uint8_t>(1, 0x7f);
  CHECK(load_memory(*one, a0).status == HSA_STATUS_ERROR_INVALID_CODE_OBJECT, "one byte");
  auto *lying = new std::vector<uint8_t>(object("gfx1250").begin(), object("gfx1250").begin() + 64);
  CHECK(load_memory(*lying, a0).status == HSA_STATUS_ERROR_INVALID_CODE_OBJECT, "header only");
  Outcome good = load_memory(object("gfx1250"), a0);
  CHECK(good.status == HSA_STATUS_SUCCESS, "a good object still loads after bad ones");
}

// File readers: offset preserved; memory reader over the file when a rewrite is
// possible (argv "convert") or the original file reader otherwise ("keep"); the
// bytes stay alive after destroy and close (re-read at exit).
void scenario_file(bool expect_convert) {
  init();
  std::string path = temp_file(object("gfx1250"));
  for (const char *label : {"gfx1250-A0", "gfx1250-B0", "gfx942"}) {
    const Agent *agent = agent_by_label(label);
    if (agent == nullptr) continue;
    int fd = open(path.c_str(), O_RDONLY);
    CHECK(lseek(fd, 123, SEEK_SET) == 123, "seek");
    hsa_code_object_reader_t reader{};
    hsa_status_t s = api().hsa_code_object_reader_create_from_file_fn(fd, &reader);
    CHECK(s == HSA_STATUS_SUCCESS, "create_from_file: %#x", s);
    off_t offset = lseek(fd, 0, SEEK_CUR);
    // ROCr's create leaves the offset at the end of the file; so does the tool
    // when it makes a memory reader of the file instead.
    CHECK(offset == off_t(object("gfx1250").size()), "offset %ld is not where ROCr leaves it", long(offset));
    s = api().hsa_executable_load_agent_code_object_fn(hsa_executable_t{1}, hsa_agent_t{agent->handle}, reader,
                                                       nullptr, nullptr);
    LoadRecord r = last_load();
    CHECK(s == HSA_STATUS_SUCCESS, "load: %#x", s);
    CHECK(r.from_file_reader == !expect_convert, "%s: the loader saw a %s reader", label,
          r.from_file_reader ? "file" : "memory");
    bool rewrite = expect_convert && std::string(label) == "gfx1250-A0";
    CHECK(r.marked == rewrite, "%s: %s", label, r.marked ? "rewritten" : "original");
    std::printf("file reader on %-12s: loader saw a %s reader, %s, offset %ld\n", label,
                r.from_file_reader ? "file" : "memory", r.marked ? "rewritten" : "original", long(offset));
    CHECK(api().hsa_code_object_reader_destroy_fn(reader) == HSA_STATUS_SUCCESS, "destroy");
    close(fd);
    // A reader that is created and destroyed without a load frees its bytes.
    fd = open(path.c_str(), O_RDONLY);
    CHECK(api().hsa_code_object_reader_create_from_file_fn(fd, &reader) == HSA_STATUS_SUCCESS, "create");
    CHECK(api().hsa_code_object_reader_destroy_fn(reader) == HSA_STATUS_SUCCESS, "destroy");
    close(fd);
  }
  unlink(path.c_str());
  // Descriptors ROCr rejects, with its own statuses: -1, a closed one, an empty file.
  hsa_code_object_reader_t reader{};
  CHECK(api().hsa_code_object_reader_create_from_file_fn(-1, &reader) == HSA_STATUS_ERROR_INVALID_ARGUMENT,
        "fd -1");
  int closed = open("/dev/null", O_RDONLY);
  close(closed);
  CHECK(api().hsa_code_object_reader_create_from_file_fn(closed, &reader) == HSA_STATUS_ERROR_INVALID_FILE,
        "closed fd");
  std::string empty = temp_file({});
  int fd = open(empty.c_str(), O_RDONLY);
  CHECK(api().hsa_code_object_reader_create_from_file_fn(fd, &reader) == HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
        "empty file");
  close(fd);
  unlink(empty.c_str());
}

// Chaining: a prior tool's wrappers are what the hooks call, and what OnUnload
// restores; a slot a later tool wrapped is left alone.
std::atomic<int> g_prior_calls{0}, g_later_calls{0};
decltype(hsa_code_object_reader_create_from_memory) *g_prior_create_next;
decltype(hsa_code_object_reader_create_from_file) *g_prior_file_next;
decltype(hsa_code_object_reader_destroy) *g_prior_destroy_next;
decltype(hsa_executable_load_agent_code_object) *g_prior_load_next, *g_later_load_next;
hsa_status_t prior_create(const void *p, size_t n, hsa_code_object_reader_t *r) {
  ++g_prior_calls;
  return g_prior_create_next(p, n, r);
}
hsa_status_t prior_file(hsa_file_t f, hsa_code_object_reader_t *r) {
  ++g_prior_calls;
  return g_prior_file_next(f, r);
}
hsa_status_t prior_destroy(hsa_code_object_reader_t r) {
  ++g_prior_calls;
  return g_prior_destroy_next(r);
}
hsa_status_t prior_load(hsa_executable_t e, hsa_agent_t a, hsa_code_object_reader_t r, const char *o,
                        hsa_loaded_code_object_t *l) {
  ++g_prior_calls;
  return g_prior_load_next(e, a, r, o, l);
}
hsa_status_t later_load(hsa_executable_t e, hsa_agent_t a, hsa_code_object_reader_t r, const char *o,
                        hsa_loaded_code_object_t *l) {
  ++g_later_calls;
  return g_later_load_next(e, a, r, o, l);
}

void wrap_as_prior_tool(CoreApiTable &core) {
  g_prior_create_next = core.hsa_code_object_reader_create_from_memory_fn;
  g_prior_file_next = core.hsa_code_object_reader_create_from_file_fn;
  g_prior_destroy_next = core.hsa_code_object_reader_destroy_fn;
  g_prior_load_next = core.hsa_executable_load_agent_code_object_fn;
  core.hsa_code_object_reader_create_from_memory_fn = prior_create;
  core.hsa_code_object_reader_create_from_file_fn = prior_file;
  core.hsa_code_object_reader_destroy_fn = prior_destroy;
  core.hsa_executable_load_agent_code_object_fn = prior_load;
}

// The stand-in plays the prior tool itself: it wraps the slots before the tool's
// OnLoad, as an earlier entry of HSA_TOOLS_LIB would.
void *g_tool = nullptr;
bool (*g_on_load)(HsaApiTable *, uint64_t, uint64_t, const char *const *);
void (*g_on_unload)();

void open_tool_directly() {
  const char *list = std::getenv("HSA_TOOLS_LIB");
  auto names = parse_tool_names(list ? list : "");
  g_tool = names.empty() ? nullptr : dlopen(names.front().c_str(), RTLD_LAZY);
  if (g_tool == nullptr) {
    std::printf("FAIL: cannot dlopen the tool: %s\n", dlerror());
    std::exit(2);
  }
  g_on_load = reinterpret_cast<decltype(g_on_load)>(dlsym(g_tool, "OnLoad"));
  g_on_unload = reinterpret_cast<decltype(g_on_unload)>(dlsym(g_tool, "OnUnload"));
}

bool call_on_load(HsaApiTable *root) {
  return g_on_load(root, root ? root->version.major_id : 0, 0, nullptr);
}

void scenario_chain() {
  open_tool_directly();
  std::string tools = std::getenv("HSA_TOOLS_LIB");
  unsetenv("HSA_TOOLS_LIB");  // init() builds tables only; the tool is driven here
  init();
  setenv("HSA_TOOLS_LIB", tools.c_str(), 1);
  CoreApiTable &core = api();
  wrap_as_prior_tool(core);
  CHECK(call_on_load(runtime().root()), "OnLoad");
  CHECK(reinterpret_cast<void *>(core.hsa_executable_load_agent_code_object_fn) != reinterpret_cast<void *>(prior_load),
        "the load slot was not patched");
  const Agent &a0 = *agent_by_label("gfx1250-A0");
  int before = g_prior_calls;
  Outcome o = load_memory(object("gfx1250"), a0);
  CHECK(o.status == HSA_STATUS_SUCCESS, "status");
  CHECK(g_prior_calls - before >= 3, "the hooks must chain to the prior tool's wrappers (%d calls)",
        g_prior_calls - before);
  std::printf("chained: %d calls reached the prior tool's wrappers; rewritten: %s\n", g_prior_calls - before,
              o.rewritten ? "yes" : "no");
  // A later tool wraps the load slot (and never restores it).
  g_later_load_next = core.hsa_executable_load_agent_code_object_fn;
  core.hsa_executable_load_agent_code_object_fn = later_load;
  load_memory(object("gfx1250"), a0);
  CHECK(g_later_calls == 1, "later tool");
  g_on_unload();
  CHECK(core.hsa_code_object_reader_create_from_memory_fn == prior_create, "create_from_memory not restored");
  CHECK(core.hsa_code_object_reader_create_from_file_fn == prior_file, "create_from_file not restored");
  CHECK(core.hsa_code_object_reader_destroy_fn == prior_destroy, "destroy not restored");
  CHECK(core.hsa_executable_load_agent_code_object_fn == later_load, "a later tool's slot was overwritten");
  // The later tool still chains into our hook after OnUnload: it passes through.
  Outcome after = load_memory(object("gfx1250"), a0);
  CHECK(after.status == HSA_STATUS_SUCCESS, "load after OnUnload through a later tool: %#x", after.status);
  std::printf("after OnUnload: slots restored to the prior tool, later tool's slot left alone\n");
}

// Refused tables: OnLoad false, table byte-for-byte unchanged.
void scenario_refused() {
  open_tool_directly();
  std::string tools = std::getenv("HSA_TOOLS_LIB");
  unsetenv("HSA_TOOLS_LIB");
  init();
  setenv("HSA_TOOLS_LIB", tools.c_str(), 1);
  HsaApiTable *root = runtime().root();
  CoreApiTable &core = api();
  auto snapshot = [&] {
    std::vector<uint8_t> s(sizeof(HsaApiTable) + sizeof(CoreApiTable));
    std::memcpy(s.data(), root, sizeof(HsaApiTable));
    std::memcpy(s.data() + sizeof(HsaApiTable), &core, sizeof(CoreApiTable));
    return s;
  };
  CHECK(!g_on_load(nullptr, 1, 0, nullptr), "NULL table accepted");
  struct Case {
    const char *what;
    std::function<void()> damage, repair;
  };
  uint32_t full = core.version.minor_id;
  uint32_t major = core.version.major_id;
  auto *saved_file = core.hsa_code_object_reader_create_from_file_fn;
  auto *saved_isa = core.hsa_isa_get_info_alt_fn;
  CoreApiTable *saved_core = root->core_;
  std::vector<Case> cases = {
      {"truncated table (minor_id = offsetof(load_agent_code_object))",
       [&] { core.version.minor_id = offsetof(CoreApiTable, hsa_executable_load_agent_code_object_fn); },
       [&] { core.version.minor_id = full; }},
      {"table ending right before create_from_file",
       [&] { core.version.minor_id = offsetof(CoreApiTable, hsa_code_object_reader_create_from_file_fn); },
       [&] { core.version.minor_id = full; }},
      {"NULL core_", [&] { root->core_ = nullptr; }, [&] { root->core_ = saved_core; }},
      {"NULL create_from_file", [&] { core.hsa_code_object_reader_create_from_file_fn = nullptr; },
       [&] { core.hsa_code_object_reader_create_from_file_fn = saved_file; }},
      {"NULL isa_get_info_alt", [&] { core.hsa_isa_get_info_alt_fn = nullptr; },
       [&] { core.hsa_isa_get_info_alt_fn = saved_isa; }},
      // Only the core majors the tool is written against (1: ROCm 5.x, 2: 6.x+).
      {"core table major 0", [&] { core.version.major_id = 0; }, [&] { core.version.major_id = major; }},
      {"core table major 3", [&] { core.version.major_id = 3; }, [&] { core.version.major_id = major; }},
  };
  for (Case &c : cases) {
    c.damage();
    auto before = snapshot();
    bool loaded = call_on_load(root);
    CHECK(!loaded, "%s: accepted", c.what);
    CHECK(snapshot() == before, "%s: the table changed", c.what);
    std::printf("%-64s OnLoad=%s, table unchanged=%s\n", c.what, loaded ? "true" : "false",
                snapshot() == before ? "yes" : "no");
    c.repair();
  }
  // Both majors the tool is written against are accepted (patched, then restored).
  for (uint32_t accepted : {1u, 2u}) {
    core.version.major_id = accepted;
    auto before = snapshot();
    CHECK(call_on_load(root), "core table major %u refused", accepted);
    CHECK(snapshot() != before, "core table major %u: nothing patched", accepted);
    g_on_unload();
    CHECK(snapshot() == before, "core table major %u: not restored by OnUnload", accepted);
    std::printf("%-64s OnLoad=true, restored by OnUnload\n",
                ("core table major " + std::to_string(accepted)).c_str());
  }
  core.version.major_id = major;
  // The same table twice without OnUnload: refused, unchanged.
  CHECK(call_on_load(root), "OnLoad on a good table");
  auto before = snapshot();
  CHECK(!call_on_load(root), "a second OnLoad on the same patched table was accepted");
  CHECK(snapshot() == before, "second OnLoad changed the table");
  g_on_unload();
}

// HSA_HOTSWAP_DISABLE true: OnLoad true, nothing patched, loads untouched.
void scenario_disabled() {
  open_tool_directly();
  std::string tools = std::getenv("HSA_TOOLS_LIB");
  unsetenv("HSA_TOOLS_LIB");
  init();
  setenv("HSA_TOOLS_LIB", tools.c_str(), 1);
  std::vector<uint8_t> before(sizeof(CoreApiTable));
  std::memcpy(before.data(), &api(), sizeof(CoreApiTable));
  CHECK(call_on_load(runtime().root()), "OnLoad must return true when disabled");
  CHECK(std::memcmp(before.data(), &api(), sizeof(CoreApiTable)) == 0, "the table was patched");
  Outcome o = load_memory(object("gfx1250"), *agent_by_label("gfx1250-A0"));
  CHECK(o.status == HSA_STATUS_SUCCESS && !o.rewritten, "load");
  g_on_unload();
  std::printf("disabled: OnLoad true, table unchanged, gfx1250 on gfx1250-A0 loaded as is\n");
}

// hsa_shut_down then hsa_init: ROCr hands the second OnLoad the same table,
// reset; the tool works from what it holds then, not from the first session.
// The scenario holds the tool library itself (as CLR's hotswap gate does), so
// hsa_shut_down's dlclose leaves it loaded and the second OnLoad reaches the
// same library instance.
void scenario_reload() {
  open_tool_directly();
  init();
  const Agent &a0 = *agent_by_label("gfx1250-A0");
  CHECK(load_memory(object("gfx1250"), a0).rewritten, "first runtime: rewrite");
  // A nested hsa_init / hsa_shut_down pair only counts: no OnLoad, no OnUnload.
  auto hooked_load = api().hsa_executable_load_agent_code_object_fn;
  init();
  shut_down();
  CHECK(api().hsa_executable_load_agent_code_object_fn == hooked_load, "a nested pair unloaded the tool");
  CHECK(load_memory(object("gfx1250"), a0).rewritten, "first runtime after a nested pair: rewrite");
  shut_down();
  CHECK(api().hsa_executable_load_agent_code_object_fn == fake_load, "Reset");
  HsaApiTable *first_table = runtime().root();
  // The second runtime's table holds other functions (a prior tool's wrappers):
  // the hooks must reach them, not the functions of the first session.
  std::string tools = std::getenv("HSA_TOOLS_LIB");
  unsetenv("HSA_TOOLS_LIB");
  init();
  setenv("HSA_TOOLS_LIB", tools.c_str(), 1);
  CHECK(runtime().root() == first_table, "ROCr keeps one API table");
  wrap_as_prior_tool(api());
  open_tool_directly();
  CHECK(call_on_load(runtime().root()), "second OnLoad");
  int before = g_prior_calls;
  Outcome o = load_memory(object("gfx1250"), a0);
  CHECK(o.status == HSA_STATUS_SUCCESS && o.rewritten, "second runtime: rewrite");
  CHECK(g_prior_calls - before >= 3, "the hooks called the first session's functions");
  Outcome b0 = load_memory(object("gfx1250"), *agent_by_label("gfx1250-B0"));
  CHECK(b0.status == HSA_STATUS_SUCCESS && !b0.rewritten && b0.caller_bytes, "B0");
  g_on_unload();
  CHECK(api().hsa_executable_load_agent_code_object_fn == prior_load, "restore after the second OnLoad");
  std::printf("reload: second OnLoad chained to the reset table's new functions (%d calls)\n",
              g_prior_calls - before);
}

// 8 threads x 200 create/load/destroy on every agent, memory and file readers.
void scenario_threads() {
  init();
  std::string path = temp_file(object("gfx1250"));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const Agent &agent = agents()[size_t(t + i) % agents().size()];
        const char *co = (i % 3 == 0) ? "gfx942" : "gfx1250";
        bool expect = is_a0(agent) && std::string(co) == "gfx1250";
        if (i % 10 == 7) {
          int fd = open(path.c_str(), O_RDONLY);
          hsa_code_object_reader_t reader{};
          if (api().hsa_code_object_reader_create_from_file_fn(fd, &reader) != HSA_STATUS_SUCCESS) ++wrong;
          hsa_status_t s = api().hsa_executable_load_agent_code_object_fn(
              hsa_executable_t{1}, hsa_agent_t{agent.handle}, reader, nullptr, nullptr);
          bool rewritten = last_load().marked;
          if (s != HSA_STATUS_SUCCESS || rewritten != is_a0(agent)) ++wrong;
          api().hsa_code_object_reader_destroy_fn(reader);
          close(fd);
          continue;
        }
        Outcome o = load_memory(object(co), agent);
        if (o.status != HSA_STATUS_SUCCESS || o.rewritten != expect) ++wrong;
      }
    });
  }
  for (auto &th : threads) th.join();
  unlink(path.c_str());
  CHECK(wrong == 0, "%d of 1600 loads were wrong", wrong.load());
  CHECK(counters().live_readers == 0, "%llu readers leaked", (unsigned long long)counters().live_readers.load());
  std::printf("threads: 8 x 200 create/load/destroy, %d wrong, rewriter calls %u\n", wrong.load(),
              rewriter_calls());
}

// HSA_TOOLS_LIB names the tool twice: ROCr dlopens the same library again and
// calls OnLoad on the already patched table, which must refuse (no hook may
// chain to itself) and leave the table alone; the first instance keeps working.
void scenario_listed_twice() {
  init();
  CHECK(failed_tools().size() == 1, "%zu tools failed; expected the second entry only", failed_tools().size());
  Outcome a0 = load_memory(object("gfx1250"), *agent_by_label("gfx1250-A0"));
  CHECK(a0.status == HSA_STATUS_SUCCESS && a0.rewritten, "A0 load after a refused second OnLoad");
  Outcome b0 = load_memory(object("gfx1250"), *agent_by_label("gfx1250-B0"));
  CHECK(b0.status == HSA_STATUS_SUCCESS && !b0.rewritten, "B0 load");
  std::printf("listed twice: second OnLoad refused, first instance rewrote on A0\n");
}

// No rewrite possible in this process (only agents that are never rewritten, or
// an A0 agent but no usable rewriter): after the first call the tool has left
// the table, so every slot holds the runtime's own function again and the
// application calls ROCr directly; loads still give the caller's bytes.
void scenario_leave_table() {
  init();
  CHECK(failed_tools().empty(), "the tool did not load");
  CoreApiTable &core = api();
  CHECK(core.hsa_executable_load_agent_code_object_fn != fake_load, "OnLoad did not patch the load slot");
  for (const Agent &agent : agents()) {
    Outcome o = load_memory(object("gfx1250"), agent);
    CHECK(o.status == HSA_STATUS_SUCCESS && o.caller_bytes && !o.rewritten, "load on %s", agent.label.c_str());
  }
  CHECK(core.hsa_code_object_reader_create_from_memory_fn == fake_create_from_memory, "create_from_memory slot");
  CHECK(core.hsa_code_object_reader_create_from_file_fn == fake_create_from_file, "create_from_file slot");
  CHECK(core.hsa_code_object_reader_destroy_fn == fake_reader_destroy, "destroy slot");
  CHECK(core.hsa_executable_load_agent_code_object_fn == fake_load, "load slot");
  CHECK(rewriter_calls() == 0, "rewriter called");
  CHECK(counters().forbidden_calls == 0, "forbidden table calls");
  std::printf("left the table after the first call: every slot holds the runtime's own function\n");
}

// Hooks racing OnUnload: loader threads keep loading through the table while
// the main thread runs hsa_shut_down (OnUnload, then ROCr's Reset of the table).
// Calls already inside a hook finish through the saved originals. Once ROCr is
// shut down it refuses every call (HSA_STATUS_ERROR_NOT_INITIALIZED), and a
// hook passes that status on: each load either succeeds, with the expected
// bytes, or gets ROCr's own refusal. One more refusal is ROCr's own: during
// hsa_shut_down, Loader::Destroy drops the readers the application did not
// destroy before the runtime counts itself shut down, so a load in that window
// gets HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER, with or without the tool;
// it is accepted only for a load that returned after the stand-in dropped
// the readers (after OnUnload and Reset), and for at most one load a thread. The scenario holds the tool library
// itself (as CLR's hotswap gate does): calling a hook after hsa_shut_down needs
// the library still loaded, and ROCr dlcloses its tools there.
void scenario_unload_race() {
  open_tool_directly();
  init();
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0}, done{0}, refused{0}, dropped{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const Agent &agent = agents()[size_t(t) % agents().size()];
      while (!stop) {
        Outcome o = load_memory(object("gfx1250"), agent);
        bool readers_dropped = readers_dropped_at_shut_down();
        if (o.status == HSA_STATUS_ERROR_NOT_INITIALIZED) ++refused;
        else if (o.status == HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER && readers_dropped) ++dropped;
        else if (o.status != HSA_STATUS_SUCCESS && wrong++ == 0)
          std::fprintf(stderr, "unload race: a load returned status %#x\n", unsigned(o.status));
        ++done;
      }
    });
  }
  while (done < 2000) std::this_thread::yield();
  CHECK(refused == 0, "%d loads refused before hsa_shut_down", refused.load());
  // A caller that read the slot just before OnUnload enters the hooks after it.
  auto create_hook = api().hsa_code_object_reader_create_from_memory_fn;
  auto load_hook = api().hsa_executable_load_agent_code_object_fn;
  auto destroy_hook = api().hsa_code_object_reader_destroy_fn;
  const Agent &a0 = *agent_by_label("gfx1250-A0");
  hsa_code_object_reader_t reader{};
  CHECK(create_hook(object("gfx1250").data(), object("gfx1250").size(), &reader) == HSA_STATUS_SUCCESS,
        "create hook before OnUnload");
  shut_down();
  int at_unload = done;
  hsa_code_object_reader_t other{};
  CHECK(create_hook(object("gfx1250").data(), object("gfx1250").size(), &other) ==
            HSA_STATUS_ERROR_NOT_INITIALIZED,
        "create hook after OnUnload");
  CHECK(load_hook(hsa_executable_t{1}, hsa_agent_t{a0.handle}, reader, nullptr, nullptr) ==
            HSA_STATUS_ERROR_NOT_INITIALIZED,
        "load hook after OnUnload");
  CHECK(destroy_hook(reader) == HSA_STATUS_ERROR_NOT_INITIALIZED, "destroy hook after OnUnload");
  while (done < at_unload + 2000) std::this_thread::yield();
  stop = true;
  for (auto &th : threads) th.join();
  CHECK(wrong == 0, "%d loads failed around OnUnload with another status", wrong.load());
  CHECK(dropped <= 4, "%d loads lost their reader at hsa_shut_down: more than one a thread", dropped.load());
  CHECK(api().hsa_executable_load_agent_code_object_fn == fake_load, "the table was not restored");
  std::printf("unload race: %d loads on 4 threads, OnUnload after %d, %d refused by the shut-down runtime, "
              "%d whose reader the runtime dropped during hsa_shut_down, %d failed otherwise\n",
              done.load(), at_unload, refused.load(), dropped.load(), wrong.load());
}

// One code object loaded on every gfx1250-A0 agent (STANDIN_AGENTS may list
// several, e.g. "gfx1250-A0*8"), each time from a fresh copy (identical bytes at
// another address): one rewriter call, one retained buffer.
void scenario_dedupe() {
  init();
  // A reader created and destroyed first: the tool resolves (and probes, once per
  // process) the rewriter there, so the count below is of rewrites only.
  unsigned probe = rewriter_calls();
  hsa_code_object_reader_t warm{};
  api().hsa_code_object_reader_create_from_memory_fn(object("gfx942").data(), object("gfx942").size(), &warm);
  api().hsa_code_object_reader_destroy_fn(warm);
  unsigned before = rewriter_calls();
  probe = before - probe;
  const uint8_t *first = nullptr;
  int n = 0;
  for (int round = 0; round < 2; ++round) {
    for (const Agent &agent : agents()) {
      if (!is_a0(agent)) continue;
      auto *copy = new std::vector<uint8_t>(object("gfx1250"));
      Outcome o = load_memory(*copy, agent);
      LoadRecord r = last_load();
      CHECK(o.rewritten, "load on agent %#llx not rewritten", (unsigned long long)agent.handle);
      if (first == nullptr) first = r.ptr;
      CHECK(r.ptr == first, "a different retained buffer for agent %#llx", (unsigned long long)agent.handle);
      ++n;
    }
  }
  unsigned calls = rewriter_calls() - before;
  CHECK(n > 0 && calls == 1, "%u rewriter calls for one code object", calls);
  std::printf("dedupe: %d loads of one code object on %d A0 agent(s): %u rewriter call(s), "
              "1 retained buffer (every load got the same bytes); availability probe: %u call(s)\n",
              n, n / 2, calls, probe);
}

// ROCr's own hotswap hook is active (argv "first": installed by ROCr before the
// HSA_TOOLS_LIB tools, through either of its gates, or named before the tool in
// HSA_TOOLS_LIB; "after": named after the tool). The tool must not rewrite
// anything on any agent — no code object translated twice — and every load
// reaches the runtime through the hook, which decides it by its own rule
// (rocr_hook.cpp): on the A0 named gfx1250 it translates the gfx1250 object and
// loads the others (gfx1250-strict code included) as unchanged copies; on the
// A0 named gfx1250-strict, as on every other agent, it passes every object
// through (the caller's own bytes, B0 code untranslated); an agent whose
// revision cannot be read fails with HSA_STATUS_ERROR_INVALID_AGENT.
unsigned rocr_hook_counter(const char *name) {
  const char *path = std::getenv("STANDIN_ROCR_HOOK_PATH");
  void *h = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  auto fn = h ? reinterpret_cast<unsigned (*)()>(dlsym(h, name)) : nullptr;
  unsigned n = fn ? fn() : 0;
  if (h) dlclose(h);
  return n;
}

// argv "both": ROCr's gate loaded the hook and HSA_TOOLS_LIB names it too: the
// second OnLoad refuses ("already installed") and ROCr counts it as a failed
// tool; nothing else changes.
void scenario_rocr_hook(bool hook_first, bool named_twice) {
  init();
  if (named_twice) {
    const char *hook = std::getenv("STANDIN_ROCR_HOOK_PATH");
    CHECK(failed_tools().size() == 1 && hook != nullptr && failed_tools()[0] == hook,
          "the hook named again must be the one failed tool (%zu failed)", failed_tools().size());
  } else {
    CHECK(failed_tools().empty(), "a tool failed to load");
  }
  if (hook_first) {
    Dl_info info{};
    bool hooked = dladdr(reinterpret_cast<void *>(api().hsa_executable_load_agent_code_object_fn), &info) != 0 &&
                  info.dli_fname != nullptr &&
                  std::string(info.dli_fname).find("libhsa_hotswap_rocjitsu.so") != std::string::npos;
    CHECK(hooked, "the load slot must hold ROCr's hook, untouched by the tool");
  }
  unsigned loads_before = rocr_hook_counter("rocr_hook_loads");
  unsigned translations_before = rocr_hook_counter("rocr_hook_translations");
  unsigned expected_translations = 0, loads = 0;
  for (const Agent &agent : agents()) {
    for (const char *co : {"gfx1250", "gfx1250-strict", "gfx942"}) {
      Outcome o = load_memory(object(co), agent);
      ++loads;
      bool hook_a0 = agent.label == "gfx1250-A0";
      bool translated = hook_a0 && std::string(co) == "gfx1250";
      LoadRecord r = last_load();
      bool hook_marked = r.ptr != nullptr && r.size >= 16 && std::memcmp(r.ptr + 9, "ROCRHK!", 7) == 0;
      if (agent.label == "gfx1250-rev?") {
        CHECK(o.status == HSA_STATUS_ERROR_INVALID_AGENT, "%s on %s: status %#x", co, agent.label.c_str(),
              o.status);
        continue;
      }
      CHECK(o.status == HSA_STATUS_SUCCESS && !o.rewritten, "%s on %s", co, agent.label.c_str());
      CHECK(o.caller_bytes == !hook_a0, "%s on %s: the hook's copy exactly on its A0", co, agent.label.c_str());
      CHECK(hook_marked == translated, "%s on %s: translated by the hook: %d", co, agent.label.c_str(),
            hook_marked);
      expected_translations += translated;
    }
  }
  unsigned hook_loads = rocr_hook_counter("rocr_hook_loads") - loads_before;
  unsigned translations = rocr_hook_counter("rocr_hook_translations") - translations_before;
  CHECK(rewriter_calls() == 0, "the tool called its rewriter %u time(s) while ROCr's hook is active",
        rewriter_calls());
  CHECK(hook_loads == loads, "ROCr's hook saw %u of %u loads", hook_loads, loads);
  CHECK(translations == expected_translations && expected_translations > 0,
        "ROCr's hook translated %u object(s), expected %u", translations, expected_translations);
  std::printf("rocr hook (%s): %u loads through ROCr's hook, %u translated by it (gfx1250 code on the A0 "
              "named gfx1250; none on the A0 named gfx1250-strict), 0 rewriter calls by the tool\n",
              hook_first ? "installed before the tool" : "named after the tool", hook_loads, translations);
}

// ---- demo ---------------------------------------------------------------------

void scenario_demo() {
  init();
  const char *rewriter = std::getenv("HSA_HOTSWAP_REWRITER");
  std::printf("stand-in: HSA_TOOLS_LIB=%s\n", std::getenv("HSA_TOOLS_LIB"));
  std::printf("stand-in: OnLoad returned %s\n", failed_tools().empty() ? "true (five table slots patched)" : "false");
  std::printf("stand-in: rewriter: %s\n",
              rewriter ? rewriter : "none named: the linked COMGR's, else rocjitsu's, else the native rewriter");
  std::printf("\n%-16s %-42s %-4s %-8s %s\n", "agent", "first ISA", "rev", "object", "what the loader got");
  int rewritten = 0, loads = 0;
  for (const Agent &agent : agents()) {
    for (const char *co : {"gfx1250", "gfx942"}) {
      Outcome o = load_memory(object(co), agent);
      ++loads;
      std::string what;
      if (o.status != HSA_STATUS_SUCCESS) {
        what = "load failed";
      } else if (o.rewritten || !o.caller_bytes) {  // the test rewriter's marker, or other bytes
        what = "REWRITTEN copy (" + std::to_string(o.size) + " bytes, kept by the tool)";
        ++rewritten;
      } else {
        what = "the application's own bytes";
      }
      std::printf("%-16s %-42s %-4s %-8s %s\n", agent.label.c_str(),
                  agent.isa.empty() ? "(none: CPU agent)" : agent.isa.c_str(),
                  agent.revision < 0 ? "?" : std::to_string(agent.revision).c_str(), co, what.c_str());
    }
  }
  std::printf("\nstand-in: %d loads intercepted, %d rewritten\n", loads, rewritten);
  std::fflush(stdout);
}

// ---- the native rewriter -----------------------------------------------------------

// The byte ranges (offset, length) of a sites file ("site|note OFFSET LEN ...").
std::vector<std::pair<size_t, size_t>> read_sites(const std::string &path) {
  std::vector<std::pair<size_t, size_t>> ranges;
  auto text = read_file(path);
  std::string all(text.begin(), text.end());
  size_t at = 0;
  while (at < all.size()) {
    size_t end = all.find('\n', at);
    if (end == std::string::npos) end = all.size();
    char kind[16];
    unsigned long offset = 0, length = 0;
    if (std::sscanf(all.substr(at, end - at).c_str(), "%15s %lx %lu", kind, &offset, &length) == 3)
      ranges.emplace_back(offset, length);
    at = end + 1;
  }
  return ranges;
}

// Whether `got` differs from `input` exactly at `sites`: every differing byte
// inside a listed range, every listed range with a differing byte.
bool differs_exactly_at(const uint8_t *got, size_t size, const std::vector<uint8_t> &input,
                        const std::vector<std::pair<size_t, size_t>> &sites) {
  if (size != input.size() || sites.empty()) return false;
  std::vector<bool> listed(size, false);
  for (auto [offset, length] : sites) {
    if (offset + length > size) return false;
    bool changed = false;
    for (size_t i = offset; i < offset + length; ++i) {
      listed[i] = true;
      changed |= got[i] != input[i];
    }
    if (!changed) return false;
  }
  for (size_t i = 0; i < size; ++i)
    if (got[i] != input[i] && !listed[i]) return false;
  return true;
}

// Runs `fn` with the tool's stderr captured; returns what it wrote.
std::string capture_stderr(const std::function<void()> &fn) {
  std::fflush(stderr);
  std::string path = temp_file({});
  int fd = open(path.c_str(), O_WRONLY | O_TRUNC);
  int saved = dup(2);
  dup2(fd, 2);
  fn();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  auto bytes = read_file(path);
  unlink(path.c_str());
  return std::string(bytes.begin(), bytes.end());
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The native rewriter through the tool (HSA_HOTSWAP_REWRITER=native). Objects
// from STANDIN_NATIVE_OBJECTS, the rewriter driver's outputs (made and checked
// against LLVM 22 by native.invariants) from STANDIN_NATIVE_WORK:
//  - fixable.co (every site same-size) is loaded rewritten on both kinds of A0
//    agent: the loader gets exactly fixable.a0.co, which differs from the input
//    exactly at the fixed sites and the retagged note (fixable.sites); a B0
//    agent gets the caller's bytes;
//  - grown.co (a DS two-address load) is loaded rewritten by moving code,
//    exactly the driver's grown output (grown.a0.co);
//  - refused.fp8_clamp.co (a cluster load, and a v_cvt_sr_fp8_f32 with clamp that
//    needs code growth the native rewriter does not make) is refused: the caller's bytes, one warning naming kernel,
//    offset and class, however often it is loaded;
//  - argv "partial" (HSA_HOTSWAP_NATIVE_ALLOW_PARTIAL=1): it is loaded partly
//    fixed (refused.fp8_clamp.partial.co: the cluster load fixed), one warning.
void scenario_native(bool partial) {
  init();
  CHECK(failed_tools().empty(), "the tool did not load");
  std::string objects = std::getenv("STANDIN_NATIVE_OBJECTS") ? std::getenv("STANDIN_NATIVE_OBJECTS") : ".";
  std::string work = std::getenv("STANDIN_NATIVE_WORK") ? std::getenv("STANDIN_NATIVE_WORK") : ".";
  const auto &fixable = *new std::vector<uint8_t>(read_file(objects + "/fixable.co"));
  const auto &growth = *new std::vector<uint8_t>(read_file(objects + "/refused.fp8_clamp.co"));
  auto expected = read_file(work + "/fixable.a0.co");
  auto sites = read_sites(work + "/fixable.sites");
  CHECK(!fixable.empty() && !growth.empty() && !expected.empty() && !sites.empty(), "inputs missing");
  for (const char *label : {"gfx1250-A0", "gfx1250-strict-A0"}) {
    Outcome o = load_memory(fixable, *agent_by_label(label));
    LoadRecord r = last_load();
    CHECK(o.status == HSA_STATUS_SUCCESS && !o.caller_bytes, "fixable on %s: not rewritten", label);
    CHECK(r.size == expected.size() && std::memcmp(r.ptr, expected.data(), r.size) == 0,
          "fixable on %s: the loader did not get the rewriter's output", label);
    CHECK(differs_exactly_at(r.ptr, r.size, fixable, sites), "fixable on %s: not exactly the fixed sites", label);
    std::printf("fixable  on %-18s rewritten: %zu bytes, differs from the input at exactly its %zu fixed range(s)\n",
                label, r.size, sites.size());
  }
  Outcome b0 = load_memory(fixable, *agent_by_label("gfx1250-B0"));
  CHECK(b0.caller_bytes, "fixable on gfx1250-B0: not the caller's bytes");
  // grown.co (a DS two-address load): rewritten by moving the kernel into an
  // appended code segment; the loader gets exactly the driver's grown output.
  const auto &grown = *new std::vector<uint8_t>(read_file(objects + "/grown.co"));
  auto grown_expected = read_file(work + "/grown.a0.co");
  CHECK(!grown.empty() && grown_expected.size() > grown.size(), "grown inputs missing");
  {
    Outcome o = load_memory(grown, *agent_by_label("gfx1250-A0"));
    LoadRecord r = last_load();
    CHECK(o.status == HSA_STATUS_SUCCESS && !o.caller_bytes, "grown: not rewritten");
    CHECK(r.size == grown_expected.size() && std::memcmp(r.ptr, grown_expected.data(), r.size) == 0,
          "grown: the loader did not get the grown output");
    std::printf("grown    on gfx1250-A0          rewritten by moving code: %zu -> %zu bytes\n", grown.size(),
                r.size);
  }
  std::string log = capture_stderr([&] {
    for (int i = 0; i < 3; ++i) {
      Outcome o = load_memory(growth, *agent_by_label("gfx1250-A0"));
      LoadRecord r = last_load();
      CHECK(o.status == HSA_STATUS_SUCCESS, "growth object: status %#x", o.status);
      if (partial) {
        auto expected_partial = read_file(work + "/refused.fp8_clamp.partial.co");
        CHECK(!o.caller_bytes && r.size == expected_partial.size() &&
                  std::memcmp(r.ptr, expected_partial.data(), r.size) == 0,
              "growth object: not loaded partly fixed");
        CHECK(differs_exactly_at(r.ptr, r.size, growth, read_sites(work + "/refused.fp8_clamp.partial.sites")),
              "growth object: partly fixed elsewhere than at its same-size site");
      } else {
        CHECK(o.caller_bytes, "growth object: the caller's bytes must be loaded");
      }
    }
  });
  std::printf("%s", log.c_str());
  if (partial) {
    CHECK(count(log, "partly fixed: 1 site(s) still need code growth; the first: fp8_clamp (v_cvt_sr_fp8_f32) in k "
                     "at offset 0xc") == 1,
          "one warning for the partly fixed object");
  } else {
    CHECK(count(log, "refused: 1 site(s) need code growth; the first: fp8_clamp (v_cvt_sr_fp8_f32) in k at "
                     "offset 0xc") == 1,
          "one warning for the refused object");
  }
  CHECK(count(log, "hotswap:") == 1, "exactly one log line, got:\n%s", log.c_str());
  CHECK(counters().forbidden_calls == 0, "forbidden table calls");
}

// ---- benchmark ----------------------------------------------------------------
//
// Figures and ratios, measured in one process with interleaved repetitions: each
// operation runs "without the tool" (the runtime's own functions, called
// directly) and "with the tool" (through the patched table, as the application
// calls), alternately, best of several rounds. Not a timed test: it prints.

using Clock = std::chrono::steady_clock;

struct Measurement {
  std::string name;
  std::function<void()> op;  // one operation
  int iterations;
  double best = 1e300;       // ns per operation, best round
};

void interleave(std::vector<Measurement> &ms, int rounds) {
  for (int round = 0; round <= rounds; ++round) {  // round 0 warms up
    for (Measurement &m : ms) {
      auto start = Clock::now();
      for (int i = 0; i < m.iterations; ++i) m.op();
      double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count() / m.iterations;
      if (round > 0) m.best = std::min(m.best, ns);
    }
  }
}

// The table an application would call through in a process without the tool: the
// runtime's own functions in a table of the same shape, called the same way as
// the live table, so "without" and "with" differ by the tool alone.
CoreApiTable &pristine() {
  static CoreApiTable *table = [] {
    auto *t = new CoreApiTable(api());
    t->hsa_code_object_reader_create_from_memory_fn = fake_create_from_memory;
    t->hsa_code_object_reader_create_from_file_fn = fake_create_from_file;
    t->hsa_code_object_reader_destroy_fn = fake_reader_destroy;
    t->hsa_executable_load_agent_code_object_fn = fake_load;
    t->hsa_executable_destroy_fn = fake_executable_destroy;
    return t;
  }();
  return *table;
}

CoreApiTable &table_for(bool with_tool) { return with_tool ? api() : pristine(); }

// create + load + destroy of a memory reader, through the live table (with the
// tool) or the pristine one (without).
void cycle_memory(const std::vector<uint8_t> &bytes, const Agent &agent, bool with_tool) {
  CoreApiTable &t = table_for(with_tool);
  hsa_code_object_reader_t reader{};
  t.hsa_code_object_reader_create_from_memory_fn(bytes.data(), bytes.size(), &reader);
  t.hsa_executable_load_agent_code_object_fn(hsa_executable_t{1}, hsa_agent_t{agent.handle}, reader, nullptr,
                                             nullptr);
  t.hsa_code_object_reader_destroy_fn(reader);
}

// create + load + destroy of a file reader.
void cycle_file(int fd, const Agent &agent, bool with_tool) {
  CoreApiTable &t = table_for(with_tool);
  hsa_code_object_reader_t reader{};
  t.hsa_code_object_reader_create_from_file_fn(fd, &reader);
  t.hsa_executable_load_agent_code_object_fn(hsa_executable_t{1}, hsa_agent_t{agent.handle}, reader, nullptr,
                                             nullptr);
  t.hsa_code_object_reader_destroy_fn(reader);
}

// A real clang-22 code object followed by zero padding up to `size` bytes.
const std::vector<uint8_t> &padded(const std::string &name, size_t size) {
  static std::map<std::pair<std::string, size_t>, std::vector<uint8_t> *> cache;
  auto &slot = cache[{name, size}];
  if (slot == nullptr) {
    slot = new std::vector<uint8_t>(object(name));
    if (size > slot->size()) slot->resize(size);
  }
  return *slot;
}

struct Size {
  const char *label;
  size_t bytes;
  int iterations;
};
const Size kSizes[] = {{"4KB", 0, 2000}, {"4MB", 4u << 20, 2000}, {"100MB", 100u << 20, 2000}};

// Pairs of measurements (without, with) per size; prints ns, ratio, added ns,
// and the flatness of the added cost (largest size / smallest).
void report_pairs(const char *what, std::vector<Measurement> &ms, const std::vector<std::string> &sizes,
                  bool flatness = true) {
  std::printf("%s\n", what);
  double first_added = 0, last_added = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const Measurement &without = ms[2 * i], &with = ms[2 * i + 1];
    double added = with.best - without.best;
    if (i == 0) first_added = added;
    last_added = added;
    std::printf("  %-6s without %10.1f ns  with %10.1f ns  ratio x%.3f  added %+8.1f ns\n", sizes[i].c_str(),
                without.best, with.best, with.best / without.best, added);
  }
  if (flatness)
    std::printf("  added cost, %s / %s: %.2f\n", sizes.back().c_str(), sizes.front().c_str(),
                first_added > 0 ? last_added / first_added : 0.0);
}

std::vector<std::string> size_labels() {
  std::vector<std::string> labels;
  for (const Size &size : kSizes) labels.push_back(size.label);
  return labels;
}

// argv "none": a process with no rewrite candidate (the tool leaves the table on
// its first call). argv "candidate": a gfx1250 A0 agent present.
void scenario_bench(const std::string &which) {
  // Many short interleaved rounds, best of each: robust against other work on
  // a shared machine.
  const int rounds = std::getenv("STANDIN_BENCH_ROUNDS") ? std::atoi(std::getenv("STANDIN_BENCH_ROUNDS")) : 40;
  init();
  set_record_ranges(false);
  const Agent &gfx942 = *agent_by_label("gfx942");
  for (const Size &size : kSizes) {  // every object loads successfully
    Outcome o = load_memory(padded("gfx942", size.bytes), gfx942);
    CHECK(o.status == HSA_STATUS_SUCCESS && !o.rewritten, "bench object %s", size.label);
  }
  auto memory_pairs = [&](const char *co, const Agent &agent) {
    std::vector<Measurement> ms;
    for (const Size &size : kSizes) {
      const std::vector<uint8_t> *bytes = &padded(co, size.bytes);
      for (bool with : {false, true})
        ms.push_back({std::string(size.label), [=, &agent] { cycle_memory(*bytes, agent, with); }, size.iterations});
    }
    interleave(ms, rounds);
    return ms;
  };
  if (which == "none") {
    auto ms = memory_pairs("gfx942", gfx942);
    report_pairs("no rewrite candidate in the process; gfx942 code object on the gfx942 agent, "
                 "create + load + destroy of a memory reader:", ms, size_labels());
    return;
  }
  // A candidate present: loads that are not rewritten.
  const Agent &b0 = *agent_by_label("gfx1250-B0");
  auto ms = memory_pairs("gfx942", gfx942);
  report_pairs("rewrite candidate present; gfx942 code object on the gfx942 agent (never rewritten), "
               "create + load + destroy of a memory reader:", ms, size_labels());
  ms = memory_pairs("gfx1250", b0);
  report_pairs("rewrite candidate present; gfx1250 code object on the gfx1250 B0 agent (not rewritten there), "
               "create + load + destroy of a memory reader:", ms, size_labels());
  if (which == "candidate-memory") return;  // for profiling the memory paths alone
  {
    std::vector<Measurement> fs;
    std::vector<std::string> labels;
    std::vector<int> fds;
    for (const Size &size : {kSizes[0], kSizes[1]}) {
      std::string path = temp_file(padded("gfx942", size.bytes));
      int fd = open(path.c_str(), O_RDONLY);
      unlink(path.c_str());
      fds.push_back(fd);
      int iterations = size.bytes > (1u << 20) ? 20 : 500;
      for (bool with : {false, true})
        fs.push_back({size.label, [=, &gfx942] { cycle_file(fd, gfx942, with); }, iterations});
      labels.push_back(size.label);
    }
    interleave(fs, rounds);
    report_pairs("rewrite candidate present; gfx942 code object on the gfx942 agent, create + load + destroy "
                 "of a FILE reader (the runtime reads the whole file; the tool preads its 64-byte header):",
                 fs, labels, false);
    for (int fd : fds) close(fd);
  }
  // Repeated loads of one reader on the A0 agents (after its first rewrite).
  {
    std::vector<const Agent *> a0s;
    for (const Agent &agent : agents())
      if (is_a0(agent)) a0s.push_back(&agent);
    unsigned calls_before = rewriter_calls();
    std::vector<Measurement> rs;
    std::vector<std::string> labels;
    for (const Size &size : {kSizes[0], kSizes[2]}) {
      const std::vector<uint8_t> &bytes = padded("gfx1250", size.bytes);
      hsa_code_object_reader_t reader{};
      api().hsa_code_object_reader_create_from_memory_fn(bytes.data(), bytes.size(), &reader);
      Outcome first{};
      first.status = api().hsa_executable_load_agent_code_object_fn(hsa_executable_t{1}, hsa_agent_t{a0s[0]->handle},
                                                                    reader, nullptr, nullptr);
      CHECK(first.status == HSA_STATUS_SUCCESS && last_load().marked, "first load of %s rewritten", size.label);
      size_t k = 0;
      for (bool with : {false, true}) {
        auto load = table_for(with).hsa_executable_load_agent_code_object_fn;
        rs.push_back({size.label,
                      [=, &k, &a0s] {
                        load(hsa_executable_t{1}, hsa_agent_t{a0s[k++ % a0s.size()]->handle}, reader, nullptr,
                             nullptr);
                      },
                      2000});
      }
      labels.push_back(size.label);
    }
    interleave(rs, rounds);
    report_pairs("repeated loads of one memory reader on the A0 agents after its rewrite (the reader knows its "
                 "rewrite: no pass over the bytes):", rs, labels);
    std::printf("  rewriter calls: %u (one per size)\n", rewriter_calls() - calls_before);
  }
  // Identical bytes behind new readers: the content key is hashed once per reader.
  {
    const std::vector<uint8_t> &bytes = padded("gfx1250", kSizes[2].bytes);
    const Agent &a0 = *agent_by_label("gfx1250-A0");
    unsigned calls_before = rewriter_calls();
    std::vector<Measurement> hs = {{"without", [&] { cycle_memory(bytes, a0, false); }, 2},
                                   {"with", [&] { cycle_memory(bytes, a0, true); }, 2}};
    interleave(hs, rounds / 4);
    double added = hs[1].best - hs[0].best;
    std::printf("identical 100 MB code object behind a new reader each time, loaded on the A0 agent "
                "(rewritten once, then found by its XXH3-128 content key):\n"
                "  without %.0f ns  with %.0f ns  added %.0f ns: content key at %.1f GB/s; rewriter calls %u\n",
                hs[0].best, hs[1].best, added, added > 0 ? double(bytes.size()) / added : 0.0,
                rewriter_calls() - calls_before);
  }
}

// ---- soak: memory that stays bounded over long processes --------------------------

// Resident memory (VmRSS) and the bytes malloc has handed out and not got back
// (mallinfo2: every heap allocation of the tool, the rewriter and the stand-in).
size_t resident_bytes() {
  long pages = 0, resident = 0;
  if (FILE *f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return size_t(resident) * size_t(sysconf(_SC_PAGESIZE));
}
size_t heap_in_use() { return mallinfo2().uordblks; }

struct Sample {
  size_t rss, heap;
};
Sample sample() { return Sample{resident_bytes(), heap_in_use()}; }

// Runs `cycle(i)` for i in [0, warmup + cycles) and reports the memory at the
// end of the warm-up and at the end, with heap bytes kept per cycle. Fails when
// either grows by more than `bound` bytes per cycle (generous: the leak this
// guards against kept a whole rewritten object, kilobytes, per cycle).
void soak(const char *what, int warmup, int cycles, double bound, const std::function<void(int)> &cycle) {
  for (int i = 0; i < warmup; ++i) cycle(i);
  Sample start = sample();
  auto t0 = Clock::now();
  for (int i = warmup; i < warmup + cycles; ++i) cycle(i);
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  Sample end = sample();
  double heap_per_cycle = (double(end.heap) - double(start.heap)) / cycles;
  double rss_per_cycle = (double(end.rss) - double(start.rss)) / cycles;
  std::printf("soak %s: %d cycles after %d warm-up in %.2f s; resident %.1f MiB -> %.1f MiB "
              "(%+.1f bytes/cycle); heap in use %zu -> %zu bytes: %+.2f bytes retained per cycle\n",
              what, cycles, warmup, seconds, start.rss / 1048576.0, end.rss / 1048576.0, rss_per_cycle,
              start.heap, end.heap, heap_per_cycle);
  if (bound <= 0) return;  // figures only (valgrind: its own allocator)
  CHECK(heap_per_cycle <= bound, "%s: %.1f heap bytes retained per cycle (bound %.0f)", what, heap_per_cycle,
        bound);
  CHECK(rss_per_cycle <= bound, "%s: resident memory grew %.1f bytes per cycle (bound %.0f)", what,
        rss_per_cycle, bound);
}

// A distinct code object per cycle: the gfx1250 object with the cycle number
// in 8 bytes appended after it (the loader checks only what the headers name).
void stamp(std::vector<uint8_t> &bytes, size_t base, int i) {
  uint64_t v = uint64_t(i) + 1;
  std::memcpy(bytes.data() + base, &v, sizeof v);
}

// `soak [count]`: create / load / destroy reader / destroy executable of
// distinct objects on an A0 agent, memory readers (count, default 100000) and
// file readers (count / 10), each one rewritten; then hsa_init/hsa_shut_down
// cycles with one rewritten load each (count / 100) whose executable is left to
// hsa_shut_down. Prints resident memory and heap bytes at the start and end,
// and fails when either grows by more than STANDIN_SOAK_BOUND (default 64)
// bytes per cycle (4 times that for the init cycles: one leaked session and
// rewritten object per cycle, what this guards against, is kilobytes).
void scenario_soak(const std::string &arg) {
  int count = arg.empty() ? 100000 : std::atoi(arg.c_str());
  // Bytes per cycle (STANDIN_SOAK_BOUND; 0: print the figures only).
  const char *bound_env = std::getenv("STANDIN_SOAK_BOUND");
  double bound = bound_env ? std::atof(bound_env) : 64;
  set_record_ranges(true);
  const Agent *a0 = agent_by_label("gfx1250-A0");
  CHECK(a0 != nullptr, "an A0 agent");
  if (a0 == nullptr) return;
  std::vector<uint8_t> bytes(object("gfx1250"));
  size_t base = bytes.size();
  bytes.resize(base + 8);
  int rewritten = 0, failed = 0;
  init();
  auto one = [&](hsa_code_object_reader_t reader, int i) {
    hsa_executable_t executable{0x100000 + uint64_t(i)};
    hsa_status_t s = api().hsa_executable_load_agent_code_object_fn(executable, hsa_agent_t{a0->handle}, reader,
                                                                    nullptr, nullptr);
    LoadRecord r = last_load();
    if (s == HSA_STATUS_SUCCESS && r.marked) ++rewritten;
    if (s != HSA_STATUS_SUCCESS) ++failed;
    if (api().hsa_code_object_reader_destroy_fn(reader) != HSA_STATUS_SUCCESS) ++failed;
    if (api().hsa_executable_destroy_fn(executable) != HSA_STATUS_SUCCESS) ++failed;
  };
  int warmup = std::max(1, count / 100);
  soak("memory readers", warmup, count, bound, [&](int i) {
    stamp(bytes, base, i);
    hsa_code_object_reader_t reader{};
    if (api().hsa_code_object_reader_create_from_memory_fn(bytes.data(), bytes.size(), &reader) != 0) ++failed;
    one(reader, i);
  });
  CHECK(rewritten == warmup + count && failed == 0, "memory readers: %d rewritten, %d failures", rewritten,
        failed);

  std::string path = temp_file(bytes);
  int fd = open(path.c_str(), O_RDWR);
  unlink(path.c_str());
  rewritten = failed = 0;
  int files = std::max(1, count / 10);
  soak("file readers", warmup, files, bound, [&](int i) {
    stamp(bytes, base, i + 10 * count);
    if (pwrite(fd, bytes.data() + base, 8, off_t(base)) != 8) ++failed;
    hsa_code_object_reader_t reader{};
    if (api().hsa_code_object_reader_create_from_file_fn(fd, &reader) != 0) ++failed;
    one(reader, i);
  });
  close(fd);
  CHECK(rewritten == warmup + files && failed == 0, "file readers: %d rewritten, %d failures", rewritten, failed);
  shut_down();

  // hsa_init / hsa_shut_down: each instance rewrites one object and leaves its
  // executable (and a reader) to hsa_shut_down, as many processes do.
  rewritten = failed = 0;
  int inits = std::max(1, count / 100);
  soak("hsa_init/hsa_shut_down", std::max(1, inits / 10), inits, bound * 4, [&](int i) {
    init();
    stamp(bytes, base, i + 20 * count);
    hsa_code_object_reader_t reader{};
    if (api().hsa_code_object_reader_create_from_memory_fn(bytes.data(), bytes.size(), &reader) != 0) ++failed;
    hsa_status_t s = api().hsa_executable_load_agent_code_object_fn(hsa_executable_t{7}, hsa_agent_t{a0->handle},
                                                                    reader, nullptr, nullptr);
    if (s == HSA_STATUS_SUCCESS && last_load().marked) ++rewritten;
    shut_down();
  });
  CHECK(rewritten == inits + std::max(1, inits / 10) && failed == 0, "init cycles: %d rewritten, %d failures",
        rewritten, failed);
}

// One load through the persistent rewrite cache (tests/cache): the gfx1250
// object, padded with zeros to argv SIZE bytes when given, loaded from memory on
// the A0 agent; the bytes the loader got are written to $STANDIN_CACHE_OUT. Prints
// "cache-load: rewriter calls N (probe P), load NS ns, SIZE bytes", where the probe
// is the rewriter's availability check at resolution (made before the load).
void scenario_cache_load(const std::string &size_arg) {
  init();
  unsigned start = rewriter_calls();
  hsa_code_object_reader_t warm{};  // resolves (and probes) the rewriter
  api().hsa_code_object_reader_create_from_memory_fn(object("gfx942").data(), object("gfx942").size(), &warm);
  api().hsa_code_object_reader_destroy_fn(warm);
  unsigned before = rewriter_calls();
  const std::vector<uint8_t> &bytes =
      size_arg.empty() ? object("gfx1250") : padded("gfx1250", std::strtoull(size_arg.c_str(), nullptr, 10));
  auto t0 = std::chrono::steady_clock::now();
  Outcome o = load_memory(bytes, *agent_by_label("gfx1250-A0"));
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  LoadRecord r = last_load();
  CHECK(o.status == HSA_STATUS_SUCCESS, "load status %d", int(o.status));
  if (const char *out = std::getenv("STANDIN_CACHE_OUT")) {
    FILE *f = std::fopen(out, "wb");
    CHECK(f != nullptr && std::fwrite(r.ptr, 1, r.size, f) == r.size, "cannot write %s", out);
    if (f != nullptr) std::fclose(f);
  }
  std::printf("cache-load: rewriter calls %u (probe %u), load %lld ns, %zu bytes\n", rewriter_calls() - before,
              before - start, (long long)ns, bytes.size());
}
}  // namespace

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 2) {
    std::fprintf(stderr, "usage: hotswap-standin <scenario> [arg]\n");
    return 2;
  }
  configure_agents();
  load_objects();
  std::string s = argv[1], arg = argc > 2 ? argv[2] : "";
  if (s == "decision") scenario_decision(arg == "on");
  else if (s == "fallback") scenario_fallback(arg);
  else if (s == "status") scenario_status();
  else if (s == "bad-objects") scenario_bad_objects();
  else if (s == "file") scenario_file(arg == "convert");
  else if (s == "chain") scenario_chain();
  else if (s == "refused") scenario_refused();
  else if (s == "disabled") scenario_disabled();
  else if (s == "reload") scenario_reload();
  else if (s == "threads") scenario_threads();
  else if (s == "unload-race") scenario_unload_race();
  else if (s == "listed-twice") scenario_listed_twice();
  else if (s == "leave-table") scenario_leave_table();
  else if (s == "dedupe") scenario_dedupe();
  else if (s == "rocr-hook") scenario_rocr_hook(arg == "first" || arg == "both", arg == "both");
  else if (s == "demo") scenario_demo();
  else if (s == "native") scenario_native(arg == "partial");
  else if (s == "bench") scenario_bench(arg);
  else if (s == "soak") scenario_soak(arg);
  else if (s == "cache-load") scenario_cache_load(arg);
  else if (s == "rules") g_failures += run_rules(arg, argc > 3 ? argv[3] : "");
  else {
    std::fprintf(stderr, "unknown scenario %s\n", s.c_str());
    return 2;
  }
  CHECK(counters().forbidden_calls == 0, "forbidden table calls");
  if (g_failures != 0) {
    std::printf("%d check(s) failed\n", g_failures);
    return 1;
  }
  if (s != "demo" && s != "bench" && s != "cache-load") std::printf("PASS %s\n", s.c_str());
  return 0;
}
