"""The growth oracle's comparison of one input code object and its rewrite.

Independent of the rewriter: it reads both files with its own ELF reader,
both listings from llvm-objdump-22, the expected DS2 replacement bytes from
llvm-mc-22 (assembled from the rules in ds2.py), and takes from the rewriter
only the claim "function F now starts at X" (from the kernel descriptors of
the output and the report's list of moved functions), which it then checks.
"""
import bisect
import re
import struct

import ds2
import elf64

NOP0 = bytes.fromhex("000080bf")
BRANCH_PREFIXES = ("s_branch", "s_cbranch_")
PC_USE = ("s_get_pc_i64", "s_getpc_b64")
# Instructions after which nothing falls through: the only places a branch
# island may be inserted.
NO_FALLTHROUGH = ("s_branch", "s_endpgm", "s_endpgm_saved", "s_setpc_b64", "s_set_pc_i64")


def simm16(raw):
    return int.from_bytes(raw[0:2], "little", signed=True)


def branch_target(insn):
    return insn.addr + 4 + 4 * simm16(insn.raw)


def sreg(text):
    """First scalar register number in an operand text (`s60`, `s[60:61]`)."""
    t = text.strip().lstrip("s[").split(":")[0].split("]")[0]
    return int(t)


def pc_literal(insns, i):
    """For `s_get_pc_i64 s[n:n+1]` at insns[i]: (number of instructions of the
    add, the 64-bit literal added, its byte positions [(insn index, start,
    length)]) when followed by a recognised literal add to the same pair,
    else None."""
    get = insns[i]
    n = sreg(get.text.split(None, 1)[1])
    nxt = insns[i + 1] if i + 1 < len(insns) else None
    if nxt is None:
        return None
    ops = [o.strip() for o in nxt.text.split(None, 1)[1].split(",")] if " " in nxt.text else []
    if nxt.mnemonic == "s_add_nc_u64" and len(nxt.raw) == 12 and ops[:2] == [f"s[{n}:{n + 1}]"] * 2:
        return 1, struct.unpack_from("<Q", nxt.raw, 4)[0], [(i + 1, 4, 8)]
    nn = insns[i + 2] if i + 2 < len(insns) else None
    if (nxt.mnemonic == "s_add_co_u32" and len(nxt.raw) == 8 and ops[:2] == [f"s{n}"] * 2 and nn is not None
            and nn.mnemonic == "s_add_co_ci_u32" and len(nn.raw) == 8 and
            [o.strip() for o in nn.text.split(None, 1)[1].split(",")][:2] == [f"s{n + 1}"] * 2):
        lo = struct.unpack_from("<I", nxt.raw, 4)[0]
        hi = struct.unpack_from("<I", nn.raw, 4)[0]
        return 2, lo | hi << 32, [(i + 1, 4, 4), (i + 2, 4, 4)]
    return None


class Result:
    def __init__(self):
        self.failures = []
        self.sites = []          # (old DS2 text, [emitted texts]) for the model
        self.far_gateways = []   # (old entry, register pair as printed) of each far-jump gateway
        self.stats = dict(moved_functions=0, moved_instructions=0, ds2_replaced=0, clauses_nopped=0,
                          clauses_kept=0, branches_retargeted=0, pc_pairs_retargeted=0,
                          literal_edits_in_place=0, kd_entries_redirected=0, banked_sites=0,
                          branch_islands=0, branches_via_islands=0, grown_replaced=0,
                          same_size_in_moved=0, gateways_branch=0, gateways_far=0, definitions_in_place=0,
                          relocations_reaimed=0)

    def fail(self, msg):
        self.failures.append(msg)


def emitted_modes(out_listing, out_keys, lo, hi):
    """The VGPR-MSB modes (low byte) set by s_set_vgpr_msb in [lo, hi)."""
    return [out_listing[a].raw[0] for a in out_keys[bisect.bisect_left(out_keys, lo):bisect.bisect_left(out_keys, hi)]
            if out_listing[a].mnemonic == "s_set_vgpr_msb"]


def functions(elf):
    out = []
    for s in elf.symbols():
        if s["type"] == elf64.STT_FUNC and s["size"] and 0 < s["shndx"] < len(elf.sections) and \
                elf.sections[s["shndx"]]["flags"] & elf64.SHF_EXECINSTR:
            out.append(s)
    return out


def compare(in_data, out_data, in_listing, out_listing, expected_bytes, moved_claims, res, island_claims=(),
            site_claims=None, counts_raised=False, definition_claims=None):
    """Checks the output against the input. `expected_bytes`: {assembly line:
    bytes} from llvm-mc-22 for every line ds2.split produces; `moved_claims`:
    {old function start: new start} claimed by the report (may be empty);
    `island_claims`: the addresses the report says hold branch islands. Each
    claimed island must be an `s_branch` placed right after an instruction
    with nothing falling through (so no path reaches it but a branch), and a
    branch aimed at one must reach the image of its original target through
    it (one hop).

    `site_claims`: {original address: (new address, length, fix)} of the
    report's sites other than the DS2 splits (a same-size fix, or another
    class's emitter, issue 30/31). A same-size fix may change the bytes of
    its instruction (same length), wherever it is executed; another emitter's
    replacement must start at the image of its site and be straight-line,
    whole instructions (no branch, no PC use, no end of program) leaving the
    VGPR-MSB mode as found, ending exactly at the claimed length; what it
    computes is proved by tests/wmma and tests/a0classes (the emitters
    against exact models), not here. `counts_raised`: the report raised
    register counts, so each descriptor's COMPUTE_PGM_RSRC1 may change.
    `definition_claims`: {definition address: site address} of tensor loads
    fixed at their mask's definition: the definition (in code that did not
    move) may change only into the same instruction with its constant's low
    16 bits zero (`definition_edit_ok`); the load keeps its bytes."""
    site_claims = dict(site_claims or {})
    definition_claims = dict(definition_claims or {})
    island_claims = set(island_claims)
    island_target = {}   # island address -> where its s_branch goes
    ie, oe = elf64.Elf(in_data), elf64.Elf(out_data)
    for p in elf64.structure(oe):
        res.fail(f"structure: {p}")
    if ie.e_flags != oe.e_flags or ie.abi_version != oe.abi_version or ie.e_machine != oe.e_machine:
        res.fail("e_flags, ABI version or machine changed")
    funcs = {f["value"]: f for f in functions(ie)}
    # What moved: every kernel whose descriptor entry changed, and the claims.
    moved = dict(moved_claims)
    ikd, okd = ie.kernel_descriptors(), oe.kernel_descriptors()
    if set(ikd) != set(okd):
        res.fail(f"kernel descriptors differ: {sorted(set(ikd) ^ set(okd))[:5]}")
    for k, (kva, _, entry) in ikd.items():
        if k in okd and okd[k][2] != entry:
            if moved.get(entry, okd[k][2]) != okd[k][2]:
                res.fail(f"kernel {k}: descriptor entry {okd[k][2]:#x}, report says {moved[entry]:#x}")
            moved[entry] = okd[k][2]
    for old in list(moved):
        if old not in funcs:
            res.fail(f"moved code at {old:#x} is not a function start of the input")
            del moved[old]
    old_sorted = sorted(in_listing)
    import bisect

    def insns_in(listing_keys, listing, lo, hi):
        a, b = bisect.bisect_left(listing_keys, lo), bisect.bisect_left(listing_keys, hi)
        return [listing[k] for k in listing_keys[a:b]]

    amap = {}            # old instruction address -> new address (moved functions)
    ranges = []          # (lo, hi) of moved functions in the input
    deferred = []        # (what, old target, new target)
    out_keys = sorted(out_listing)
    for old, new in sorted(moved.items()):
        f = funcs[old]
        lo, hi = f["value"], f["value"] + f["size"]
        ranges.append((lo, hi))
        res.stats["moved_functions"] += 1
        insns = insns_in(old_sorted, in_listing, lo, hi)
        p = new
        pending_pc = {}  # index of the add instruction -> (pc_old, pc_new, literal positions...)
        i = 0
        ds2_at = {k for k, x in enumerate(insns) if ds2.is_ds2(x.mnemonic)}
        mode = 0  # VGPR-MSB mode in force (0 at a function's entry)

        def islands_at(p, i):
            """Skips the claimed islands at p (after insns[i - 1]); the new p,
            or None on a failure."""
            while p in island_claims:
                g = out_listing.get(p)
                prev = insns[i - 1] if i > 0 else None
                if g is None or g.mnemonic != "s_branch" or len(g.raw) != 4:
                    res.fail(f"{f['name']}: the island at {p:#x} is `{g.text if g else None}`, not an s_branch")
                    return None
                if prev is None or prev.mnemonic not in NO_FALLTHROUGH:
                    res.fail(f"{f['name']}: the island at {p:#x} follows "
                             f"`{prev.text if prev else 'the entry'}`, which falls through into it")
                    return None
                island_target[p] = branch_target(g)
                res.stats["branch_islands"] += 1
                p += 4
            return p

        while i < len(insns):
            p = islands_at(p, i)
            if p is None:
                break
            ins = insns[i]
            amap[ins.addr] = p
            got = out_listing.get(p)
            if got is None:
                res.fail(f"{f['name']}: no instruction decoded at {p:#x} (image of {ins.addr:#x})")
                break
            res.stats["moved_instructions"] += 1
            claim = site_claims.get(ins.addr)
            if claim is not None and claim[2] == "same-size":
                if claim[0] != p or len(got.raw) != len(ins.raw):
                    res.fail(f"{f['name']}: same-size site {ins.addr:#x} claimed at {claim[0]:#x}, "
                             f"its image is {p:#x} (`{got.text}`)")
                    break
                res.stats["same_size_in_moved"] += 1
                p = got.end
                i += 1
                continue
            if claim is not None and not claim[2].startswith("ds2-"):
                new_at, length, fix = claim
                if new_at != p:
                    res.fail(f"{f['name']}: {fix} site {ins.addr:#x} claimed at {new_at:#x}, its image is {p:#x}")
                    break
                q, bad = p, None
                while q < p + length:
                    g = out_listing.get(q)
                    if g is None:
                        bad = f"no instruction decoded at {q:#x}"
                        break
                    if g.mnemonic.startswith(BRANCH_PREFIXES) or g.mnemonic in PC_USE \
                            or g.mnemonic in NO_FALLTHROUGH or g.mnemonic.startswith(("s_swap_pc", "s_call")):
                        bad = f"`{g.text}` at {q:#x} is not straight-line"
                        break
                    q = g.end
                if bad is None and q != p + length:
                    bad = f"the instructions end at {q:#x}, not at {p + length:#x}"
                modes = emitted_modes(out_listing, out_keys, p, q) if bad is None else []
                if bad is None and modes and modes[-1] != mode:
                    bad = f"VGPR-MSB mode {modes[-1]:#x} after it, {mode:#x} before"
                if bad:
                    res.fail(f"{f['name']}: {fix} of {ins.addr:#x} `{ins.text}`: {bad}")
                    break
                res.stats["grown_replaced"] += 1
                p = q
                i += 1
                continue
            if ds2.is_ds2(ins.mnemonic):
                try:
                    lines = ds2.split(ins.text)
                except ds2.NoSplit as e:
                    res.fail(f"{f['name']}: {ins.addr:#x} `{ins.text}` has no split ({e}) but was rewritten")
                    break
                if ds2.banked(ins.text):
                    # Bank brackets are the rewriter's choice: the model checks them.
                    seq, q = [], p
                    while out_listing.get(q) is not None and len(seq) < 12:
                        g = out_listing[q]
                        seq.append(g.text)
                        q = g.end
                        if g.mnemonic == "s_wait_dscnt":
                            # Brackets after the wait: until the mode in force
                            # before the site is back (a rewrite must restore
                            # it), and any that is not the next original one.
                            eff = ([x for x in emitted_modes(out_listing, out_keys, p, q)] or [mode])[-1]
                            nxt = insns[i + 1] if i + 1 < len(insns) else None
                            while out_listing.get(q) is not None and out_listing[q].mnemonic == "s_set_vgpr_msb" \
                                    and (eff != mode or nxt is None or out_listing[q].raw != nxt.raw):
                                seq.append(out_listing[q].text)
                                eff = out_listing[q].raw[0]
                                q = out_listing[q].end
                            break
                    modes = emitted_modes(out_listing, out_keys, p, q)
                    if modes and modes[-1] != mode:
                        res.fail(f"{f['name']}: DS2 {ins.addr:#x}: VGPR-MSB mode {modes[-1]:#x} after the "
                                 f"sequence, {mode:#x} in force before it")
                    res.sites.append((ins.text, seq, f"{f['name']}@{ins.addr:#x}"))
                    res.stats["banked_sites"] += 1
                    p = q
                else:
                    want = b"".join(expected_bytes.get(line) or b"?" for line in lines)
                    seq, q = [], p
                    while q < p + len(want) and out_listing.get(q) is not None:
                        seq.append(out_listing[q])
                        q = out_listing[q].end
                    have = b"".join(x.raw for x in seq)
                    if have != want:
                        res.fail(f"{f['name']}: DS2 {ins.addr:#x} `{ins.text}` -> at {p:#x} "
                                 f"{[x.text for x in seq]}, expected {lines}")
                        break
                    res.sites.append((ins.text, [x.text for x in seq], f"{f['name']}@{ins.addr:#x}"))
                    p = q
                res.stats["ds2_replaced"] += 1
                i += 1
                continue
            if ins.mnemonic == "s_clause":
                window = range(i + 1, i + 2 + (ins.raw[0] & 0x3F))
                if got.raw == NOP0:
                    res.stats["clauses_nopped"] += 1
                elif got.raw == ins.raw:
                    res.stats["clauses_kept"] += 1
                    if any(k in ds2_at for k in window):
                        res.fail(f"{f['name']}: s_clause at {ins.addr:#x} kept over an expanded DS2")
                else:
                    res.fail(f"{f['name']}: s_clause at {ins.addr:#x} became `{got.text}`")
                p += 4
                i += 1
                continue
            if ins.mnemonic.startswith(BRANCH_PREFIXES):
                if got.mnemonic != ins.mnemonic or len(got.raw) != 4 or got.raw[2:] != ins.raw[2:]:
                    res.fail(f"{f['name']}: branch {ins.addr:#x} `{ins.text}` became `{got.text}`")
                else:
                    deferred.append((f"{f['name']}: {ins.mnemonic} at {ins.addr:#x}", branch_target(ins),
                                     p + 4 + 4 * simm16(got.raw), got.raw != ins.raw))
                p += 4
                i += 1
                continue
            if ins.mnemonic in PC_USE:
                lit = pc_literal(insns, i)
                if lit is None:
                    res.fail(f"{f['name']}: PC use at {ins.addr:#x} the oracle does not recognise")
                    break
                count, value, fields = lit
                if got.raw != ins.raw:
                    res.fail(f"{f['name']}: `{ins.text}` became `{got.text}`")
                    break
                seq, q = [got], got.end
                for k in range(count):
                    g = out_listing.get(q)
                    o = insns[i + 1 + k]
                    amap[o.addr] = q
                    if g is None or len(g.raw) != len(o.raw) or g.mnemonic != o.mnemonic:
                        res.fail(f"{f['name']}: PC pair at {ins.addr:#x} not kept in shape at {q:#x}")
                        break
                    seq.append(g)
                    q = g.end
                else:
                    new_value = 0
                    for (k, start, length), g in zip(fields, seq[1:]):
                        new_value |= int.from_bytes(g.raw[start:start + length], "little") << (
                            0 if length == 8 or k == fields[0][0] else 32)
                        o = insns[k]
                        # Only the literal may differ.
                        if g.raw[:start] != o.raw[:start]:
                            res.fail(f"{f['name']}: PC pair at {ins.addr:#x}: more than the literal changed")
                    old_t = (ins.addr + 4 + value) & (2**64 - 1)
                    new_t = (p + 4 + new_value) & (2**64 - 1)
                    deferred.append((f"{f['name']}: PC pair at {ins.addr:#x}", old_t, new_t, True))
                    res.stats["pc_pairs_retargeted"] += 1
                p = q
                i += 1 + count
                continue
            if got.raw != ins.raw:
                res.fail(f"{f['name']}: {ins.addr:#x} `{ins.text}` became `{got.text}` at {p:#x}")
                break
            if ins.mnemonic == "s_set_vgpr_msb":
                mode = ins.raw[0]
            p = got.end
            i += 1
        else:
            p = islands_at(p, i)
        amap[hi] = p

    def in_moved(t):
        return any(lo <= t < hi for lo, hi in ranges)

    def image(t):
        if in_moved(t):
            return amap.get(t)
        return t

    for what, old_t, new_t, changed in deferred:
        want = image(old_t)
        if new_t in island_target and new_t != want:
            new_t = island_target[new_t]
            res.stats["branches_via_islands"] += 1
        if want is None:
            res.fail(f"{what}: target {old_t:#x} is inside moved code but not an instruction start")
        elif new_t != want:
            res.fail(f"{what}: target {new_t:#x}, expected {want:#x} (image of {old_t:#x})")
        elif changed:
            res.stats["branches_retargeted"] += 1

    # Every DS2 of the input lies in moved code (nothing left to fix).
    for a, x in in_listing.items():
        if ds2.is_ds2(x.mnemonic) and not in_moved(a):
            res.fail(f"DS2 at {a:#x} `{x.text}` was not moved")
            break

    # Kernel descriptors: each entry is the image of the original entry.
    allowed = set()
    for k, (kva, koff, entry) in ikd.items():
        if k not in okd:
            continue
        if okd[k][1] != koff:
            res.fail(f"kernel {k}: descriptor moved")
        if okd[k][2] != image(entry):
            res.fail(f"kernel {k}: entry {okd[k][2]:#x}, expected {image(entry)}")
        elif okd[k][2] != entry:
            res.stats["kd_entries_redirected"] += 1
        allowed.update(range(koff + 16, koff + 24))
        if counts_raised:
            allowed.update(range(koff + 48, koff + 52))

    # Gateways: a walk entering the old entry of any moved function reaches
    # its image, in one s_branch or one PC-relative far jump (s_get_pc_i64,
    # s_add_nc_u64 with a 64-bit literal, s_set_pc_i64 on one pair); the
    # gateway overwrites whole input instructions, the rest of the last one
    # s_nop 0. Those bytes are the only edits of an old copy besides the
    # literal edits below.
    for lo, hi in ranges:
        want, g = amap.get(lo), out_listing.get(lo)
        name = funcs[lo]["name"]
        end = None
        if g is not None and g.mnemonic == "s_branch" and len(g.raw) == 4:
            if branch_target(g) == want:
                end = g.end
                res.stats["gateways_branch"] += 1
        elif g is not None and g.mnemonic in PC_USE:
            a, st = out_listing.get(g.end), None
            if a is not None:
                st = out_listing.get(a.end)
            pair = g.text.split(None, 1)[1].strip() if " " in g.text else None
            ops = [o.strip() for o in a.text.split(None, 1)[1].split(",")] if a is not None and " " in a.text else []
            if (pair and a.mnemonic == "s_add_nc_u64" and len(a.raw) == 12 and ops[:2] == [pair] * 2
                    and st is not None and st.mnemonic == "s_set_pc_i64" and st.text.split(None, 1)[1].strip() == pair
                    and (g.addr + 4 + struct.unpack_from("<Q", a.raw, 4)[0]) & (2**64 - 1) == want):
                end = st.end
                res.stats["gateways_far"] += 1
                res.far_gateways.append((lo, pair))
        if end is None or end > hi:
            res.fail(f"{name}: its old entry {lo:#x} is not a gateway to its image "
                     f"{'(unknown)' if want is None else hex(want)}")
            continue
        # Up to the end of the input instruction the gateway ends in: s_nop 0.
        k = bisect.bisect_left(old_sorted, end)
        cover = end if k < len(old_sorted) and old_sorted[k] == end else in_listing[old_sorted[k - 1]].end
        p = end
        while p < cover:
            x = out_listing.get(p)
            if x is None or x.raw != NOP0:
                res.fail(f"{name}: the gateway at {lo:#x} is followed by {x.text if x else 'nothing'} "
                         f"at {p:#x}, not s_nop 0 up to the next input instruction at {cover:#x}")
                break
            p = x.end
        off = ie.vaddr_to_offset(lo, cover - lo)
        if off is not None:
            allowed.update(range(off, off + cover - lo))

    # Dynamic relocations (RELA): one whose target S + A lies in a moved
    # function must now compute the image of that target (its addend the
    # only edit); every other one is unchanged (checked with the bytes).
    dynsym = ie.symbols(elf64.SHT_DYNSYM)
    for sec in ie.sections:
        if sec["type"] != 4:
            continue
        for k in range(sec["size"] // 24):
            at = sec["offset"] + 24 * k
            r_off, info, a_in = struct.unpack_from("<QQQ", in_data, at)
            a_out = struct.unpack_from("<Q", out_data, at + 16)[0]
            sym = info >> 32
            sval = dynsym[sym]["value"] if sym < len(dynsym) else 0
            old_t = (sval + a_in) & (2**64 - 1)
            if not in_moved(old_t):
                continue
            want = image(old_t)
            if info & 0xFFFFFFFF not in (3, 13) or want is None or (sval + a_out) & (2**64 - 1) != want:
                res.fail(f"relocation at {r_off:#x} (type {info & 0xFFFFFFFF}) into moved code at {old_t:#x}: "
                         f"computes {(sval + a_out) & (2**64 - 1):#x}, expected the image {want}")
                continue
            res.stats["relocations_reaimed"] += 1
            allowed.update(range(at + 16, at + 24))

    # Bytes of the input range: identical outside the allowed edits.
    allowed.update(range(32, 48))      # e_phoff, e_shoff
    allowed.update(range(56, 64))      # e_phnum, e_shentsize, e_shnum, e_shstrndx
    allowed.update(range(ie.e_phoff, ie.e_phoff + ie.e_phnum * ie.e_phentsize))
    allowed.update(range(ie.e_shoff, ie.e_shoff + ie.e_shnum * ie.e_shentsize))
    note = ie.section(".note")
    text_secs = ie.exec_sections()

    def text_edit_ok(off):
        """A byte of old code that may differ: part of an s_clause that became
        s_nop 0, or of the literal of a PC pair whose new value is the
        image of its target (checked here)."""
        for s in text_secs:
            if s["offset"] <= off < s["offset"] + s["size"]:
                va = s["addr"] + off - s["offset"]
                k = bisect.bisect_right(old_sorted, va) - 1
                if k < 0:
                    return False
                x = in_listing[old_sorted[k]]
                o = out_data[s["offset"] + x.addr - s["addr"]:s["offset"] + x.end - s["addr"]]
                if x.mnemonic == "s_clause" and o == NOP0:
                    return True
                c = site_claims.get(x.addr)
                if c is not None and c[2] == "same-size" and c[0] == x.addr and len(o) == len(x.raw):
                    return True
                if x.addr in definition_claims:
                    return definition_edit_ok(x, definition_claims[x.addr])
                return literal_edit_ok(x, k, s)
        return False

    checked_pairs = {}
    checked_definitions = {}

    def definition_edit_ok(x, site):
        """The definition `x` of a tensor load's mask, changed in place: in
        llvm-objdump-22's text of both, the same s_mov_b32 / s_movk_i32 /
        s_and_b32 of the same destination, one constant changed to the old
        one with bits [15:0] zero (s_movk_i32: 0, from a value below 0x8000);
        the load at `site` unchanged, its second descriptor operand starting
        at that destination."""
        if x.addr in checked_definitions:
            return checked_definitions[x.addr]
        ok = False
        y, load, load_out = out_listing.get(x.addr), in_listing.get(site), out_listing.get(site)
        if y is not None and load is not None and load_out is not None and \
                load.raw == load_out.raw and load.mnemonic == "tensor_load_to_lds" and \
                x.mnemonic in ("s_mov_b32", "s_movk_i32", "s_and_b32") and y.mnemonic == x.mnemonic \
                and len(y.raw) == len(x.raw):
            a = [t.strip() for t in x.text[len(x.mnemonic):].split(",")]
            b = [t.strip() for t in y.text[len(y.mnemonic):].split(",")]
            desc = [t.strip() for t in load.text[len(load.mnemonic):].split(",")]
            m = re.match(r"s\[(\d+):\d+\]$", desc[1]) if len(desc) > 1 else None
            changed = [i for i in range(1, len(a)) if len(a) == len(b) and a[i] != b[i]]
            if m and a[0] == b[0] == f"s{m.group(1)}" and len(changed) == 1:
                try:
                    old, new = int(a[changed[0]], 0), int(b[changed[0]], 0)
                    want = (0 if 0 <= old < 0x8000 else None) if x.mnemonic == "s_movk_i32" \
                        else old & 0xFFFF0000
                    ok = new == want
                except ValueError:
                    ok = False
        if ok:
            res.stats["definitions_in_place"] += 1
        else:
            res.fail(f"tensor mask definition {x.addr:#x} `{x.text}` -> "
                     f"`{y.text if y else None}` is not its in-place clear for the load at {site:#x}")
        checked_definitions[x.addr] = ok
        return ok

    def literal_edit_ok(x, k, s):
        # x is a literal add following a get_pc in code that did not move.
        for back in (1, 2):
            if k - back < 0:
                return False
            g = in_listing[old_sorted[k - back]]
            if g.mnemonic not in PC_USE:
                continue
            if g.addr in checked_pairs:
                return checked_pairs[g.addr]
            seq = [in_listing[old_sorted[j]] for j in range(k - back, min(k - back + 3, len(old_sorted)))]
            lit = pc_literal(seq, 0)
            ok = False
            if lit is not None and back <= lit[0]:
                count, value, fields = lit
                new_value = 0
                for n, (j, start, length) in enumerate(fields):
                    y = seq[j]
                    o = out_data[s["offset"] + y.addr - s["addr"]:s["offset"] + y.end - s["addr"]]
                    if o[:start] != y.raw[:start]:
                        break
                    new_value |= int.from_bytes(o[start:start + length], "little") << (32 * n)
                else:
                    want = image((g.addr + 4 + value) & (2**64 - 1))
                    ok = want is not None and (g.addr + 4 + new_value) & (2**64 - 1) == want
                    if ok:
                        res.stats["literal_edits_in_place"] += 1
            checked_pairs[g.addr] = ok
            return ok
        return False

    if counts_raised and note:
        # Raised register counts: the msgpack value after each
        # `.vgpr_count`/`.sgpr_count` key of the metadata note (same width).
        lo, hi = note["offset"], note["offset"] + note["size"]
        for key in (b".vgpr_count", b".sgpr_count"):
            at = in_data.find(key, lo, hi)
            while at >= 0:
                allowed.update(range(at + len(key), min(at + len(key) + 5, hi)))
                at = in_data.find(key, at + 1, hi)

    n = len(in_data)
    if len(out_data) < n:
        res.fail("the output is shorter than the input")
        return res
    diffs = [i for i in range(n) if in_data[i] != out_data[i]] if in_data != out_data[:n] else []
    bad = []
    for i in diffs:
        if i in allowed:
            continue
        if note and note["offset"] <= i < note["offset"] + note["size"] and \
                in_data[i:i + 2] == b"B0" and out_data[i:i + 2] == b"A0":
            continue
        if text_edit_ok(i):
            continue
        bad.append(i)
    if bad:
        res.fail(f"{len(bad)} input bytes changed outside the allowed edits, first at file offsets "
                 f"{[hex(b) for b in bad[:4]]}")

    # Sections and symbols of the input keep their meaning.
    for s in ie.sections:
        if not s["name"]:
            continue
        t = oe.section(s["name"])
        if t is None:
            res.fail(f"section {s['name']} lost")
            continue
        if s["flags"] & elf64.SHF_ALLOC and (t["addr"] != s["addr"] or t["size"] != s["size"]):
            res.fail(f"allocated section {s['name']} moved or resized")
    osyms = {(x["name"], x["value"], x["size"], x["type"]) for x in oe.symbols()}
    lost = [x["name"] for x in ie.symbols() if (x["name"], x["value"], x["size"], x["type"]) not in osyms]
    if lost:
        res.fail(f"{len(lost)} input symbols changed or lost, e.g. {lost[:3]}")
    if ie.symbols(elf64.SHT_DYNSYM) != oe.symbols(elf64.SHT_DYNSYM):
        res.fail(".dynsym changed")
    return res
