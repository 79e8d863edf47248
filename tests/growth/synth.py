"""A synthetic large gfx1250 code object made of real kernels, for the
benchmark (RCCL's size, ~200 MB): real kernels with DS two-address sites are
copied again and again into one ELF written here (it need not run, only be a
valid object for the rewriter). Only self-contained kernels are taken: no
PC-relative literal pair (their targets would move) and every branch inside
the kernel. Each copy gets its own symbol and kernel descriptor (the
original's 64 bytes, its entry offset re-aimed at the copy)."""
import struct

import ds2
import elf64
import listing

PAGE = 0x1000


def self_contained(lst, lo, hi):
    has_ds2 = False
    for a in range(lo, hi):
        x = lst.get(a)
        if x is None:
            continue
        if x.mnemonic in ("s_get_pc_i64", "s_getpc_b64", "s_swap_pc_i64", "s_set_pc_i64", "s_call_i64"):
            return False
        if x.mnemonic.startswith(("s_branch", "s_cbranch_")):
            t = x.addr + 4 + 4 * int.from_bytes(x.raw[:2], "little", signed=True)
            if not lo <= t < hi:
                return False
        has_ds2 |= ds2.is_ds2(x.mnemonic)
    return has_ds2


def kernels(objdump, paths, limit=64):
    """[(name, code bytes, kd bytes, e_flags, abi)] of self-contained kernels
    holding a DS2, from the objects at `paths`."""
    out = []
    for path in paths:
        data = open(path, "rb").read()
        e = elf64.Elf(data)
        lst, why = listing.objdump(objdump, path)
        if why:
            continue
        funcs = {s["name"]: s for s in e.symbols() if s["type"] == elf64.STT_FUNC and s["size"]}
        for name, (kva, koff, entry) in sorted(e.kernel_descriptors().items()):
            f = funcs.get(name)
            if f is None or f["value"] != entry:
                continue
            if not self_contained(lst, f["value"], f["value"] + f["size"]):
                continue
            off = e.vaddr_to_offset(f["value"], f["size"])
            out.append((name, data[off:off + f["size"]], data[koff:koff + 64], e.e_flags, data[7:9]))
            if len(out) >= limit:
                return out
    return out


def build(pieces, target_bytes):
    """The ELF bytes: copies of `pieces` until .text reaches target_bytes."""
    e_flags, osabi = pieces[0][3], pieces[0][4]
    text, kds, syms = bytearray(), bytearray(), []
    n = 0
    while len(text) < target_bytes:
        name, code, kd, _, _ = pieces[n % len(pieces)]
        syms.append((f"{name}.copy{n}", len(text), len(code), len(kds)))
        text += code
        text += b"\x00\x00\x9f\xbf" * ((-len(text) % 256) // 4)  # s_code_end padding
        kds += kd
        n += 1
    rodata_off = PAGE
    text_off = (rodata_off + len(kds) + PAGE - 1) // PAGE * PAGE
    text_end = text_off + len(text)
    # Kernel descriptors: entry offset = copy address - descriptor address.
    for _, at, _, kd_at in syms:
        struct.pack_into("<q", kds, kd_at + 16, (text_off + at) - (rodata_off + kd_at))
    strtab = bytearray(b"\0")
    symtab = bytearray(24)
    for name, at, size, kd_at in syms:
        for nm, value, sz, info, shndx in ((name, text_off + at, size, 0x12, 2),
                                           (name + ".kd", rodata_off + kd_at, 64, 0x11, 1)):
            symtab += struct.pack("<IBBHQQ", len(strtab), info, 0, shndx, value, sz)
            strtab += nm.encode() + b"\0"
    shstr = b"\0.rodata\0.text\0.symtab\0.strtab\0.shstrtab\0"
    names = {n: shstr.index(n.encode() + b"\0") for n in (".rodata", ".text", ".symtab", ".strtab", ".shstrtab")}
    symtab_off = (text_end + 7) // 8 * 8
    strtab_off = symtab_off + len(symtab)
    shstr_off = strtab_off + len(strtab)
    shoff = (shstr_off + len(shstr) + 7) // 8 * 8
    phnum, shnum = 2, 6
    out = bytearray(shoff + 64 * shnum)
    out[0:16] = b"\x7fELF\x02\x01\x01" + osabi + b"\0" * 7
    struct.pack_into("<HHIQQQIHHHHHH", out, 16, 3, 224, 1, 0, 64, shoff, e_flags, 64, 56, phnum, 64, shnum, 5)
    struct.pack_into("<IIQQQQQQ", out, 64, 1, elf64.PF_R, 0, 0, 0, rodata_off + len(kds),
                     rodata_off + len(kds), PAGE)
    struct.pack_into("<IIQQQQQQ", out, 64 + 56, 1, elf64.PF_R | elf64.PF_X, text_off, text_off, text_off,
                     len(text), len(text), PAGE)
    out[rodata_off:rodata_off + len(kds)] = kds
    out[text_off:text_end] = text
    out[symtab_off:strtab_off] = symtab
    out[strtab_off:shstr_off] = strtab
    out[shstr_off:shstr_off + len(shstr)] = shstr
    sections = [
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
        (names[".rodata"], 1, elf64.SHF_ALLOC, rodata_off, rodata_off, len(kds), 0, 0, 64, 0),
        (names[".text"], 1, elf64.SHF_ALLOC | elf64.SHF_EXECINSTR, text_off, text_off, len(text), 0, 0, 256, 0),
        (names[".symtab"], 2, 0, 0, symtab_off, len(symtab), 4, 1, 8, 24),
        (names[".strtab"], 3, 0, 0, strtab_off, len(strtab), 0, 0, 1, 0),
        (names[".shstrtab"], 3, 0, 0, shstr_off, len(shstr), 0, 0, 1, 0),
    ]
    for i, s in enumerate(sections):
        struct.pack_into("<IIQQQQIIQQ", out, shoff + 64 * i, *s)
    return bytes(out), n
