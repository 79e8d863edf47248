//! Register liveness of gfx1250 code and the scratch-register scavenger.
//!
//! [`analyze`] builds, for every function the walker found
//! ([`crate::gfx1250::analyze_object`]), a control-flow graph of its
//! instructions and a backward liveness fixed point over bitsets of SGPRs,
//! VCC, M0, EXEC, SCC and the 1024 VGPRs (v256+ through the `s_set_vgpr_msb`
//! mode of [`crate::rewrite::vgpr_mode`]). [`ObjectLiveness::scratch`] then
//! finds registers a rewrite may use at a site ([`scratch`]), and
//! [`counts`] patches the register counts a raise needs.
//!
//! Never a guess:
//! - what an instruction reads or writes comes from [`effects`], which counts
//!   an unsure read and never counts an unsure write as a kill;
//! - a function whose control flow is not understood (an undecodable
//!   instruction, a branch out of the function or into the middle of an
//!   instruction, a fall-through past its end) is [`Status::NotAnalysable`] and
//!   offers no scratch;
//! - exits: `s_endpgm` keeps nothing live but the registers of memory
//!   operations still in flight; a callable function's return keeps live what
//!   the calling convention lets a caller expect ([`abi`]), every register the
//!   function never writes (a caller compiled with inter-procedural register
//!   allocation may keep values there), and its in-flight registers; any other
//!   transfer keeps everything live ("never writes": no instruction certainly
//!   writes it whole);
//! - a call reads what the callee reads at its entry (everything when the
//!   callee is unknown, indirect or recursive) and kills only the return
//!   address pair;
//! - VGPR kills are per lane: they are forgotten across anything that may
//!   write EXEC, where the VGPRs live are all those read anywhere after it;
//! - registers of memory instructions (read late, written late) stay live up
//!   to every memory wait, call and exit of the function (and of its callers,
//!   for a callee's).
//!
//! Memory: two register sets (2 × 152 bytes) per basic block and 16 bytes per
//! instruction; effects are recomputed from the bytes when needed.

pub mod abi;
pub mod counts;
pub mod effects;
pub mod reaching;
pub mod regs;
pub mod scratch;
#[allow(clippy::all)]
#[rustfmt::skip]
mod vmem_table;

use std::collections::{HashMap, HashSet};

use crate::gfx1250::{self, AnalyzeError, FunctionKind};
use crate::object::CodeObject;
use crate::rewrite::vgpr_mode::{self, Mode};
pub use abi::Convention;
use effects::{Effect, Flow};
pub use regs::{Reg, RegSet};
pub use scratch::{Refusal, RegClass, Request, Scratch};

/// Whether a function's liveness can be relied on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// The CFG is complete; liveness holds at every instruction.
    Analysable,
    /// Why not: the function offers no scratch registers.
    NotAnalysable(String),
}

/// One instruction of a function: where it is and its VGPR-MSB mode.
#[derive(Clone, Copy, Debug)]
struct Insn {
    vaddr: u64,
    /// Offset of its bytes in the code object.
    offset: usize,
    len: u8,
    mode: Mode,
    block: u32,
}

/// A basic block: instructions `first..end`, successors, liveness at its ends.
#[derive(Clone, Debug)]
struct Block {
    first: u32,
    end: u32,
    succs: [Option<u32>; 2],
    /// Registers live after the block (for an exit block: the exit's set).
    live_out: RegSet,
    /// Registers read anywhere after the block, kills ignored.
    used_out: RegSet,
    live_in: RegSet,
    used_in: RegSet,
}

/// The liveness of one function.
#[derive(Clone, Debug)]
pub struct FunctionLiveness {
    /// Symbol name (the kernel's name for a kernel entry without a symbol).
    pub name: String,
    /// Entry address.
    pub vaddr: u64,
    /// Size in bytes of the walked range.
    pub size: u64,
    /// Whether a kernel descriptor enters here.
    pub is_kernel: bool,
    /// Whether the liveness can be relied on.
    pub status: Status,
    /// Entry addresses of the functions it calls directly.
    pub calls: Vec<u64>,
    /// Whether it makes a call whose target is not known.
    pub indirect_calls: bool,
    /// Instructions the effect model did not know (counted as reading and
    /// possibly writing everything).
    pub unknown_instructions: u64,
    /// Every register an instruction of the function may read or write.
    pub touched: RegSet,
    /// Registers of its memory operations (kept live to every wait and exit).
    pub in_flight: RegSet,
    /// Registers live at entry (everything when not analysable).
    pub entry_live: RegSet,
    /// Whether the fixed point was computed (false: not analysable).
    solved: bool,
    insns: Vec<Insn>,
    blocks: Vec<Block>,
    /// Call instructions (indices) and their resolved targets.
    call_sites: HashMap<u32, Option<u64>>,
    /// What each direct callee reads at entry, as the fixed point used it.
    callee_entry: HashMap<u64, RegSet>,
}

impl FunctionLiveness {
    /// Address and length of each instruction (none when not analysable).
    pub fn instructions(&self) -> impl Iterator<Item = (u64, u8)> + '_ {
        self.insns.iter().map(|i| (i.vaddr, i.len))
    }
}

/// Liveness at one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiveAt {
    /// Registers live before the instruction.
    pub before: RegSet,
    /// Registers live after it.
    pub after: RegSet,
    /// Registers read anywhere after it (kills ignored): a VGPR outside this
    /// set is dead in every lane, not only in those EXEC enables.
    pub used_after: RegSet,
    /// What the instruction itself may read and write.
    pub effect: Effect,
}

/// A kernel and what the scavenger needs of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    /// The kernel's name.
    pub name: String,
    /// Virtual address of its descriptor.
    pub descriptor_vaddr: u64,
    /// File offset of its descriptor, when mapped.
    pub descriptor_offset: Option<u64>,
    /// Index in [`ObjectLiveness::functions`] of its entry function.
    pub function: Option<usize>,
    /// VGPRs allocated by the descriptor: (GRANULATED_WORKITEM_VGPR_COUNT + 1) × 16.
    pub allocated_vgprs: Option<u16>,
    /// Functions reachable from the entry through direct calls (the entry
    /// included), indices in [`ObjectLiveness::functions`].
    pub reaches: Vec<usize>,
    /// Whether a reachable function makes a call whose target is not known
    /// (then every callable function may be reached: a kernel entry is never
    /// a call target), or [`KernelInfo::reaches_anything`].
    pub reaches_indirect: bool,
    /// Whether code outside the call structure may run: a reachable function
    /// is not analysable (it may branch anywhere), a call targets an address
    /// that is no function's entry, or the kernel's entry was not walked.
    /// Then any code of the object may run, other kernels' bodies included.
    pub reaches_anything: bool,
}

/// The liveness of every function of one code object.
#[derive(Clone, Debug)]
pub struct ObjectLiveness<'a> {
    bytes: &'a [u8],
    /// The convention assumed for callable functions.
    pub convention: Convention,
    /// The functions, in the walker's (address) order.
    pub functions: Vec<FunctionLiveness>,
    /// The kernels, in symbol-table order.
    pub kernels: Vec<KernelInfo>,
    /// For [`ObjectLiveness::function_at`]: the largest end of the
    /// functions up to each index, when they are in address order (`None`:
    /// they are not, and the lookup scans).
    ends_so_far: Option<Vec<u64>>,
    /// Per function, the kernels whose direct calls reach it (ascending),
    /// and the kernels with a call whose target is not known: made once per
    /// object for [`ObjectLiveness::kernels_reaching`].
    reached_by: Vec<Vec<usize>>,
    indirect_callers: Vec<usize>,
}

/// The VGPR encoding granule of gfx1250's kernel descriptor (measured with
/// llvm-mc-22: `.amdhsa_next_free_vgpr` 16 → 0, 17 → 1, 1024 → 63).
pub const VGPR_GRANULE: u16 = 16;

/// Analyses every function of a gfx1250 code object with the calling
/// convention `convention` for callable functions ([`Convention::Unknown`]
/// unless known). Never panics on malformed input.
pub fn analyze(bytes: &[u8], convention: Convention) -> Result<ObjectLiveness<'_>, AnalyzeError> {
    let object = CodeObject::parse(bytes).map_err(AnalyzeError::Isa)?;
    analyze_object(&object, convention)
}

/// [`analyze`] of an object already parsed.
pub fn analyze_object<'a>(
    object: &CodeObject<'a>,
    convention: Convention,
) -> Result<ObjectLiveness<'a>, AnalyzeError> {
    let walked = gfx1250::analyze_object(object)?;
    Ok(analyze_walked(object, &walked, convention, None))
}

/// [`analyze_object`] from the object's walk (`walked`, which the caller
/// already has), of every function (`roots` = `None`) or only of the
/// functions entered at `roots` and those they call directly, transitively:
/// the facts of those functions are the same either way (a function's
/// liveness depends on its callees only). The kernels' reach is complete for
/// a kernel whose entry is analysed; any other kernel has no function and
/// counts as reaching everything.
pub fn analyze_walked<'a>(
    object: &CodeObject<'a>,
    walked: &gfx1250::Analysis,
    convention: Convention,
    roots: Option<&[u64]>,
) -> ObjectLiveness<'a> {
    let bytes = object.bytes();
    let map = object.address_map();
    let kernel_entries: HashSet<u64> = walked
        .kernels
        .iter()
        .filter_map(|k| k.entry_vaddr)
        .collect();
    let build_one = |f: &gfx1250::Function| {
        let is_kernel = f.kind == FunctionKind::KernelEntry || kernel_entries.contains(&f.vaddr);
        build(bytes, map, f, is_kernel)
    };
    let mut functions: Vec<FunctionLiveness> = match roots {
        None => walked.functions.iter().map(build_one).collect(),
        Some(roots) => {
            // The call closure of the roots, in the walker's order.
            let index: HashMap<u64, usize> = walked
                .functions
                .iter()
                .enumerate()
                .map(|(i, f)| (f.vaddr, i))
                .collect();
            let mut built: Vec<Option<FunctionLiveness>> = vec![None; walked.functions.len()];
            let mut work: Vec<usize> = roots.iter().filter_map(|v| index.get(v).copied()).collect();
            while let Some(i) = work.pop() {
                if built[i].is_some() {
                    continue;
                }
                let f = build_one(&walked.functions[i]);
                work.extend(f.calls.iter().filter_map(|v| index.get(v).copied()));
                built[i] = Some(f);
            }
            built.into_iter().flatten().collect()
        }
    };
    let by_vaddr: HashMap<u64, usize> = functions
        .iter()
        .enumerate()
        .map(|(i, f)| (f.vaddr, i))
        .collect();
    // Callees before callers; a call into a cycle uses everything.
    let order = post_order(&functions, &by_vaddr);
    for i in order {
        let (callee_entry, callee_flight) = callee_facts(&functions, &by_vaddr, i);
        solve(
            bytes,
            &mut functions[i],
            convention,
            &callee_entry,
            callee_flight,
        );
    }
    let kernels: Vec<KernelInfo> = walked
        .kernels
        .iter()
        .map(|k| {
            let function = k.entry_vaddr.and_then(|v| by_vaddr.get(&v).copied());
            let descriptor_offset = map.file_offset(k.descriptor_vaddr);
            let allocated_vgprs = map
                .bytes(bytes, k.descriptor_vaddr, 64)
                .and_then(|kd| crate::elf::u32_at(kd, 48))
                .map(|rsrc1| ((rsrc1 & 0x3F) as u16 + 1) * VGPR_GRANULE);
            let (reaches, reaches_indirect, reaches_anything) = match function {
                Some(f) => reach(&functions, &by_vaddr, f),
                None => (Vec::new(), true, true),
            };
            KernelInfo {
                name: k.name.clone(),
                descriptor_vaddr: k.descriptor_vaddr,
                descriptor_offset,
                function,
                allocated_vgprs,
                reaches,
                reaches_indirect,
                reaches_anything,
            }
        })
        .collect();
    let ends_so_far = functions
        .windows(2)
        .all(|w| w[0].vaddr <= w[1].vaddr)
        .then(|| {
            let mut top = 0u64;
            functions
                .iter()
                .map(|f| {
                    top = top.max(f.vaddr.saturating_add(f.size));
                    top
                })
                .collect()
        });
    let mut reached_by: Vec<Vec<usize>> = vec![Vec::new(); functions.len()];
    let mut indirect_callers = Vec::new();
    for (k, kernel) in kernels.iter().enumerate() {
        for &f in &kernel.reaches {
            if let Some(list) = reached_by.get_mut(f) {
                if list.last() != Some(&k) {
                    list.push(k);
                }
            }
        }
        if kernel.reaches_indirect {
            indirect_callers.push(k);
        }
    }
    ObjectLiveness {
        bytes,
        convention,
        functions,
        kernels,
        ends_so_far,
        reached_by,
        indirect_callers,
    }
}

impl ObjectLiveness<'_> {
    /// The kernels (indices in [`ObjectLiveness::kernels`], ascending) that
    /// may run `function`: those whose direct calls reach it and, unless it
    /// is a kernel's entry (never a call target), those with a call whose
    /// target is not known.
    pub fn kernels_reaching(&self, function: usize) -> Vec<usize> {
        let mut out = self.reached_by.get(function).cloned().unwrap_or_default();
        if self.functions.get(function).is_some_and(|f| !f.is_kernel) {
            out.extend_from_slice(&self.indirect_callers);
            out.sort_unstable();
            out.dedup();
        }
        out
    }
}

/// Functions reachable from `from` through direct calls; whether any of
/// them makes a call whose target is not known (callable functions may be
/// reached); whether any code may run (a function not analysable, a call to
/// an address that is no function's entry).
fn reach(
    functions: &[FunctionLiveness],
    by_vaddr: &HashMap<u64, usize>,
    from: usize,
) -> (Vec<usize>, bool, bool) {
    let mut seen = vec![false; functions.len()];
    let mut stack = vec![from];
    let (mut indirect, mut anything) = (false, false);
    seen[from] = true;
    while let Some(i) = stack.pop() {
        let f = &functions[i];
        indirect |= f.indirect_calls;
        anything |= f.status != Status::Analysable;
        for t in &f.calls {
            match by_vaddr.get(t) {
                Some(&j) if !seen[j] => {
                    seen[j] = true;
                    stack.push(j);
                }
                Some(_) => {}
                None => anything = true,
            }
        }
    }
    (
        (0..functions.len()).filter(|&i| seen[i]).collect(),
        indirect || anything,
        anything,
    )
}

/// An order where every callee comes before its callers (cycles broken).
fn post_order(functions: &[FunctionLiveness], by_vaddr: &HashMap<u64, usize>) -> Vec<usize> {
    let mut state = vec![0u8; functions.len()]; // 0 new, 1 open, 2 done
    let mut order = Vec::with_capacity(functions.len());
    for root in 0..functions.len() {
        if state[root] != 0 {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        state[root] = 1;
        while let Some(&mut (i, ref mut next)) = stack.last_mut() {
            let calls = &functions[i].calls;
            if let Some(t) = calls.get(*next) {
                *next += 1;
                if let Some(&j) = by_vaddr.get(t) {
                    if state[j] == 0 {
                        state[j] = 1;
                        stack.push((j, 0));
                    }
                }
            } else {
                state[i] = 2;
                order.push(i);
                stack.pop();
            }
        }
    }
    order
}

/// For each direct call target of function `i`: what the callee reads at
/// entry (absent: unknown, everything is read); and the union of the callees'
/// in-flight registers (everything for an unknown, unsolved or indirect callee).
fn callee_facts(
    functions: &[FunctionLiveness],
    by_vaddr: &HashMap<u64, usize>,
    i: usize,
) -> (HashMap<u64, RegSet>, RegSet) {
    let f = &functions[i];
    let mut entry = HashMap::new();
    let mut flight = RegSet::EMPTY;
    if f.indirect_calls {
        flight = RegSet::ALL;
    }
    for t in &f.calls {
        match by_vaddr.get(t).map(|&j| &functions[j]) {
            Some(g) if g.solved => {
                entry.insert(*t, g.entry_live);
                flight.union_with(&g.in_flight);
            }
            _ => flight = RegSet::ALL,
        }
    }
    (entry, flight)
}

/// Walks one function: instructions, modes, effects summary, CFG.
fn build(
    bytes: &[u8],
    map: &crate::elf::AddressMap,
    f: &gfx1250::Function,
    is_kernel: bool,
) -> FunctionLiveness {
    let mut out = FunctionLiveness {
        name: f.name.clone(),
        vaddr: f.vaddr,
        size: f.size,
        is_kernel,
        status: Status::Analysable,
        calls: Vec::new(),
        indirect_calls: false,
        unknown_instructions: 0,
        touched: RegSet::ALL,
        in_flight: RegSet::ALL,
        entry_live: RegSet::ALL,
        solved: false,
        insns: Vec::new(),
        blocks: Vec::new(),
        call_sites: HashMap::new(),
        callee_entry: HashMap::new(),
    };
    let fail = |out: &mut FunctionLiveness, why: String| {
        out.status = Status::NotAnalysable(why);
        out.insns = Vec::new();
        out.blocks = Vec::new();
    };
    if f.incomplete {
        fail(
            &mut out,
            "the walk stopped at an undecodable instruction".into(),
        );
        return out;
    }
    let (Some(start), Some(code)) = (f.file_offset, map.tail(bytes, f.vaddr)) else {
        fail(&mut out, "no segment maps the function".into());
        return out;
    };
    let Ok(start) = usize::try_from(start) else {
        fail(&mut out, "offset out of range".into());
        return out;
    };
    // Instructions starting in [vaddr, vaddr + size).
    let mut at = 0u64;
    let mut raw: Vec<(u64, &[u8], gfx1250::walker::Decoded)> = Vec::new();
    while at < f.size {
        let Some(rest) = usize::try_from(at).ok().and_then(|a| code.get(a..)) else {
            break;
        };
        match gfx1250::walker::decode(rest) {
            Ok(d) => {
                raw.push((f.vaddr.wrapping_add(at), &rest[..usize::from(d.len)], d));
                at += u64::from(d.len);
            }
            Err(_) => {
                fail(
                    &mut out,
                    format!("undecodable instruction at {:#x}", f.vaddr.wrapping_add(at)),
                );
                return out;
            }
        }
    }
    if raw.is_empty() {
        fail(&mut out, "no instructions".into());
        return out;
    }
    let pairs: Vec<(u64, &[u8])> = raw.iter().map(|&(v, b, _)| (v, b)).collect();
    let modes = vgpr_mode::modes(&pairs);
    let index_of = |v: u64| pairs.binary_search_by_key(&v, |p| p.0).ok();
    // Effects: flows, touched and in-flight registers.
    let mut touched = RegSet::EMPTY;
    let mut flight = RegSet::EMPTY;
    let mut flows = Vec::with_capacity(raw.len());
    for (k, &(v, b, d)) in raw.iter().enumerate() {
        let e = effects::effect(v, b, d, modes[k]);
        if !e.known {
            out.unknown_instructions += 1;
        }
        touched.union_with(&e.uses);
        touched.union_with(&e.writes);
        if e.memory {
            flight.union_with(&e.uses);
            flight.union_with(&e.writes);
        }
        flows.push(e.flow);
    }
    out.touched = touched;
    out.in_flight = flight;
    // Leaders: the entry, branch targets, and what follows a transfer.
    let n = raw.len();
    let mut leader = vec![false; n];
    leader[0] = true;
    for (k, flow) in flows.iter().enumerate() {
        match *flow {
            Flow::Jump(t) | Flow::Branch(t) => {
                let Some(j) = index_of(t) else {
                    fail(
                        &mut out,
                        format!(
                            "branch at {:#x} to {t:#x}, not an instruction of the function",
                            raw[k].0
                        ),
                    );
                    return out;
                };
                leader[j] = true;
                if k + 1 < n {
                    leader[k + 1] = true;
                }
            }
            Flow::Next => {}
            _ => {
                if k + 1 < n {
                    leader[k + 1] = true;
                }
            }
        }
    }
    // Call targets: `s_call_i64`'s own, or an `s_swap_pc_i64` whose pair holds
    // a PC-relative constant set in the same block (`s_get_pc_i64 sX` then
    // `s_add_nc_u64 sX, sX, lit64`, as clang-22 calls on gfx1250).
    let mut pc_pairs: HashMap<u8, u64> = HashMap::new();
    for (k, &(v, b, d)) in raw.iter().enumerate() {
        if leader[k] {
            pc_pairs.clear();
        }
        let w0 = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        if let Flow::Call(t) = flows[k] {
            let t = t.or_else(|| pc_pairs.get(&((w0 & 0xFF) as u8)).copied());
            match t {
                Some(t) if !out.calls.contains(&t) => out.calls.push(t),
                Some(_) => {}
                None => out.indirect_calls = true,
            }
            out.call_sites.insert(k as u32, t);
        }
        let writes = effects::effect(v, b, d, modes[k]).writes;
        if w0 >> 23 == 0x17D && (w0 >> 8) & 0xFF == 0x47 {
            // s_get_pc_i64: the address of the next instruction.
            forget(&mut pc_pairs, &writes);
            pc_pairs.insert(((w0 >> 16) & 0x7F) as u8, v.wrapping_add(4));
        } else if w0 >> 30 == 0b10 && (w0 >> 23) & 0x7F == 0x53 && b.len() == 12 {
            // s_add_nc_u64 sX, sX, lit64
            let (dst, s0, s1) = ((w0 >> 16) & 0x7F, w0 & 0xFF, (w0 >> 8) & 0xFF);
            let lit = u64::from_le_bytes(b[4..12].try_into().unwrap_or([0; 8]));
            let base = pc_pairs.get(&(dst as u8)).copied();
            forget(&mut pc_pairs, &writes);
            if let (Some(base), true, 254) = (base, s0 == dst, s1) {
                pc_pairs.insert(dst as u8, base.wrapping_add(lit));
            }
        } else {
            forget(&mut pc_pairs, &writes);
        }
    }
    let mut block_of = vec![0u32; n];
    let mut blocks: Vec<Block> = Vec::new();
    for k in 0..n {
        if leader[k] {
            blocks.push(Block {
                first: k as u32,
                end: k as u32,
                succs: [None, None],
                live_out: RegSet::EMPTY,
                used_out: RegSet::EMPTY,
                live_in: RegSet::EMPTY,
                used_in: RegSet::EMPTY,
            });
        }
        let b = blocks.len() as u32 - 1;
        block_of[k] = b;
        blocks[b as usize].end = k as u32 + 1;
    }
    for block in blocks.iter_mut() {
        let last = block.end as usize - 1;
        let next = (last + 1 < n).then(|| block_of[last + 1]);
        let target = |t: u64| index_of(t).map(|j| block_of[j]);
        let succs = match flows[last] {
            Flow::Next | Flow::Call(_) => {
                if next.is_none() {
                    fail(
                        &mut out,
                        format!("falls through its end at {:#x}", raw[last].0),
                    );
                    return out;
                }
                [next, None]
            }
            Flow::Jump(t) => [target(t), None],
            Flow::Branch(t) => {
                if next.is_none() {
                    fail(
                        &mut out,
                        format!("a branch at {:#x} falls through its end", raw[last].0),
                    );
                    return out;
                }
                [target(t), next]
            }
            Flow::Return | Flow::EndProgram | Flow::Indirect => [None, None],
        };
        block.succs = succs;
    }
    out.insns = raw
        .iter()
        .enumerate()
        .map(|(k, &(v, b, _))| Insn {
            vaddr: v,
            offset: start + (v - f.vaddr) as usize,
            len: b.len() as u8,
            mode: modes[k],
            block: block_of[k],
        })
        .collect();
    out.blocks = blocks;
    out
}

fn forget(pairs: &mut HashMap<u8, u64>, defined: &RegSet) {
    pairs.retain(|&s, _| {
        !defined.contains(Reg::S(s)) && !defined.contains(Reg::S(s.wrapping_add(1)))
    });
}

/// The context of one function's transfer functions.
struct Context<'c> {
    bytes: &'c [u8],
    is_kernel: bool,
    in_flight: RegSet,
    callee_entry: &'c HashMap<u64, RegSet>,
    at_return: RegSet,
}

impl Context<'_> {
    fn effect(&self, i: &Insn) -> Effect {
        let b = self
            .bytes
            .get(i.offset..i.offset + usize::from(i.len))
            .unwrap_or(&[]);
        match gfx1250::walker::decode(b) {
            Ok(d) => effects::effect(i.vaddr, b, d, i.mode),
            Err(_) => Effect::unknown(),
        }
    }

    /// What is live at the exit `flow` (for an exit block's end).
    fn exit_live(&self, flow: Flow) -> Option<RegSet> {
        match flow {
            Flow::EndProgram => Some(self.in_flight),
            Flow::Return if !self.is_kernel => Some(self.at_return.union(&self.in_flight)),
            Flow::Return | Flow::Indirect => Some(RegSet::ALL),
            _ => None,
        }
    }

    /// One instruction backward: `(live, used)` after → before.
    fn step(&self, e: &Effect, call_target: Option<u64>, live: &mut RegSet, used: &mut RegSet) {
        if e.writes_exec {
            live.set_vgprs_from(used);
        }
        let mut uses = e.uses;
        if e.wait {
            uses.union_with(&self.in_flight);
        }
        if let Flow::Call(_) = e.flow {
            uses.union_with(&self.in_flight);
            match call_target.and_then(|t| self.callee_entry.get(&t)) {
                Some(entry) => uses.union_with(entry),
                None => uses = RegSet::ALL,
            }
        }
        live.remove_all(&e.kills);
        live.union_with(&uses);
        used.union_with(&uses);
    }
}

/// The backward fixed point of one function.
fn solve(
    bytes: &[u8],
    f: &mut FunctionLiveness,
    convention: Convention,
    callee_entry: &HashMap<u64, RegSet>,
    callee_flight: RegSet,
) {
    if f.status != Status::Analysable {
        return;
    }
    f.in_flight.union_with(&callee_flight);
    let mut never_written = RegSet::ALL;
    let mut writes = RegSet::EMPTY;
    let ctx0 = Context {
        bytes,
        is_kernel: f.is_kernel,
        in_flight: f.in_flight,
        callee_entry,
        at_return: RegSet::EMPTY,
    };
    // Registers certainly written somewhere (kills): a caller compiled with
    // inter-procedural register allocation may rely on any other being kept.
    for i in &f.insns {
        writes.union_with(&ctx0.effect(i).kills);
    }
    never_written.remove_all(&writes);
    let ctx = Context {
        at_return: abi::live_at_return(convention).union(&never_written),
        ..ctx0
    };
    let nb = f.blocks.len();
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); nb];
    for (bi, b) in f.blocks.iter().enumerate() {
        for s in b.succs.iter().flatten() {
            preds[*s as usize].push(bi as u32);
        }
    }
    let mut work: Vec<u32> = (0..nb as u32).collect();
    let mut queued = vec![true; nb];
    while let Some(bi) = work.pop() {
        let bi = bi as usize;
        queued[bi] = false;
        let b = &f.blocks[bi];
        let last = b.end as usize - 1;
        let last_flow = ctx.effect(&f.insns[last]).flow;
        let (mut live, mut used) = match ctx.exit_live(last_flow) {
            Some(exit) => (exit, exit),
            None => {
                let mut l = RegSet::EMPTY;
                let mut u = RegSet::EMPTY;
                for s in b.succs.iter().flatten() {
                    l.union_with(&f.blocks[*s as usize].live_in);
                    u.union_with(&f.blocks[*s as usize].used_in);
                }
                (l, u)
            }
        };
        let (live_out, used_out) = (live, used);
        for k in (b.first as usize..b.end as usize).rev() {
            let e = ctx.effect(&f.insns[k]);
            let t = f.call_sites.get(&(k as u32)).copied().flatten();
            ctx.step(&e, t, &mut live, &mut used);
        }
        let b = &mut f.blocks[bi];
        b.live_out = live_out;
        b.used_out = used_out;
        if b.live_in != live || b.used_in != used {
            b.live_in = live;
            b.used_in = used;
            for &p in &preds[bi] {
                if !queued[p as usize] {
                    queued[p as usize] = true;
                    work.push(p);
                }
            }
        }
    }
    f.entry_live = f.blocks[0].live_in;
    f.callee_entry = callee_entry.clone();
    f.solved = true;
}

impl<'a> ObjectLiveness<'a> {
    /// The index of the function whose instructions include `vaddr`.
    pub fn function_at(&self, vaddr: u64) -> Option<usize> {
        let holds = |f: &FunctionLiveness| vaddr >= f.vaddr && vaddr - f.vaddr < f.size;
        match &self.ends_so_far {
            // In address order, the first function holding `vaddr` is the
            // first whose running largest end passes it, if it starts at or
            // before it (no earlier one reaches `vaddr`).
            Some(ends) => {
                let k = ends.partition_point(|&end| end <= vaddr);
                self.functions.get(k).filter(|f| holds(f)).map(|_| k)
            }
            None => self.functions.iter().position(holds),
        }
    }

    /// Liveness at the instruction starting at `vaddr` of function `function`;
    /// `None` when the function is not analysable or no instruction starts there.
    pub fn live_at(&self, function: usize, vaddr: u64) -> Option<LiveAt> {
        let f = self.functions.get(function)?;
        if f.status != Status::Analysable {
            return None;
        }
        let k = f.insns.binary_search_by_key(&vaddr, |i| i.vaddr).ok()?;
        let b = &f.blocks[f.insns[k].block as usize];
        let ctx = Context {
            bytes: self.bytes,
            is_kernel: f.is_kernel,
            in_flight: f.in_flight,
            callee_entry: &f.callee_entry,
            at_return: RegSet::EMPTY,
        };
        // Replay the block backward from its end (its live-out is stored).
        let (mut live, mut used) = (b.live_out, b.used_out);
        let mut after = (live, used);
        let mut site_effect = Effect::unknown();
        for j in (k..b.end as usize).rev() {
            let e = ctx.effect(&f.insns[j]);
            if j == k {
                after = (live, used);
                site_effect = e;
            }
            let t = f.call_sites.get(&(j as u32)).copied().flatten();
            ctx.step(&e, t, &mut live, &mut used);
        }
        Some(LiveAt {
            before: live,
            after: after.0,
            used_after: after.1,
            effect: site_effect,
        })
    }

    /// The number of functions whose liveness can be relied on.
    pub fn analysable(&self) -> usize {
        self.functions
            .iter()
            .filter(|f| f.status == Status::Analysable)
            .count()
    }
}
