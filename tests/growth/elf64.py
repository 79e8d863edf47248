"""A minimal ELF64 little-endian reader and structural checks for AMDGPU code
objects, written for the growth oracle (independent of the crate's reader)."""
import struct

PT_LOAD, PT_NOTE, PT_PHDR, PT_DYNAMIC = 1, 4, 6, 2
PF_X, PF_W, PF_R = 1, 2, 4
SHT_NOBITS, SHT_SYMTAB, SHT_DYNSYM, SHT_NOTE = 8, 2, 11, 7
SHF_ALLOC, SHF_EXECINSTR = 2, 4
STT_FUNC, STT_OBJECT = 2, 1


class Elf:
    def __init__(self, data):
        if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            raise ValueError("not an ELF64 little-endian file")
        self.data = data
        (self.e_type, self.e_machine, _, self.e_entry, self.e_phoff, self.e_shoff, self.e_flags,
         _, self.e_phentsize, self.e_phnum, self.e_shentsize, self.e_shnum,
         self.e_shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", data, 16)
        self.abi_version = data[8]
        self.phdrs = []
        for i in range(self.e_phnum):
            off = self.e_phoff + i * self.e_phentsize
            if off + 56 > len(data):
                raise ValueError(f"program header {i} outside the file")
            t, flags, offset, vaddr, paddr, filesz, memsz, align = struct.unpack_from("<IIQQQQQQ", data, off)
            self.phdrs.append(dict(type=t, flags=flags, offset=offset, vaddr=vaddr, filesz=filesz,
                                   memsz=memsz, align=align, index=i))
        self.sections = []
        for i in range(self.e_shnum):
            off = self.e_shoff + i * self.e_shentsize
            if off + 64 > len(data):
                raise ValueError(f"section header {i} outside the file")
            name, t, flags, addr, offset, size, link, info, align, entsize = struct.unpack_from(
                "<IIQQQQIIQQ", data, off)
            self.sections.append(dict(name_off=name, type=t, flags=flags, addr=addr, offset=offset,
                                      size=size, link=link, info=info, align=align, entsize=entsize,
                                      index=i))
        if self.sections and self.e_shstrndx < len(self.sections):
            strtab = self.sections[self.e_shstrndx]
            for s in self.sections:
                s["name"] = self._str(strtab, s["name_off"])
        else:
            for s in self.sections:
                s["name"] = ""

    def _str(self, strtab, off):
        start = strtab["offset"] + off
        end = self.data.find(b"\0", start, strtab["offset"] + strtab["size"])
        if off >= strtab["size"] or end < 0:
            raise ValueError("string outside its table")
        return self.data[start:end].decode("utf-8", "replace")

    def section(self, name):
        return next((s for s in self.sections if s["name"] == name), None)

    def bytes_of(self, s):
        return self.data[s["offset"]:s["offset"] + s["size"]]

    def symbols(self, kind=SHT_SYMTAB):
        out = []
        for s in self.sections:
            if s["type"] != kind:
                continue
            strtab = self.sections[s["link"]]
            for i in range(s["size"] // 24):
                name, info, other, shndx, value, size = struct.unpack_from(
                    "<IBBHQQ", self.data, s["offset"] + 24 * i)
                out.append(dict(name=self._str(strtab, name), type=info & 15, bind=info >> 4,
                                other=other, shndx=shndx, value=value, size=size))
        return out

    def exec_sections(self):
        return [s for s in self.sections if s["flags"] & SHF_EXECINSTR and s["type"] != SHT_NOBITS]

    def vaddr_to_offset(self, vaddr, size=1):
        for p in self.phdrs:
            if p["type"] == PT_LOAD and p["vaddr"] <= vaddr and vaddr + size <= p["vaddr"] + p["filesz"]:
                return p["offset"] + vaddr - p["vaddr"]
        return None

    def kernel_descriptors(self):
        """{kernel name: (KD vaddr, KD file offset, entry vaddr)} from the
        `NAME.kd` symbols (64-byte objects; the entry offset is the signed
        64-bit field at byte 16, relative to the descriptor)."""
        out = {}
        for sym in self.symbols():
            if sym["name"].endswith(".kd") and sym["type"] == STT_OBJECT and sym["size"] == 64:
                off = self.vaddr_to_offset(sym["value"], 64)
                if off is None:
                    raise ValueError(f"{sym['name']} outside every PT_LOAD")
                entry_off = struct.unpack_from("<q", self.data, off + 16)[0]
                out[sym["name"][:-3]] = (sym["value"], off, sym["value"] + entry_off)
        return out


def structure(elf, page=4096):
    """Structural problems of a loadable AMDGPU code object (empty: none)."""
    problems = []
    n = len(elf.data)
    loads = [p for p in elf.phdrs if p["type"] == PT_LOAD]
    if not loads:
        problems.append("no PT_LOAD")
    for p in elf.phdrs:
        if p["type"] in (PT_LOAD, PT_NOTE, PT_DYNAMIC) and p["offset"] + p["filesz"] > n:
            problems.append(f"segment {p['index']} (type {p['type']}) ends past the file")
        if p["filesz"] > p["memsz"]:
            problems.append(f"segment {p['index']}: filesz > memsz")
    prev = None
    for p in sorted(loads, key=lambda p: p["vaddr"]):
        if p["align"] < page or p["align"] & (p["align"] - 1):
            problems.append(f"PT_LOAD {p['index']}: alignment {p['align']:#x}")
        elif (p["vaddr"] - p["offset"]) % p["align"]:
            problems.append(f"PT_LOAD {p['index']}: vaddr {p['vaddr']:#x} and offset {p['offset']:#x} "
                            f"differ modulo the alignment")
        if prev is not None and p["vaddr"] < prev["vaddr"] + prev["memsz"]:
            problems.append(f"PT_LOAD {p['index']} overlaps PT_LOAD {prev['index']}")
        prev = p
    if [p["vaddr"] for p in loads] != sorted(p["vaddr"] for p in loads):
        problems.append("PT_LOAD entries not in ascending vaddr order")
    for s in elf.sections:
        if s["type"] != SHT_NOBITS and s["offset"] + s["size"] > n:
            problems.append(f"section {s['name'] or s['index']} ends past the file")
        if not s["flags"] & SHF_ALLOC or s["size"] == 0:
            continue
        seg = [p for p in loads if p["vaddr"] <= s["addr"] and s["addr"] + s["size"] <= p["vaddr"] + p["memsz"]]
        if not seg:
            problems.append(f"allocated section {s['name'] or s['index']} outside every PT_LOAD")
            continue
        p = seg[0]
        if s["type"] != SHT_NOBITS:
            if s["addr"] + s["size"] > p["vaddr"] + p["filesz"]:
                problems.append(f"section {s['name']}: bytes beyond its segment's file image")
            elif s["offset"] != p["offset"] + s["addr"] - p["vaddr"]:
                problems.append(f"section {s['name']}: offset {s['offset']:#x} does not match its "
                                f"address in PT_LOAD {p['index']}")
        if s["flags"] & SHF_EXECINSTR and not p["flags"] & PF_X:
            problems.append(f"executable section {s['name']} in a segment without PF_X")
        if s["flags"] & SHF_EXECINSTR and p["flags"] & PF_W:
            problems.append(f"executable section {s['name']} in a writable segment")
    for p in loads:
        if p["flags"] & PF_X and not any(s["flags"] & SHF_EXECINSTR and p["vaddr"] <= s["addr"] < p["vaddr"] + p["memsz"]
                                         for s in elf.sections):
            problems.append(f"executable PT_LOAD {p['index']} holds no executable section")
    try:
        for sym in elf.symbols():
            if 0 < sym["shndx"] < len(elf.sections) and sym["type"] in (STT_FUNC, STT_OBJECT):
                s = elf.sections[sym["shndx"]]
                if s["flags"] & SHF_ALLOC and not (s["addr"] <= sym["value"] and
                                                   sym["value"] + sym["size"] <= s["addr"] + s["size"]):
                    problems.append(f"symbol {sym['name']} outside its section {s['name']}")
        for name, (_, _, entry) in elf.kernel_descriptors().items():
            if not any(s["addr"] <= entry < s["addr"] + s["size"] for s in elf.exec_sections()):
                problems.append(f"kernel {name}: entry {entry:#x} outside executable code")
            elif entry % 256:
                problems.append(f"kernel {name}: entry {entry:#x} not 256-byte aligned")
    except ValueError as e:
        problems.append(str(e))
    return problems
