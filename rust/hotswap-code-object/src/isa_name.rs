//! The one parser of ISA names (`amdgcn-amd-amdhsa--gfx1250:sramecc+:xnack-`):
//! the processor, the features, and the ISA pairs CLR may forward to the tool.
//! [`isa_is_gfx`] works on bytes, so a name that is not UTF-8 is compared
//! exactly.

/// The source → device processor pairs CLR's hotswap gate may forward to the tool:
/// code objects built for the source processor that the tool can make loadable on
/// the device processor. Today only gfx1250 → gfx1250 (B0 code on an A0 GPU).
pub const SUPPORTED_PAIRS: &[(&str, &str)] = &[("gfx1250", "gfx1250")];

/// The processor part of an ISA name: the text after the last `--` up to the
/// first `:` (features). `amdgcn-amd-amdhsa--gfx1250:sramecc+` → `gfx1250`.
/// A name without `--` is taken to be a bare processor (`gfx1250:xnack-`).
pub fn processor_of(isa_name: &str) -> &str {
    let target = isa_name.rsplit_once("--").map_or(isa_name, |(_, t)| t);
    target.split(':').next().unwrap_or(target)
}

/// [`processor_of`] on bytes.
fn processor_of_bytes(isa_name: &[u8]) -> &[u8] {
    let target = isa_name
        .windows(2)
        .rposition(|w| w == b"--")
        .map_or(isa_name, |at| &isa_name[at + 2..]);
    target.split(|&b| b == b':').next().unwrap_or(target)
}

/// The features after the processor (`sramecc+`, `xnack-`, …), in order.
pub fn features_of(isa_name: &str) -> impl Iterator<Item = &str> {
    let target = isa_name.rsplit_once("--").map_or(isa_name, |(_, t)| t);
    target.split(':').skip(1).filter(|f| !f.is_empty())
}

/// True when `isa_name` names processor `gfx` exactly: `--gfx1250` followed by
/// the end of the string or a `:`. `gfx12500` is not `gfx1250`. An empty `gfx`
/// never matches. Bytes are compared exactly.
pub fn isa_is_gfx(isa_name: &[u8], gfx: &[u8]) -> bool {
    !gfx.is_empty()
        && isa_name.windows(2).any(|w| w == b"--")
        && processor_of_bytes(isa_name) == gfx
}

/// True when CLR may forward a code object for `source_gfx` to a `target_gfx`
/// device (exact processor names, no features).
pub fn is_supported_pair(source_gfx: &str, target_gfx: &str) -> bool {
    SUPPORTED_PAIRS
        .iter()
        .any(|&(s, t)| s == source_gfx && t == target_gfx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn isa_is_gfx(isa: &str, gfx: &str) -> bool {
        super::isa_is_gfx(isa.as_bytes(), gfx.as_bytes())
    }

    #[test]
    fn bytes_are_compared_exactly() {
        // Lossy UTF-8 conversion would turn both into U+FFFD and match them.
        assert!(!super::isa_is_gfx(b"amdgcn-amd-amdhsa--\xfe", b"\xff"));
        assert!(super::isa_is_gfx(b"amdgcn-amd-amdhsa--\xfe", b"\xfe"));
        assert!(!super::isa_is_gfx(
            b"amdgcn-amd-amdhsa--gfx1250\xff",
            b"gfx1250"
        ));
    }

    #[test]
    fn features_in_order() {
        let f: Vec<_> = features_of("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-").collect();
        assert_eq!(f, ["sramecc+", "xnack-"]);
        assert_eq!(features_of("amdgcn-amd-amdhsa--gfx1250").count(), 0);
        assert_eq!(processor_of("gfx1250:xnack-"), "gfx1250");
    }

    #[test]
    fn processor_is_delimited_by_colon_or_end() {
        assert!(isa_is_gfx("amdgcn-amd-amdhsa--gfx1250", "gfx1250"));
        assert!(isa_is_gfx("amdgcn-amd-amdhsa--gfx1250:sramecc+", "gfx1250"));
        assert!(isa_is_gfx(
            "amdgcn-amd-amdhsa--gfx1250:sramecc+:xnack-",
            "gfx1250"
        ));
        assert!(!isa_is_gfx("amdgcn-amd-amdhsa--gfx12500", "gfx1250"));
        assert!(!isa_is_gfx("amdgcn-amd-amdhsa--gfx125", "gfx1250"));
        assert!(!isa_is_gfx("amdgcn-amd-amdhsa--gfx1250", ""));
        assert!(!isa_is_gfx("gfx1250", "gfx1250"));
        assert!(isa_is_gfx(
            "amdgcn-amd-amdhsa--gfx12-5-generic",
            "gfx12-5-generic"
        ));
        assert!(!isa_is_gfx("", "gfx1250"));
    }

    #[test]
    fn only_gfx1250_to_gfx1250_is_supported() {
        assert!(is_supported_pair("gfx1250", "gfx1250"));
        assert!(!is_supported_pair("gfx1250", "gfx942"));
        assert!(!is_supported_pair("gfx1250", "gfx950"));
        assert!(!is_supported_pair("gfx942", "gfx942"));
        assert!(!is_supported_pair("", ""));
    }
}
