//! The HSA types and functions the tool calls, and typed calls through the
//! function pointers saved from ROCr's table (never through exported `hsa_*`
//! symbols: the tool must see what the application sees, wrappers included).
#![allow(unsafe_code)] // calls C function pointers taken from ROCr's table
#![allow(non_camel_case_types)] // C type names, as in hsa.h

use std::ffi::{c_int, c_void};

use super::table::{self, CoreTable, Slot, TableError};

/// `hsa_status_t`.
pub(crate) type hsa_status_t = u32;
/// `HSA_STATUS_SUCCESS`.
pub(crate) const HSA_STATUS_SUCCESS: hsa_status_t = 0;
/// `HSA_STATUS_INFO_BREAK`.
pub(crate) const HSA_STATUS_INFO_BREAK: hsa_status_t = 0x1;
/// `HSA_STATUS_ERROR`.
pub(crate) const HSA_STATUS_ERROR: hsa_status_t = 0x1000;
/// `HSA_STATUS_ERROR_NOT_INITIALIZED`.
pub(crate) const HSA_STATUS_ERROR_NOT_INITIALIZED: hsa_status_t = 0x100B;

/// `hsa_agent_info_t` `HSA_AGENT_INFO_DEVICE` (value: `hsa_device_type_t`).
pub(crate) const HSA_AGENT_INFO_DEVICE: u32 = 17;
/// `hsa_amd_agent_info_t` `HSA_AMD_AGENT_INFO_ASIC_REVISION` (value: `uint32_t`).
pub(crate) const HSA_AMD_AGENT_INFO_ASIC_REVISION: u32 = 0xA012;
/// `HSA_DEVICE_TYPE_GPU`.
pub(crate) const HSA_DEVICE_TYPE_GPU: u32 = 1;
/// `HSA_ISA_INFO_NAME_LENGTH` (value: `uint32_t`).
pub(crate) const HSA_ISA_INFO_NAME_LENGTH: u32 = 0;
/// `HSA_ISA_INFO_NAME` (value: `char[NAME_LENGTH]`).
pub(crate) const HSA_ISA_INFO_NAME: u32 = 1;

/// `hsa_agent_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct hsa_agent_t {
    /// Opaque handle.
    pub handle: u64,
}
/// `hsa_isa_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hsa_isa_t {
    /// Opaque handle.
    pub handle: u64,
}
/// `hsa_code_object_reader_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct hsa_code_object_reader_t {
    /// Opaque handle.
    pub handle: u64,
}
/// `hsa_executable_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hsa_executable_t {
    /// Opaque handle.
    pub handle: u64,
}
/// `hsa_loaded_code_object_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hsa_loaded_code_object_t {
    /// Opaque handle.
    pub handle: u64,
}
/// `hsa_file_t` (a POSIX file descriptor).
pub(crate) type hsa_file_t = c_int;

// The signatures of the hooked functions are declared once, with the hooks.
/// Callback of `hsa_iterate_agents`.
pub(crate) type AgentCallback = unsafe extern "C" fn(hsa_agent_t, *mut c_void) -> hsa_status_t;
/// `hsa_iterate_agents`.
pub(crate) type IterateAgentsFn =
    unsafe extern "C" fn(Option<AgentCallback>, *mut c_void) -> hsa_status_t;
/// `hsa_agent_get_info`.
pub(crate) type AgentGetInfoFn =
    unsafe extern "C" fn(hsa_agent_t, u32, *mut c_void) -> hsa_status_t;
/// Callback of `hsa_agent_iterate_isas`.
pub(crate) type IsaCallback = unsafe extern "C" fn(hsa_isa_t, *mut c_void) -> hsa_status_t;
/// `hsa_agent_iterate_isas`.
pub(crate) type AgentIterateIsasFn =
    unsafe extern "C" fn(hsa_agent_t, Option<IsaCallback>, *mut c_void) -> hsa_status_t;
/// `hsa_isa_get_info_alt`.
pub(crate) type IsaGetInfoAltFn = unsafe extern "C" fn(hsa_isa_t, u32, *mut c_void) -> hsa_status_t;

/// The agent queries one `OnLoad` took from its table. All non-null (checked by
/// `OnLoad`). The functions the tool replaced are kept with their slots in
/// [`super::patch::PatchedTable`].
///
/// Lifetime: these are ROCr's functions (or an earlier tool's wrappers), valid
/// until ROCr unloads the tool libraries, which happens after `OnUnload`.
#[derive(Clone, Copy, Debug)]
pub struct Originals {
    /// `hsa_iterate_agents_fn`.
    pub iterate_agents: IterateAgentsFn,
    /// `hsa_agent_get_info_fn`.
    pub agent_get_info: AgentGetInfoFn,
    /// `hsa_agent_iterate_isas_fn`.
    pub agent_iterate_isas: AgentIterateIsasFn,
    /// `hsa_isa_get_info_alt_fn`.
    pub isa_get_info_alt: IsaGetInfoAltFn,
}

/// Turns a non-zero table value into a function pointer of type `F`.
///
/// # Safety
/// `value` is 0 or the address of a function with the C signature `F`.
pub unsafe fn fn_from_slot<F: Copy>(value: usize) -> Option<F> {
    const { assert!(std::mem::size_of::<F>() == std::mem::size_of::<usize>()) };
    if value == 0 {
        return None;
    }
    // SAFETY: `F` is a pointer-sized `extern "C" fn` type (asserted above) and
    // `value` is the address of such a function (contract).
    Some(unsafe { std::mem::transmute_copy::<usize, F>(&value) })
}

impl Originals {
    /// Reads the four agent queries from `table`; every one must be non-null.
    pub fn from_table(table: &CoreTable) -> Result<Originals, TableError> {
        fn get<F: Copy>(table: &CoreTable, slot: Slot) -> Result<F, TableError> {
            // SAFETY: ROCr's table holds, in each slot, 0 or a function with the
            // header's signature for that slot, which `F` mirrors.
            unsafe { fn_from_slot::<F>(table.read(slot)) }.ok_or(TableError::NullSlot(slot.name))
        }
        Ok(Originals {
            iterate_agents: get(table, table::ITERATE_AGENTS)?,
            agent_get_info: get(table, table::AGENT_GET_INFO)?,
            agent_iterate_isas: get(table, table::AGENT_ITERATE_ISAS)?,
            isa_get_info_alt: get(table, table::ISA_GET_INFO_ALT)?,
        })
    }

    /// `hsa_agent_get_info` for a `u32`-valued attribute.
    pub fn agent_info_u32(&self, agent: hsa_agent_t, attribute: u32) -> Result<u32, hsa_status_t> {
        let mut value: u64 = 0; // 8 bytes: room for a runtime that writes more than asked
                                // SAFETY: `value` is a valid, writable, aligned buffer for a u32 attribute.
        let status =
            unsafe { (self.agent_get_info)(agent, attribute, (&mut value as *mut u64).cast()) };
        if status == HSA_STATUS_SUCCESS {
            Ok(u32::from_ne_bytes(
                value.to_ne_bytes()[..4].try_into().unwrap_or([0; 4]),
            ))
        } else {
            Err(status)
        }
    }

    /// Every agent `hsa_iterate_agents` reports, in order.
    pub fn agents(&self) -> Result<Vec<hsa_agent_t>, hsa_status_t> {
        unsafe extern "C" fn collect(agent: hsa_agent_t, data: *mut c_void) -> hsa_status_t {
            crate::boundary::ffi_boundary("hsa_iterate_agents callback", HSA_STATUS_ERROR, || {
                // SAFETY: `data` is the `Vec` passed below, alive during the call.
                let list = unsafe { &mut *data.cast::<Vec<hsa_agent_t>>() };
                list.push(agent);
                HSA_STATUS_SUCCESS
            })
        }
        let mut list: Vec<hsa_agent_t> = Vec::new();
        // SAFETY: the callback matches the C signature and `data` outlives the call.
        let status = unsafe {
            (self.iterate_agents)(Some(collect), (&mut list as *mut Vec<hsa_agent_t>).cast())
        };
        if status == HSA_STATUS_SUCCESS {
            Ok(list)
        } else {
            Err(status)
        }
    }

    /// The name of the agent's first ISA (`hsa_agent_iterate_isas` +
    /// `hsa_isa_get_info_alt`), or `None` when it has none or a query fails.
    pub fn first_isa_name(&self, agent: hsa_agent_t) -> Option<String> {
        struct Query<'a> {
            originals: &'a Originals,
            name: Option<String>,
        }
        unsafe extern "C" fn first(isa: hsa_isa_t, data: *mut c_void) -> hsa_status_t {
            crate::boundary::ffi_boundary(
                "hsa_agent_iterate_isas callback",
                HSA_STATUS_ERROR,
                || {
                    // SAFETY: `data` is the `Query` passed below, alive during the call.
                    let query = unsafe { &mut *data.cast::<Query<'_>>() };
                    query.name = query.originals.isa_name(isa);
                    HSA_STATUS_INFO_BREAK
                },
            )
        }
        let mut query = Query {
            originals: self,
            name: None,
        };
        // SAFETY: the callback matches the C signature and `data` outlives the call.
        let status = unsafe {
            (self.agent_iterate_isas)(agent, Some(first), (&mut query as *mut Query<'_>).cast())
        };
        match status {
            HSA_STATUS_SUCCESS | HSA_STATUS_INFO_BREAK => query.name,
            _ => None,
        }
    }

    fn isa_name(&self, isa: hsa_isa_t) -> Option<String> {
        /// Longer ISA names are not real (today's are under 64 bytes).
        const MAX_ISA_NAME: u32 = 1024;
        let mut length: u64 = 0;
        // SAFETY: `length` is a writable, aligned buffer for a u32 attribute.
        let status = unsafe {
            (self.isa_get_info_alt)(
                isa,
                HSA_ISA_INFO_NAME_LENGTH,
                (&mut length as *mut u64).cast(),
            )
        };
        let length = u32::from_ne_bytes(length.to_ne_bytes()[..4].try_into().ok()?);
        if status != HSA_STATUS_SUCCESS || length == 0 || length > MAX_ISA_NAME {
            return None;
        }
        // One spare zero byte: the name is NUL-terminated even if ROCr writes none.
        let mut buffer = vec![0u8; length as usize + 1];
        // SAFETY: `buffer` holds NAME_LENGTH bytes plus one, as the query requires.
        let status =
            unsafe { (self.isa_get_info_alt)(isa, HSA_ISA_INFO_NAME, buffer.as_mut_ptr().cast()) };
        if status != HSA_STATUS_SUCCESS {
            return None;
        }
        let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
        Some(String::from_utf8_lossy(&buffer[..end]).into_owned())
    }
}
