//! Patch: same-size edits of the code that stays where it is, so that every
//! entry into a moved function enters its image: branches and address
//! computations in unmoved functions, each kernel descriptor's
//! `kernel_code_entry_byte_offset`; and the dynamic relocations that refer
//! to moved code re-aimed at its image.

use std::sync::Arc;

use super::insns::walk;
use super::layout::branch_imm;
use super::moving::{map_target, Moving};
use super::pc::{pc_computations, Literal};
use super::{refuse, w32};
use crate::elf;
use crate::gfx1250::Analysis;
use crate::object::CodeObject;
use crate::rewrite::vgpr_mode::{self, Flow};
use crate::rewrite::{Patch, RewriteError};

/// The patches of unmoved code: branches and address computations into
/// moved functions re-targeted to their images.
pub(super) fn unmoved_code(
    object: &CodeObject<'_>,
    analysis: &Analysis,
    moving: &[Moving],
    patches: &mut Vec<Patch>,
) -> Result<(), RewriteError> {
    let bytes = object.bytes();
    let map = object.address_map();
    for f in &analysis.functions {
        let moved = moving
            .binary_search_by_key(&f.vaddr, |m| m.vaddr)
            .is_ok_and(|i| moving[i].size == f.size);
        if moved {
            continue;
        }
        let insns = walk(bytes, map, &f.name, f.vaddr, f.size)?;
        for pc in pc_computations(bytes, &insns, &f.name)? {
            if let Some(r) = map_target(moving, pc.target) {
                let to = r.map_err(|()| {
                    refuse(format!(
                        "{}: an address computation into the middle of an instruction",
                        f.name
                    ))
                })?;
                let value = to.wrapping_sub(insns.at(pc.index).vaddr + 4);
                match pc.literal {
                    Literal::Lit64(a) => patches.push(Patch {
                        file_offset: a as u64,
                        bytes: value.to_le_bytes().to_vec(),
                    }),
                    Literal::Pair(a, b) => {
                        patches.push(Patch {
                            file_offset: a as u64,
                            bytes: (value as u32).to_le_bytes().to_vec(),
                        });
                        patches.push(Patch {
                            file_offset: b as u64,
                            bytes: ((value >> 32) as u32).to_le_bytes().to_vec(),
                        });
                    }
                }
            }
        }
        for insn in insns.iter() {
            let w0 = w32(&bytes[insn.at..]);
            if let Flow::Jump(t) | Flow::Branch(t) = vgpr_mode::flow(insn.vaddr, w0) {
                if let Some(r) = map_target(moving, t) {
                    let to = r.map_err(|()| {
                        refuse(format!(
                            "{}: a branch into the middle of an instruction",
                            f.name
                        ))
                    })?;
                    let imm = branch_imm(insn.vaddr, to).ok_or_else(|| {
                        refuse(format!(
                            "{} at vaddr {:#x}: a branch into moved function at {t:#x} cannot reach its copy",
                            f.name, insn.vaddr
                        ))
                    })?;
                    patches.push(Patch {
                        file_offset: insn.at as u64,
                        bytes: imm.to_le_bytes().to_vec(),
                    });
                }
            }
        }
    }
    Ok(())
}

/// The patches of the kernel descriptors whose entry lies in a moved
/// function: the entry offset points at the image.
pub(super) fn descriptors(
    object: &CodeObject<'_>,
    analysis: &Analysis,
    moving: &[Moving],
    patches: &mut Vec<Patch>,
) -> Result<(), RewriteError> {
    let map = object.address_map();
    for k in &analysis.kernels {
        let Some(entry) = k.entry_vaddr else { continue };
        if let Some(r) = map_target(moving, entry) {
            let to =
                r.map_err(|()| refuse(format!("kernel {}: entry inside an instruction", k.name)))?;
            let at = map
                .file_offset(k.descriptor_vaddr)
                .ok_or_else(|| refuse(format!("kernel {}: descriptor not mapped", k.name)))?;
            patches.push(Patch {
                file_offset: at + 16,
                bytes: to.wrapping_sub(k.descriptor_vaddr).to_le_bytes().to_vec(),
            });
        }
    }
    Ok(())
}

/// `R_AMDGPU_ABS64`.
const R_AMDGPU_ABS64: u32 = 3;
/// `R_AMDGPU_RELATIVE64`.
const R_AMDGPU_RELATIVE64: u32 = 13;
const SHT_RELA: u32 = 4;
const SHT_REL: u32 = 9;

/// Re-aims the dynamic relocations whose target lies in a moved function
/// at its image (a same-size edit of the addend: `R_AMDGPU_RELATIVE64`
/// computes base + A, `R_AMDGPU_ABS64` S + A, so A becomes image − S);
/// refuses any other relocation that refers to moved code: one whose
/// patched location lies in a moved function, one of another type, a REL
/// (addend-in-place) one, one in a section the loader does not read, or one
/// whose target is not an instruction boundary.
pub(super) fn relocations(
    object: &CodeObject<'_>,
    moving: &[Moving],
    patches: &mut Vec<Patch>,
) -> Result<Vec<ReaimedRelocation>, RewriteError> {
    let (bytes, sections) = (object.bytes(), object.sections());
    let inside = |v: u64| moving.iter().find(|m| v >= m.vaddr && v - m.vaddr < m.size);
    let dynsym = object.symbols(elf::SHT_DYNSYM);
    let mut out = Vec::new();
    for s in sections
        .iter()
        .filter(|s| s.sh_type == SHT_RELA || s.sh_type == SHT_REL)
    {
        let Some(data) = s.data(bytes) else { continue };
        let entry = if s.sh_type == SHT_RELA { 24 } else { 16 };
        for (k, r) in data.chunks_exact(entry).enumerate() {
            let offset = elf::u64_at(r, 0).unwrap_or(0);
            let info = elf::u64_at(r, 8).unwrap_or(0);
            let addend = if entry == 24 {
                elf::u64_at(r, 16).unwrap_or(0)
            } else {
                0
            };
            let (sym, kind) = ((info >> 32) as usize, info as u32);
            // The symbol table's index (entry 0 is the null symbol).
            let value = dynsym.get(sym).map_or(0, |s| s.value);
            let target = value.wrapping_add(addend);
            if let Some(m) = inside(offset) {
                return Err(refuse(format!(
                    "a relocation at {offset:#x} patches the moved function {}",
                    m.name
                )));
            }
            let Some(m) = inside(target) else { continue };
            let name = match kind {
                R_AMDGPU_ABS64 => "R_AMDGPU_ABS64",
                R_AMDGPU_RELATIVE64 => "R_AMDGPU_RELATIVE64",
                _ => "",
            };
            let loaded = s.flags & elf::SHF_ALLOC != 0;
            if name.is_empty() || entry != 24 || !loaded {
                return Err(refuse(format!(
                    "a relocation at {offset:#x} (type {kind}{}) refers to the moved function {}: \
                     only dynamic RELA R_AMDGPU_ABS64 and R_AMDGPU_RELATIVE64 are re-aimed",
                    if entry == 24 { "" } else { ", REL" },
                    m.name
                )));
            }
            let to = m.map(target).and_then(Result::ok).ok_or_else(|| {
                refuse(format!(
                    "a relocation at {offset:#x} refers to {target:#x} in the moved function {}, \
                     not an instruction boundary",
                    m.name
                ))
            })?;
            patches.push(Patch {
                file_offset: s.offset + (k * 24) as u64 + 16,
                bytes: to.wrapping_sub(value).to_le_bytes().to_vec(),
            });
            out.push(ReaimedRelocation {
                offset,
                kind: name,
                function: m.name.clone(),
                old_target: target,
                new_target: to,
            });
        }
    }
    Ok(out)
}

/// A dynamic relocation re-aimed at a moved function's image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReaimedRelocation {
    /// The location it patches (a vaddr of data: a function-pointer table
    /// entry, a GOT slot).
    pub offset: u64,
    /// `R_AMDGPU_ABS64` or `R_AMDGPU_RELATIVE64`.
    pub kind: &'static str,
    /// The moved function it refers to.
    pub function: Arc<str>,
    /// The address it computed (in the old copy).
    pub old_target: u64,
    /// The address it computes now (in the image).
    pub new_target: u64,
}
