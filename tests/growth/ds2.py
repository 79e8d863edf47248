"""DS two-address (DS2) instructions, in llvm-objdump-22's text: what B0 does,
what the A0 split must be, and a small model that executes both.

Written from the rules in the A0 reference ("Trampoline (growth)"), not from
the rewriter: a DS2 becomes two single-address operations with the offsets
scaled by the element size (x64 for stride64), then `s_wait_dscnt 0`; loads
swap order when the address VGPR overlaps the first destination half; an
exchange runs the half first whose destination no later read needs, and a
cyclic overlap (both orders clobber a later read) has no split; a scaled
offset over 0xFFFF has none either.

Operands are taken with their real VGPR numbers: llvm-objdump-22 prints a
register of a VGPR-MSB bank as `v2 /*v258*/`, the annotation naming the
register the hardware uses in the mode in force.
"""
import random
import re
import struct

MNEMONIC = re.compile(r"^ds_(load|store|storexchg)_2addr(_stride64)?(_rtn)?_b(32|64)$")
REG = re.compile(r"^v(?:(\d+)|\[(\d+):(\d+)\])$")
ANNOT = re.compile(r"/\*(v(?:\d+|\[\d+:\d+\]))\*/")
MODIFIER = re.compile(r"\b(offset0|offset1|offset):(0x[0-9a-fA-F]+|\d+)")


class NoSplit(Exception):
    """The site has no A0 split; the message says why (the refusal reason)."""


def is_ds2(mnemonic):
    return MNEMONIC.match(mnemonic) is not None


def parse_reg(token):
    m = REG.match(token)
    if not m:
        raise ValueError(f"not a VGPR operand: {token!r}")
    if m.group(1) is not None:
        return (int(m.group(1)), 1)
    lo, hi = int(m.group(2)), int(m.group(3))
    return (lo, hi - lo + 1)


def parse(text):
    """(mnemonic, [registers (first, count), real numbers], {modifier: value})
    of one objdump instruction text such as
    `ds_load_2addr_b32 v[2:3], v16 /*v272*/ offset0:4 offset1:5`."""
    mnemonic, _, rest = text.strip().partition(" ")
    mods = {k: int(v, 0) for k, v in MODIFIER.findall(rest)}
    rest = MODIFIER.sub("", rest)
    regs = []
    for operand in [o.strip() for o in rest.split(",") if o.strip()]:
        annot = ANNOT.search(operand)
        shown = ANNOT.sub("", operand).strip()
        low = parse_reg(shown)
        real = parse_reg(annot.group(1)) if annot else low
        if real[1] != low[1] or (real[0] & 0xFF) != (low[0] & 0xFF):
            raise ValueError(f"annotation {annot.group(1)} does not match {shown}")
        regs.append(real)
    return mnemonic, regs, mods


def shape(mnemonic):
    """(kind, stride64, element bytes) of a DS2 mnemonic."""
    m = MNEMONIC.match(mnemonic)
    if not m:
        raise ValueError(f"not a DS2 mnemonic: {mnemonic}")
    return m.group(1), m.group(2) is not None, int(m.group(4)) // 8


def overlaps(a, b):
    return a[0] < b[0] + b[1] and b[0] < a[0] + a[1]


def reg_text(r):
    return f"v{r[0]}" if r[1] == 1 else f"v[{r[0]}:{r[0] + r[1] - 1}]"


def split(text):
    """The expected A0 sequence (assembly lines) for one DS2 instruction text,
    or NoSplit with the reason. Registers above v255 are written with their
    real numbers (the caller decides how banked sites are checked)."""
    mnemonic, regs, mods = parse(text)
    kind, stride64, esz = shape(mnemonic)
    scale = esz * (64 if stride64 else 1)
    o0, o1 = mods.get("offset0", 0) * scale, mods.get("offset1", 0) * scale
    for o in (o0, o1):
        if o > 0xFFFF:
            raise NoSplit(f"scaled offset {o:#x} exceeds 0xffff")
    bits = esz * 8

    def off(o):
        return f" offset:{o}" if o else ""

    words = esz // 4
    if kind == "load":
        dst, addr = regs
        h0, h1 = (dst[0], words), (dst[0] + words, words)
        first = f"ds_load_b{bits} {reg_text(h0)}, {reg_text(addr)}{off(o0)}"
        second = f"ds_load_b{bits} {reg_text(h1)}, {reg_text(addr)}{off(o1)}"
        pair = [second, first] if overlaps(addr, h0) else [first, second]
    elif kind == "store":
        addr, d0, d1 = regs
        pair = [f"ds_store_b{bits} {reg_text(addr)}, {reg_text(d0)}{off(o0)}",
                f"ds_store_b{bits} {reg_text(addr)}, {reg_text(d1)}{off(o1)}"]
    else:
        dst, addr, d0, d1 = regs
        h0, h1 = (dst[0], words), (dst[0] + words, words)
        first = f"ds_storexchg_rtn_b{bits} {reg_text(h0)}, {reg_text(addr)}, {reg_text(d0)}{off(o0)}"
        second = f"ds_storexchg_rtn_b{bits} {reg_text(h1)}, {reg_text(addr)}, {reg_text(d1)}{off(o1)}"
        first_clobbers = overlaps(h0, addr) or overlaps(h0, d1)
        second_clobbers = overlaps(h1, addr) or overlaps(h1, d0)
        if not first_clobbers:
            pair = [first, second]
        elif second_clobbers:
            raise NoSplit("cyclic exchange overlap")
        elif o0 == o1:
            # Swapped, the two exchanges of one address return each other's
            # values: B0 returns the original then the first element's data.
            raise NoSplit("exchange order swap at one address")
        else:
            pair = [second, first]
    return pair + ["s_wait_dscnt 0"]


def banked(text):
    """Whether the instruction names a VGPR above v255 (a VGPR-MSB bank)."""
    return any(r[0] + r[1] > 256 for r in parse(text)[1])


# --- The model ----------------------------------------------------------------------
# One lane: VGPRs (1024 x 32 bits) and LDS bytes. Every instruction reads its
# sources first, then accesses LDS, then writes its destinations (what one
# DS instruction does); a DS2 accesses its first element, then its second.

class State:
    def __init__(self, rng, lds_size):
        self.v = list(struct.unpack("<1024I", rng.randbytes(4096)))
        self.lds = bytearray(rng.randbytes(lds_size))

    def copy(self):
        c = State.__new__(State)
        c.v, c.lds = list(self.v), bytearray(self.lds)
        return c

    def read(self, r):
        return [self.v[r[0] + i] for i in range(r[1])]

    def write(self, r, words):
        for i, w in enumerate(words):
            self.v[r[0] + i] = w

    def load(self, addr, words):
        return [int.from_bytes(self.lds[addr + 4 * i:addr + 4 * i + 4], "little") for i in range(words)]

    def store(self, addr, words):
        for i, w in enumerate(words):
            self.lds[addr + 4 * i:addr + 4 * i + 4] = w.to_bytes(4, "little")


SINGLE = re.compile(r"^ds_(load|store|storexchg_rtn)_b(32|64)$")
LDS_MASK = (1 << 32) - 1


def execute(state, text):
    """Executes one instruction text (a DS2, a single-address DS op, a wait
    or s_nop: the last two change nothing in this model). Returns False for
    an instruction the model does not know."""
    mnemonic, _, _ = text.strip().partition(" ")
    if mnemonic in ("s_wait_dscnt", "s_nop", "s_set_vgpr_msb"):
        # Waits order nothing in a sequential model; VGPR-MSB modes are
        # already applied in objdump's real register numbers.
        return True
    _, regs, mods = parse(text)
    if is_ds2(mnemonic):
        kind, stride64, esz = shape(mnemonic)
        scale = esz * (64 if stride64 else 1)
        words = esz // 4
        offs = [mods.get("offset0", 0) * scale, mods.get("offset1", 0) * scale]
        if kind == "load":
            dst, addr = regs
            base = state.read(addr)[0]
            got = [state.load((base + o) & LDS_MASK, words) for o in offs]
            state.write(dst, got[0] + got[1])
        elif kind == "store":
            addr, d0, d1 = regs
            base, data = state.read(addr)[0], [state.read(d0), state.read(d1)]
            for o, d in zip(offs, data):
                state.store((base + o) & LDS_MASK, d)
        else:
            dst, addr, d0, d1 = regs
            base, data = state.read(addr)[0], [state.read(d0), state.read(d1)]
            old = []
            for o, d in zip(offs, data):
                old += state.load((base + o) & LDS_MASK, words)
                state.store((base + o) & LDS_MASK, d)
            state.write(dst, old)
        return True
    m = SINGLE.match(mnemonic)
    if not m:
        return False
    words = int(m.group(2)) // 32
    o = mods.get("offset", 0)
    if m.group(1) == "load":
        dst, addr = regs
        state.write(dst, state.load((state.read(addr)[0] + o) & LDS_MASK, words))
    elif m.group(1) == "store":
        addr, d = regs
        state.store((state.read(addr)[0] + o) & LDS_MASK, state.read(d))
    else:
        dst, addr, d = regs
        a = (state.read(addr)[0] + o) & LDS_MASK
        old = state.load(a, words)
        state.store(a, state.read(d))
        state.write(dst, old)
    return True


def equivalent(original, sequence, rng, trials=4, lds_size=None):
    """None when `sequence` (instruction texts) computes what `original` (one
    DS2 text) computes on `trials` random states, else what differs. The
    address VGPR is set so both elements fall inside LDS, at any alignment
    (B0 allows misaligned DS2 addresses; A0's single ops must match them)."""
    _, regs, mods = parse(original)
    kind, stride64, esz = shape(parse(original)[0])
    addr = regs[0] if kind == "store" else regs[1]
    span = max(mods.get("offset0", 0), mods.get("offset1", 0)) * esz * (64 if stride64 else 1) + esz
    lds_size = lds_size or max(4096, 2 * span)
    for t in range(trials):
        s = State(rng, lds_size)
        s.v[addr[0]] = rng.randrange(0, lds_size - span) if t else 0
        a, b = s.copy(), s.copy()
        execute(a, original)
        for text in sequence:
            if not execute(b, text):
                return f"the model does not know `{text}`"
        if a.v != b.v:
            bad = [i for i in range(1024) if a.v[i] != b.v[i]]
            return f"VGPRs differ: v{bad[:4]} (trial {t})"
        if a.lds != b.lds:
            return f"LDS differs (trial {t})"
    return None


def random_ds2(rng):
    """A random DS2 instruction text (any of the 12 mnemonics, overlapping
    operands on purpose, registers anywhere in 0..1023), for edge cases."""
    kind = rng.choice(["load", "store", "storexchg"])
    stride64 = rng.random() < 0.3
    esz = rng.choice([4, 8])
    words = esz // 4
    mnemonic = f"ds_{kind}_2addr{'_stride64' if stride64 else ''}{'_rtn' if kind == 'storexchg' else ''}_b{esz * 8}"
    pool = rng.choice([8, 16, 1024])

    def reg(n):
        # Register tuples are even-aligned on gfx1250 (llvm-mc rejects others).
        r = rng.randrange(0, pool - n + 1)
        return (r - r % 2 if n > 1 else r, n)
    limit = 255 if not stride64 else rng.choice([3, 255])
    o0, o1 = rng.randrange(0, limit + 1), rng.randrange(0, limit + 1)
    if kind == "load":
        regs = [reg(2 * words), reg(1)]
    elif kind == "store":
        regs = [reg(1), reg(words), reg(words)]
    else:
        regs = [reg(2 * words), reg(1), reg(words), reg(words)]
    ops = ", ".join(reg_text(r) for r in regs)
    mods = (f" offset0:{o0}" if o0 else "") + (f" offset1:{o1}" if o1 else "")
    return f"{mnemonic} {ops}{mods}"


def self_test(n=3000, seed=1250):
    """The split rules against the model on random instructions; returns the
    list of failures (empty: every split the rules produce is exact, and every
    refusal is for a reason that holds)."""
    rng = random.Random(seed)
    failures, refused = [], {}
    for _ in range(n):
        text = random_ds2(rng)
        try:
            seq = split(text)
        except NoSplit as e:
            refused[str(e).split()[0]] = refused.get(str(e).split()[0], 0) + 1
            continue
        why = equivalent(text, seq, rng, trials=2)
        if why:
            failures.append(f"{text} -> {seq}: {why}")
    return failures, refused
