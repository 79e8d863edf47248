//! Reaching definitions of one SGPR at one instruction, on the liveness
//! analysis's control-flow graph: what the definition-site form of the
//! tensor-mask fix (`rewrite::emit::tensor_mask::clear_at_definition`) must
//! prove before it changes a constant where the mask SGPR is written.
//!
//! Never a guess: a path from the function's entry, a call, an instruction
//! the model does not know, or a write that may leave part of the register
//! (a memory load, a conditional move, anything not a whole-register kill)
//! makes the answer a refusal, and so does a read of the definition's value
//! by anything the caller did not allow, or a way out of the function other
//! than `s_endpgm`.

use super::effects::{Effect, Flow};
use super::regs::Reg;
use super::{Context, FunctionLiveness, ObjectLiveness, Status};

/// The one definition of a register that reaches an instruction, and the
/// instructions its value reaches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OnlyDefinition {
    /// The defining instruction's address.
    pub vaddr: u64,
    /// Its offset in the code object.
    pub offset: usize,
    /// Its length.
    pub len: u8,
    /// Every instruction that may read the defined value (the site among
    /// them), in address order.
    pub readers: Vec<u64>,
}

impl ObjectLiveness<'_> {
    /// The single instruction that writes SGPR `reg` whole on every path
    /// into the instruction at `site` of `function` (no path from the
    /// function's entry, no other write, whole or partial, in between), and
    /// the readers of its value; every reader must satisfy `allowed(vaddr,
    /// bytes)` and no path from the definition may leave the function but
    /// through `s_endpgm` before the register is written again. Else why not.
    pub fn only_definition(
        &self,
        function: usize,
        site: u64,
        reg: u8,
        allowed: &dyn Fn(u64, &[u8]) -> bool,
    ) -> Result<OnlyDefinition, String> {
        let f = self.functions.get(function).ok_or("no such function")?;
        if f.status != Status::Analysable {
            return Err("the function is not analysable".into());
        }
        let k = f
            .insns
            .binary_search_by_key(&site, |i| i.vaddr)
            .map_err(|_| "no instruction starts at the site")?;
        let ctx = Context {
            bytes: self.bytes,
            is_kernel: f.is_kernel,
            in_flight: f.in_flight,
            callee_entry: &f.callee_entry,
            at_return: super::regs::RegSet::EMPTY,
        };
        let r = Reg::S(reg);
        let effect = |j: usize| ctx.effect(&f.insns[j]);
        // Backward: the writes of `reg` that reach the site.
        let mut defs = Vec::new();
        let mut seen = vec![false; f.insns.len()];
        let mut work = predecessors(f, k)?;
        while let Some(j) = work.pop() {
            if std::mem::replace(&mut seen[j], true) {
                continue;
            }
            let e = effect(j);
            refuse_call_or_unknown(&e, f.insns[j].vaddr)?;
            if e.writes.contains(r) {
                if !e.kills.contains(r) {
                    return Err(format!(
                        "s{reg} may be written in part at {:#x}",
                        f.insns[j].vaddr
                    ));
                }
                defs.push(j);
                continue;
            }
            work.extend(predecessors(f, j)?);
        }
        let d = match defs[..] {
            [d] => d,
            [] => return Err(format!("no write of s{reg} reaches the site")),
            _ => return Err(format!("{} writes of s{reg} reach the site", defs.len())),
        };
        // Forward: where the definition's value goes.
        let mut readers = Vec::new();
        let mut seen = vec![false; f.insns.len()];
        let mut work = successors(f, &effect(d), d)?;
        while let Some(j) = work.pop() {
            if std::mem::replace(&mut seen[j], true) {
                continue;
            }
            let i = &f.insns[j];
            let e = effect(j);
            refuse_call_or_unknown(&e, i.vaddr)?;
            if e.uses.contains(r) {
                let bytes = self
                    .bytes
                    .get(i.offset..i.offset + usize::from(i.len))
                    .unwrap_or(&[]);
                if !allowed(i.vaddr, bytes) {
                    return Err(format!(
                        "the value of s{reg} written at {:#x} is also read at {:#x}",
                        f.insns[d].vaddr, i.vaddr
                    ));
                }
                readers.push(i.vaddr);
            }
            if e.kills.contains(r) {
                continue;
            }
            work.extend(successors(f, &e, j)?);
        }
        if !readers.contains(&site) {
            return Err("the site does not read the definition's value".into());
        }
        readers.sort_unstable();
        let i = &f.insns[d];
        Ok(OnlyDefinition {
            vaddr: i.vaddr,
            offset: i.offset,
            len: i.len,
            readers,
        })
    }
}

/// A call (its callee may write or read anything) or an unknown instruction.
fn refuse_call_or_unknown(e: &Effect, vaddr: u64) -> Result<(), String> {
    if matches!(e.flow, Flow::Call(_)) {
        return Err(format!("a call at {vaddr:#x} lies on a path"));
    }
    if !e.known {
        return Err(format!(
            "an instruction the model does not know at {vaddr:#x}"
        ));
    }
    Ok(())
}

/// The instructions (indices) that may run right before instruction `j`.
fn predecessors(f: &FunctionLiveness, j: usize) -> Result<Vec<usize>, String> {
    let b = f.insns[j].block as usize;
    if j > f.blocks[b].first as usize {
        return Ok(vec![j - 1]);
    }
    if j == 0 {
        return Err("a path comes from the function's entry".into());
    }
    Ok(f.blocks
        .iter()
        .filter(|p| p.succs.contains(&Some(b as u32)))
        .map(|p| p.end as usize - 1)
        .collect())
}

/// The instructions (indices) that may run right after instruction `j`
/// (effect `e`); leaving the function but by `s_endpgm` is refused.
fn successors(f: &FunctionLiveness, e: &Effect, j: usize) -> Result<Vec<usize>, String> {
    match e.flow {
        Flow::EndProgram => return Ok(Vec::new()),
        Flow::Return | Flow::Indirect => {
            return Err(format!(
                "a path leaves the function at {:#x}",
                f.insns[j].vaddr
            ))
        }
        _ => {}
    }
    let b = &f.blocks[f.insns[j].block as usize];
    if j + 1 < b.end as usize {
        return Ok(vec![j + 1]);
    }
    let out: Vec<usize> = b
        .succs
        .iter()
        .flatten()
        .map(|&s| f.blocks[s as usize].first as usize)
        .collect();
    if out.is_empty() {
        return Err(format!(
            "a path runs past the end of the function at {:#x}",
            f.insns[j].vaddr
        ));
    }
    Ok(out)
}
