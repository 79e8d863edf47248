"""An exact model of the gfx1250 WMMA instructions the A0 rewrite touches.

It shares nothing with the rewriter: it reads instructions as llvm-objdump-22
prints them (mnemonic, registers with the real VGPR numbers objdump resolves
from `s_set_vgpr_msb`, modifiers) and executes them on a register file of
32-lane VGPRs.

Arithmetic (the assumptions, stated in docs/wmma.md):
- inputs: FP8 = OCP E4M3 (bias 7, no infinity, S.1111.111 NaN), BF8 = E5M2
  (bias 15, IEEE infinities and NaNs), FP4 = E2M1 (bias 1, no infinity or NaN),
  IU8 = 8-bit integers, signed when the operand's neg_lo bit is set; subnormal
  inputs are honoured;
- D = round(C' + sum_k A[m][k] * B[k][n]) with the products and the sum exact
  and one rounding to the destination format (round to nearest even,
  subnormals kept, overflow to infinity); C' = C with abs (neg_hi[2]) then neg
  (neg_lo[2]) applied. Integer: exact sum, wrapped to 32 bits, or saturated
  with clamp;
- `exact=True` stores results unrounded (Fractions) so that a sequence can be
  compared with the original in real arithmetic.

Operand layouts per lane (l = 0..31, wave32). No public gfx1250 ISA document
was available here; the layouts are the ones COMGR's split rules imply
(gfx1250-a0.md: K=128 A/B halves are VGPR halves; a 16-wide K sub-block of a
32-block is a lane half for 8-bit formats and a VGPR for FP4; the 32x16x128
f4 operands stack two 16-row halves), with rows (A) and columns (B) across
lanes l % 16 as in every RDNA WMMA:
- 8-bit A (16 x 32 per 4 VGPRs): VGPR v, byte j holds A[m = l % 16][k] with
  k = 32*(v//4) + 16*(l//16) + 4*(v%4) + j (16 x 64: 8 VGPRs; 16 x 128: 16,
  VGPRs 0-7 holding k = 0..63). B (k x 16) likewise with n = l % 16;
- FP4 A (16 x 32 per 2 VGPRs): VGPR v, nibble j: k = 32*(v//2) + 16*(v%2)
  + 8*(l//16) + j; B likewise. The 32 x 128 A of v_wmma_f32_32x16x128_f4 is
  two 16 x 128 operands, VGPRs 0-7 rows 0-15 and 8-15 rows 16-31;
- f32 C/D (16 x 16, 8 VGPRs): VGPR v holds D[m = v + 8*(l//16)][n = l % 16];
  the 32 x 16 D of the f4 WMMA is two, VGPRs 8-15 rows 16-31; f16 C/D (4
  VGPRs): VGPR v, half h holds m = 2v + h + 8*(l//16).
"""

import re
from fractions import Fraction

LANES = 32


class ModelError(Exception):
    pass


# ---------------------------------------------------------------- number formats

def decode_minifloat(bits, ebits, mbits, bias, ieee_special, nan_codes=()):
    """Exact value of a small float, None for NaN, +-inf as float."""
    sign = -1 if bits >> (ebits + mbits) & 1 else 1
    e = (bits >> mbits) & ((1 << ebits) - 1)
    m = bits & ((1 << mbits) - 1)
    if bits in nan_codes:
        return None
    if ieee_special and e == (1 << ebits) - 1:
        return None if m else sign * float("inf")
    if e == 0:
        return sign * Fraction(m, 1 << mbits) * Fraction(2) ** (1 - bias)
    return sign * (1 + Fraction(m, 1 << mbits)) * Fraction(2) ** (e - bias)


def fp8(b):
    return decode_minifloat(b, 4, 3, 7, False, (0x7F, 0xFF))


def bf8(b):
    return decode_minifloat(b, 5, 2, 15, True)


def fp4(b):
    return decode_minifloat(b, 2, 1, 1, False)


def fp6(b):  # E2M3, no infinity or NaN
    return decode_minifloat(b, 2, 3, 1, False)


def bf6(b):  # E3M2, no infinity or NaN
    return decode_minifloat(b, 3, 2, 3, False)


def f32_value(bits):
    return decode_minifloat(bits, 8, 23, 127, True)


def f16_value(bits):
    return decode_minifloat(bits, 5, 10, 15, True)


def round_to(x, ebits, mbits):
    """x (Fraction or +-inf) rounded to nearest even in the format; returns
    (value, bits)."""
    bias = (1 << (ebits - 1)) - 1
    emax_field = (1 << ebits) - 1
    if isinstance(x, float):  # infinity
        sign = 1 if x < 0 else 0
        return x, sign << (ebits + mbits) | emax_field << mbits
    sign = 1 if x < 0 else 0
    a = -x if x < 0 else x
    if a == 0:
        return Fraction(0), sign << (ebits + mbits)
    # exponent of the leading bit
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, 1 - bias)  # subnormal range
    quantum = Fraction(2) ** (e - mbits)
    q = a / quantum
    n = q.numerator // q.denominator
    rem = q - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    value = n * quantum
    if n >= 1 << (mbits + 1):  # carried into the next binade
        e += 1
        n >>= 1
    if e > emax_field - 1 - bias or value >= Fraction(2) ** (emax_field - bias):
        inf = float("inf")
        return (-inf if sign else inf), sign << (ebits + mbits) | emax_field << mbits
    if n < 1 << mbits:  # subnormal
        bits = n
    else:
        bits = (e + bias) << mbits | (n - (1 << mbits))
    return (-value if sign else value), sign << (ebits + mbits) | bits


# ---------------------------------------------------------------- instruction text

REG = re.compile(r"v\[(\d+):(\d+)\](?:\s*/\*v\[(\d+):(\d+)\]\*/)?|v(\d+)(?:\s*/\*v(\d+)\*/)?")
SREG = re.compile(r"s\[(\d+):(\d+)\]|s(\d+)")
MODS = re.compile(
    r"\b(neg_lo|neg_hi):\[([01]),([01]),([01])\]"
    r"|\b(matrix_a_fmt|matrix_b_fmt|matrix_a_scale|matrix_b_scale|matrix_a_scale_fmt"
    r"|matrix_b_scale_fmt|row_mask|bank_mask):(\w+)"
    r"|\b(matrix_a_reuse|matrix_b_reuse|clamp|bound_ctrl:\w+|fi:\w+)\b"
    r"|\b(quad_perm):\[([0-3]),([0-3]),([0-3]),([0-3])\]")


def parse(text):
    """(mnemonic, operands, modifiers) of one objdump line (without the
    trailing // comment). A register operand is ('v', first, count) with the
    real register numbers; a constant is ('c', text)."""
    text = text.strip()
    mnemonic, _, rest = text.partition(" ")
    mods = {}
    for m in MODS.finditer(rest):
        if m.group(1):
            mods[m.group(1)] = tuple(int(m.group(i)) for i in (2, 3, 4))
        elif m.group(5):
            mods[m.group(5)] = m.group(6)
        elif m.group(7):
            mods[m.group(7)] = True
        else:
            mods[m.group(8)] = tuple(int(m.group(i)) for i in (9, 10, 11, 12))
    rest = MODS.sub("", rest)
    ops = []
    for tok in [t.strip() for t in rest.split(",") if t.strip()]:
        r = REG.fullmatch(tok)
        if r:
            if r.group(1) is not None:
                lo, hi = (int(r.group(3)), int(r.group(4))) if r.group(3) else (int(r.group(1)), int(r.group(2)))
            else:
                lo = hi = int(r.group(6) or r.group(5))
            ops.append(("v", lo, hi - lo + 1))
        elif SREG.fullmatch(tok):
            r = SREG.fullmatch(tok)
            lo, hi = (int(r.group(1)), int(r.group(2))) if r.group(1) else (int(r.group(3)),) * 2
            ops.append(("s", lo, hi - lo + 1))
        else:
            ops.append(("c", tok))
    return mnemonic, ops, mods


# ---------------------------------------------------------------- register file

class Registers:
    """VGPRs: reg -> list of 32 lane values (int bits, or exact elements: a
    Fraction for an f32 element, a (Fraction, Fraction) pair for f16)."""

    def __init__(self, init):
        self.init = init  # reg -> list of 32 ints, called for unset registers
        self.r = {}
        self.s = {}  # SGPRs: reg -> int (initialised from init(1024 + reg)[0])

    def copy(self):
        c = Registers(self.init)
        c.r = {k: list(v) for k, v in self.r.items()}
        c.s = dict(self.s)
        return c

    def sgpr(self, reg):
        if reg not in self.s:
            self.s[reg] = self.init(1024 + reg)[0]
        return self.s[reg]

    def value(self, op, lane):
        """32-bit value of a one-register source in a lane."""
        if op[0] == "v":
            return self.bits(op[1], lane)
        if op[0] == "s":
            return self.sgpr(op[1])
        text = op[1]
        if "." in text:
            raise ModelError(f"float constant {text} as a 32-bit source not modelled")
        return int(text, 0) & 0xFFFFFFFF

    def get(self, reg):
        if reg not in self.r:
            self.r[reg] = self.init(reg)
        return self.r[reg]

    def bits(self, reg, lane):
        v = self.get(reg)[lane]
        if not isinstance(v, int):
            raise ModelError(f"v{reg} lane {lane}: an unrounded accumulator read as matrix data")
        return v


# ---------------------------------------------------------------- layouts

def k8(v, lane, j):
    return 32 * (v // 4) + 16 * (lane // 16) + 4 * (v % 4) + j


def k4(v, lane, j):
    return 32 * (v // 2) + 16 * (v % 2) + 8 * (lane // 16) + j


# Matrix values as integers scaled by 2**16 (every FP8, BF8 and FP4 value is
# a multiple of 2**-16; integers unscaled); None for NaN or infinity.
SCALE = {"fp8": 1 << 16, "bf8": 1 << 16, "fp4": 1 << 16, "fp6": 1 << 16, "bf6": 1 << 16,
         "u8": 1, "i8": 1}


def _table(dec, scale, n):
    out = []
    for b in range(n):
        x = dec(b)
        out.append(None if x is None or isinstance(x, float) else int(x * scale))
    return out


TABLES = {
    "fp8": _table(fp8, 1 << 16, 256),
    "bf8": _table(bf8, 1 << 16, 256),
    "fp4": _table(fp4, 1 << 16, 16),
    "fp6": _table(fp6, 1 << 16, 64),
    "bf6": _table(bf6, 1 << 16, 64),
    "u8": list(range(256)),
    "i8": [b - 256 if b & 0x80 else b for b in range(256)],
}


def read_matrix(regs, first, nregs, fmt, rows):
    """Matrix operand (A: rows = M; B: rows = N) as rows of K scaled
    integers (see SCALE)."""
    if fmt not in TABLES:
        raise ModelError(f"matrix format {fmt} not modelled")
    t = TABLES[fmt]
    if fmt in ("fp6", "bf6"):
        # 6-bit (only ever an unmodified B here, so its layout cannot affect
        # a comparison): each lane's VGPRs as one little-endian bit string of
        # 64 values, value i at k = 32*(i//16) + 16*(l//16) + i%16.
        k = 128
        out = [[None] * k for _ in range(rows)]
        for lane in range(LANES):
            bits = 0
            for v in range(nregs):
                bits |= regs.bits(first + v, lane) << (32 * v)
            for i in range(64):
                out[lane % 16][32 * (i // 16) + 16 * (lane // 16) + i % 16] = t[bits >> (6 * i) & 0x3F]
        return out
    k = nregs * 32 * (8 if fmt == "fp4" else 4) // rows
    out = [[None] * k for _ in range(rows)]
    for v in range(nregs):
        for lane in range(LANES):
            w = regs.bits(first + v, lane)
            if fmt == "fp4":
                block, vv = divmod(v, 8)
                row = out[16 * block + lane % 16]
                for j in range(8):
                    row[k4(vv, lane, j)] = t[w >> (4 * j) & 0xF]
            else:
                row = out[lane % 16]
                for j in range(4):
                    row[k8(v, lane, j)] = t[w >> (8 * j) & 0xFF]
    for row in out:
        if None in row:
            raise ModelError("NaN or infinite matrix input: the model is exercised on finite inputs only")
    return out


def acc_elements(nregs, dtype):
    """(reg offset, lane, half or None, m, n) of an accumulator operand."""
    for v in range(nregs):
        block, vv = divmod(v, 8) if dtype != "f16" else (0, v)
        for lane in range(LANES):
            if dtype == "f16":
                for h in range(2):
                    yield v, lane, h, 2 * v + h + 8 * (lane // 16), lane % 16
            else:
                yield v, lane, None, 16 * block + vv + 8 * (lane // 16), lane % 16


def read_acc(regs, op, nregs, dtype):
    out = {}
    if op[0] == "c":
        text = op[1]
        if "." in text:
            val = Fraction(text)
        else:
            n = int(text, 0) & 0xFFFFFFFF
            val = {"f32": f32_value, "f16": lambda b: f16_value(b & 0xFFFF), "i32": lambda b: b - (1 << 32) if b >> 31 else b}[dtype](n)
        for v, lane, h, m, n_ in acc_elements(nregs, dtype):
            out[(m, n_)] = val
        return out
    first = op[1]
    for v, lane, h, m, n_ in acc_elements(nregs, dtype):
        x = regs.get(first + v)[lane]
        if dtype == "f16":
            if isinstance(x, int):
                out[(m, n_)] = f16_value(x >> (16 * h) & 0xFFFF)
            else:
                out[(m, n_)] = x[h]
        elif dtype == "f32":
            out[(m, n_)] = f32_value(x) if isinstance(x, int) else x
        else:
            out[(m, n_)] = (x - (1 << 32) if x >> 31 else x) if isinstance(x, int) else x
    return out


def write_acc(regs, first, nregs, dtype, d, exact, clamp=False):
    new = {}
    for v, lane, h, m, n in acc_elements(nregs, dtype):
        x = d[(m, n)]
        reg = first + v
        lanes = new.setdefault(reg, list(regs.get(reg)))
        if dtype == "i32":
            if clamp:
                x = max(-(1 << 31), min((1 << 31) - 1, x))
            lanes[lane] = x & 0xFFFFFFFF
        elif dtype == "f32":
            lanes[lane] = x if exact else (0x7FC00000 if x is None else round_to(x, 8, 23)[1])
        else:
            if exact:
                old = lanes[lane] if isinstance(lanes[lane], tuple) else (None, None)
                pair = list(old)
                pair[h] = x
                lanes[lane] = tuple(pair)
            else:
                old = lanes[lane] if isinstance(lanes[lane], int) else 0
                bits = 0x7E00 if x is None else round_to(x, 5, 10)[1]
                lanes[lane] = (old & ~(0xFFFF << (16 * h))) | bits << (16 * h)
    regs.r.update(new)


# ---------------------------------------------------------------- instructions

WMMA = re.compile(r"v_wmma_(?:scale16_|scale_)?(f32|f16|i32)_(16|32)x16x(64|128)_(fp8|bf8|f8f6f4|f4|iu8)(?:_(fp8|bf8))?$")
FMT = {"MATRIX_FMT_FP8": "fp8", "MATRIX_FMT_BF8": "bf8", "MATRIX_FMT_FP4": "fp4",
       "MATRIX_FMT_FP6": "fp6", "MATRIX_FMT_BF6": "bf6"}


def shape(mnemonic, mods):
    """(dtype, rows M, K, A fmt, B fmt, A regs, B regs, C/D regs)."""
    w = WMMA.match(mnemonic)
    if not w:
        raise ModelError(f"{mnemonic}: not modelled")
    dtype, m, k, a, b = w.group(1), int(w.group(2)), int(w.group(3)), w.group(4), w.group(5)
    if a == "f8f6f4":
        a = FMT[mods.get("matrix_a_fmt", "MATRIX_FMT_FP8")]
        b = FMT[mods.get("matrix_b_fmt", "MATRIX_FMT_FP8")]
    elif a == "f4":
        a = b = "fp4"
    elif a == "iu8":
        neg = mods.get("neg_lo", (0, 0, 0))
        a, b = ("i8" if neg[0] else "u8"), ("i8" if neg[1] else "u8")
    bits = {"fp8": 8, "bf8": 8, "u8": 8, "i8": 8, "fp4": 4, "fp6": 6, "bf6": 6}
    if a not in bits or b not in bits:
        raise ModelError(f"{mnemonic}: format {a}/{b} not modelled")
    a_regs = m * k * bits[a] // 32 // 32
    b_regs = 16 * k * bits[b] // 32 // 32
    d_regs = m * 16 // 32 // (2 if dtype == "f16" else 1)
    return dtype, m, k, a, b, a_regs, b_regs, d_regs


def scales(regs, op, mods, which, block16, rows=16):
    """Scale exponents [row or column][block] of a scaled WMMA's operand
    (E8M0: 2**(e - 127)); the 16 rows' scales come from lanes 0-15, or 16-31
    with MATRIX_SCALE_ROW1; the 32 rows of the 32x16x128 f4 A from lanes
    0-31."""
    if mods.get(f"matrix_{which}_scale_fmt", "MATRIX_SCALE_FMT_E8") != "MATRIX_SCALE_FMT_E8":
        raise ModelError("scale formats other than E8M0 are not modelled")
    row = 16 if mods.get(f"matrix_{which}_scale") == "MATRIX_SCALE_ROW1" else 0
    if rows == 32 and row:
        raise ModelError("MATRIX_SCALE_ROW1 on a 32-row operand is not modelled")
    out = []
    for r in range(rows):
        lane = r + row
        if op[0] == "v":
            word = regs.bits(op[1], lane) | (regs.bits(op[1] + 1, lane) << 32 if block16 else 0)
        elif op[0] == "s":
            word = regs.sgpr(op[1]) | (regs.sgpr(op[1] + 1) << 32 if block16 else 0)
        else:
            raise ModelError("constant scale operand not modelled")
        exps = [word >> (8 * i) & 0xFF for i in range(8 if block16 else 4)]
        if 0xFF in exps:
            raise ModelError("NaN scale: finite inputs only")
        out.append(exps)
    return out


def execute(regs, text, exact, magnitude=False):
    """Executes one instruction of objdump text on `regs`."""
    mnemonic, ops, mods = parse(text)
    if mnemonic in ("v_nop", "s_set_vgpr_msb", "s_nop"):
        return
    if mnemonic in ("v_mov_b32", "v_mov_b32_e32", "v_mov_b32_e64", "v_mov_b32_dpp"):
        if mnemonic == "v_mov_b32_dpp":
            if mods.get("quad_perm") != (0, 1, 2, 3) or mods.get("bank_mask", "0xf") != "0xf":
                raise ModelError(f"{text}: only identity DPP moves are modelled")
            rows = int(mods.get("row_mask", "0xf"), 0)
        else:
            rows = 0xF
        dst = ops[0][1]
        lanes = list(regs.get(dst))
        for lane in range(LANES):
            if rows >> (lane // 16) & 1:
                lanes[lane] = regs.value(ops[1], lane)
        regs.r[dst] = lanes
        return
    if mnemonic in ("v_perm_b32", "v_perm_b32_e64"):
        dst = ops[0][1]
        lanes = list(regs.get(dst))
        for lane in range(LANES):
            pool = regs.value(ops[2], lane) | regs.value(ops[1], lane) << 32
            sel = regs.value(ops[3], lane)
            out = 0
            for i in range(4):
                b = sel >> (8 * i) & 0xFF
                if b > 7:
                    raise ModelError(f"{text}: selector byte {b:#x} not modelled")
                out |= (pool >> (8 * b) & 0xFF) << (8 * i)
            lanes[lane] = out
        regs.r[dst] = lanes
        return
    dtype, m, k, afmt, bfmt, a_regs, b_regs, d_regs = shape(mnemonic, mods)
    scaled = mnemonic.startswith("v_wmma_scale")
    block16 = mnemonic.startswith("v_wmma_scale16")
    if len(ops) != (6 if scaled else 4) or ops[0][0] != "v" or ops[1][0] != "v" or ops[2][0] != "v":
        raise ModelError(f"{text}: unexpected operands")
    for op, want in ((ops[0], d_regs), (ops[1], a_regs), (ops[2], b_regs)):
        if op[2] != want:
            raise ModelError(f"{text}: operand of {op[2]} registers, {want} expected")
    if ops[3][0] == "v" and ops[3][2] != d_regs:
        raise ModelError(f"{text}: C of {ops[3][2]} registers")
    ai = read_matrix(regs, ops[1][1], a_regs, afmt, m)
    bi = read_matrix(regs, ops[2][1], b_regs, bfmt, 16)
    c = read_acc(regs, ops[3], d_regs, dtype)
    if dtype != "i32":
        neg, absol = mods.get("neg_lo", (0, 0, 0))[2], mods.get("neg_hi", (0, 0, 0))[2]
        for key, x in c.items():
            if x is None:
                continue
            if absol:
                x = abs(x)
            if neg:
                x = -x
            c[key] = x
    if magnitude:  # sum of |terms|, the scale of the rounding error
        ai = [[abs(x) for x in row] for row in ai]
        bi = [[abs(x) for x in row] for row in bi]
        c = {key: (abs(x) if x is not None else None) for key, x in c.items()}
    den = SCALE[afmt] * SCALE[bfmt]
    if scaled:
        sa = scales(regs, ops[4], mods, "a", block16, m)
        sb = scales(regs, ops[5], mods, "b", block16)
        width = 16 if block16 else 32
    d = {}
    for (mm, nn), cv in c.items():
        if cv is None or isinstance(cv, float):
            d[(mm, nn)] = cv  # NaN, or an infinity the finite products keep
            continue
        if scaled:  # sum over blocks of 2**(ea + eb) * block dot product
            s = 0
            for blk in range(k // width):
                part = sum(x * y for x, y in zip(ai[mm][blk * width:(blk + 1) * width],
                                                 bi[nn][blk * width:(blk + 1) * width]))
                if magnitude:
                    part = abs(part)
                s += part << (sa[mm][blk] + sb[nn][blk])
            d[(mm, nn)] = cv + Fraction(s, den << 254)
            continue
        s = sum(x * y for x, y in zip(ai[mm], bi[nn]))
        d[(mm, nn)] = cv + (s if den == 1 else Fraction(s, den))
    write_acc(regs, ops[0][1], d_regs, dtype, d, exact, clamp=mods.get("clamp", False))


def self_check():
    """The model's own invariants: each layout maps a row's lanes and bytes
    onto every K exactly once, and the rounding agrees with the host's IEEE
    f32 and f16 conversions (Python's struct) on random values."""
    import random
    import struct
    for m in range(16):
        for nregs, k in ((8, 64), (16, 128)):
            got = sorted(k8(v, lane, j) for v in range(nregs) for lane in (m, m + 16) for j in range(4))
            if got != list(range(k)):
                raise ModelError("8-bit layout is not a bijection")
        got = sorted(k4(v, lane, j) for v in range(8) for lane in (m, m + 16) for j in range(8))
        if got != list(range(128)):
            raise ModelError("FP4 layout is not a bijection")
    rng = random.Random(5)
    for fmt, ebits, mbits, width, dec in (("<f", 8, 23, 32, f32_value), ("<e", 5, 10, 16, f16_value)):
        for _ in range(3000):
            x = dec(rng.getrandbits(width))
            if x is None or isinstance(x, float):
                continue
            y = x * Fraction(rng.randint(1, 1 << 12), 1 << 11)
            bits = round_to(y, ebits, mbits)[1]
            try:
                ref = int.from_bytes(struct.pack(fmt, float(y)), "little")
            except OverflowError:
                ref = ((1 << ebits) - 1) << mbits | (1 << (width - 1) if y < 0 else 0)
            if bits != ref:
                raise ModelError(f"rounding of {y} to {width} bits: {bits:#x}, host {ref:#x}")
