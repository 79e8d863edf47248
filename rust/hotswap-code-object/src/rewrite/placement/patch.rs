//! Patch: same-size edits of the code that stays where it is, so that every
//! entry into a moved function enters its image: branches and address
//! computations in unmoved functions, each kernel descriptor's
//! `kernel_code_entry_byte_offset`; and the relocations checked (none may
//! refer to moved code).

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

/// Refuses relocations whose target, or whose patched location, lies in a
/// moved function.
pub(super) fn check_relocations(
    object: &CodeObject<'_>,
    moving: &[Moving],
) -> Result<(), RewriteError> {
    let (bytes, sections) = (object.bytes(), object.sections());
    let inside = |v: u64| moving.iter().find(|m| v >= m.vaddr && v - m.vaddr < m.size);
    let dynsym = object.symbols(elf::SHT_DYNSYM);
    for s in sections.iter().filter(|s| s.sh_type == 4 || s.sh_type == 9) {
        let Some(data) = s.data(bytes) else { continue };
        let entry = if s.sh_type == 4 { 24 } else { 16 };
        for r in data.chunks_exact(entry) {
            let offset = elf::u64_at(r, 0).unwrap_or(0);
            let info = elf::u64_at(r, 8).unwrap_or(0);
            let addend = if entry == 24 {
                elf::u64_at(r, 16).unwrap_or(0)
            } else {
                0
            };
            let sym = (info >> 32) as usize;
            let value = if sym == 0 {
                0
            } else {
                dynsym.get(sym - 1).map_or(0, |s| s.value)
            };
            if let Some(m) = inside(offset).or_else(|| inside(value.wrapping_add(addend))) {
                return Err(refuse(format!(
                    "a relocation at {offset:#x} refers to the moved function {}",
                    m.name
                )));
            }
        }
    }
    Ok(())
}
