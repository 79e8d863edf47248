// The stand-in against the rule set it shares with the Rust fake ROCr
// (tests/common/rocr_rules.txt; the Rust side is hsa-hotswap's unit test
// fake_rocr_rules): every rule is performed on the runtime's own functions
// (the table as the runtime built it, no tool loaded) and its outcome compared
// with the rule's. `hotswap-standin rules FILE` prints one line per rule and
// fails on any difference.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "runtime.hpp"

namespace standin {
namespace {

// A file descriptor above any open one (the Rust runner uses the same).
constexpr int kClosedFd = 1000000;

const std::map<std::string, hsa_status_t> kStatuses = {
    {"HSA_STATUS_SUCCESS", HSA_STATUS_SUCCESS},
    {"HSA_STATUS_ERROR", HSA_STATUS_ERROR},
    {"HSA_STATUS_ERROR_INVALID_ARGUMENT", HSA_STATUS_ERROR_INVALID_ARGUMENT},
    {"HSA_STATUS_ERROR_INVALID_AGENT", HSA_STATUS_ERROR_INVALID_AGENT},
    {"HSA_STATUS_ERROR_NOT_INITIALIZED", HSA_STATUS_ERROR_NOT_INITIALIZED},
    {"HSA_STATUS_ERROR_INVALID_ISA", HSA_STATUS_ERROR_INVALID_ISA},
    {"HSA_STATUS_ERROR_INVALID_CODE_OBJECT", HSA_STATUS_ERROR_INVALID_CODE_OBJECT},
    {"HSA_STATUS_ERROR_INVALID_EXECUTABLE", HSA_STATUS_ERROR_INVALID_EXECUTABLE},
    {"HSA_STATUS_ERROR_INVALID_FILE", HSA_STATUS_ERROR_INVALID_FILE},
    {"HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER", HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER},
};

std::string status_name(hsa_status_t s) {
  for (const auto &[name, value] : kStatuses)
    if (value == s) return name;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%#x", unsigned(s));
  return buf;
}

std::string version(const ApiTableVersion &v) {
  return std::to_string(v.major_id) + "." + std::to_string(v.minor_id) + "." + std::to_string(v.step_id);
}

const Agent &first_gpu_with_isa() {
  for (const Agent &a : agents())
    if (a.gpu && !a.isa.empty()) return a;
  std::fprintf(stderr, "standin: rules need a GPU agent with an ISA\n");
  std::_Exit(2);
}

// A temporary file holding `bytes`, open read-write (unlinked at once).
int temp_file(const std::vector<uint8_t> &bytes) {
  char path[] = "/tmp/hotswap-standin-rules-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return -1;
  unlink(path);
  if (!bytes.empty() && write(fd, bytes.data(), bytes.size()) != ssize_t(bytes.size())) return -1;
  lseek(fd, 0, SEEK_SET);
  return fd;
}

class Runner {
 public:
  explicit Runner(std::vector<uint8_t> object) : object_(std::move(object)) {}

  CoreApiTable &core() { return runtime().core(); }

  hsa_status_t file_reader(int fd) {
    hsa_code_object_reader_t r{};
    hsa_status_t s = core().hsa_code_object_reader_create_from_file_fn(fd, &r);
    if (s == HSA_STATUS_SUCCESS) core().hsa_code_object_reader_destroy_fn(r);
    return s;
  }

  hsa_status_t load(uint64_t executable, hsa_code_object_reader_t reader) {
    const Agent &gpu = first_gpu_with_isa();
    return core().hsa_executable_load_agent_code_object_fn(hsa_executable_t{executable},
                                                           hsa_agent_t{gpu.handle}, reader, nullptr,
                                                           nullptr);
  }

  hsa_status_t load_bytes(const std::vector<uint8_t> &bytes, uint64_t executable) {
    hsa_code_object_reader_t r{};
    if (core().hsa_code_object_reader_create_from_memory_fn(bytes.data(), bytes.size(), &r) !=
        HSA_STATUS_SUCCESS)
      return HSA_STATUS_ERROR;
    hsa_status_t s = load(executable, r);
    core().hsa_code_object_reader_destroy_fn(r);
    return s;
  }

  hsa_isa_t isa() {
    hsa_isa_t isa{};
    core().hsa_agent_iterate_isas_fn(
        hsa_agent_t{first_gpu_with_isa().handle},
        [](hsa_isa_t i, void *data) {
          *static_cast<hsa_isa_t *>(data) = i;
          return HSA_STATUS_SUCCESS;
        },
        &isa);
    return isa;
  }

  // The outcome of `rule` in the rule file's terms; empty for an unknown rule.
  std::string perform(const std::string &rule) {
    auto st = [](hsa_status_t s) { return status_name(s); };
    hsa_code_object_reader_t out{};
    if (rule == "table.root") return version(runtime().root()->version);
    if (rule == "table.core") return version(core().version);
    if (rule == "table.amd_ext") return version(runtime().root()->amd_ext_->version);
    auto &c = core();
    if (rule == "memory.valid") {
      hsa_status_t s = c.hsa_code_object_reader_create_from_memory_fn(object_.data(), object_.size(), &out);
      if (s == HSA_STATUS_SUCCESS) c.hsa_code_object_reader_destroy_fn(out);
      return st(s);
    }
    if (rule == "memory.null_bytes") return st(c.hsa_code_object_reader_create_from_memory_fn(nullptr, 64, &out));
    if (rule == "memory.zero_size")
      return st(c.hsa_code_object_reader_create_from_memory_fn(object_.data(), 0, &out));
    if (rule == "memory.null_out")
      return st(c.hsa_code_object_reader_create_from_memory_fn(object_.data(), object_.size(), nullptr));
    if (rule == "file.valid" || rule == "file.empty" || rule == "file.offset_after_create") {
      int fd = temp_file(rule == "file.empty" ? std::vector<uint8_t>{} : object_);
      hsa_status_t s = file_reader(fd);
      off_t at = lseek(fd, 0, SEEK_CUR);
      close(fd);
      if (rule != "file.offset_after_create") return st(s);
      if (s != HSA_STATUS_SUCCESS) return "CREATE_" + st(s);
      return at == off_t(object_.size()) ? "END" : "OFFSET_" + std::to_string(at);
    }
    if (rule == "file.fd_minus_one") return st(file_reader(-1));
    if (rule == "file.closed_fd") return st(file_reader(kClosedFd));
    if (rule == "destroy.valid" || rule == "destroy.twice") {
      if (c.hsa_code_object_reader_create_from_memory_fn(object_.data(), object_.size(), &out) !=
          HSA_STATUS_SUCCESS)
        return "CREATE_FAILED";
      hsa_status_t s = c.hsa_code_object_reader_destroy_fn(out);
      if (rule == "destroy.twice") s = c.hsa_code_object_reader_destroy_fn(out);
      return st(s);
    }
    if (rule == "destroy.unknown") return st(c.hsa_code_object_reader_destroy_fn(hsa_code_object_reader_t{0x5EED0000}));
    if (rule == "load.valid") return st(load_bytes(object_, 1));
    if (rule == "load.not_elf") return st(load_bytes(std::vector<uint8_t>(4096, 'x'), 1));
    if (rule == "load.failing_executable") return st(load_bytes(object_, kFailingExecutable));
    if (rule == "load.unknown_reader") return st(load(1, hsa_code_object_reader_t{0x5EED}));
    if (rule == "agents.order") {
      std::vector<uint64_t> seen;
      c.hsa_iterate_agents_fn(
          [](hsa_agent_t a, void *data) {
            static_cast<std::vector<uint64_t> *>(data)->push_back(a.handle);
            return HSA_STATUS_SUCCESS;
          },
          &seen);
      bool gpu_seen = false, cpu_first = true;
      for (uint64_t h : seen) {
        hsa_device_type_t type{};
        c.hsa_agent_get_info_fn(hsa_agent_t{h}, HSA_AGENT_INFO_DEVICE, &type);
        if (type == HSA_DEVICE_TYPE_GPU) gpu_seen = true;
        else if (gpu_seen) cpu_first = false;
      }
      return cpu_first ? "CPU_FIRST" : "CPU_AFTER_GPU";
    }
    if (rule == "isa.name_length") {
      uint32_t len = 0;
      c.hsa_isa_get_info_alt_fn(isa(), HSA_ISA_INFO_NAME_LENGTH, &len);
      return len == first_gpu_with_isa().isa.size() + 1 ? "NAME_PLUS_NUL" : "LENGTH_" + std::to_string(len);
    }
    if (rule == "isa.name") {
      char buf[128];
      std::memset(buf, 0xAA, sizeof buf);
      c.hsa_isa_get_info_alt_fn(isa(), HSA_ISA_INFO_NAME, buf);
      const std::string &name = first_gpu_with_isa().isa;
      return name.compare(0, name.size(), buf, name.size()) == 0 && buf[name.size()] == '\0'
                 ? "NUL_TERMINATED"
                 : "NAME_NOT_TERMINATED";
    }
    if (rule == "shut_down.create_from_memory" || rule == "shut_down.load") {
      shut_down();
      hsa_status_t s = rule == "shut_down.load"
                           ? load(1, hsa_code_object_reader_t{0x5EED})
                           : c.hsa_code_object_reader_create_from_memory_fn(object_.data(), object_.size(), &out);
      init();
      return st(s);
    }
    if (rule == "init.nested") {
      init();
      shut_down();  // the nested pair: the runtime stays open
      hsa_status_t s = c.hsa_code_object_reader_create_from_memory_fn(object_.data(), object_.size(), &out);
      if (s == HSA_STATUS_SUCCESS) c.hsa_code_object_reader_destroy_fn(out);
      return s == HSA_STATUS_SUCCESS ? "COUNTED" : "CLOSED_" + st(s);
    }
    return "";
  }

 private:
  std::vector<uint8_t> object_;
};

}  // namespace

int run_rules(const std::string &rules_path, const std::string &object_path) {
  std::ifstream in(rules_path);
  if (!in) {
    std::printf("FAIL: cannot read %s\n", rules_path.c_str());
    return 1;
  }
  init();
  Runner runner(read_file(object_path));
  int failures = 0, checked = 0;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string rule, expected, doubles, extra;
    if (!(fields >> rule) || rule[0] == '#') continue;
    if (!(fields >> expected >> doubles) || (fields >> extra) || (doubles != "both" && doubles != "standin")) {
      std::printf("FAIL: malformed rule line: %s\n", line.c_str());
      ++failures;
      continue;
    }
    if (expected.rfind("HSA_STATUS", 0) == 0 && kStatuses.count(expected) == 0) {
      std::printf("FAIL: %s: unknown status %s (add it to rules.cpp)\n", rule.c_str(), expected.c_str());
      ++failures;
      continue;
    }
    std::string got = runner.perform(rule);
    ++checked;
    if (got == expected) {
      std::printf("rule %-30s %s\n", rule.c_str(), got.c_str());
    } else {
      std::printf("FAIL: rule %s: expected %s, got %s\n", rule.c_str(), expected.c_str(),
                  got.empty() ? "(no runner)" : got.c_str());
      ++failures;
    }
  }
  shut_down();
  std::printf("%d rules checked, %d failed\n", checked, failures);
  return failures;
}

}  // namespace standin
