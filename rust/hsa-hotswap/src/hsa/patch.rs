//! The one owner of the slots the tool writes into ROCr's `CoreApiTable`: for
//! each, the slot, our hook and the function it held before, together. Adding a
//! slot means adding one entry to [`crate::hooks::patches`] and writing its hook.
//!
//! - [`PatchedTable::check`] reads the originals (every one non-null, none
//!   already ours) and writes nothing;
//! - [`PatchedTable::install`] then writes the hooks;
//! - [`PatchedTable::restore`] writes the original back into each slot that
//!   still holds our hook (a slot a later tool wrapped is left alone), at most
//!   once, and never after `OnUnload` has restored the table.
#![allow(unsafe_code)] // writes ROCr's table through the checked view

use std::sync::Mutex;

use super::table::{CoreTable, Slot, TableError};

/// One patched slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Patch {
    /// Where.
    pub slot: Slot,
    /// Our hook's address.
    pub hook: usize,
    /// What the slot held before (ROCr's function or an earlier tool's wrapper).
    pub original: usize,
}

/// Who writes the originals back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restore {
    /// The tool leaves the table: no rewrite is possible in this runtime.
    Leave,
    /// `OnUnload`: ROCr is shutting down; nothing is written afterwards.
    Unload,
}

/// The patched table of one `OnLoad`.
#[derive(Debug)]
pub struct PatchedTable {
    /// `CoreApiTable*` and its checked size.
    table: (usize, u32),
    patches: Vec<Patch>,
    /// Serialises writes after `OnLoad`; true once `OnUnload` restored the table.
    unloaded: Mutex<bool>,
}

impl PatchedTable {
    /// Reads each slot's original (`hooks`: slot and hook address, in order).
    /// Refuses a NULL slot and a slot already holding its hook. Writes nothing.
    pub fn check(table: &CoreTable, hooks: &[(Slot, usize)]) -> Result<PatchedTable, TableError> {
        let patches = hooks
            .iter()
            .map(|&(slot, hook)| match table.read(slot) {
                0 => Err(TableError::NullSlot(slot.name)),
                original if original == hook => Err(TableError::AlreadyPatched(slot.name)),
                original => Ok(Patch {
                    slot,
                    hook,
                    original,
                }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(PatchedTable {
            table: (table.raw() as usize, table.size()),
            patches,
            unloaded: Mutex::new(false),
        })
    }

    /// The view of the table `check` was given.
    fn view(&self) -> CoreTable {
        // SAFETY: the table `check` validated (size in `self.table.1`); ROCr keeps it
        // for the runtime instance and resets it only after OnUnload, and nothing
        // is written once OnUnload restored it (`unloaded`, under its lock).
        unsafe { CoreTable::from_raw(self.table.0 as *mut _, self.table.1) }
    }

    /// Writes every hook into its slot.
    pub fn install(&self) {
        let view = self.view();
        for p in &self.patches {
            view.write(p.slot, p.hook);
        }
    }

    /// Each patched slot's name and the function it holds now (before
    /// `install`: what the tool would chain to).
    pub fn originals(&self) -> Vec<(&'static str, usize)> {
        self.patches
            .iter()
            .map(|p| (p.slot.name, p.original))
            .collect()
    }

    /// The function `slot` held before the tool patched it (0 if not patched).
    pub fn original(&self, slot: Slot) -> usize {
        self.patches
            .iter()
            .find(|p| p.slot.offset == slot.offset)
            .map_or(0, |p| p.original)
    }

    /// Puts the originals back where our hooks still are. Returns false when the
    /// table was already restored by `OnUnload` (nothing written).
    pub fn restore(&self, why: Restore) -> bool {
        let mut unloaded = self.unloaded.lock().unwrap_or_else(|e| e.into_inner());
        if *unloaded {
            return false;
        }
        let view = self.view();
        for p in &self.patches {
            let current = view.read(p.slot);
            if current == p.hook {
                view.write(p.slot, p.original);
            } else if current != p.original {
                log::info!(
                    "{}: {} was wrapped by a later tool; left as it is",
                    match why {
                        Restore::Leave => "no rewrite possible",
                        Restore::Unload => "OnUnload",
                    },
                    p.slot.name
                );
            }
        }
        if why == Restore::Unload {
            *unloaded = true;
        }
        true
    }
}
