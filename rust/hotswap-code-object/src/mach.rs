//! The `EF_AMDGPU_MACH` table: the processor of an AMDGPU code object, from the
//! low byte of `e_flags`, and which features its ISA name carries.
//!
//! The table is the newest upstream LLVM one (`llvm/include/llvm/BinaryFormat/ELF.h`
//! of the LLVM 24 snapshot `7e3c57157096`, 2026-10-25), value for value: every
//! processor LLVM 22 knows (`llc-22 -march=amdgcn -mcpu=help`; the differential
//! test in `tests/code_object` builds each one and compares) plus the values named
//! since LLVM 22.1: gfx1310 (0x50), gfx1154 (0x57), gfx12-5-generic (0x5b),
//! gfx1172 (0x5c), gfx1170 (0x5d), gfx1171 (0x5e), gfx11-7-generic (0x62),
//! gfx13-generic (0x63) and gfx1250-strict (0xeb). Slots LLVM marks reserved
//! (0x27, 0x40, 0x4b, 0x4d, 0x56, 0x60, 0x61; 0x40 and 0x4b once held the retired
//! gfx940 and gfx941) are absent on purpose: an unknown value is asked of COMGR by
//! the tool, never guessed here.

/// `EF_AMDGPU_MACH`: the processor field of `e_flags`.
pub(crate) const EF_AMDGPU_MACH: u32 = 0x0ff;

/// `(EF_AMDGPU_MACH value, processor name)`, sorted by value.
pub(crate) const AMDGCN_PROCESSORS: &[(u32, &str)] = &[
    (0x020, "gfx600"),
    (0x021, "gfx601"),
    (0x022, "gfx700"),
    (0x023, "gfx701"),
    (0x024, "gfx702"),
    (0x025, "gfx703"),
    (0x026, "gfx704"),
    (0x028, "gfx801"),
    (0x029, "gfx802"),
    (0x02a, "gfx803"),
    (0x02b, "gfx810"),
    (0x02c, "gfx900"),
    (0x02d, "gfx902"),
    (0x02e, "gfx904"),
    (0x02f, "gfx906"),
    (0x030, "gfx908"),
    (0x031, "gfx909"),
    (0x032, "gfx90c"),
    (0x033, "gfx1010"),
    (0x034, "gfx1011"),
    (0x035, "gfx1012"),
    (0x036, "gfx1030"),
    (0x037, "gfx1031"),
    (0x038, "gfx1032"),
    (0x039, "gfx1033"),
    (0x03a, "gfx602"),
    (0x03b, "gfx705"),
    (0x03c, "gfx805"),
    (0x03d, "gfx1035"),
    (0x03e, "gfx1034"),
    (0x03f, "gfx90a"),
    (0x041, "gfx1100"),
    (0x042, "gfx1013"),
    (0x043, "gfx1150"),
    (0x044, "gfx1103"),
    (0x045, "gfx1036"),
    (0x046, "gfx1101"),
    (0x047, "gfx1102"),
    (0x048, "gfx1200"),
    (0x049, "gfx1250"),
    (0x04a, "gfx1151"),
    (0x04c, "gfx942"),
    (0x04e, "gfx1201"),
    (0x04f, "gfx950"),
    (0x050, "gfx1310"),
    (0x051, "gfx9-generic"),
    (0x052, "gfx10-1-generic"),
    (0x053, "gfx10-3-generic"),
    (0x054, "gfx11-generic"),
    (0x055, "gfx1152"),
    (0x057, "gfx1154"),
    (0x058, "gfx1153"),
    (0x059, "gfx12-generic"),
    (0x05a, "gfx1251"),
    (0x05b, "gfx12-5-generic"),
    (0x05c, "gfx1172"),
    (0x05d, "gfx1170"),
    (0x05e, "gfx1171"),
    (0x05f, "gfx9-4-generic"),
    (0x062, "gfx11-7-generic"),
    (0x063, "gfx13-generic"),
    (0x0eb, "gfx1250-strict"),
];

/// Which of the `e_flags` features an ISA name carries for a processor (code
/// objects v4 to v6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NamedFeatures {
    /// `:sramecc±` then `:xnack±`, each when its field is explicitly on or off,
    /// whatever the processor supports: COMGR's rule (`getElfIsaNameFromElfHeader`
    /// consults no per-processor support for v4+; COMGR 2.4 names a gfx1030 object
    /// with SRAMECC set `gfx1030:sramecc+`). Every processor but gfx1250-strict.
    SrameccAndXnack,
    /// `:xnack±` only; the SRAMECC field is ignored.
    XnackOnly,
}

/// The features the ISA name of processor `mach` carries.
///
/// gfx1250-strict (0xeb) names XNACK only; this is the one processor whose names
/// depart from COMGR's mechanical rule, and only in the SRAMECC field.
/// - XNACK is selectable on it: LLVM 24 lists `FEAT_XNACK_ON_OFF_MODES`, accepts
///   the target IDs `gfx1250-strict:xnack±` (`e_flags` 0x3eb/0x2eb, `amdhsa.target`
///   `…gfx1250-strict:xnack+`/`-`) and emits XNACK ANY (0x1eb) by default, while
///   ROCm's compiler emits UNSUPPORTED (0x0eb). So `:xnack+`/`-` for ON/OFF and
///   nothing for ANY or UNSUPPORTED, as COMGR does.
/// - SRAMECC is not a strict feature: clang refuses `gfx1250-strict:sramecc±`
///   ("invalid target ID"), every LLVM producer leaves the field UNSUPPORTED, and
///   ROCr registers gfx1250-strict with SRAMECC unsupported (rocm-systems #10680).
///   Set bits there come from no compiler; COMGR's rule would turn them into a
///   name (`gfx1250-strict:sramecc+`) that neither clang nor ROCr's registry
///   knows. They are ignored: the object is named by its processor and XNACK
///   mode, the names clang and ROCr use for gfx1250-strict.
pub fn named_features(mach: u32) -> NamedFeatures {
    match mach {
        0x0eb => NamedFeatures::XnackOnly,
        _ => NamedFeatures::SrameccAndXnack,
    }
}

/// The processor name for an `EF_AMDGPU_MACH` value (`e_flags & 0xff`), if
/// known. Binary search over a sorted table: constant time in practice.
pub fn processor(mach: u32) -> Option<&'static str> {
    AMDGCN_PROCESSORS
        .binary_search_by_key(&mach, |&(value, _)| value)
        .ok()
        .map(|i| AMDGCN_PROCESSORS[i].1)
}

/// The `EF_AMDGPU_MACH` value of a processor name, if known.
pub fn mach_of(processor: &str) -> Option<u32> {
    AMDGCN_PROCESSORS
        .iter()
        .find(|&&(_, name)| name == processor)
        .map(|&(value, _)| value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_unique_and_in_the_amdgcn_range() {
        for pair in AMDGCN_PROCESSORS.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{pair:?}");
        }
        let mut names: Vec<_> = AMDGCN_PROCESSORS.iter().map(|p| p.1).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), AMDGCN_PROCESSORS.len());
        assert!(AMDGCN_PROCESSORS
            .iter()
            .all(|&(v, _)| (0x20..=EF_AMDGPU_MACH).contains(&v)));
    }

    /// The AMDGCN part of `ELF.h`'s `EF_AMDGPU_MACH` list in the newest upstream
    /// LLVM (the LLVM 24 snapshot `7e3c57157096`, as the project's facts record it).
    const NEWEST_UPSTREAM: &str = "
        0x20 gfx600 0x21 gfx601 0x22 gfx700 0x23 gfx701 0x24 gfx702 0x25 gfx703 0x26 gfx704
        0x27 RESERVED 0x28 gfx801 0x29 gfx802 0x2a gfx803 0x2b gfx810 0x2c gfx900 0x2d gfx902
        0x2e gfx904 0x2f gfx906 0x30 gfx908 0x31 gfx909 0x32 gfx90c 0x33 gfx1010 0x34 gfx1011
        0x35 gfx1012 0x36 gfx1030 0x37 gfx1031 0x38 gfx1032 0x39 gfx1033 0x3a gfx602 0x3b gfx705
        0x3c gfx805 0x3d gfx1035 0x3e gfx1034 0x3f gfx90a 0x40 RESERVED 0x41 gfx1100 0x42 gfx1013
        0x43 gfx1150 0x44 gfx1103 0x45 gfx1036 0x46 gfx1101 0x47 gfx1102 0x48 gfx1200 0x49 gfx1250
        0x4a gfx1151 0x4b RESERVED 0x4c gfx942 0x4d RESERVED 0x4e gfx1201 0x4f gfx950 0x50 gfx1310
        0x51 gfx9-generic 0x52 gfx10-1-generic 0x53 gfx10-3-generic 0x54 gfx11-generic 0x55 gfx1152
        0x56 RESERVED 0x57 gfx1154 0x58 gfx1153 0x59 gfx12-generic
        0x5a gfx1251 0x5b gfx12-5-generic 0x5c gfx1172 0x5d gfx1170 0x5e gfx1171 0x5f gfx9-4-generic
        0x60 RESERVED 0x61 RESERVED 0x62 gfx11-7-generic 0x63 gfx13-generic 0xeb gfx1250-strict";

    #[test]
    fn table_is_the_newest_upstream_one() {
        let words: Vec<&str> = NEWEST_UPSTREAM.split_whitespace().collect();
        let mut named = Vec::new();
        for pair in words.chunks(2) {
            let value = u32::from_str_radix(pair[0].trim_start_matches("0x"), 16).unwrap();
            if pair[1] == "RESERVED" {
                assert_eq!(processor(value), None, "{value:#x} is reserved");
            } else {
                named.push((value, pair[1]));
            }
        }
        assert_eq!(AMDGCN_PROCESSORS, named.as_slice());
    }

    #[test]
    fn only_strict_names_xnack_alone() {
        for &(mach, name) in AMDGCN_PROCESSORS {
            let expected = if name == "gfx1250-strict" {
                NamedFeatures::XnackOnly
            } else {
                NamedFeatures::SrameccAndXnack
            };
            assert_eq!(named_features(mach), expected, "{name}");
        }
    }

    #[test]
    fn known_values() {
        assert_eq!(processor(0x49), Some("gfx1250"));
        assert_eq!(processor(0x4a), Some("gfx1151")); // not gfx940/gfx1201 (Gen-1 bug)
        assert_eq!(processor(0x4c), Some("gfx942"));
        assert_eq!(processor(0x5b), Some("gfx12-5-generic"));
        assert_eq!(mach_of("gfx1250"), Some(0x49));
        assert_eq!(mach_of("gfx1250-strict"), Some(0xeb));
        assert_eq!(mach_of("gfx125F"), None);
        let reserved = [0x00, 0x01, 0x1f, 0x27, 0x40, 0x4b, 0x4d, 0x56, 0x60, 0x61];
        for reserved in reserved.into_iter().chain([0x64, 0xea, 0xec, 0xff]) {
            assert_eq!(processor(reserved), None, "{reserved:#x}");
        }
    }
}
