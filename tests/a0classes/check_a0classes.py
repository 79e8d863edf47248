#!/usr/bin/env python3
"""Independent checks of issue 31's memory and conversion emitters.

The driver (examples/a0classes_emit.rs) prints, per site it recognises, the
original bytes and the replacement (or refusal). Nothing here shares code
with the emitters: the emitted bytes are decoded by llvm-objdump-22, and the
decoded *text* is evaluated by small interpreters written here.

1. sites: per object, the driver's sites per kind equal the instructions
   llvm-objdump-22 shows (ds_*_addtid_b32, tensor_load_to_lds, a vector
   instruction naming src_flat_scratch_base_*, an FP8 conversion with clamp),
   address by address, and the analysis' class counts agree;
2. decode: llvm-objdump-22 decodes every byte of every original and every
   replacement, and llvm-mc-22 re-encodes each emitted instruction's text to
   the bytes the emitter wrote;
3. addtid: the emitted sequence, run lane by lane in wave32 and wave64 (EXEC
   all ones and random) for a sweep of M0 values (above 64 KiB, with junk in
   M0[31:20], every value around the 20-bit edge), addresses exactly
   B0's M0[19:0] + 4 * lane + offset in every active lane, transfers the same
   VGPR, and writes no register but the scratch (store) / destination (load);
4. tensor: on random SGPR files and SCC, the descriptor the tensor
   instruction may read — in every state from its issue until an
   `s_wait_tensorcnt 0` has passed (to the end of the sequence when none
   follows: nothing says when it reads its SGPRs) — is the original
   descriptor with the workgroup mask (group 1 dword 0 bits [15:0]) zero and
   every other bit equal; SCC and every SGPR but the mask register (dead form,
   and the same-size form in an s_delay_alu's slot) or the scratch (live
   form) end unchanged, the mask register restored in the live form; the
   model rejects a restore before the wait (its self-test); the
   definition-site form (`tensor_def`: the mask SGPR's only reaching
   definition changed in place, classes.cl's tdm_def) makes the load read
   the original descriptor with the mask zero, every other SGPR equal, SCC
   equal unless reported unread after the definition;
5. flat scratch base: on random states, the emitted s_mov_b64 + vector
   instruction compute what the original computed with the base, the only
   other register written being the scratch pair;
6. refusals: FP8 CLAMP conversions are refused for their semantics; the
   edge corpus' expected refusals (addtid under a non-zero VGPR-MSB mode, a
   scratch pair the instruction reads) are refusals.

Usage: check_a0classes.py --emit BIN --mc LLVM_MC --objdump OBJDUMP --work DIR
           [--m0 N] CORPUS_DIR
Prints "FAIL: ..." for each failure; exit 1 if any.
"""

import argparse
import glob
import json
import os
import random
import re
import subprocess
import sys

LINE = re.compile(r"^\s+(\S.*?)\s*//\s+([0-9A-Fa-f]+):\s+([0-9A-Fa-f ]+)$")
SYMBOL = re.compile(r"^[0-9a-f]+ <(.+)>:$")

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def disassemble(objdump, path):
    """{symbol: [(address, text, bytes)]} of an object."""
    out = run([objdump, "-d", "--mcpu=gfx1250", path])
    funcs, cur = {}, None
    for line in out.splitlines():
        s = SYMBOL.match(line)
        if s:
            cur = funcs.setdefault(s.group(1), [])
            continue
        m = LINE.match(line)
        if m and cur is not None:
            raw = b"".join(int(w, 16).to_bytes(4, "little") for w in m.group(3).split())
            cur.append((int(m.group(2), 16), m.group(1).strip(), raw))
        elif cur is not None and line.strip() and not line.startswith("Disassembly"):
            cur.append((None, line.strip(), b""))
    return funcs


def operands(text):
    """Mnemonic and operand list of an objdump line (modifiers kept apart)."""
    parts = text.split(None, 1)
    mn = parts[0]
    rest = parts[1] if len(parts) > 1 else ""
    ops = [o.strip() for o in re.split(r",(?![^\[]*\])", rest) if o.strip()]
    # Trailing modifiers ("offset:128", "clamp", "th:...") follow the last
    # operand after a space.
    mods = []
    if ops:
        last = ops[-1].split()
        ops[-1] = last[0]
        mods = last[1:]
    return mn, ops, mods


FSB = ("src_flat_scratch_base_lo", "src_flat_scratch_base_hi")
VECTOR = re.compile(r"^v_")


def kind_of(text):
    mn, ops, mods = operands(text)
    if mn in ("ds_load_addtid_b32", "ds_store_addtid_b32"):
        return "addtid"
    if mn == "tensor_load_to_lds":
        return "tensor"
    if VECTOR.match(mn) and any(o in FSB for o in ops):
        return "fsb"
    if mn in ("v_cvt_pk_fp8_f32", "v_cvt_sr_fp8_f32", "v_cvt_f32_fp8_e64") and "clamp" in mods:
        return "fp8_clamp"
    return None


def num(tok):
    tok = tok.strip()
    v = int(tok, 0)
    return v & 0xFFFFFFFF


def vreg(tok):
    m = re.fullmatch(r"v(\d+)", tok)
    if not m:
        raise ValueError(f"not a VGPR: {tok}")
    return int(m.group(1))


# ------------------------------------------------------------------ addtid model
def b0_address(m0, lane, offset):
    """B0: the DS unit reads M0[19:0]; the lane's address adds 4 * lane and
    the instruction's offset."""
    return (m0 & 0xFFFFF) + 4 * lane + offset


def run_addtid(texts, m0, wave, exec_mask, vgprs):
    """Runs the emitted VALU/DS text lane by lane. Returns the DS access
    (kind, {lane: address}, data VGPR) and the final VGPR file (dict of
    register -> list per lane)."""
    v = {r: list(vals) for r, vals in vgprs.items()}
    access = None

    def src(tok, lane):
        if tok == "m0":
            return m0
        if tok.startswith("v"):
            return v.setdefault(vreg(tok), [0xDEAD0000 + i for i in range(wave)])[lane]
        return num(tok)

    for t in texts:
        mn, ops, mods = operands(t)
        if mn.startswith("ds_"):
            off = 0
            for m in mods:
                if m.startswith("offset:"):
                    off = int(m.split(":")[1], 0)
            if mn == "ds_load_b32":
                d, a = vreg(ops[0]), ops[1]
                addrs = {l: (src(a, l) + off) & 0xFFFFFFFF for l in range(wave) if exec_mask >> l & 1}
                access = ("load", addrs, d)
            elif mn == "ds_store_b32":
                a, d = ops[0], vreg(ops[1])
                addrs = {l: (src(a, l) + off) & 0xFFFFFFFF for l in range(wave) if exec_mask >> l & 1}
                access = ("store", addrs, d)
            else:
                raise ValueError(f"unmodelled DS instruction {t}")
            continue
        if mn.endswith("_e32") or mn.endswith("_e64"):
            mn = mn[:-4]
        d = vreg(ops[0])
        out = v.setdefault(d, [0xBEEF0000 + i for i in range(wave)])
        new = list(out)
        for lane in range(wave):
            if not exec_mask >> lane & 1:
                continue
            s = [src(o, lane) for o in ops[1:]]
            if mn == "v_bfe_u32":
                off, width = s[1] & 31, s[2] & 31
                r = (s[0] >> off) & ((1 << width) - 1)
            elif mn == "v_mbcnt_lo_u32_b32":
                below = (1 << lane) - 1 if lane < 32 else 0xFFFFFFFF
                r = bin(s[0] & below & 0xFFFFFFFF).count("1") + s[1]
            elif mn == "v_mbcnt_hi_u32_b32":
                below = ((1 << (lane - 32)) - 1) if lane >= 32 else 0
                r = bin(s[0] & below & 0xFFFFFFFF).count("1") + s[1]
            elif mn == "v_lshlrev_b32":
                r = s[1] << (s[0] & 31)
            elif mn == "v_bfi_b32":
                r = (s[0] & s[1]) | (~s[0] & s[2])
            else:
                raise ValueError(f"unmodelled VALU instruction {t}")
            new[lane] = r & 0xFFFFFFFF
        v[d] = new
    return access, v


def check_addtid(rec, orig_text, new_texts, m0s, rng, stats):
    mn, ops, mods = operands(orig_text)
    off = 0
    for m in mods:
        if m.startswith("offset:"):
            off = int(m.split(":")[1], 0)
    reg = vreg(ops[0])
    kind = "load" if mn == "ds_load_addtid_b32" else "store"
    scratch = rec.get("scratch")
    if kind == "store" and scratch is None:
        fail(f"{rec['function']}@{rec['vaddr']:#x}: store without a scratch VGPR")
        return
    written_ok = {reg} if kind == "load" else {scratch}
    for wave in (32, 64):
        full = (1 << wave) - 1
        for exec_mask in (full, rng.getrandbits(wave) | 1):
            for m0 in m0s:
                init = {r: [rng.getrandbits(32) for _ in range(wave)] for r in (reg, scratch or 0, 255, 254)}
                access, after = run_addtid(new_texts, m0, wave, exec_mask, init)
                if access is None or access[0] != kind or access[2] != reg:
                    fail(f"{rec['function']}@{rec['vaddr']:#x}: the sequence's DS access {access and access[::2]}"
                         f" is not a {kind} of v{reg}")
                    return
                for lane, addr in access[1].items():
                    want = b0_address(m0, lane, off)
                    if want < 1 << 20:
                        stats["exact"] += 1
                        if addr != want:
                            fail(f"{rec['function']}@{rec['vaddr']:#x}: wave{wave} M0={m0:#x} lane {lane}: "
                                 f"address {addr:#x}, B0 {want:#x}")
                            return
                    else:
                        # B0's sum carries past bit 19: undocumented on B0;
                        # the replacement must stay out of every LDS (>= 1 MiB).
                        stats["carry"] += 1
                        if addr != want or addr < 1 << 20:
                            fail(f"{rec['function']}@{rec['vaddr']:#x}: carry domain M0={m0:#x} lane {lane}: "
                                 f"address {addr:#x}")
                            return
                if sorted(access[1]) != [l for l in range(wave) if exec_mask >> l & 1]:
                    fail(f"{rec['function']}@{rec['vaddr']:#x}: lanes accessed differ from EXEC")
                    return
                for r, vals in after.items():
                    if r in written_ok:
                        continue
                    if r in init and vals != init[r]:
                        fail(f"{rec['function']}@{rec['vaddr']:#x}: v{r} is written")
                        return
                for r in written_ok:
                    if r in init:
                        for lane in range(wave):
                            if not exec_mask >> lane & 1 and after[r][lane] != init[r][lane]:
                                fail(f"{rec['function']}@{rec['vaddr']:#x}: v{r} written in inactive lane {lane}")
                                return


# ------------------------------------------------------------------ tensor model
def sgpr_range(tok):
    m = re.fullmatch(r"s\[(\d+):(\d+)\]", tok)
    if m:
        return list(range(int(m.group(1)), int(m.group(2)) + 1))
    m = re.fullmatch(r"s(\d+)", tok)
    if m:
        return [int(m.group(1))]
    raise ValueError(f"not an SGPR operand: {tok}")


def run_salu(text, s, scc):
    mn, ops, _ = operands(text)
    def val(tok):
        return s[sgpr_range(tok)[0]] if tok.startswith("s") else num(tok)
    if mn == "s_wait_tensorcnt":
        pass  # no register effect: the model tracks what it waits for
    elif mn == "s_mov_b32":
        s[sgpr_range(ops[0])[0]] = val(ops[1])
    elif mn == "s_movk_i32":
        k = num(ops[1]) & 0xFFFF
        s[sgpr_range(ops[0])[0]] = k | (0xFFFF0000 if k & 0x8000 else 0)
    elif mn == "s_and_b32":
        r = val(ops[1]) & val(ops[2])
        s[sgpr_range(ops[0])[0]] = r
        return int(r != 0)
    elif mn == "s_pack_hh_b32_b16":
        a = num(ops[1]) if not ops[1].startswith("s") else s[sgpr_range(ops[1])[0]]
        b = num(ops[2]) if not ops[2].startswith("s") else s[sgpr_range(ops[2])[0]]
        s[sgpr_range(ops[0])[0]] = (a >> 16) | (b & 0xFFFF0000)
    else:
        raise ValueError(f"unmodelled SALU instruction {text}")
    return scc  # none of the others writes SCC


def descriptor(text, s):
    _, ops, _ = operands(text)
    return [[s[r] for r in sgpr_range(o)] for o in ops]


def check_tensor(rec, orig_text, new_texts, rng, trials=200, report=None):
    fail = report or globals()["fail"]
    tensors = [t for t in new_texts if t.startswith("tensor_load_to_lds")]
    if tensors != [orig_text]:
        fail(f"{rec['function']}@{rec['vaddr']:#x}: the tensor instruction is not kept unchanged once ({tensors})")
        return
    _, ops, _ = operands(orig_text)
    mask_reg = sgpr_range(ops[1])[0]
    live = rec["kind"] == "tensor_live"
    scratch = rec.get("scratch")
    for _ in range(trials):
        s0 = [rng.getrandbits(32) for _ in range(106)]
        s0[mask_reg] |= rng.getrandbits(16) | 1  # a non-zero mask
        scc0 = rng.getrandbits(1)
        s, scc = list(s0), scc0
        # Nothing says when the tensor operation reads its descriptor SGPRs:
        # any time from its issue until `s_wait_tensorcnt 0` has passed (or
        # after the sequence, when no such wait follows it). Every state in
        # that window is one it may see.
        seen, in_flight = [], False
        for t in new_texts:
            if t.startswith("tensor_load_to_lds"):
                in_flight = True
                seen.append(descriptor(t, s))
                continue
            mn, ops, _ = operands(t)
            if mn == "s_wait_tensorcnt" and num(ops[0]) == 0:
                in_flight = False
            scc = run_salu(t, s, scc)
            if in_flight:
                seen.append(descriptor(orig_text, s))
        want = descriptor(orig_text, s0)
        want[1][0] &= 0xFFFF0000
        wrong = [d for d in seen if d != want]
        if not seen or wrong:
            fail(f"{rec['function']}@{rec['vaddr']:#x}: descriptor the load may read {wrong[:1]}, "
                 f"want {want}")
            return
        if scc != scc0:
            fail(f"{rec['function']}@{rec['vaddr']:#x}: SCC changed")
            return
        changed = {i for i in range(106) if s[i] != s0[i]}
        allowed = {scratch} if live else {mask_reg}
        if not changed <= allowed:
            fail(f"{rec['function']}@{rec['vaddr']:#x}: SGPRs {sorted(changed - allowed)} changed")
            return
        if live and s[mask_reg] != s0[mask_reg]:
            fail(f"{rec['function']}@{rec['vaddr']:#x}: the mask register is not restored")
            return
        if not live and s[mask_reg] != s0[mask_reg] & 0xFFFF0000:
            fail(f"{rec['function']}@{rec['vaddr']:#x}: the dead mask register is not the cleared value")
            return


def check_tensor_def(rec, orig_text, new_texts, tensor_text, rng, trials=200, report=None):
    """The definition-site form: the definition `orig_text` replaced by the
    one instruction `new_texts`; on random SGPR files and SCC, the descriptor
    the tensor load then reads is the one it read after the original
    definition with the mask (group 1 dword 0 bits [15:0]) zero and every
    other bit equal, every other SGPR equal, and SCC equal unless the driver
    reports it unread after the definition (s_and_b32 writes it from its
    result; that it is dead there is the liveness analysis' claim, which
    liveness.checker checks on its own objects, not here)."""
    fail = report or globals()["fail"]
    where = f"{rec['function']}@{rec['definition']:#x}"
    if len(new_texts) != 1:
        fail(f"{where}: the definition's replacement is not one instruction: {new_texts}")
        return
    _, ops, _ = operands(tensor_text)
    mask_reg = sgpr_range(ops[1])[0]
    for trial in range(trials):
        s0 = [rng.getrandbits(32) for _ in range(106)]
        if trial < 2:
            # A mask register whose high half is zero: an s_and_b32 kept
            # non-zero only by its low half sets SCC differently once changed.
            s0[mask_reg] = (0, 0xABCD)[trial]
        scc0 = rng.getrandbits(1)
        a, b = list(s0), list(s0)
        scc_a = run_salu(orig_text, a, scc0)
        scc_b = run_salu(new_texts[0], b, scc0)
        want = descriptor(tensor_text, a)
        want[1][0] &= 0xFFFF0000
        if descriptor(tensor_text, b) != want:
            fail(f"{where}: the load reads {descriptor(tensor_text, b)}, want {want}")
            return
        if any(a[i] != b[i] for i in range(106) if i != mask_reg):
            fail(f"{where}: another SGPR differs after the changed definition")
            return
        if scc_a != scc_b and rec["scc_live"]:
            fail(f"{where}: SCC differs and may be read after the definition")
            return


def tensor_model_selftest(rng):
    """The tensor model must reject a restore before `s_wait_tensorcnt 0`
    (the load may still read the restored mask) and a wait that is not for
    zero, and accept the emitter's form: else it could not catch the bug it
    is there for."""
    orig = "tensor_load_to_lds s[0:3], s[4:11]"
    save, clear, restore = "s_mov_b32 s102, s4", "s_pack_hh_b32_b16 s4, 0, s4", "s_mov_b32 s4, s102"
    rec = {"function": "model-selftest", "vaddr": 0, "kind": "tensor_live", "scratch": 102}
    cases = [([save, clear, orig, "s_wait_tensorcnt 0x0", restore], True),
             ([save, clear, orig, restore], False),
             ([save, clear, orig, restore, "s_wait_tensorcnt 0x0"], False),
             ([save, clear, orig, "s_wait_tensorcnt 0x1", restore], False)]
    for texts, sound in cases:
        caught = []
        check_tensor(rec, orig, texts, rng, trials=8, report=caught.append)
        if bool(caught) == sound:
            fail(f"tensor model self-test: {texts} {'rejected' if sound else 'accepted'} "
                 f"({caught[:1]})")
    # The definition-site form: the low half zeroed (sound), the high half
    # changed too, another register's value, SCC flipped where it is read.
    drec = {"function": "model-selftest", "definition": 0, "scc_live": True}
    mov = "s_mov_b32 s4, 0x12345678"
    for new, scc_live, sound in [("s_mov_b32 s4, 0x12340000", True, True),
                                 ("s_mov_b32 s4, 0", True, False),
                                 ("s_mov_b32 s4, s5", True, False),
                                 ("s_and_b32 s4, s4, 0xffff0000", False, True),
                                 ("s_and_b32 s4, s4, 0xffff0000", True, False)]:
        caught = []
        check_tensor_def(dict(drec, scc_live=scc_live), mov if "mov" in new else
                         "s_and_b32 s4, s4, 0xffffffff", [new], orig, rng, trials=8,
                         report=caught.append)
        if bool(caught) == sound:
            fail(f"tensor definition model self-test: {new} (scc_live {scc_live}) "
                 f"{'rejected' if sound else 'accepted'} ({caught[:1]})")


# -------------------------------------------------------- flat scratch base model
def check_fsb(rec, orig_text, new_texts, rng, trials=100):
    if len(new_texts) != 2:
        fail(f"{rec['function']}@{rec['vaddr']:#x}: expected s_mov_b64 and one vector instruction: {new_texts}")
        return
    mn0, ops0, _ = operands(new_texts[0])
    if mn0 != "s_mov_b64" or ops0[1] != "src_flat_scratch_base_lo":
        fail(f"{rec['function']}@{rec['vaddr']:#x}: first instruction {new_texts[0]}")
        return
    pair = sgpr_range(ops0[0])
    if pair != [rec["scratch"], rec["scratch"] + 1]:
        fail(f"{rec['function']}@{rec['vaddr']:#x}: s_mov_b64 writes {ops0[0]}, not the scratch pair")
        return
    omn, oops, omods = operands(orig_text)
    nmn, nops, nmods = operands(new_texts[1])
    pair_tok = f"s[{pair[0]}:{pair[1]}]"
    expect = [pair_tok if o in FSB else o for o in oops]
    if (omn, omods) != (nmn, nmods) or nops != expect:
        fail(f"{rec['function']}@{rec['vaddr']:#x}: '{new_texts[1]}' is not '{orig_text}' reading {pair_tok}")
        return
    # Evaluate the two forms lane by lane: the base on B0 (any selector in a
    # 64-bit source) against the pair after s_mov_b64 (A0's accepted form).
    for _ in range(trials):
        base = rng.getrandbits(64)
        sg = {i: rng.getrandbits(32) for i in range(106)}
        sg[pair[0]], sg[pair[1]] = base & 0xFFFFFFFF, base >> 32
        vg = {}

        def val64(tok, with_base):
            if tok in FSB:
                return base
            if tok.startswith("v["):
                r = sgpr_range("s" + tok[1:])
                return vg.setdefault(r[0], rng.getrandbits(32)) | vg.setdefault(r[1], rng.getrandbits(32)) << 32
            if tok.startswith("s["):
                r = sgpr_range(tok)
                return sg[r[0]] | sg[r[1]] << 32
            return num(tok)

        def evaluate(mn, ops):
            core = re.sub(r"_e(32|64)$", "", mn)
            vals = [val64(o, True) for o in ops[1:]]
            if core == "v_add_nc_u64":
                return (vals[0] + vals[1]) & (2**64 - 1)
            if core == "v_mov_b64":
                return vals[0]
            raise ValueError(f"unmodelled vector instruction {mn}")

        try:
            a, b = evaluate(omn, oops), evaluate(nmn, nops)
        except ValueError as e:
            fail(f"{rec['function']}@{rec['vaddr']:#x}: {e}")
            return
        if a != b:
            fail(f"{rec['function']}@{rec['vaddr']:#x}: original {a:#x}, replacement {b:#x}")
            return


# --------------------------------------------------------------------------- main
EXPECTED_REFUSALS = {
    # (function, original mnemonic prefix): refusal text fragment
    ("f_addtid", "VGPR-MSB"),
    ("f_fsb", "scratch SGPR pair"),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--emit", required=True)
    ap.add_argument("--mc", required=True)
    ap.add_argument("--objdump", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--m0", type=int, default=48, help="random M0 values besides the fixed edges")
    ap.add_argument("corpus")
    args = ap.parse_args()
    for tool in (args.emit, args.mc, args.objdump):
        if not os.path.exists(tool) and not shutil_which(tool):
            print(f"FAIL: {tool} not found")
            return 1
    os.makedirs(args.work, exist_ok=True)
    objects = sorted(glob.glob(os.path.join(args.corpus, "*.co")))
    if not objects:
        print("FAIL: empty corpus")
        return 1
    rng = random.Random(31)

    out = run([args.emit] + objects)
    records, counts = [], {}
    for line in out.splitlines():
        r = json.loads(line)
        if "object" in r:
            counts[r["object"]] = r
        else:
            records.append(r)

    # 1. Sites against llvm-objdump-22 and the analysis.
    texts = {}
    for path in objects:
        funcs = disassemble(args.objdump, path)
        for insns in funcs.values():
            for a, t, _ in insns:
                texts[(path, a)] = t
        want = {}
        for name, insns in funcs.items():
            for a, t, _ in insns:
                k = a is not None and kind_of(t)
                if k:
                    want.setdefault(k, set()).add((name, a))
        got = {}
        for r in records:
            if r["site"] == path:
                k = "tensor" if r["kind"] in ("tensor_live", "tensor_delay", "tensor_def") else r["kind"]
                got.setdefault(k, set()).add((r["function"], r["vaddr"]))
        if got != want:
            fail(f"{path}: driver sites {sorted((k, len(v)) for k, v in got.items())}, "
                 f"llvm-objdump-22 {sorted((k, len(v)) for k, v in want.items())}")
        c = counts.get(path, {})
        analysis = {"addtid": c.get("ds_addtid"), "tensor": c.get("tensor_lds"),
                    "fsb": c.get("fsb_vector"), "fp8_clamp": c.get("fp8_clamp")}
        for k, n in analysis.items():
            if n != len(want.get(k, ())):
                fail(f"{path}: analysis counts {n} {k} sites, llvm-objdump-22 {len(want.get(k, ()))}")
        print(f"{os.path.basename(path)}: " + ", ".join(f"{k} {len(v)}" for k, v in sorted(want.items())))

    # 2. Decode originals and replacements (one symbol each), re-encode.
    unique = {}
    for r in records:
        unique.setdefault((r["original"], r.get("replacement"), r["kind"]), r)
    asm = ['.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"', ".text"]
    blobs = {}
    for i, (key, r) in enumerate(unique.items()):
        pairs = [(f"o{i}", bytes.fromhex(r["original"]))]
        if r.get("replacement") is not None:
            pairs.append((f"n{i}", bytes.fromhex(r["replacement"])))
        for name, data in pairs:
            blobs[name] = data
            asm += [f".globl {name}", f".type {name},@function", f"{name}:",
                    ".byte " + ",".join(str(b) for b in data), f".size {name}, .-{name}"]
    src = os.path.join(args.work, "sites.s")
    obj = os.path.join(args.work, "sites.o")
    with open(src, "w") as f:
        f.write("\n".join(asm) + "\n")
    run([args.mc, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1250", "-filetype=obj", "-o", obj, src])
    dec = disassemble(args.objdump, obj)
    for name, data in blobs.items():
        insns = dec.get(name, [])
        bad = [t for a, t, _ in insns if a is None or t.startswith(".long") or "unknown" in t or "illegal" in t]
        got = b"".join(raw for _, _, raw in insns)
        if bad or got != data:
            fail(f"{name}: llvm-objdump-22 does not decode every byte ({bad[:1]}, {len(got)}/{len(data)} bytes)")
    emitted = [(t, raw) for name in blobs if name.startswith("n") for _, t, raw in dec.get(name, [])]
    enc = run([args.mc, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1250", "-show-encoding"],
              input="\n".join(t for t, _ in emitted) + "\n")
    encs = [bytes(int(x, 16) for x in m.group(1).split(","))
            for m in re.finditer(r"encoding: \[([^\]]*)\]", enc)]
    if len(encs) != len(emitted):
        fail(f"llvm-mc-22 encoded {len(encs)} of {len(emitted)} emitted instructions")
    for (t, raw), e in zip(emitted, encs):
        if raw != e:
            fail(f"llvm-mc-22 encodes '{t}' as {e.hex()}, the emitter wrote {raw.hex()}")
    print(f"decode/encode: {len(blobs)} byte sequences, {len(emitted)} emitted instructions")

    # 3.-6. Models and refusals.
    tensor_model_selftest(rng)
    m0s = [0, 4, 0xFFFC, 0xFFFF, 0x10000, 0x12340, 0x1FFF0, 0x4FFFC, 0x7FFFF,
           0xFFF00, 0xFFF03, 0xFFF04, 0xFFFFF, 0xFFF12345, 0x80010000, 0xFFFFFFFF]
    m0s += [rng.getrandbits(32) for _ in range(args.m0)]
    stats = {"exact": 0, "carry": 0}
    done = {"addtid": 0, "tensor": 0, "tensor_live": 0, "tensor_delay": 0, "tensor_def": 0, "fsb": 0,
            "fp8_clamp": 0}
    refused = []
    for i, (key, r) in enumerate(unique.items()):
        orig = [t for _, t, _ in dec.get(f"o{i}", [])]
        if r["kind"] == "tensor_delay":
            # The s_delay_alu slot: a hint with no effect on state.
            if len(orig) != 2 or not orig[0].startswith("s_delay_alu"):
                fail(f"o{i}: not s_delay_alu + tensor_load_to_lds: {orig}")
                continue
            orig = orig[1:]
        if len(orig) != 1:
            fail(f"o{i}: the original is not one instruction: {orig}")
            continue
        if r.get("replacement") is None:
            refused.append((r["function"], r["kind"], r["refusal"]))
            continue
        new = [t for _, t, _ in dec.get(f"n{i}", [])]
        k = r["kind"]
        if k == "addtid":
            check_addtid(r, orig[0], new, m0s, rng, stats)
        elif k in ("tensor", "tensor_live", "tensor_delay"):
            check_tensor(r, orig[0], new, rng)
        elif k == "tensor_def":
            check_tensor_def(r, orig[0], new, texts.get((r["site"], r["vaddr"]), ""), rng)
        elif k == "fsb":
            check_fsb(r, orig[0], new, rng)
        elif k == "fp8_clamp":
            fail(f"{r['function']}@{r['vaddr']:#x}: an FP8 CLAMP conversion was expanded")
        done[k] += 1
    for fn, k, why in refused:
        if k == "fp8_clamp":
            if "semantics" not in why:
                fail(f"{fn}: FP8 CLAMP refused for another reason: {why}")
            continue
        if not any(fn == f and frag in why for f, frag in EXPECTED_REFUSALS):
            fail(f"{fn}: unexpected refusal of a {k} site: {why}")
    if not done["tensor_def"]:
        fail("no tensor load's mask definition was changed in place (classes.cl tdm_def)")
    for f, frag in EXPECTED_REFUSALS:
        if not any(fn == f and frag in why for fn, _, why in refused):
            fail(f"{f}: the expected refusal '{frag}' did not happen")
    print(f"models: {done}; addtid lane addresses {stats['exact']} exact, "
          f"{stats['carry']} in the 20-bit carry domain; {len(refused)} refusals")
    for fn, k, why in sorted(set(refused)):
        print(f"  refused {k} in {fn}: {why}")
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("PASS")
    return 0


def shutil_which(tool):
    import shutil
    return shutil.which(tool)


if __name__ == "__main__":
    sys.exit(main())
