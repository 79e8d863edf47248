//! ISA identification from the ELF header, with COMGR's algorithm
//! (`getElfIsaNameFromElfHeader` in `comgr-metadata.cpp`):
//! ELF64 little-endian, `e_machine` = `EM_AMDGPU`, OS ABI = `ELFOSABI_AMDGPU_HSA`,
//! ABI version v4/v5/v6, the processor from `EF_AMDGPU_MACH`, then `:sramecc±`
//! and `:xnack±` only for the explicit on/off encodings, except that
//! gfx1250-strict names XNACK only (see [`mach::named_features`]). Reads the
//! 64-byte header only.

use crate::elf::{ElfError, Header};
use crate::mach::{self, NamedFeatures};

/// Why a code object's ISA could not be identified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IsaError {
    /// Not a well-formed ELF64 little-endian object.
    InvalidCodeObject(&'static str),
    /// A well-formed ELF that is not an AMDGPU HSA code object.
    NotAmdgpu(&'static str),
    /// An AMDGPU code object version without an ISA name in its header.
    UnsupportedVersion(u8),
    /// An `EF_AMDGPU_MACH` value this table does not know (a caller may ask COMGR).
    UnknownProcessor(u32),
}

impl std::fmt::Display for IsaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::InvalidCodeObject(why) => write!(f, "not a valid ELF64 code object: {why}"),
            Self::NotAmdgpu(why) => write!(f, "not an AMDGPU HSA code object: {why}"),
            Self::UnsupportedVersion(v) => {
                write!(f, "EI_ABIVERSION {v}: not a code object v4, v5 or v6")
            }
            Self::UnknownProcessor(mach) => write!(f, "unknown EF_AMDGPU_MACH {mach:#x}"),
        }
    }
}

impl std::error::Error for IsaError {}

/// `EM_AMDGPU`.
pub const EM_AMDGPU: u16 = 224;
/// `ELFOSABI_AMDGPU_HSA`.
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// `ELFABIVERSION_AMDGPU_HSA_V4` .. `_V6`: the versions with an ISA name in the header.
const ABI_VERSIONS_WITH_ISA_NAME: std::ops::RangeInclusive<u8> = 2..=4;

/// `EF_AMDGPU_FEATURE_XNACK_V4` mask and its explicit values.
const XNACK_MASK: u32 = 0x300;
const XNACK_OFF: u32 = 0x200;
const XNACK_ON: u32 = 0x300;
/// `EF_AMDGPU_FEATURE_SRAMECC_V4` mask and its explicit values.
const SRAMECC_MASK: u32 = 0xc00;
const SRAMECC_OFF: u32 = 0x800;
const SRAMECC_ON: u32 = 0xc00;

/// The prefix of every HSA ISA name.
pub const HSA_ISA_PREFIX: &str = "amdgcn-amd-amdhsa--";

/// Checks that `header` is an AMDGPU HSA code object with an ISA name (v4-v6).
pub fn check_amdgpu_hsa(header: &Header) -> Result<(), IsaError> {
    if header.machine != EM_AMDGPU {
        return Err(IsaError::NotAmdgpu("e_machine is not EM_AMDGPU (224)"));
    }
    if header.os_abi != ELFOSABI_AMDGPU_HSA {
        return Err(IsaError::NotAmdgpu(
            "OS ABI is not ELFOSABI_AMDGPU_HSA (64)",
        ));
    }
    if !ABI_VERSIONS_WITH_ISA_NAME.contains(&header.abi_version) {
        return Err(IsaError::UnsupportedVersion(header.abi_version));
    }
    Ok(())
}

/// The feature suffix (`:sramecc±` then `:xnack±`) for v4+ `e_flags`, naming
/// only the features `named` allows.
fn feature_suffix(flags: u32, named: NamedFeatures) -> &'static str {
    let sramecc = match (named, flags & SRAMECC_MASK) {
        (NamedFeatures::XnackOnly, _) => 0,
        (NamedFeatures::SrameccAndXnack, SRAMECC_ON) => 1,
        (NamedFeatures::SrameccAndXnack, SRAMECC_OFF) => 2,
        (NamedFeatures::SrameccAndXnack, _) => 0,
    };
    let xnack = match flags & XNACK_MASK {
        XNACK_ON => 1,
        XNACK_OFF => 2,
        _ => 0,
    };
    const SUFFIXES: [[&str; 3]; 3] = [
        ["", ":xnack+", ":xnack-"],
        [":sramecc+", ":sramecc+:xnack+", ":sramecc+:xnack-"],
        [":sramecc-", ":sramecc-:xnack+", ":sramecc-:xnack-"],
    ];
    SUFFIXES[sramecc][xnack]
}

/// The ISA name from the header alone; `UnknownProcessor` when the MACH value is
/// not in the table (the caller may ask COMGR).
pub fn isa_name_from_header(header: &Header) -> Result<String, IsaError> {
    let processor = processor_from_header(header)?;
    let mach = header.flags & mach::EF_AMDGPU_MACH;
    let suffix = feature_suffix(header.flags, mach::named_features(mach));
    let mut name = String::with_capacity(HSA_ISA_PREFIX.len() + processor.len() + suffix.len());
    name.push_str(HSA_ISA_PREFIX);
    name.push_str(processor);
    name.push_str(suffix);
    Ok(name)
}

/// The processor (`gfx1250`) from the header alone, without allocating;
/// `UnknownProcessor` when the MACH value is not in the table.
pub fn processor_from_header(header: &Header) -> Result<&'static str, IsaError> {
    check_amdgpu_hsa(header)?;
    let mach = header.flags & mach::EF_AMDGPU_MACH;
    mach::processor(mach).ok_or(IsaError::UnknownProcessor(mach))
}

/// The processor of a code object (`gfx1250`, `gfx12-5-generic`) from its
/// 64-byte header, without allocating. `UnknownProcessor` when the MACH value
/// is not in the table.
pub fn processor(code_object: &[u8]) -> Result<&'static str, IsaError> {
    processor_from_header(&Header::parse(code_object).map_err(elf_error)?)
}

/// [`processor`] for an object of `total_len` bytes of which only `prefix` (at
/// least the 64-byte header, e.g. read from a file with `pread`) is in memory.
pub fn processor_of_prefix(prefix: &[u8], total_len: u64) -> Result<&'static str, IsaError> {
    processor_from_header(&Header::parse_prefix(prefix, total_len).map_err(elf_error)?)
}

/// Maps an ELF reading error to the ISA error.
pub fn elf_error(e: ElfError) -> IsaError {
    IsaError::InvalidCodeObject(e.reason())
}

/// The ISA name of a code object from its 64-byte header, exactly as COMGR's
/// `amd_comgr_get_data_isa_name` names it (constant time). `UnknownProcessor`
/// when the MACH value is not in the table.
pub fn isa_name(code_object: &[u8]) -> Result<String, IsaError> {
    isa_name_from_header(&Header::parse(code_object).map_err(elf_error)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 header; tests adjust fields.
    fn header(machine: u16, os_abi: u8, abi_version: u8, flags: u32) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = 1;
        h[6] = 1;
        h[7] = os_abi;
        h[8] = abi_version;
        h[16..18].copy_from_slice(&3u16.to_le_bytes());
        h[18..20].copy_from_slice(&machine.to_le_bytes());
        h[20..24].copy_from_slice(&1u32.to_le_bytes());
        h[48..52].copy_from_slice(&flags.to_le_bytes());
        h[52..54].copy_from_slice(&64u16.to_le_bytes());
        h
    }

    #[test]
    fn names_like_comgr() {
        let cases = [
            (3, 0x549, "amdgcn-amd-amdhsa--gfx1250"),
            (2, 0x04c, "amdgcn-amd-amdhsa--gfx942"),
            (3, 0xe4c, "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"),
            (3, 0x84c, "amdgcn-amd-amdhsa--gfx942:sramecc-"),
            (2, 0x33f, "amdgcn-amd-amdhsa--gfx90a:xnack+"),
            (4, 0x100_035f, "amdgcn-amd-amdhsa--gfx9-4-generic:xnack+"),
            (4, 0x100_055b, "amdgcn-amd-amdhsa--gfx12-5-generic"),
        ];
        for (abi, flags, expected) in cases {
            let h = header(EM_AMDGPU, ELFOSABI_AMDGPU_HSA, abi, flags);
            assert_eq!(isa_name(&h).as_deref(), Ok(expected), "{flags:#x}");
        }
    }

    /// Every `EF_AMDGPU_MACH` value named or reserved since LLVM 22.1, and
    /// gfx1250-strict under each XNACK and SRAMECC encoding, with the names the
    /// facts give (`amdhsa.target` of LLVM 24 objects: `0x1eb` → `gfx1250-strict`,
    /// `0x3eb` → `gfx1250-strict:xnack+`, `0x2eb` → `gfx1250-strict:xnack-`).
    #[test]
    fn names_every_mach_value_new_since_llvm_22() {
        const V5: u8 = 3;
        const V6: u8 = 4;
        let named: &[(u8, u32, &str)] = &[
            (V5, 0x050, "gfx1310"),
            (V5, 0x057, "gfx1154"),
            (V5, 0x05c, "gfx1172"),
            (V5, 0x05d, "gfx1170"),
            (V5, 0x05e, "gfx1171"),
            (V6, 0x100_005b, "gfx12-5-generic"),
            (V6, 0x100_0062, "gfx11-7-generic"),
            (V6, 0x100_0063, "gfx13-generic"),
            // COMGR's rule for every processor but strict: explicit on/off named.
            (V5, 0x35d, "gfx1170:xnack+"),
            (V6, 0x100_0c63, "gfx13-generic:sramecc+"),
            // gfx1250-strict: the four XNACK encodings, ...
            (V5, 0x0eb, "gfx1250-strict"), // UNSUPPORTED (ROCm's compiler)
            (V6, 0x1eb, "gfx1250-strict"), // ANY (LLVM 24's default)
            (V6, 0x2eb, "gfx1250-strict:xnack-"),
            (V6, 0x3eb, "gfx1250-strict:xnack+"),
            (V5, 0x3eb, "gfx1250-strict:xnack+"),
            (2, 0x2eb, "gfx1250-strict:xnack-"),
            // ... and SRAMECC set, which strict ignores.
            (V6, 0x4eb, "gfx1250-strict"),
            (V6, 0x8eb, "gfx1250-strict"),
            (V6, 0xceb, "gfx1250-strict"),
            (V6, 0x9eb, "gfx1250-strict"),
            (V6, 0xaeb, "gfx1250-strict:xnack-"),
            (V6, 0xfeb, "gfx1250-strict:xnack+"),
        ];
        for &(abi, flags, processor) in named {
            let h = header(EM_AMDGPU, ELFOSABI_AMDGPU_HSA, abi, flags);
            let expected = format!("{HSA_ISA_PREFIX}{processor}");
            assert_eq!(isa_name(&h), Ok(expected), "e_flags {flags:#x}");
        }
        // Reserved: never named here (the tool asks COMGR).
        for mach in [0x040, 0x04b, 0x060, 0x061] {
            let h = header(EM_AMDGPU, ELFOSABI_AMDGPU_HSA, V6, 0x100_0000 | mach);
            assert_eq!(isa_name(&h), Err(IsaError::UnknownProcessor(mach)));
        }
    }

    #[test]
    fn processor_is_the_name_without_prefix_and_features() {
        for (flags, gfx) in [
            (0x549, "gfx1250"),
            (0xe4c, "gfx942"),
            (0x55b, "gfx12-5-generic"),
        ] {
            let h = header(EM_AMDGPU, ELFOSABI_AMDGPU_HSA, 3, flags);
            let p = processor(&h).unwrap();
            assert_eq!(p, gfx);
            assert!(isa_name(&h).unwrap().contains(&format!("--{p}")));
        }
        let bad = header(62, ELFOSABI_AMDGPU_HSA, 3, 0x49);
        assert!(matches!(processor(&bad), Err(IsaError::NotAmdgpu(_))));
        assert!(matches!(
            processor(&bad[..10]),
            Err(IsaError::InvalidCodeObject(_))
        ));
    }

    #[test]
    fn refuses_what_comgr_refuses() {
        let h = header(62, ELFOSABI_AMDGPU_HSA, 3, 0x49);
        assert!(matches!(isa_name(&h), Err(IsaError::NotAmdgpu(_))));
        for os_abi in [0, 65, 66] {
            let h = header(EM_AMDGPU, os_abi, 3, 0x49);
            assert!(matches!(isa_name(&h), Err(IsaError::NotAmdgpu(_))));
        }
        for abi in [0, 1, 5, 255] {
            let h = header(EM_AMDGPU, ELFOSABI_AMDGPU_HSA, abi, 0x49);
            assert_eq!(isa_name(&h), Err(IsaError::UnsupportedVersion(abi)));
        }
    }

    #[test]
    fn malformed_headers_are_invalid() {
        let good = header(EM_AMDGPU, ELFOSABI_AMDGPU_HSA, 3, 0x49);
        for len in 0..64 {
            assert!(matches!(
                isa_name(&good[..len]),
                Err(IsaError::InvalidCodeObject(_))
            ));
        }
        for (at, value) in [(0, 0u8), (4, 1), (4, 3), (5, 2), (6, 0)] {
            let mut h = good.clone();
            h[at] = value;
            assert!(
                matches!(isa_name(&h), Err(IsaError::InvalidCodeObject(_))),
                "byte {at}"
            );
        }
        // Header tables pointing past the end, or with absurd sizes.
        let mut h = good.clone();
        h[32..40].copy_from_slice(&u64::MAX.to_le_bytes()); // e_phoff
        h[54..56].copy_from_slice(&56u16.to_le_bytes());
        h[56..58].copy_from_slice(&1u16.to_le_bytes());
        assert!(matches!(isa_name(&h), Err(IsaError::InvalidCodeObject(_))));
        let mut h = good.clone();
        h[40..48].copy_from_slice(&0u64.to_le_bytes()); // e_shoff
        h[58..60].copy_from_slice(&64u16.to_le_bytes());
        h[60..62].copy_from_slice(&0xffffu16.to_le_bytes());
        assert!(matches!(isa_name(&h), Err(IsaError::InvalidCodeObject(_))));
    }

    #[test]
    fn suffix_order_is_sramecc_then_xnack() {
        let both = NamedFeatures::SrameccAndXnack;
        assert_eq!(feature_suffix(0xf00, both), ":sramecc+:xnack+");
        assert_eq!(feature_suffix(0xa00, both), ":sramecc-:xnack-");
        assert_eq!(feature_suffix(0x500, both), ""); // ANY, ANY
        assert_eq!(feature_suffix(0x000, both), ""); // unsupported
        assert_eq!(feature_suffix(0xf00, NamedFeatures::XnackOnly), ":xnack+");
    }
}

#[cfg(test)]
mod unknown_tests {
    use super::*;

    #[test]
    fn unknown_mach_is_reported_never_guessed() {
        // 0x27 is reserved: not in the table.
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4..7].copy_from_slice(&[2, 1, 1]);
        h[7] = ELFOSABI_AMDGPU_HSA;
        h[8] = 2;
        h[18..20].copy_from_slice(&EM_AMDGPU.to_le_bytes());
        h[48] = 0x27;
        assert_eq!(isa_name(&h), Err(IsaError::UnknownProcessor(0x27)));
    }
}
