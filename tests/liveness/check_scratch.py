#!/usr/bin/env python3
"""An independent check of scratch-register claims on a gfx1250 code object.

Shares nothing with the Rust liveness analysis: it reads the object only
through `llvm-objdump-22 -d --mattr=+real-true16` text (and llvm-readelf-22 for
the kernel names) and models registers from the printed operands.

A claim (JSON list, one object each):
  {"site": ADDR, "end": ADDR, "kind": "dead" | "above", "scratch": ["v4", "s10", ...]}
- "dead": each register is dead at the site: the site's own instruction does
  not name it (when "end" is the instruction's end), and on every path from
  "end" it is written whole before it is read. A VGPR write after an EXEC
  change on the path does not count (it covers other lanes); loads, DPP,
  16-bit halves, conditional moves and lane writes never count. Paths end at
  s_endpgm (nothing read); a return (`s_set_pc_i64 s[30:31]`) in a function
  that is not a kernel reads every register a calling convention may preserve
  (s4-s105, v40-47 + 16k, exec), may return (v0-v31, s0-s31) and every
  register the function never writes; any other transfer, a call, or a line
  this script does not understand reads everything. Also, no memory
  instruction naming the register may reach the site without a zero-count
  `s_wait_*` in between (its operands are read or written late).
- "above": no instruction of the code reachable from a kernel that reaches
  the site's function names the register. Reachable: the direct-call closure
  of the kernel's entry; when it calls a target the text does not resolve,
  every function that is not a kernel too (a kernel entry is never a call
  target).

Usage: check_scratch.py --tools DIR OBJECT CLAIMS.json
Prints one line per violation; exit 1 when any, 0 otherwise.
"""
import argparse
import bisect
import json
import re
import subprocess
import sys
from pathlib import Path

LINE = re.compile(r"^\s+(\S+)\s*(.*?)\s*//\s*([0-9A-Fa-f]+):\s*([0-9A-Fa-f ]+)")
LABEL = re.compile(r"^([0-9a-f]+) <(.+)>:$")
REG = re.compile(
    r"\b([vs])\[(\d+):(\d+)\](?:\s*/\*v\[(\d+):(\d+)\]\*/)?"
    r"|\b([vs])(\d+)(\.[lh])?(?:\s*/\*v(\d+)\*/)?"
    r"|\b(vcc_lo|vcc_hi|vcc|exec_lo|exec_hi|exec|m0|scc)\b")
SPECIAL = {"vcc_lo": ["s106"], "vcc_hi": ["s107"], "vcc": ["s106", "s107"], "m0": ["s125"],
           "exec_lo": ["s126"], "exec_hi": ["s127"], "exec": ["s126", "s127"], "scc": ["scc"]}
MEMORY = ("global_", "scratch_", "flat_", "buffer_", "ds_", "s_load", "s_buffer_load",
          "tensor_", "cluster_load")
NO_DST = ("s_cmp", "s_bitcmp", "v_cmpx", "s_cbranch", "s_branch", "s_wait", "s_nop", "s_endpgm",
          "s_set_pc", "s_setpc", "s_setreg", "s_barrier", "s_sendmsg", "s_set_vgpr_msb",
          "s_delay_alu", "s_clause", "s_code_end", "s_prefetch", "s_dcache", "s_icache", "s_sleep",
          "s_trap", "v_nop", "s_setprio")


def operands(text):
    """[(register names, partial)] in print order, MSB comments applied."""
    regs = []
    for m in REG.finditer(text):
        if m.group(1):
            lo, hi = (int(m.group(4)), int(m.group(5))) if m.group(4) else (int(m.group(2)), int(m.group(3)))
            regs.append(([f"{m.group(1)}{n}" for n in range(lo, hi + 1)], False))
        elif m.group(6):
            n = int(m.group(9)) if m.group(9) else int(m.group(7))
            regs.append(([f"{m.group(6)}{n}"], bool(m.group(8))))
        else:
            regs.append((SPECIAL[m.group(10)], False))
    return regs


class Insn:
    def __init__(self, addr, mnem, ops, words, func):
        self.addr, self.mnem, self.ops, self.func = addr, mnem, ops, func
        self.size = 4 * len(words)
        self.w0 = int(words[0], 16)
        self.reads, self.writes, self.kills = set(), set(), set()
        self.exec_write = False
        self.callee = None
        if "::" in ops:
            first, second = ops.split("::", 1)
            second = second.strip().split(None, 1)
            self.model(mnem, first)
            self.model(second[0], second[1] if len(second) > 1 else "")
        else:
            self.model(mnem, ops)

    def model(self, m, text):
        regs = operands(text)
        # The tensor data movers name only sources: their four descriptor
        # groups (tensor_load_to_lds writes LDS, not its first operand).
        no_dst = (m.startswith(NO_DST) or "_store" in m or m.startswith("tensor_")
                  or ("atomic" in m and "TH_ATOMIC_RETURN" not in text)
                  or m.endswith(("_inv", "_wb", "_wbinv")) or "prefetch" in m
                  or "async_to_lds" in m or "async_from_lds" in m)
        dst, srcs = (None, regs) if no_dst or not regs else (regs[0], regs[1:])
        for r, _ in srcs:
            self.reads.update(r)
        if dst and m.startswith(("v_fmac", "v_dual_fmac", "s_fmac", "v_writelane", "v_dot2acc",
                                 "v_dual_dot2acc", "s_cmov", "s_bitset", "v_pk_fmac", "s_addk", "s_mulk")):
            self.reads.update(dst[0])
        if m.startswith(("s_cselect", "s_cmov", "s_add_co_ci", "s_sub_co_ci", "s_cbranch_scc")):
            self.reads.add("scc")
        if m.startswith("s_cbranch_vcc"):
            self.reads.add("s106")
        if m.startswith("s_cbranch_exec") or "saveexec" in m or "wrexec" in m:
            self.reads.add("s126")
        if m.startswith(("v_", "global_", "scratch_", "flat_", "buffer_", "ds_")):
            self.reads.add("s126")
        if m.startswith(("s_cmp", "s_bitcmp")):
            self.writes.add("scc")
            self.kills.add("scc")
        elif m.startswith("s_"):
            self.writes.add("scc")
        if "saveexec" in m or "wrexec" in m or m.startswith("v_cmpx"):
            self.exec_write = True
            self.writes.update(["s126", "s127"])
        if dst:
            names, partial = dst
            self.writes.update(names)
            if any(n in ("s126", "s127") for n in names):
                self.exec_write = True
            loads = m.startswith(MEMORY)
            cond = (m.startswith(("s_cmov", "v_writelane", "s_bitset")) or "dpp" in m or "row_" in text
                    or "quad_perm" in text or "dpp8" in text)
            if not (partial or loads or cond):
                self.kills.update(names)

    @property
    def memory(self):
        return self.mnem.startswith(MEMORY)

    def target(self):
        simm = self.w0 & 0xFFFF
        simm -= 0x10000 if simm & 0x8000 else 0
        return self.addr + 4 + 4 * simm


def disassemble(tools, obj):
    """Instructions by address (each with its function: the FUNC symbol whose
    range holds it) and the kernel names (`<name>.kd` symbols)."""
    syms = subprocess.run([str(Path(tools) / "llvm-readelf-22"), "-sW", str(obj)],
                          capture_output=True, text=True, check=True).stdout
    funcs, kernels = [], set()
    for line in syms.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC" and f[6] != "UND":
            funcs.append((int(f[1], 16), int(f[2]), f[7]))
        if len(f) >= 8 and f[7].endswith(".kd"):
            kernels.add(f[7][:-3])
    out = subprocess.run([str(Path(tools) / "llvm-objdump-22"), "-d", "--mcpu=gfx1250",
                          "--mattr=+real-true16", str(obj)], capture_output=True, text=True, check=True).stdout
    # A FUNC symbol of size 0 runs to the next one (as the walker's kernel entries).
    funcs.sort()
    funcs = [(v, size if size else ((funcs[k + 1][0] - v) if k + 1 < len(funcs) else 1 << 40), n)
             for k, (v, size, n) in enumerate(funcs)]
    # The owner is the first symbol (in address order) whose range holds the
    # address: the smallest index whose running maximum of ends passes it,
    # if that symbol starts at or before it (two binary searches).
    starts = [v for v, _, _ in funcs]
    max_end, top = [], 0
    for v, size, _ in funcs:
        top = max(top, v + size)
        max_end.append(top)
    insns = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        addr = int(m.group(3), 16)
        k = bisect.bisect_right(max_end, addr)
        if k >= len(funcs) or k >= bisect.bisect_right(starts, addr):
            continue
        owner = funcs[k][2]
        insns[addr] = Insn(addr, m.group(1), m.group(2), m.group(4).split(), owner)
    return insns, kernels


RETURN_READS = {}


def callee_return_reads(insns, func):
    if func not in RETURN_READS:
        RETURN_READS[func] = return_reads(insns, func)
    return RETURN_READS[func]


def return_reads(insns, func):
    reads = {f"s{n}" for n in range(0, 106)} | {f"v{n}" for n in range(32)} | {"s126", "s127"}
    reads |= {f"v{b + k}" for b in range(40, 256, 16) for k in range(8)}
    written = set()
    for i in insns.values():
        if i.func == func:
            written |= i.kills
    every = {f"v{n}" for n in range(1024)} | {f"s{n}" for n in range(128)} | {"scc"}
    return reads | (every - written)


def transfers_everything(i, func, kernels):
    m = i.mnem
    if m.startswith("."):
        return True  # `.long`: bytes llvm-objdump-22 does not decode
    if m.startswith(("s_swap_pc", "s_swappc", "s_call", "s_rfe", "s_add_pc", "s_trap", "s_code_end")):
        return True
    return m.startswith(("s_set_pc", "s_setpc")) and (func in kernels or "s[30:31]" not in i.ops)


GRAPH = {}


def call_graph(insns):
    if "graph" not in GRAPH:
        GRAPH["graph"] = build_call_graph(insns)
    return GRAPH["graph"]


def build_call_graph(insns):
    """{function: set of callees, or None when a call's target is unknown}.
    Targets: `s_get_pc_i64 s[X:Y]` (the next address) then
    `s_add_nc_u64 s[X:Y], s[X:Y], lit64(C)` before `s_swap_pc_i64 ..., s[X:Y]`."""
    starts = {}
    for a, i in sorted(insns.items()):
        starts.setdefault(i.func, a)
    by_start = {a: f for f, a in starts.items()}
    graph = {f: set() for f in starts}
    pairs = {}
    for a, i in sorted(insns.items()):
        m, ops = i.mnem, i.ops
        pair = ops.split(",")[0].strip()
        if m.startswith("s_get_pc"):
            pairs[pair] = a + 4
            continue
        if m.startswith("s_add_nc_u64"):
            parts = [p.strip() for p in ops.split(",")]
            lit = re.match(r"(?:lit64\()?(0x[0-9a-f]+|-?\d+)\)?$", parts[2]) if len(parts) == 3 else None
            if lit and parts[0] == parts[1] and parts[0] in pairs:
                pairs[parts[0]] = (pairs[parts[0]] + int(lit.group(1), 0)) % (1 << 64)
                continue
        if m.startswith(("s_swap_pc", "s_swappc", "s_call")):
            src = ops.split(",")[-1].strip()
            target = pairs.get(src)
            if m.startswith("s_call"):
                target = i.target()
            callee = by_start.get(target)
            i.callee = callee
            if callee is None or graph.get(i.func) is None:
                graph[i.func] = None
            else:
                graph[i.func].add(callee)
        if m.startswith(("s_branch", "s_cbranch", "s_endpgm", "s_set_pc", "s_setpc", "s_swap_pc")):
            pairs = {}
        else:
            for r, _ in operands(ops)[:1]:
                for k in list(pairs):
                    if k.startswith("s[") and any(n in r for n in [f"s{x}" for x in map(int, re.findall(r"\d+", k))]):
                        del pairs[k]
    return graph


REACH = {}


def reaching_code(insns, kernels, func):
    if func not in REACH:
        REACH[func] = compute_reach(insns, kernels, func)
    return REACH[func]


def compute_reach(insns, kernels, func):
    """The functions reachable from every kernel that reaches `func` (with
    every function that is not a kernel when one of them calls an unknown
    target: no call enters a kernel), or None when no kernel reaches it."""
    graph = call_graph(insns)
    every = set(graph) - set(kernels)
    reach = set()
    hit = False
    for k in kernels:
        if k not in graph:
            continue
        seen, work, unknown = set(), [k], False
        while work:
            f = work.pop()
            if f in seen:
                continue
            seen.add(f)
            if graph.get(f) is None:
                unknown = True
                continue
            work.extend(graph[f])
        if unknown:
            seen = seen | every
        if func in seen:
            hit = True
            reach |= seen
    return reach if hit else None


def check(insns, kernels, claim):
    if "addrs" not in GRAPH:
        GRAPH["addrs"] = sorted(insns)
        GRAPH["index"] = {a: k for k, a in enumerate(GRAPH["addrs"])}
    addrs, index = GRAPH["addrs"], GRAPH["index"]
    site, end = claim["site"], claim["end"]
    if site not in insns:
        return [f"{site:#x}: no instruction"]
    func = insns[site].func
    problems = []
    for reg in claim["scratch"]:
        if claim.get("kind") == "above":
            reach = reaching_code(insns, kernels, func)
            if reach is None:
                problems.append(f"{site:#x} {reg}: claimed above the allocation, but no kernel reaches {func}")
                continue
            users = [a for a, i in insns.items() if i.func in reach and (reg in i.reads or reg in i.writes)]
            if users:
                problems.append(f"{site:#x} {reg}: claimed above the allocation, named at {users[0]:#x}")
            continue
        if end == site + insns[site].size and (reg in insns[site].reads or reg in insns[site].writes):
            problems.append(f"{site:#x} {reg}: an operand of the site")
            continue
        problem, settled = forward(insns, addrs, index, kernels, func, site, end, reg)
        # A whole write reached on every path before any wait proves an earlier
        # memory access of reg complete (the producer had to wait before that
        # write); otherwise look back for one still in flight.
        if not problem and not settled:
            problem = backward(insns, addrs, index, func, site, reg)
        if problem:
            problems.append(f"{site:#x} {reg}: {problem}")
    return problems


def successors(insns, addrs, index, at):
    """Addresses control may reach after the instruction at `at`."""
    i = insns[at]
    nxt = addrs[index[at] + 1] if index[at] + 1 < len(addrs) else None
    if i.mnem.startswith("s_branch"):
        return [i.target()]
    if i.mnem.startswith("s_cbranch"):
        return [i.target(), nxt]
    if i.mnem.startswith(("s_endpgm", "s_set_pc", "s_setpc")):
        return []
    return [nxt]


def forward(insns, addrs, index, kernels, func, site, end, reg):
    """(Why reg may be read before a whole write on a path from `end` (from the
    site's successors when `end` is the site's own end) or None, whether every
    path writes it whole before any memory wait). A call to a known function
    continues into it and back to the instruction after the call."""
    call_graph(insns)  # sets each call's callee
    starts_of = GRAPH.setdefault("starts", {})
    if not starts_of:
        for a, i in sorted(insns.items()):
            starts_of.setdefault(i.func, a)
    i = insns[site]
    if end == site + i.size:
        if i.callee is not None:
            starts = [(starts_of[i.callee], (site + i.size,))]
        elif transfers_everything(i, func, kernels):
            return f"the site ({i.mnem}) reads everything", False
        elif i.mnem.startswith(("s_set_pc", "s_setpc")) and reg in callee_return_reads(insns, func):
            return "a caller may read it after the site's return", False
        else:
            starts = [(a, ()) for a in successors(insns, addrs, index, site)]
        changed = i.exec_write
    else:
        starts, changed = [(end, ())], False
    settled = bool(starts)
    seen, work = set(), [(a, stack, changed, False) for a, stack in starts]
    while work:
        at, stack, exec_changed, waited = work.pop()
        if (at, stack, exec_changed, waited) in seen:
            continue
        seen.add((at, stack, exec_changed, waited))
        i = insns.get(at)
        here = insns[stack[-1] - 4].func if stack and (stack[-1] - 4) in insns else func
        if i is None:
            return "a path ends outside the code", False
        if i.reads and reg in i.reads:
            return f"read at {at:#x} ({i.mnem})", False
        if i.callee is not None and len(stack) < 8:
            work.append((starts_of[i.callee], stack + (at + i.size,), exec_changed or i.exec_write, waited))
            continue
        if transfers_everything(i, i.func, kernels):
            return f"reaches {i.mnem} at {at:#x}, which reads everything", False
        if i.mnem.startswith(("s_set_pc", "s_setpc")):
            if stack:
                work.append((stack[-1], stack[:-1], exec_changed, waited))
                continue
            if reg in callee_return_reads(insns, i.func):
                return f"a caller may read it after the return at {at:#x}", False
            settled = False
            continue
        del here
        changed = exec_changed or i.exec_write
        if reg in i.kills and not (reg.startswith("v") and exec_changed):
            settled &= not waited
            continue
        if i.mnem.startswith("s_endpgm"):
            settled = False
        now_waited = waited or i.mnem.startswith("s_wait")
        work.extend((a, stack, changed, now_waited) for a in successors(insns, addrs, index, at))
    return None, settled


def backward(insns, addrs, index, func, site, reg):
    """A memory instruction naming reg that reaches the site without a
    zero-count wait, or None."""
    preds = GRAPH.setdefault(("preds", func), {})
    for a, i in insns.items() if not preds else ():
        if i.func != func:
            continue
        k = index[a]
        nxt = addrs[k + 1] if k + 1 < len(addrs) else None
        if i.mnem.startswith("s_branch"):
            preds.setdefault(i.target(), []).append(a)
        elif i.mnem.startswith("s_cbranch"):
            preds.setdefault(i.target(), []).append(a)
            preds.setdefault(nxt, []).append(a)
        elif not i.mnem.startswith(("s_endpgm", "s_set_pc", "s_setpc")):
            preds.setdefault(nxt, []).append(a)
    seen, work = set(), list(preds.get(site, []))
    while work:
        a = work.pop()
        if a in seen:
            continue
        seen.add(a)
        i = insns[a]
        if i.mnem.startswith("s_wait") and (i.w0 & 0xFFFF) == 0:
            continue
        if i.memory and (reg in i.reads or reg in i.writes):
            return f"{i.mnem} at {a:#x} may still use it"
        work.extend(preds.get(a, []))
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", required=True)
    ap.add_argument("object")
    ap.add_argument("claims")
    args = ap.parse_args()
    insns, kernels = disassemble(args.tools, args.object)
    claims = json.loads(Path(args.claims).read_text())
    bad = 0
    for c in claims:
        for p in check(insns, kernels, c):
            print(p)
            bad += 1
    print(f"{len(claims)} claims, {bad} violations")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
