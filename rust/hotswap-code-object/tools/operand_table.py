#!/usr/bin/env python3
"""Derives, from llvm-mc-22's gfx1250 disassembler, which opcodes of the SALU and
VALU encodings LLVM decodes, which source fields each uses and which of them are
64 bits wide, and writes the Rust table src/gfx1250/operand_table.rs of this crate.

Why: a length decoder that counts a literal only in the source fields an opcode
uses is exact on every encoding LLVM decodes (a literal marker in an unused field
is ignored by LLVM), and the flat_scratch_base_64 class needs to know which source
positions are 64 bits wide.

Usage (from the repository root):
    python3 rust/hotswap-code-object/tools/operand_table.py llvm-mc-22 \\
        --write rust/hotswap-code-object/src/gfx1250/operand_table.rs  # regenerate
    python3 rust/hotswap-code-object/tools/operand_table.py llvm-mc-22 \\
        --check rust/hotswap-code-object/src/gfx1250/operand_table.rs  # compare

--check exits 0 when the regenerated table equals the file, 1 with a unified diff
when it does not, and 77 (a skip) when llvm-mc is missing or is not LLVM
PINNED_LLVM: the table states what that release decodes, so another release's
answer is not a regression of this repository (regenerate the table, review the
diff and bump PINNED_LLVM when moving to it).

Method: one instruction per opcode, its source fields holding distinct SGPRs
(s10, s20, s40); the disassembly names each used field as `sN` (32-bit or less)
or `s[N:N+1]` (64-bit). An opcode LLVM cannot decode is marked invalid. Each
instruction is an llvm-mc atomic block (`[...]`, one per input line) followed by
a marker block, so one llvm-mc process disassembles a whole pass: an invalid
encoding aborts only its own block and is reported with its line number.
"""
import difflib
import re
import subprocess
import sys

# The LLVM release the committed table was generated from.
PINNED_LLVM = "22.1.8"
SKIP = 77

SRCS = (10, 20, 40)
# s_nop 7: no sample is this word (the SOPP sample of opcode 0 is s_nop 0).
MARKER_WORD = 0xBF800007
MARKER_TEXT = "s_nop 7"
FAMILIES = {"sop1": 256, "sop2": 0x60, "sopk": 0x1D, "sopc": 128, "sopp": 128,
            "vop1": 256, "vop2": 0x3E, "vopc": 256, "vop3": 1024, "vop3p": 256}
WARNING = re.compile(r"^<stdin>:(\d+):\d+: (?:warning|error): (.*)$")


def block(words):
    return "[" + " ".join(f"0x{b:02x}" for w in words for b in w.to_bytes(4, "little")) + "]"


def disasm_batch(mc, samples, attrs):
    """The first disassembled line of each sample (a list of words) in one mode,
    or None for a sample LLVM does not decode."""
    text = "".join(f"{block(words)}\n{block([MARKER_WORD])}\n" for words in samples)
    r = subprocess.run([mc, "--disassemble", "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1250"] + attrs,
                       input=text, capture_output=True, text=True)
    invalid = set()
    for line in r.stderr.splitlines():
        m = WARNING.match(line)
        if m and "invalid" in m.group(2):
            line_no = int(m.group(1))
            if line_no % 2 == 0:
                sys.exit(f"error: {mc} rejected the marker block at line {line_no}: {line}")
            invalid.add((line_no - 1) // 2)
    segments, current = [], []
    for line in r.stdout.splitlines():
        line = line.strip()
        if not line or line.startswith("."):
            continue
        if line == MARKER_TEXT:
            segments.append(current)
            current = []
        else:
            current.append(line)
    if len(segments) != len(samples):
        sys.exit(f"error: {mc} printed {len(segments)} markers for {len(samples)} samples "
                 f"(rc {r.returncode}): {r.stderr[:500]}")
    return [None if i in invalid or not seg else seg[0] for i, seg in enumerate(segments)]


def disasm_all(mc, samples):
    """LLVM's default (fake16) mode or, when that fails, real true16 operands (which
    ROCm's compilers emit: e.g. v_mov_b16_e32 decodes only in that mode)."""
    lines = disasm_batch(mc, samples, [])
    retry = [i for i, line in enumerate(lines) if line is None]
    if retry:
        for i, line in zip(retry, disasm_batch(mc, [samples[i] for i in retry], ["-mattr=+real-true16"])):
            lines[i] = line
    return lines


def fields(line, count):
    """(used mask, 64-bit mask) for the sources of one disassembled line."""
    used = wide = 0
    # Operands after the mnemonic.
    ops = line.split(None, 1)[1] if " " in line else ""
    for i, n in enumerate(SRCS[:count]):
        if re.search(rf"\bs\[{n}:{n + 1}\]", ops):
            used |= 1 << i
            wide |= 1 << i
        elif re.search(rf"\bs\[{n}:\d+\]", ops) or re.search(rf"\bs{n}\b", ops) \
                or re.search(rf"\bs{n}\.[lh]\b", ops):
            used |= 1 << i
    return used, wide


def sample(family, op):
    s0, s1, s2 = SRCS
    if family == "sop1":
        return [0xBE800000 | op << 8 | s0], 1
    if family == "sop2":
        return [0x80000000 | op << 23 | s1 << 8 | s0], 2
    if family == "sopk":
        return [0xB0000000 | op << 23, 0], 0
    if family == "sopp":
        return [0xBF800000 | op << 16], 0
    if family == "sopc":
        return [0xBF000000 | op << 16 | s1 << 8 | s0], 2
    if family == "vop1":
        return [0x7E000000 | op << 9 | s0], 1
    if family == "vop2":
        return [op << 25 | s1 << 9 | s0], 1
    if family == "vopc":
        return [0x7C000000 | op << 17 | s1 << 9 | s0], 1
    if family == "vop3":
        return [0xD4000000 | op << 16, s0 | s1 << 9 | s2 << 18], 3
    if family == "vop3p":
        return [0xCC000000 | op << 16, s0 | s1 << 9 | s2 << 18], 3
    raise ValueError(family)


def sweep(mc):
    """(family, opcode, (used, wide) or None, mnemonic or None) for every opcode."""
    jobs = [(f, op) for f, n in FAMILIES.items() for op in range(n)]
    samples = [sample(f, op) for f, op in jobs]
    # Room for a K constant or literal (s_fmaak_f32, s_setreg_imm32_b32...).
    lines = disasm_all(mc, [words + [0, 0] for words, _ in samples])
    # Some VOP1/VOP2/VOPC opcodes take only a VGPR in src0: try v10.
    retry = [i for i, line in enumerate(lines) if line is None and jobs[i][0] in ("vop1", "vop2", "vopc")]
    if retry:
        again = disasm_all(mc, [[samples[i][0][0] + 0x100, 0, 0] for i in retry])
        for i, line in zip(retry, again):
            if line is not None:
                lines[i] = line.replace("v10", "s10")
    results = []
    for (family, op), (_, count), line in zip(jobs, samples, lines):
        if line is None:
            results.append((family, op, None, None))
        else:
            results.append((family, op, fields(line, count), line.split()[0]))
    return results


def render(results, version):
    out = ["// @generated by rust/hotswap-code-object/tools/operand_table.py from llvm-mc "
           f"{version} (-mcpu=gfx1250). Do not edit.\n",
           "//! Per-opcode source fields of the gfx1250 SALU and VALU encodings, as LLVM's\n"
           "//! disassembler decodes them: bit i (0..=2) set when source i is used, bit 3+i\n"
           "//! when it is 64 bits wide; [`INVALID`] when LLVM decodes no instruction.\n\n",
           "/// An opcode LLVM's gfx1250 disassembler does not decode.\n"
           "pub const INVALID: u8 = 0xFF;\n"]
    for family, n in FAMILIES.items():
        rows = [r for r in results if r[0] == family]
        out.append(f"\n/// {family.upper()}: indexed by opcode.\n")
        out.append(f"pub static {family.upper()}: [u8; {n}] = [\n")
        for _, op, fw, mnemonic in rows:
            value = "INVALID" if fw is None else f"0x{fw[0] | fw[1] << 3:02x}"
            out.append(f"    {value}, // {op:#05x} {mnemonic or '-'}\n")
        out.append("];\n")
    return "".join(out)


def llvm_version(mc):
    try:
        text = subprocess.run([mc, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return None
    m = re.search(r"LLVM version (\S+)", text)
    return m.group(1) if m else None


def main(argv):
    args = argv[1:]
    check = write = None
    for flag in ("--check", "--write"):
        if flag in args:
            i = args.index(flag)
            if i + 1 >= len(args):
                sys.exit(f"usage: {argv[0]} [LLVM_MC] [--check FILE | --write FILE]")
            if flag == "--check":
                check = args[i + 1]
            else:
                write = args[i + 1]
            del args[i:i + 2]
    mc = args[0] if args else "llvm-mc-22"
    version = llvm_version(mc)
    if check is None:
        if version is None:
            sys.exit(f"error: cannot run {mc} --version")
        if version != PINNED_LLVM:
            print(f"warning: {mc} is LLVM {version}, not the pinned {PINNED_LLVM}: update PINNED_LLVM "
                  "in this tool when committing the table", file=sys.stderr)
        table = render(sweep(mc), version)
        if write is None:
            sys.stdout.write(table)
        else:
            with open(write, "w", encoding="utf-8") as f:
                f.write(table)
        return 0
    if version is None:
        print(f"SKIP: {mc} not found or not runnable; the table is pinned to LLVM {PINNED_LLVM}")
        return SKIP
    if version != PINNED_LLVM:
        print(f"SKIP: {mc} is LLVM {version}, the table is pinned to LLVM {PINNED_LLVM}; "
              "regenerate it with this tool, review the diff and update PINNED_LLVM")
        return SKIP
    with open(check, encoding="utf-8") as f:
        committed = f.read()
    fresh = render(sweep(mc), version)
    if fresh == committed:
        print(f"operand table matches llvm-mc {version}: {sum(FAMILIES.values())} opcodes")
        return 0
    sys.stdout.writelines(difflib.unified_diff(committed.splitlines(True), fresh.splitlines(True),
                                               check, f"{mc} {version}"))
    print(f"FAIL: {check} differs from what llvm-mc {version} decodes (diff above, - committed, + fresh)")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
