//! `#[repr(C)]` mirrors of `ApiTableVersion`, `HsaApiTable` and `CoreApiTable` from
//! ROCr's `hsa_api_trace.h`, and the bounded slot access `OnLoad`/`OnUnload` use.
//!
//! ROCr stores each table's byte size in `version.minor_id`; a slot exists only if
//! `offset + 8 <= minor_id`. The layout is pinned twice: `const` asserts below and
//! the C++ test `tests/standin/table_layout.cpp` against the real header.
#![allow(unsafe_code)] // reads and writes ROCr's table through raw pointers

use std::ffi::c_void;
use std::mem::{offset_of, size_of};
use std::sync::atomic::{AtomicUsize, Ordering};

/// `ApiTableVersion`: the first member of every HSA API table.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ApiTableVersion {
    /// Incompatible-change counter (`HSA_*_API_TABLE_MAJOR_VERSION`).
    pub major_id: u32,
    /// The table's size in bytes, as ROCr sets it.
    pub minor_id: u32,
    /// Step id.
    pub step_id: u32,
    /// Reserved.
    pub reserved: u32,
}

/// `HsaApiTable` (5.2 layout; newer headers append members after `image_ext_`).
#[repr(C)]
#[derive(Debug)]
pub struct HsaApiTable {
    /// Version; `minor_id` = `sizeof(HsaApiTable)`.
    pub version: ApiTableVersion,
    /// `CoreApiTable*`.
    pub core_: *mut CoreApiTable,
    /// `AmdExtTable*` (not used).
    pub amd_ext_: *mut c_void,
    /// `FinalizerExtTable*` (not used).
    pub finalizer_ext_: *mut c_void,
    /// `ImageExtTable*` (not used).
    pub image_ext_: *mut c_void,
}

/// The `CoreApiTable` majors (`HSA_CORE_API_TABLE_MAJOR_VERSION`) the tool is
/// written against: 1 (ROCm 5.x headers) and 2 (ROCm 6.x and later), whose
/// slots the tool uses are at the same offsets. `OnLoad` refuses a table of
/// any other major: a new major is an incompatible change by definition.
pub(crate) const CORE_MAJORS: [u32; 2] = [1, 2];

/// Number of function pointers in `CoreApiTable` (unchanged from ROCm 5.2 to 7.x).
pub(crate) const CORE_SLOT_COUNT: usize = 125;

/// `CoreApiTable`: the version followed by 125 function pointers. Slots are
/// addressed by [`Slot`] (byte offsets), never by a Rust field name, so a table
/// shorter than this struct is never read past its `minor_id`.
#[repr(C)]
#[derive(Debug)]
pub struct CoreApiTable {
    /// Version; `minor_id` = `sizeof(CoreApiTable)`.
    pub version: ApiTableVersion,
    /// `hsa_init_fn` … `hsa_executable_iterate_program_symbols_fn`.
    pub slots: [usize; CORE_SLOT_COUNT],
}

/// One function-pointer slot of `CoreApiTable`, by name and byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// The member name in `hsa_api_trace.h`.
    pub name: &'static str,
    /// Byte offset from the start of `CoreApiTable`.
    pub offset: usize,
}

impl Slot {
    const fn at(name: &'static str, index: usize) -> Slot {
        Slot {
            name,
            offset: size_of::<ApiTableVersion>() + index * size_of::<usize>(),
        }
    }

    /// One past the last byte of the slot.
    pub const fn end(self) -> usize {
        self.offset + size_of::<usize>()
    }
}

/// `hsa_executable_destroy_fn`.
pub(crate) const EXECUTABLE_DESTROY: Slot = Slot::at("hsa_executable_destroy_fn", 84);
/// `hsa_iterate_agents_fn`.
pub(crate) const ITERATE_AGENTS: Slot = Slot::at("hsa_iterate_agents_fn", 5);
/// `hsa_agent_get_info_fn`.
pub(crate) const AGENT_GET_INFO: Slot = Slot::at("hsa_agent_get_info_fn", 6);
/// `hsa_agent_iterate_isas_fn`.
pub(crate) const AGENT_ITERATE_ISAS: Slot = Slot::at("hsa_agent_iterate_isas_fn", 108);
/// `hsa_isa_get_info_alt_fn`.
pub(crate) const ISA_GET_INFO_ALT: Slot = Slot::at("hsa_isa_get_info_alt_fn", 109);
/// `hsa_code_object_reader_create_from_file_fn`.
pub(crate) const READER_CREATE_FROM_FILE: Slot =
    Slot::at("hsa_code_object_reader_create_from_file_fn", 115);
/// `hsa_code_object_reader_create_from_memory_fn`.
pub(crate) const READER_CREATE_FROM_MEMORY: Slot =
    Slot::at("hsa_code_object_reader_create_from_memory_fn", 116);
/// `hsa_code_object_reader_destroy_fn`.
pub(crate) const READER_DESTROY: Slot = Slot::at("hsa_code_object_reader_destroy_fn", 117);
/// `hsa_executable_load_agent_code_object_fn`.
pub(crate) const LOAD_AGENT_CODE_OBJECT: Slot =
    Slot::at("hsa_executable_load_agent_code_object_fn", 120);

/// The slots the tool only reads (agent queries).
pub(crate) const QUERIED: [Slot; 4] = [
    ITERATE_AGENTS,
    AGENT_GET_INFO,
    AGENT_ITERATE_ISAS,
    ISA_GET_INFO_ALT,
];

// The layout of ecosystem.md §3.5 (x86_64, Debian 5.2.3 header, unchanged since).
const _: () = assert!(size_of::<ApiTableVersion>() == 16);
const _: () = assert!(offset_of!(HsaApiTable, core_) == 16);
const _: () = assert!(size_of::<HsaApiTable>() == 48);
const _: () = assert!(size_of::<CoreApiTable>() == 1016);
const _: () = assert!(AGENT_GET_INFO.offset == 64);
const _: () = assert!(ITERATE_AGENTS.offset == 56);
const _: () = assert!(AGENT_ITERATE_ISAS.offset == 880);
const _: () = assert!(ISA_GET_INFO_ALT.offset == 888);
const _: () = assert!(EXECUTABLE_DESTROY.offset == 688);
const _: () = assert!(READER_CREATE_FROM_FILE.offset == 936);
const _: () = assert!(READER_CREATE_FROM_MEMORY.offset == 944);
const _: () = assert!(READER_DESTROY.offset == 952);
const _: () = assert!(LOAD_AGENT_CODE_OBJECT.offset == 976);

/// Why a table was refused. The table is never modified in these cases.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableError {
    /// `table` was NULL.
    NullTable,
    /// `table->version.minor_id` does not cover `core_`.
    RootTooSmall(u32),
    /// `table->core_` was NULL.
    NullCore,
    /// `core_->version.major_id` is not one of [`CORE_MAJORS`].
    UnknownMajor(u32),
    /// `core_->version.minor_id` does not cover `slot`.
    CoreTooSmall {
        /// The first slot outside the table.
        slot: &'static str,
        /// Bytes needed.
        need: usize,
        /// `minor_id`.
        have: u32,
    },
    /// A slot the tool needs holds NULL.
    NullSlot(&'static str),
    /// A slot already holds this library's hook (the same table handed twice).
    AlreadyPatched(&'static str),
}

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NullTable => write!(f, "API table is NULL"),
            Self::RootTooSmall(have) => {
                write!(f, "HsaApiTable is {have} bytes, too small to hold core_")
            }
            Self::NullCore => write!(f, "HsaApiTable.core_ is NULL"),
            Self::UnknownMajor(major) => write!(
                f,
                "CoreApiTable major {major} is not one this tool is written against ({})",
                CORE_MAJORS.map(|m| m.to_string()).join(", ")
            ),
            Self::CoreTooSmall { slot, need, have } => write!(
                f,
                "CoreApiTable is {have} bytes, {need} needed for {slot} (table too old or truncated)"
            ),
            Self::NullSlot(slot) => write!(f, "CoreApiTable.{slot} is NULL"),
            Self::AlreadyPatched(slot) => {
                write!(f, "CoreApiTable.{slot} already holds this tool's hook")
            }
        }
    }
}

/// A checked view of ROCr's `CoreApiTable`: every slot access is bounded by the
/// `minor_id` read when the view was made.
#[derive(Debug)]
pub struct CoreTable {
    core: *mut CoreApiTable,
    size: u32,
}

impl CoreTable {
    /// Checks `table`, `table->core_`, that the core table's major is one of
    /// [`CORE_MAJORS`] and that its `minor_id` covers every slot in `needed`;
    /// reads nothing beyond the sizes the tables declare.
    ///
    /// # Safety
    /// `table` is NULL or points to a live `HsaApiTable` whose `version.minor_id`
    /// is its true size, and whose `core_` is NULL or a live `CoreApiTable` of
    /// `core_->version.minor_id` bytes; both outlive the returned view.
    pub unsafe fn from_root(
        table: *mut HsaApiTable,
        needed: &[Slot],
    ) -> Result<CoreTable, TableError> {
        if table.is_null() {
            return Err(TableError::NullTable);
        }
        // SAFETY: `table` is non-null and live (contract); `version` is its first member.
        let root_size = unsafe { (*table).version.minor_id };
        if (root_size as usize) < offset_of!(HsaApiTable, core_) + size_of::<usize>() {
            return Err(TableError::RootTooSmall(root_size));
        }
        // SAFETY: the root table is at least large enough to hold `core_` (checked above).
        let core = unsafe { (*table).core_ };
        if core.is_null() {
            return Err(TableError::NullCore);
        }
        // SAFETY: `core` is non-null and live (contract); `version` is its first member.
        let version = unsafe { (*core).version };
        if !CORE_MAJORS.contains(&version.major_id) {
            return Err(TableError::UnknownMajor(version.major_id));
        }
        let size = version.minor_id;
        for slot in needed {
            if slot.end() > size as usize {
                return Err(TableError::CoreTooSmall {
                    slot: slot.name,
                    need: slot.end(),
                    have: size,
                });
            }
        }
        Ok(CoreTable { core, size })
    }

    /// A view of a table already checked by [`CoreTable::from_root`].
    ///
    /// # Safety
    /// `core` and `size` come from a view made by `from_root`, and the table is
    /// still live.
    pub unsafe fn from_raw(core: *mut CoreApiTable, size: u32) -> CoreTable {
        CoreTable { core, size }
    }

    /// The `CoreApiTable*`.
    pub fn raw(&self) -> *mut CoreApiTable {
        self.core
    }

    /// The table's `major_id`.
    pub fn major_id(&self) -> u32 {
        // SAFETY: `core` is live for the view's life (contract of `from_root`).
        unsafe { (*self.core).version.major_id }
    }

    /// The table's declared size.
    pub fn size(&self) -> u32 {
        self.size
    }

    fn slot_ptr(&self, slot: Slot) -> *mut usize {
        assert!(slot.end() <= self.size as usize, "slot outside the table");
        // SAFETY: the offset is inside the table's declared size (asserted) and
        // slots are pointer-aligned (16 + 8 * index from an aligned struct).
        unsafe { self.core.cast::<u8>().add(slot.offset).cast::<usize>() }
    }

    /// The slot as an atomic: ROCr's trampolines may read a slot on other threads
    /// while the tool writes it (the tool leaving the table, `OnUnload`), so every
    /// access is one whole, untorn pointer-sized load or store.
    fn slot_atomic(&self, slot: Slot) -> &AtomicUsize {
        // SAFETY: `slot_ptr` is in bounds and pointer-aligned, the table outlives
        // `self` (ROCr's table for one runtime instance), and every access the tool
        // makes to a slot goes through this atomic view.
        unsafe { AtomicUsize::from_ptr(self.slot_ptr(slot)) }
    }

    /// The value of `slot` (0 for NULL).
    pub fn read(&self, slot: Slot) -> usize {
        self.slot_atomic(slot).load(Ordering::Acquire)
    }

    /// Writes `value` into `slot`.
    pub fn write(&self, slot: Slot, value: usize) {
        self.slot_atomic(slot).store(value, Ordering::Release)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCHED: [Slot; 4] = [
        READER_CREATE_FROM_MEMORY,
        READER_CREATE_FROM_FILE,
        READER_DESTROY,
        LOAD_AGENT_CODE_OBJECT,
    ];

    fn fake_core(size: u32) -> Box<CoreApiTable> {
        let mut core = Box::new(CoreApiTable {
            version: ApiTableVersion {
                major_id: 1,
                minor_id: size,
                ..Default::default()
            },
            slots: [0; CORE_SLOT_COUNT],
        });
        for (i, s) in core.slots.iter_mut().enumerate() {
            *s = 0x1000 + i;
        }
        core
    }

    #[test]
    fn checks_bounds_before_anything() {
        let mut core = fake_core(1016);
        let mut root = HsaApiTable {
            version: ApiTableVersion {
                major_id: 1,
                minor_id: 48,
                ..Default::default()
            },
            core_: &mut *core,
            amd_ext_: std::ptr::null_mut(),
            finalizer_ext_: std::ptr::null_mut(),
            image_ext_: std::ptr::null_mut(),
        };
        // SAFETY: live tables of the declared sizes.
        let view = unsafe { CoreTable::from_root(&mut root, &PATCHED) }.unwrap();
        assert_eq!(view.read(READER_CREATE_FROM_FILE), 0x1000 + 115);
        assert_eq!(view.read(LOAD_AGENT_CODE_OBJECT), 0x1000 + 120);

        core.version.minor_id = LOAD_AGENT_CODE_OBJECT.offset as u32;
        // SAFETY: as above.
        let err = unsafe { CoreTable::from_root(&mut root, &PATCHED) }.unwrap_err();
        assert!(matches!(err, TableError::CoreTooSmall { need: 984, .. }));

        // Majors: the two the tool is written against, and no other.
        core.version.minor_id = 1016;
        for (major, accepted) in [
            (0, false),
            (1, true),
            (2, true),
            (3, false),
            (u32::MAX, false),
        ] {
            core.version.major_id = major;
            // SAFETY: as above.
            let result = unsafe { CoreTable::from_root(&mut root, &PATCHED) };
            match result {
                Ok(_) => assert!(accepted, "major {major} accepted"),
                Err(e) => {
                    assert!(!accepted, "major {major} refused: {e}");
                    assert_eq!(e, TableError::UnknownMajor(major));
                }
            }
        }
        core.version.major_id = 1;

        root.version.minor_id = 16;
        // SAFETY: as above.
        let err = unsafe { CoreTable::from_root(&mut root, &PATCHED) }.unwrap_err();
        assert_eq!(err, TableError::RootTooSmall(16));
        // SAFETY: NULL is allowed.
        let err = unsafe { CoreTable::from_root(std::ptr::null_mut(), &PATCHED) }.unwrap_err();
        assert_eq!(err, TableError::NullTable);
    }
}
