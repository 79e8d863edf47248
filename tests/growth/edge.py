"""Synthetic edge cases for the growth rewrite, written as llvm-mc-22 assembly:
DS2 sites of all 12 mnemonics in VGPR-MSB bank modes (registers above v255),
with overlapping operands, stride64 and b64, the largest offsets that still
fit, and branches across them (`fixable`); and one object per refusal the
rules name (`refusals`: a scaled offset over 0xFFFF, a cyclic exchange
overlap, an exchange that would need swapping at one address). Each object
is linked by ld.lld-22 into a loadable gfx1250 code object."""
import random
import subprocess
from pathlib import Path

import ds2

HEADER = '  .amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\n  .text\n'


def kernel(name, body):
    return (f"  .globl {name}\n  .p2align 8\n  .type {name},@function\n{name}:\n{body}"
            f"  s_endpgm\n.L{name}_end:\n  .size {name}, .L{name}_end-{name}\n\n"
            f"  .rodata\n  .p2align 6\n  .amdhsa_kernel {name}\n    .amdhsa_next_free_vgpr 1024\n"
            f"    .amdhsa_next_free_sgpr 16\n  .end_amdhsa_kernel\n  .text\n")


def low(text):
    """The instruction with each register written in its 8-bit field (the
    bank comes from s_set_vgpr_msb)."""
    _, regs, _ = ds2.parse(text)
    mnemonic, _, rest = text.partition(" ")
    ops, mods = rest.split(" offset")[0], rest[len(rest.split(" offset")[0]):]
    fields = [ds2.reg_text((r[0] & 0xFF, r[1])) for r in regs]
    return f"{mnemonic} {', '.join(fields)}{mods}"


def mode_for(text):
    """The s_set_vgpr_msb mode placing each operand in its bank: bits [1:0]
    addr (src0), [3:2] data0 (src1), [5:4] data1 (src2), [7:6] vdst."""
    m, regs, _ = ds2.parse(text)
    kind = ds2.shape(m)[0]
    roles = {"load": ["dst", "addr"], "store": ["addr", "d0", "d1"],
             "storexchg": ["dst", "addr", "d0", "d1"]}[kind]
    shift = {"addr": 0, "d0": 2, "d1": 4, "dst": 6}
    mode = 0
    for role, r in zip(roles, regs):
        if r[0] // 256 != (r[0] + r[1] - 1) // 256:
            return None  # a tuple across banks cannot be encoded
        mode |= (r[0] // 256) << shift[role]
    return mode


def fixable_sites(rng, n=160):
    out = []
    while len(out) < n:
        t = ds2.random_ds2(rng)
        try:
            ds2.split(t)
        except ds2.NoSplit:
            continue
        if mode_for(t) is None:
            continue
        out.append(t)
    return out


def fixable_source(rng):
    body, k = [], 0
    sites = fixable_sites(rng)
    for i in range(0, len(sites), 8):
        lines = []
        for t in sites[i:i + 8]:
            mode = mode_for(t)
            lines.append(f"  s_set_vgpr_msb {mode:#x}\n  {low(t)}\n")
            if rng.random() < 0.3:
                lines.append("  s_cbranch_scc0 .L{0}_{1}\n  s_nop 0\n.L{0}_{1}:\n".format(f"k{k}", len(lines)))
        lines.append("  s_set_vgpr_msb 0\n")
        body.append(kernel(f"k{k}", "".join(lines)))
        k += 1
    return HEADER + "".join(body), sites


REFUSALS = {
    "scaled_offset": "ds_load_2addr_stride64_b64 v[0:3], v4 offset0:1 offset1:200",
    "cyclic_exchange": "ds_storexchg_2addr_rtn_b32 v[2:3], v2, v3, v9 offset0:1 offset1:2",
    "exchange_one_address": "ds_storexchg_2addr_rtn_b32 v[2:3], v6, v7, v2 offset0:5 offset1:5",
}


def build(mc, lld, work, name, source):
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    s, o, co = work / f"{name}.s", work / f"{name}.o", work / f"{name}.co"
    s.write_text(source)
    subprocess.run([mc, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1250", "-mattr=+real-true16",
                    "-filetype=obj", "-o", str(o), str(s)], check=True)
    subprocess.run([lld, "-shared", "-o", str(co), str(o)], check=True)
    return co


def objects(mc, lld, work, seed=1250):
    """{name: path} of the edge-case objects, and the expected refusal reason
    of each refusal object (the reason ds2.split gives)."""
    rng = random.Random(seed)
    src, _ = fixable_source(rng)
    out = {"fixable": (build(mc, lld, work, "edge_fixable", src), None)}
    for name, text in REFUSALS.items():
        try:
            ds2.split(text)
            raise AssertionError(f"{text} has a split")
        except ds2.NoSplit as e:
            reason = str(e)
        body = kernel(f"r_{name}", f"  s_nop 0\n  {text}\n")
        out[name] = (build(mc, lld, work, f"edge_{name}", HEADER + body), reason)
    return out
