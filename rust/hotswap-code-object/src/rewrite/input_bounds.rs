//! What an object's headers must say before code growth appends to it
//! ([`super::placement`]): growth keeps every original byte where it is and
//! appends a segment, tables and a marker note after the original end, so a
//! header of the input that reaches past that end, or an address no loader
//! could place, would mean something else in the output than in the input.
//! Such an object is refused (naming the header) before anything is planned:
//!
//! - every section with file bytes (any type but `SHT_NOBITS`) lies inside
//!   the file: one that runs past the end covers nothing in the input (every
//!   reader ignores it) but would cover the appended code and tables in the
//!   output, which a second reading then sees as that section's content (a
//!   fuzz finding: an executable section at file offset 0 larger than the
//!   input made its own output "uncovered code");
//! - every program header with file bytes (but `PT_NULL`, and `PT_PHDR`,
//!   which growth turns into `PT_NULL`) lies inside the file, for the same
//!   reason: a loadable segment would load the appended bytes, a note
//!   segment would read the marker note as one of its notes;
//! - every loadable segment and every allocated section ends within
//!   [`ADDRESS_LIMIT`]: the appended segment goes at the page after the
//!   highest of them, and ROCr's loader allocates one block from the image's
//!   address 0 to the end of its last segment, so an end past the largest GPU
//!   address space is an image no loader can place (the same fuzz finding
//!   put the moved code at 0xd85c00c9e7c2d000, after a garbage allocated
//!   section). Placement checks the appended segment's own end against the
//!   same limit.

use super::RewriteError;
use crate::elf;
use crate::object::CodeObject;

/// The largest GPU virtual address space: 57 bits (the gfx12.5 memory
/// controller's 5-level page tables; earlier AMD GPUs have 48). No loaded
/// image ends past it.
pub(super) const ADDRESS_LIMIT: u64 = 1 << 57;

const PT_NULL: u32 = 0;
const PT_PHDR: u32 = 6;

/// Refuses an object whose headers would change meaning once growth appends
/// to it (see the module documentation).
pub(super) fn check_growable(object: &CodeObject<'_>) -> Result<(), RewriteError> {
    let len = object.bytes().len() as u64;
    let inside = |offset: u64, size: u64| offset.checked_add(size).is_some_and(|end| end <= len);
    for s in object.sections() {
        if s.sh_type != elf::SHT_NOBITS && s.size != 0 && !inside(s.offset, s.size) {
            return Err(RewriteError::Growth(format!(
                "section {} ({:?}) at file offset {:#x}, size {:#x}, runs past the end of the \
                 object ({len:#x} bytes): the appended code would become its content",
                s.index,
                String::from_utf8_lossy(s.name),
                s.offset,
                s.size
            )));
        }
    }
    for (i, s) in object.segments().iter().enumerate() {
        if !matches!(s.p_type, PT_NULL | PT_PHDR) && s.filesz != 0 && !inside(s.offset, s.filesz) {
            return Err(RewriteError::Growth(format!(
                "program header {i} (type {:#x}) at file offset {:#x}, size {:#x}, runs past \
                 the end of the object ({len:#x} bytes): the appended code would become its \
                 content",
                s.p_type, s.offset, s.filesz
            )));
        }
    }
    let beyond = |start: u64, size: u64| start.checked_add(size).is_none_or(|e| e > ADDRESS_LIMIT);
    if let Some(s) = object
        .segments()
        .iter()
        .find(|s| s.p_type == elf::PT_LOAD && beyond(s.vaddr, s.memsz))
    {
        return Err(RewriteError::Growth(format!(
            "the loadable segment at {:#x} (memory size {:#x}) ends past the {}-bit GPU address \
             space: no loader could place it",
            s.vaddr,
            s.memsz,
            ADDRESS_LIMIT.trailing_zeros()
        )));
    }
    if let Some(s) = object
        .sections()
        .iter()
        .find(|s| s.flags & elf::SHF_ALLOC != 0 && beyond(s.addr, s.size))
    {
        return Err(RewriteError::Growth(format!(
            "the allocated section {} ({:?}) at {:#x} (size {:#x}) ends past the {}-bit GPU \
             address space: no loader could place it",
            s.index,
            String::from_utf8_lossy(s.name),
            s.addr,
            s.size,
            ADDRESS_LIMIT.trailing_zeros()
        )));
    }
    Ok(())
}
