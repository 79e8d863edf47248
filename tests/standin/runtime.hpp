// A ROCr stand-in: what ROCr does around an HSA tools library, and nothing more.
// - Tables built as ROCr builds them (HsaApiTableContainer: minor_id = sizeof,
//   major ids from the header), the core table filled with fake functions.
// - Fake agents with configurable ISA names and ASIC revisions (a failing
//   revision query, a CPU agent without ISAs).
// - A small in-memory loader: readers from memory or file, destroy, and
//   hsa_executable_load_agent_code_object, which validates the ELF bounds,
//   records what it loaded and keeps every loaded byte range per executable.
//   hsa_executable_destroy re-reads the executable's ranges and drops them; the
//   last hsa_shut_down re-reads all that are left, after OnUnload, as ROCr
//   destroys its loader after UnloadTools (the ranges of each runtime instance
//   must stay intact until then, and only until then).
// - Tool loading as Runtime::LoadTools: HSA_TOOLS_LIB parsed (spaces, quotes,
//   backslash), dlopen(RTLD_LAZY), OnLoad(table, root major_id, count and names
//   of the earlier tools of this hsa_init whose OnLoad returned false); OnUnload
//   in reverse order, also of a tool whose OnLoad returned false if its library
//   is still loaded (ROCr 5.2.3 keeps its handle), from an atexit handler
//   registered before the tool is dlopened, so it runs after the tool's static
//   destructors (HIP's order).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "hsa_headers.hpp"

namespace standin {

struct Agent {
  std::string label;   // e.g. "gfx1250-A0"
  bool gpu;
  std::string isa;     // first ISA's name; empty: none
  int revision;        // ASIC revision; < 0: the query fails
  uint64_t handle;
};

// Selects agents by label (comma-separated STANDIN_AGENTS, default: all).
void configure_agents();
const std::vector<Agent> &agents();
const Agent *agent_by_label(const std::string &label);

// The runtime's API table. ROCr keeps one for the process (a global in
// hsa_api_trace.cpp): every hsa_init hands the same table to its tools, and
// hsa_shut_down resets it (HsaApiTable::Reset) after the tools' OnUnload.
struct Runtime {
  HsaApiTableContainer tables;
  Runtime();
  // HsaApiTable::Reset: versions and the runtime's own functions, as built.
  void reset();
  CoreApiTable &core() { return tables.core; }
  HsaApiTable *root() { return &tables.root; }
};

// The runtime's table (one for the process).
Runtime &runtime();
// hsa_init: the first one (ROCr counts them) loads every tool of HSA_TOOLS_LIB
// (LoadTools) on the table; a nested one only counts.
void init();
// hsa_shut_down: the one matching the first hsa_init calls OnUnload in reverse
// order, resets the table and dlcloses the tools (unless
// HSA_RUNNING_UNDER_VALGRIND=1); a nested one only counts.
void shut_down();
// Whether the running hsa_shut_down has dropped the readers the application
// left (ROCr's Loader::Destroy, after the tools' OnUnload and Reset); false
// again after the next hsa_init.
bool readers_dropped_at_shut_down();
// Parses an HSA_TOOLS_LIB value as ROCr's parse_tool_names does.
std::vector<std::string> parse_tool_names(const std::string &value);
// Names of tools whose OnLoad returned false or that failed to load (the
// stand-in's own account; OnLoad is given the refused ones of its hsa_init).
const std::vector<std::string> &failed_tools();

// The fake runtime's own function for each patched slot (what Reset restores).
extern decltype(hsa_code_object_reader_create_from_memory) *const fake_create_from_memory;
extern decltype(hsa_code_object_reader_create_from_file) *const fake_create_from_file;
extern decltype(hsa_code_object_reader_destroy) *const fake_reader_destroy;
extern decltype(hsa_executable_load_agent_code_object) *const fake_load;
extern decltype(hsa_executable_destroy) *const fake_executable_destroy;

// An executable handle whose loads fail with HSA_STATUS_ERROR_INVALID_EXECUTABLE.
constexpr uint64_t kFailingExecutable = 0xBAD;

// What the fake loader saw for one load.
struct LoadRecord {
  hsa_status_t status = HSA_STATUS_ERROR;
  uint64_t agent = 0;
  const uint8_t *ptr = nullptr;
  size_t size = 0;
  bool from_file_reader = false;  // the reader was a file reader
  bool marked = false;            // carries the "change" test rewriter's marker
};
// The last load the fake loader performed on this thread.
LoadRecord last_load();

struct Counters {
  std::atomic<uint64_t> loads{0}, creates_memory{0}, creates_file{0}, destroys{0};
  std::atomic<uint64_t> agent_queries{0}, forbidden_calls{0};
  std::atomic<uint64_t> live_readers{0};
  std::atomic<uint64_t> executable_destroys{0};
};
Counters &counters();

// Loaded byte ranges are recorded (and re-read at exit) unless disabled (benchmark).
void set_record_ranges(bool on);
// Number of ranges recorded so far.
size_t recorded_ranges();

// True when bytes[9..16) hold the "change" test rewriter's marker.
bool has_marker(const uint8_t *bytes, size_t size);
std::vector<uint8_t> read_file(const std::string &path);

}  // namespace standin
