// SPDX-License-Identifier: MIT
// Loads code objects with the real ROCr 5.2.3 (over the kernel-driver double,
// no tool) and checks the layout a rewrite produced is one ROCr accepts:
// load on the GPU agent, freeze, every kernel descriptor resolved by name, and
// the bytes ROCr placed equal to the file's PT_LOAD segments (zero beyond each
// segment's file size), with the dynamic relocations (R_AMDGPU_RELATIVE64,
// R_AMDGPU_ABS64) applied: a re-aimed function-pointer table entry must hold
// the loaded address of the moved copy. The FULL profile of the double's APU node puts code in
// host memory, so the loaded image is read back directly.
//
//   rocr_segments FILE...      (each a code object ROCr 5.2 knows: gfx90a, v4/v5)
//
// Exit status 0 when every check passed.
#include <elf.h>

#include <hsa.h>
#include <hsa_ext_amd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hotswap_check.h"
#include "kmt_double.h"

namespace {

struct Image {
  std::vector<uint8_t> bytes;
  std::vector<Elf64_Phdr> loads;
  std::vector<std::pair<std::string, uint64_t>> kds;  // NAME.kd and its vaddr
  // Dynamic relocations ROCr applies: (location, type, S (0: none), A).
  struct Reloc {
    uint64_t offset;
    uint32_t type;
    uint64_t sym;
    uint64_t addend;
  };
  std::vector<Reloc> relocs;
};

constexpr uint32_t kRAmdgpuAbs64 = 3;
constexpr uint32_t kRAmdgpuRelative64 = 13;

bool in(const std::vector<uint8_t> &b, uint64_t off, uint64_t len) {
  return off <= b.size() && len <= b.size() - off;
}

bool parse(const char *path, Image &img) {
  size_t size = 0;
  unsigned char *data = check_read_file(path, &size);
  if (data == nullptr) return false;
  img.bytes.assign(data, data + size);
  std::free(data);
  const auto &b = img.bytes;
  if (!in(b, 0, sizeof(Elf64_Ehdr))) return false;
  Elf64_Ehdr eh;
  std::memcpy(&eh, b.data(), sizeof eh);
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || !in(b, eh.e_phoff, uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr)) ||
      eh.e_shentsize != sizeof(Elf64_Shdr) || !in(b, eh.e_shoff, uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr)))
    return false;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, b.data() + eh.e_phoff + i * sizeof ph, sizeof ph);
    if (ph.p_type == PT_LOAD) {
      if (!in(b, ph.p_offset, ph.p_filesz) || ph.p_filesz > ph.p_memsz) return false;
      img.loads.push_back(ph);
    }
  }
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  std::memcpy(sh.data(), b.data() + eh.e_shoff, sh.size() * sizeof(Elf64_Shdr));
  for (const Elf64_Shdr &s : sh) {
    if (s.sh_type != SHT_RELA || !(s.sh_flags & SHF_ALLOC) || s.sh_entsize != sizeof(Elf64_Rela)) continue;
    if (s.sh_link >= sh.size() || !in(b, s.sh_offset, s.sh_size)) return false;
    const Elf64_Shdr &syms = sh[s.sh_link];
    if (!in(b, syms.sh_offset, syms.sh_size)) return false;
    for (uint64_t i = 0; i < s.sh_size / sizeof(Elf64_Rela); ++i) {
      Elf64_Rela r;
      std::memcpy(&r, b.data() + s.sh_offset + i * sizeof r, sizeof r);
      uint64_t index = ELF64_R_SYM(r.r_info), value = 0;
      if (index != 0) {
        if ((index + 1) * sizeof(Elf64_Sym) > syms.sh_size) return false;
        Elf64_Sym sym;
        std::memcpy(&sym, b.data() + syms.sh_offset + index * sizeof sym, sizeof sym);
        value = sym.st_value;
      }
      img.relocs.push_back({r.r_offset, uint32_t(ELF64_R_TYPE(r.r_info)), value, uint64_t(r.r_addend)});
    }
  }
  for (const Elf64_Shdr &s : sh) {
    if (s.sh_type != SHT_SYMTAB || s.sh_link >= sh.size() || s.sh_entsize != sizeof(Elf64_Sym)) continue;
    const Elf64_Shdr &str = sh[s.sh_link];
    if (!in(b, s.sh_offset, s.sh_size) || !in(b, str.sh_offset, str.sh_size)) return false;
    for (uint64_t i = 0; i < s.sh_size / sizeof(Elf64_Sym); ++i) {
      Elf64_Sym sym;
      std::memcpy(&sym, b.data() + s.sh_offset + i * sizeof sym, sizeof sym);
      if (sym.st_name >= str.sh_size || ELF64_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_size != 64) continue;
      const char *n = reinterpret_cast<const char *>(b.data() + str.sh_offset + sym.st_name);
      size_t len = strnlen(n, str.sh_size - sym.st_name);
      if (len == str.sh_size - sym.st_name || len < 3 || std::strcmp(n + len - 3, ".kd") != 0) continue;
      img.kds.emplace_back(std::string(n, len), sym.st_value);
    }
  }
  return true;
}

hsa_agent_t gpu_agent() {
  hsa_agent_t gpu{};
  auto visit = [](hsa_agent_t agent, void *data) {
    hsa_device_type_t type;
    if (hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) != HSA_STATUS_SUCCESS) return HSA_STATUS_ERROR;
    if (type == HSA_DEVICE_TYPE_GPU) *static_cast<hsa_agent_t *>(data) = agent;
    return HSA_STATUS_SUCCESS;
  };
  CHECK(hsa_iterate_agents(visit, &gpu) == HSA_STATUS_SUCCESS);
  return gpu;
}

void check_object(const char *path, hsa_agent_t gpu) {
  Image img;
  if (!parse(path, img)) {
    std::fprintf(stderr, "segments: %s: not a readable ELF64 code object\n", path);
    CHECK(false);
    return;
  }
  CHECK(!img.kds.empty());
  hsa_code_object_reader_t reader{};
  CHECK(hsa_code_object_reader_create_from_memory(img.bytes.data(), img.bytes.size(), &reader) ==
        HSA_STATUS_SUCCESS);
  hsa_executable_t exe{};
  CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, nullptr, &exe) ==
        HSA_STATUS_SUCCESS);
  hsa_status_t load = hsa_executable_load_agent_code_object(exe, gpu, reader, nullptr, nullptr);
  hsa_status_t freeze = load == HSA_STATUS_SUCCESS ? hsa_executable_freeze(exe, nullptr) : load;
  std::fprintf(stderr, "segments: %s: load %#x, freeze %#x, %zu kernels, %zu PT_LOAD\n", path, unsigned(load),
               unsigned(freeze), img.kds.size(), img.loads.size());
  CHECK(load == HSA_STATUS_SUCCESS && freeze == HSA_STATUS_SUCCESS);
  uint64_t base = 0;
  size_t resolved = 0, same_base = 0;
  for (const auto &[name, vaddr] : img.kds) {
    hsa_executable_symbol_t sym{};
    if (hsa_executable_get_symbol_by_name(exe, name.c_str(), &gpu, &sym) != HSA_STATUS_SUCCESS) continue;
    uint64_t kernel_object = 0;
    if (hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &kernel_object) !=
        HSA_STATUS_SUCCESS)
      continue;
    ++resolved;
    // One load base for the whole object: descriptor address minus its vaddr.
    if (base == 0) base = kernel_object - vaddr;
    same_base += kernel_object - vaddr == base;
  }
  std::fprintf(stderr, "segments: %s: %zu of %zu kernel descriptors resolved, %zu at one load base %#llx\n", path,
               resolved, img.kds.size(), same_base, (unsigned long long)base);
  CHECK(resolved == img.kds.size() && same_base == resolved);
  if (resolved == img.kds.size() && base != 0) {
    for (const Elf64_Phdr &ph : img.loads) {
      const uint8_t *loaded = reinterpret_cast<const uint8_t *>(base + ph.p_vaddr);
      // The file's bytes with the dynamic relocations applied as the loader
      // must apply them: RELATIVE64 base + A, ABS64 base + S + A (S defined
      // in the object).
      std::vector<uint8_t> want(img.bytes.begin() + ph.p_offset, img.bytes.begin() + ph.p_offset + ph.p_filesz);
      size_t applied = 0;
      for (const Image::Reloc &r : img.relocs) {
        if (r.offset < ph.p_vaddr || r.offset - ph.p_vaddr > ph.p_filesz || ph.p_filesz - (r.offset - ph.p_vaddr) < 8)
          continue;
        uint64_t v = 0;
        if (r.type == kRAmdgpuRelative64) {
          v = base + r.addend;
        } else if (r.type == kRAmdgpuAbs64 && r.sym != 0) {
          v = base + r.sym + r.addend;
        } else {
          continue;
        }
        std::memcpy(want.data() + (r.offset - ph.p_vaddr), &v, 8);
        ++applied;
      }
      if (applied != 0)
        std::fprintf(stderr, "segments: %s: PT_LOAD vaddr %#llx: %zu dynamic relocations applied to the expectation\n",
                     path, (unsigned long long)ph.p_vaddr, applied);
      bool same = std::memcmp(loaded, want.data(), ph.p_filesz) == 0;
      for (uint64_t i = ph.p_filesz; same && i < ph.p_memsz; ++i) same = loaded[i] == 0;
      std::fprintf(stderr, "segments: %s: PT_LOAD vaddr %#llx filesz %#llx memsz %#llx flags %u: loaded bytes %s\n",
                   path, (unsigned long long)ph.p_vaddr, (unsigned long long)ph.p_filesz,
                   (unsigned long long)ph.p_memsz, unsigned(ph.p_flags), same ? "equal the file's" : "DIFFER");
      CHECK(same);
    }
  }
  CHECK(hsa_executable_destroy(exe) == HSA_STATUS_SUCCESS);
  CHECK(hsa_code_object_reader_destroy(reader) == HSA_STATUS_SUCCESS);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: rocr_segments FILE...\n");
    return 2;
  }
  CHECK(hsa_init() == HSA_STATUS_SUCCESS);
  hsa_agent_t gpu = gpu_agent();
  CHECK(gpu.handle != 0);
  for (int i = 1; i < argc; ++i) check_object(argv[i], gpu);
  CHECK(hsa_shut_down() == HSA_STATUS_SUCCESS);
  // Everything ROCr placed lived in the double's host memory, and was released.
  kmt_double_state state{};
  kmt_double_query(&state);
  std::fprintf(stderr, "segments: kernel-driver double: %u live allocations, %u unexpected calls\n",
               state.live_allocations, state.unexpected_calls);
  CHECK(state.live_allocations == 0 && state.unexpected_calls == 0 && state.kfd_opens == 0);
  return check_finish("rocr_segments");
}
