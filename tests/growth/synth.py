"""A synthetic large gfx1250 code object made of real kernels, for the
benchmark (RCCL's size, ~200 MB): real kernels holding sites of one kind (DS
two-address sites of the jax wheel's kernels by default; `gemm_site`: the
WMMA corpus's GEMM kernels) are copied again and again into one ELF written
here (it need not run, only be a valid object for the rewriter). Only
self-contained kernels are taken: no PC-relative literal pair (their targets
would move) and every branch inside the kernel. Each copy gets its own symbol
and kernel descriptor (the original's 64 bytes, its entry offset re-aimed at
the copy). With `note`, the object also carries an AMDGPU metadata note
with each copy's entry (the original kernel's, renamed; its `.args` left
out), which a rewrite that raises a kernel's register counts needs."""
import re
import struct

import ds2
import elf64
import listing
import msgpack_lite

# The WMMAs A0 lacks or runs differently (gfx1250-a0.md, WmmaSplit,
# WmmaScale16, WmmaHazard; docs/wmma.md): K=128 FP8/BF8, 32x16x128 FP4 (plain,
# block-32 and block-16 scales), block-16 scaled f8f6f4, integer WMMAs.
GEMM_SITE = re.compile(r"v_wmma_f(16|32)_16x16x128_(fp8|bf8)_(fp8|bf8)|v_wmma_(scale(16)?_)?f32_32x16x128_f4"
                       r"|v_wmma_scale16_f32_16x16x128_f8f6f4|v_wmma_i32_16x16x64_iu8|v_swmmac_i32_16x16x128_iu8")


def gemm_site(mnemonic):
    """Whether `mnemonic` is a WMMA site (GEMM_SITE)."""
    return GEMM_SITE.fullmatch(mnemonic) is not None

PAGE = 0x1000
NT_AMDGPU_METADATA = 32
SHT_NOTE = 7
PT_NOTE = 4


def self_contained(lst, lo, hi, site=ds2.is_ds2):
    """Whether the function at [lo, hi) is self-contained and holds a site
    (`site(mnemonic)`)."""
    has_site = False
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
        has_site |= site(x.mnemonic)
    return has_site


def metadata(e):
    """The AMDGPU metadata document of the object `e` (None without one)."""
    for s in e.sections:
        if s["type"] != SHT_NOTE:
            continue
        b, at = e.bytes_of(s), 0
        while at + 12 <= len(b):
            namesz, descsz, kind = struct.unpack_from("<III", b, at)
            desc = at + 12 + (namesz + 3) // 4 * 4
            if b[at + 12:at + 12 + namesz] == b"AMDGPU\0" and kind == NT_AMDGPU_METADATA:
                return msgpack_lite.unpack(b[desc:desc + descsz])
            at = desc + (descsz + 3) // 4 * 4
    return None


def kernels(objdump, paths, limit=64, site=ds2.is_ds2, with_metadata=False):
    """[(name, code bytes, kd bytes, e_flags, abi, metadata)] of
    self-contained kernels holding a site (`site(mnemonic)`: a DS2 by
    default), from the objects at `paths`. With `with_metadata`, only kernels
    with a metadata entry are taken, and `metadata` is (the object's document
    without its kernels, the kernel's entry); else None."""
    out = []
    for path in paths:
        data = open(path, "rb").read()
        e = elf64.Elf(data)
        doc = metadata(e) if with_metadata else None
        entries = {k.get(".name"): k for k in (doc or {}).get("amdhsa.kernels", [])}
        lst, why = listing.objdump(objdump, path)
        if why:
            continue
        funcs = {s["name"]: s for s in e.symbols() if s["type"] == elf64.STT_FUNC and s["size"]}
        for name, (kva, koff, entry) in sorted(e.kernel_descriptors().items()):
            f = funcs.get(name)
            if f is None or f["value"] != entry:
                continue
            if not self_contained(lst, f["value"], f["value"] + f["size"], site):
                continue
            meta = None
            if with_metadata:
                if name not in entries:
                    continue
                meta = ({k: v for k, v in doc.items() if k != "amdhsa.kernels"}, entries[name])
            off = e.vaddr_to_offset(f["value"], f["size"])
            out.append((name, data[off:off + f["size"]], data[koff:koff + 64], e.e_flags, data[7:9], meta))
            if len(out) >= limit:
                return out
    return out


def note_bytes(pieces, syms):
    """The AMDGPU metadata note of the copies `syms` of `pieces`."""
    doc = dict(pieces[0][5][0])
    entries = []
    for (name, _, _, _), i in syms:
        entry = {k: v for k, v in pieces[i][5][1].items() if k != ".args"}
        entry[".name"], entry[".symbol"] = name, name + ".kd"
        entries.append(entry)
    doc["amdhsa.kernels"] = entries
    desc = msgpack_lite.pack(doc)
    desc += b"\0" * (-len(desc) % 4)
    return struct.pack("<III", 7, len(desc), NT_AMDGPU_METADATA) + b"AMDGPU\0\0" + desc


def build(pieces, target_bytes, note=False):
    """The ELF bytes: copies of `pieces` until .text reaches target_bytes;
    with `note`, a metadata note too (pieces from kernels(with_metadata))."""
    e_flags, osabi = pieces[0][3], pieces[0][4]
    text, kds, syms = bytearray(), bytearray(), []
    n = 0
    while len(text) < target_bytes:
        name, code, kd = pieces[n % len(pieces)][:3]
        syms.append((f"{name}.copy{n}", len(text), len(code), len(kds)))
        text += code
        text += b"\x00\x00\x9f\xbf" * ((-len(text) % 256) // 4)  # s_code_end padding
        kds += kd
        n += 1
    rodata_off = PAGE
    notes = note_bytes(pieces, [(s, i % len(pieces)) for i, s in enumerate(syms)]) if note else b""
    note_off = rodata_off + len(kds)
    rodata_end = note_off + len(notes)
    text_off = (rodata_end + PAGE - 1) // PAGE * PAGE
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
    shstr = b"\0.rodata\0.text\0.symtab\0.strtab\0.shstrtab\0.note\0"
    names = {n: shstr.index(n.encode() + b"\0")
             for n in (".rodata", ".text", ".symtab", ".strtab", ".shstrtab", ".note")}
    symtab_off = (text_end + 7) // 8 * 8
    strtab_off = symtab_off + len(symtab)
    shstr_off = strtab_off + len(strtab)
    shoff = (shstr_off + len(shstr) + 7) // 8 * 8
    phnum, shnum = (3, 7) if notes else (2, 6)
    out = bytearray(shoff + 64 * shnum)
    out[0:16] = b"\x7fELF\x02\x01\x01" + osabi + b"\0" * 7
    struct.pack_into("<HHIQQQIHHHHHH", out, 16, 3, 224, 1, 0, 64, shoff, e_flags, 64, 56, phnum, 64, shnum, 5)
    struct.pack_into("<IIQQQQQQ", out, 64, 1, elf64.PF_R, 0, 0, 0, rodata_end, rodata_end, PAGE)
    struct.pack_into("<IIQQQQQQ", out, 64 + 56, 1, elf64.PF_R | elf64.PF_X, text_off, text_off, text_off,
                     len(text), len(text), PAGE)
    if notes:
        struct.pack_into("<IIQQQQQQ", out, 64 + 2 * 56, PT_NOTE, elf64.PF_R, note_off, note_off, note_off,
                         len(notes), len(notes), 4)
        out[note_off:rodata_end] = notes
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
    if notes:
        sections.append((names[".note"], SHT_NOTE, elf64.SHF_ALLOC, note_off, note_off, len(notes), 0, 0, 4, 0))
    for i, s in enumerate(sections):
        struct.pack_into("<IIQQQQIIQQ", out, shoff + 64 * i, *s)
    return bytes(out), n
