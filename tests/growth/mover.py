"""A deliberately small reference mover, used only to test the oracle itself
(growth.selftest): it moves every kernel holding a DS2 into one appended R+X
segment, splits each DS2 by ds2.py's rules (bytes from llvm-mc-22), turns
clauses over a DS2 into `s_nop 0`, re-aims branches and the kernel
descriptor, makes each old entry an `s_branch` gateway to its image, and appends new header tables. It handles only what the small
test objects need (no PC-relative literal pairs, no calls, branches within
16 bits) and refuses anything else. The oracle must accept its output and
reject each of the corruptions `mutations` makes.
"""
import struct

import compare
import ds2
import elf64
import listing

PAGE = 0x1000
CODE_END = struct.pack("<I", 0xBF9F0000)


class Unsupported(Exception):
    pass


def align(x, a):
    return (x + a - 1) // a * a


ROLES = {"load": ["dst", "addr"], "store": ["addr", "d0"], "storexchg_rtn": ["dst", "addr", "d0"]}
SHIFT = {"addr": 0, "d0": 2, "dst": 6}


def banked_encode(line, mc):
    """Bytes of `s_set_vgpr_msb MODE` + the single DS op `line` (real VGPR
    numbers) written in 8-bit fields, or of an s_set_vgpr_msb line."""
    if line.startswith("s_set_vgpr_msb"):
        return listing.assemble(mc, [line])[line]
    mnemonic, regs, mods = ds2.parse(line)
    kind = ds2.SINGLE.match(mnemonic).group(1)
    mode = 0
    for role, r in zip(ROLES[kind], regs):
        mode |= (r[0] // 256) << SHIFT[role]
    text = f"{mnemonic} " + ", ".join(ds2.reg_text((r[0] & 0xFF, r[1])) for r in regs)
    text += f" offset:{mods['offset']}" if mods.get("offset") else ""
    lines = [f"s_set_vgpr_msb {mode:#x}", text]
    enc = listing.assemble(mc, lines)
    return enc[lines[0]] + enc[lines[1]]


def move(data, lst, encoded, mc="llvm-mc-22"):
    """The moved object's bytes, and [(old entry, new entry)]."""
    e = elf64.Elf(data)
    funcs = {f["value"]: f for f in compare.functions(e)}
    kds = e.kernel_descriptors()
    keys = sorted(lst)
    end_va = max(p["vaddr"] + p["memsz"] for p in e.phdrs if p["type"] == elf64.PT_LOAD)
    base_off = align(len(data), PAGE)
    base_va = align(end_va, PAGE) + base_off % PAGE
    code = bytearray()
    moved, fixups, amap = [], [], {}
    for name, (kva, koff, entry) in sorted(kds.items(), key=lambda k: k[1][2]):
        f = funcs.get(entry)
        insns = [lst[a] for a in keys if f and f["value"] <= a < f["value"] + f["size"]]
        if not any(ds2.is_ds2(x.mnemonic) for x in insns):
            continue
        code += CODE_END * ((-len(code) % 256) // 4)
        new_entry = base_va + len(code)
        ds2_at = {i for i, x in enumerate(insns) if ds2.is_ds2(x.mnemonic)}
        mode = 0
        for i, x in enumerate(insns):
            amap[x.addr] = base_va + len(code)
            if x.mnemonic in compare.PC_USE:
                raise Unsupported("PC-relative literal pair")
            if x.mnemonic == "s_set_vgpr_msb":
                mode = x.raw[0]
            if i in ds2_at and ds2.banked(x.text):
                # Each single op in the banks of its own operands, then the
                # mode in force restored.
                for line in ds2.split(x.text):
                    if line.startswith("s_wait"):
                        code += encoded[line]
                        continue
                    code += banked_encode(line, mc)
                code += banked_encode(f"s_set_vgpr_msb {mode:#x}", mc)
            elif i in ds2_at:
                code += b"".join(encoded[line] for line in ds2.split(x.text))
            elif x.mnemonic == "s_clause" and any(k in ds2_at for k in range(i + 1, i + 2 + (x.raw[0] & 0x3F))):
                code += compare.NOP0
            elif x.mnemonic.startswith(compare.BRANCH_PREFIXES):
                fixups.append((len(code), compare.branch_target(x)))
                code += x.raw
            else:
                code += x.raw
        amap[f["value"] + f["size"]] = base_va + len(code)
        moved.append((koff, kva, entry, new_entry))
    if not moved:
        raise Unsupported("no kernel holds a DS2")
    if any(ds2.is_ds2(x.mnemonic) and x.addr not in amap for x in lst.values()):
        raise Unsupported("a DS2 outside every kernel (a called function)")
    for at, target in fixups:
        new_t = amap.get(target, target)
        delta = (new_t - (base_va + at + 4)) // 4
        if not -32768 <= delta < 32768:
            raise Unsupported("branch out of reach")
        code[at:at + 2] = struct.pack("<h", delta)
    code += CODE_END * 32
    out = bytearray(data) + bytes(base_off - len(data)) + code
    # New program headers: the old ones (PT_PHDR nulled: it names the old
    # table), the new PT_LOAD after the last PT_LOAD.
    phdrs = []
    for p in e.phdrs:
        raw = bytearray(data[e.e_phoff + p["index"] * 56:e.e_phoff + (p["index"] + 1) * 56])
        if p["type"] == elf64.PT_PHDR:
            raw[0:4] = b"\0\0\0\0"
        phdrs.append(bytes(raw))
    last_load = max(i for i, p in enumerate(e.phdrs) if p["type"] == elf64.PT_LOAD)
    new_load = struct.pack("<IIQQQQQQ", elf64.PT_LOAD, elf64.PF_R | elf64.PF_X, base_off, base_va, base_va,
                           len(code), len(code), PAGE)
    phdrs.insert(last_load + 1, new_load)
    out += bytes(align(len(out), 8) - len(out))
    phoff = len(out)
    out += b"".join(phdrs)
    shdrs = [data[e.e_shoff + i * 64:e.e_shoff + (i + 1) * 64] for i in range(e.e_shnum)]
    text = e.section(".text")
    shdrs.append(struct.pack("<IIQQQQIIQQ", text["name_off"], 1, elf64.SHF_ALLOC | elf64.SHF_EXECINSTR,
                             base_va, base_off, len(code), 0, 0, 256, 0))
    out += bytes(align(len(out), 8) - len(out))
    shoff = len(out)
    out += b"".join(shdrs)
    struct.pack_into("<QQ", out, 32, phoff, shoff)
    struct.pack_into("<H", out, 56, len(phdrs))
    struct.pack_into("<H", out, 60, len(shdrs))
    for koff, kva, _, new_entry in moved:
        struct.pack_into("<q", out, koff + 16, new_entry - kva)
    # Each old entry a gateway: an s_branch to the image, the rest of the
    # first instruction s_nop 0.
    for _, _, entry, new_entry in moved:
        delta = (new_entry - (entry + 4)) // 4
        if not -32768 <= delta < 32768:
            raise Unsupported("gateway out of s_branch reach")
        first = lst[entry]
        at = e.vaddr_to_offset(entry, len(first.raw))
        out[at:at + 4] = struct.pack("<hH", delta, 0xBFA0)
        for k in range(4, len(first.raw), 4):
            out[at + k:at + k + 4] = compare.NOP0
    return bytes(out), [(m[2], m[3]) for m in moved], base_va, amap


def mutations(out, base_va, base_off_hint, moved, amap, lst):
    """(name, corrupted bytes) pairs the oracle must each reject."""
    e = elf64.Elf(out)
    seg = next(p for p in e.phdrs if p["type"] == elf64.PT_LOAD and p["vaddr"] == base_va)
    out_of = lambda va: seg["offset"] + va - seg["vaddr"]  # noqa: E731
    cases = []
    old_entry, new_entry = moved[0]
    # A DS2 replacement byte (the first split instruction's offset field).
    ds2_old = next(a for a in sorted(amap) if a in lst and ds2.is_ds2(lst[a].mnemonic))
    b = bytearray(out)
    b[out_of(amap[ds2_old])] ^= 0x04
    cases.append(("DS2 replacement offset", bytes(b)))
    # The wait after a DS2 dropped to s_nop.
    b = bytearray(out)
    at = out_of(amap[ds2_old]) + 16
    b[at:at + 4] = compare.NOP0
    cases.append(("wait replaced", bytes(b)))
    # A branch aimed one instruction off.
    br = next((a for a in sorted(amap) if a in lst and lst[a].mnemonic.startswith(compare.BRANCH_PREFIXES)), None)
    if br is not None:
        b = bytearray(out)
        at = out_of(amap[br])
        struct.pack_into("<h", b, at, struct.unpack_from("<h", b, at)[0] + 1)
        cases.append(("branch target", bytes(b)))
    # The kernel descriptor left on the old code.
    kd = next(v for v in e.kernel_descriptors().values() if v[2] == new_entry)
    b = bytearray(out)
    struct.pack_into("<q", b, kd[1] + 16, old_entry - kd[0])
    cases.append(("descriptor entry", bytes(b)))
    # The gateway aimed one instruction off, and the gateway removed.
    g = e.vaddr_to_offset(old_entry, 4)
    b = bytearray(out)
    struct.pack_into("<h", b, g, struct.unpack_from("<h", b, g)[0] + 1)
    cases.append(("gateway target", bytes(b)))
    b = bytearray(out)
    b[g:g + len(lst[old_entry].raw)] = lst[old_entry].raw
    cases.append(("gateway removed", bytes(b)))
    # A byte of the old image that must not change (.rodata's last byte).
    ro = e.section(".rodata") or e.section(".dynsym")
    b = bytearray(out)
    b[ro["offset"] + ro["size"] - 1] ^= 1
    cases.append(("input byte outside the edits", bytes(b)))
    # An undecodable dword at the end of the new code.
    b = bytearray(out)
    at = seg["offset"] + seg["filesz"] - 4
    b[at:at + 4] = b"\xff\xff\xff\xff"
    cases.append(("undecodable code", bytes(b)))
    # The segment no longer page-congruent.
    b = bytearray(out)
    idx = next(i for i, p in enumerate(e.phdrs) if p["type"] == elf64.PT_LOAD and p["vaddr"] == base_va)
    struct.pack_into("<Q", b, e.e_phoff + idx * 56 + 8, seg["offset"] + 4)
    cases.append(("segment alignment", bytes(b)))
    return cases
