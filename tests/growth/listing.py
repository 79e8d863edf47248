"""llvm-objdump-22 listings of gfx1250 code and llvm-mc-22 assembly, in batches."""
import re
import subprocess

LINE = re.compile(r"^\t(\S+)(.*?)\s*// ([0-9A-F]+): ((?:[0-9A-F]{8} ?)+)")
ENCODING = re.compile(r"; encoding: \[([^\]]*)\]")
OBJDUMP_FLAGS = ["-d", "-z", "--mcpu=gfx1250", "--mattr=+real-true16"]


class Insn:
    __slots__ = ("addr", "mnemonic", "text", "raw")

    def __init__(self, addr, mnemonic, text, raw):
        self.addr, self.mnemonic, self.text, self.raw = addr, mnemonic, text, raw

    @property
    def end(self):
        return self.addr + len(self.raw)


def parse_listing(stdout):
    """{address: Insn} of one llvm-objdump -d output. The text has the
    symbolic branch target comment (`<f+0x84>`) removed."""
    out = {}
    for line in stdout.splitlines():
        m = LINE.match(line)
        if m:
            raw = b"".join(int(w, 16).to_bytes(4, "little") for w in m.group(4).split())
            addr = int(m.group(3), 16)
            out[addr] = Insn(addr, m.group(1), (m.group(1) + m.group(2)).strip(), raw)
    return out


def objdump(tool, path):
    """(listing, None) or (None, why): llvm-objdump crashes on some inputs
    (the A0 reference, 3.6); a crash is reported, never fatal to the run."""
    r = subprocess.run([tool] + OBJDUMP_FLAGS + [str(path)], capture_output=True, text=True)
    if r.returncode != 0:
        return None, f"llvm-objdump exited {r.returncode}: {r.stderr.strip()[-300:]}"
    return parse_listing(r.stdout), None


def coverage(listing, elf, data):
    """Problems with objdump's decoding of every executable section: each
    byte belongs to exactly one decoded instruction (no gap, no <unknown>,
    no .long), and the shown bytes are the file's."""
    problems = []
    for s in elf.exec_sections():
        a, end = s["addr"], s["addr"] + s["size"]
        while a < end:
            insn = listing.get(a)
            if insn is None:
                problems.append(f"{s['name'] or '#' + str(s['index'])}: nothing decoded at {a:#x}")
                break
            if insn.mnemonic in (".long", "<unknown>") or "<unknown>" in insn.text:
                problems.append(f"{s['name']}: {insn.text} at {a:#x}")
            off = s["offset"] + a - s["addr"]
            if data[off:off + len(insn.raw)] != insn.raw:
                problems.append(f"{s['name']}: objdump's bytes at {a:#x} are not the file's")
            a = insn.end
        if a > end:
            problems.append(f"{s['name']}: last instruction runs past the section end")
    return problems


def assemble(tool, lines):
    """{line: bytes} for assembly lines (one instruction each), assembled by
    llvm-mc-22 in one process; a line that does not assemble maps to None."""
    unique = sorted(set(lines))
    if not unique:
        return {}
    r = subprocess.run([tool, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1250", "-mattr=+real-true16",
                        "-show-encoding"], input="\n".join(unique) + "\n", capture_output=True, text=True)
    encodings = [bytes(int(b, 16) for b in m.group(1).split(",")) for m in ENCODING.finditer(r.stdout)]
    if r.returncode == 0 and len(encodings) == len(unique):
        return dict(zip(unique, encodings))
    if len(unique) == 1:
        return {unique[0]: None}
    half = len(unique) // 2
    out = assemble(tool, unique[:half])
    out.update(assemble(tool, unique[half:]))
    return out
