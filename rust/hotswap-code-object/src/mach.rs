//! The `EF_AMDGPU_MACH` table: the processor of an AMDGPU code object, from the
//! low byte of `e_flags`.
//!
//! Every processor LLVM 22 knows (`llc-22 -march=amdgcn -mcpu=help`; the
//! differential test in `tests/code_object` builds each one and compares), the
//! processors newer LLVMs and ROCm's LLVM add, and the historic values ROCm still
//! names (gfx940, gfx941). Slots LLVM marks reserved without a name (0x27, 0x4d,
//! 0x56) are absent on purpose: an unknown value falls back to COMGR, never to a
//! guess. Values: `llvm/include/llvm/BinaryFormat/ELF.h` and
//! `llvm/test/CodeGen/AMDGPU/elf-header-flags-mach.ll`.

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
    (0x040, "gfx940"), // historic; reserved in upstream LLVM since gfx940 was retired
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
    (0x04b, "gfx941"), // historic; reserved in upstream LLVM since gfx941 was retired
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
    (0x0eb, "gfx125F"), // ROCm's LLVM only
];

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

    #[test]
    fn known_values() {
        assert_eq!(processor(0x49), Some("gfx1250"));
        assert_eq!(processor(0x4a), Some("gfx1151")); // not gfx940/gfx1201 (Gen-1 bug)
        assert_eq!(processor(0x4c), Some("gfx942"));
        assert_eq!(processor(0x5b), Some("gfx12-5-generic"));
        assert_eq!(mach_of("gfx1250"), Some(0x49));
        for reserved in [0x00, 0x01, 0x1f, 0x27, 0x4d, 0x56, 0x60, 0x61, 0x64, 0xff] {
            assert_eq!(processor(reserved), None, "{reserved:#x}");
        }
    }
}
