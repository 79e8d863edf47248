//! The native backend: [`hotswap_code_object::rewrite`], the Rust B0→A0
//! rewriter: the same-size fixes, and the DS two-address split by moving each
//! function that holds one into an appended code segment (the object grows;
//! see that module for what it fixes, what it refuses, the `s_clause` policy
//! and the metadata retag). An object with a site of another growth class
//! (none occurs in the ROCm-built code measured) is refused.
//!
//! Selected with `HSA_HOTSWAP_REWRITER=native`, and used when no COMGR or
//! rocjitsu rewriter is usable. Nothing to load or probe. Only
//! [`Profile::B0ToA0`] without COMGR flags is rewritten; any other request is
//! [`RetargetError::Unsupported`]. A refusal is [`RetargetError::Refused`]
//! with a message naming the first remaining site (function, offset, class)
//! and the count, logged here as one warning per call: the tool asks once per
//! content, so once per refused object.
//! With `HSA_HOTSWAP_NATIVE_ALLOW_PARTIAL` true, an object whose growth sites
//! remain is returned partly fixed, with one warning.

use hotswap_code_object::rewrite::{self, Options, Plan, Retag, RewriteError};
use hotswap_code_object::CodeObject;

use super::{Backend, BackendKind, Profile, Request, RetargetError, RewriteFlags, Rewritten};
use crate::config::{Config, HSA_HOTSWAP_NATIVE_ALLOW_PARTIAL};

/// The native rewriter with its options.
#[derive(Debug)]
pub struct Native {
    options: Options,
    describe: String,
}

impl Native {
    /// The backend with `options`.
    pub fn new(options: Options) -> Native {
        let describe = if options.allow_partial {
            format!(
                "native rewriter (same-size fixes, DS two-address split by moving code; \
                 {HSA_HOTSWAP_NATIVE_ALLOW_PARTIAL}: objects with other growth sites are loaded \
                 partly fixed)"
            )
        } else {
            "native rewriter (same-size fixes, DS two-address split by moving code; objects \
             with other growth sites are refused)"
                .to_owned()
        };
        Native { options, describe }
    }

    /// The backend `config` asks for (`HSA_HOTSWAP_NATIVE_ALLOW_PARTIAL`).
    pub fn from_config(config: &Config) -> Native {
        Native::new(Options {
            allow_partial: config.native_allow_partial,
            ..Options::default()
        })
    }

    /// The plan for `object`, or the error the tool and the C API get.
    fn plan(&self, object: &CodeObject<'_>) -> Result<Plan, RetargetError> {
        rewrite::plan_object(object, &self.options).map_err(refusal)
    }
}

/// The [`RetargetError`] of a rewrite error: another processor, or code
/// already built for A0, is not a pair this backend rewrites; everything else
/// is a property of the object's content, so a refusal.
fn refusal(e: RewriteError) -> RetargetError {
    match e {
        RewriteError::NotGfx1250(_) | RewriteError::AlreadyA0 => {
            log::debug!("native rewriter: {e}");
            RetargetError::Unsupported
        }
        RewriteError::NeedsGrowth(ref sites) => {
            for site in sites {
                log::debug!("native rewriter: needs code growth: {site}");
            }
            refused(format!(
                "{e}; {HSA_HOTSWAP_NATIVE_ALLOW_PARTIAL}=1 loads it partly fixed"
            ))
        }
        e => refused(e.to_string()),
    }
}

/// A refusal, with its one warning.
fn refused(why: String) -> RetargetError {
    log::warn!("native rewriter: refused: {why}");
    RetargetError::Refused(why)
}

/// One debug line: what was fixed per class, kept, and the retag.
fn log_summary(plan: &Plan) {
    if !log::log_enabled!(log::Level::Debug) {
        return;
    }
    let report = &plan.report;
    let mut classes: Vec<String> = Vec::new();
    for class in hotswap_code_object::gfx1250::A0Class::ALL {
        let n = report.fixed_count(class);
        if n > 0 {
            classes.push(format!("{class} {n}"));
        }
    }
    for m in &report.moved {
        log::debug!(
            "native rewriter: moved {} {:#x}+{:#x} -> {:#x}+{:#x}",
            m.name,
            m.original_vaddr,
            m.original_size,
            m.new_vaddr,
            m.new_size
        );
    }
    log::debug!(
        "native rewriter: fixed {} site(s) in place ({}), {} DS2 split by moving {} function(s), kept {} \
         s_clause, {} byte range(s) patched, {} byte(s) appended, metadata: {}",
        report.fixed.len() + report.at_definition.len(),
        if classes.is_empty() {
            "none".to_owned()
        } else {
            classes.join(", ")
        },
        report.grown.len(),
        report.moved.len(),
        report.kept.len(),
        plan.patches.len(),
        plan.tail.len(),
        report
            .retag
            .map_or_else(|| "not read".to_owned(), |r| r.to_string()),
    );
}

impl Backend for Native {
    fn kind(&self) -> BackendKind {
        BackendKind::Native
    }

    fn describe(&self) -> &str {
        &self.describe
    }

    fn cache_identity(&self) -> Option<String> {
        // Built into the tool: the tool's build (version and build-id) is in
        // every key already; this adds the rewriter's version and options.
        Some(format!(
            "native {} {:?}",
            env!("CARGO_PKG_VERSION"),
            self.options
        ))
    }

    fn rewrite(
        &self,
        object: &CodeObject<'_>,
        request: &Request<'_>,
    ) -> Result<Rewritten, RetargetError> {
        if request.profile() != Some(Profile::B0ToA0) || request.flags != RewriteFlags::default() {
            return Err(RetargetError::Unsupported);
        }
        let plan = self.plan(object)?;
        log_summary(&plan);
        if let Some(Retag::KeptSizeChanged(n)) = plan.report.retag {
            log::info!(
                "native rewriter: {n} .gfx1250_revision value(s) not retagged to A0: the \
                 re-encoded metadata note would change size, so it is kept as it is"
            );
        }
        if let Some(first) = plan.report.remaining.first() {
            log::warn!(
                "native rewriter ({HSA_HOTSWAP_NATIVE_ALLOW_PARTIAL}): the code object is returned \
                 partly fixed: {} site(s) still need code growth; the first: {first}",
                plan.report.remaining.len()
            );
        }
        Rewritten::from_fill(plan.output_len(), |out| {
            plan.write_into(object.bytes(), out)
        })
    }
}

/// Real code objects with A0 sites, for the tests of this crate.
#[cfg(test)]
pub(crate) mod test_objects {
    use hotswap_code_object::gfx1250;

    /// The probe object with its first instruction of `replacement`'s length
    /// replaced by it (a real clang-22 object with one A0 site).
    pub fn probe_with(replacement: &[u8]) -> Vec<u8> {
        let mut bytes = hotswap_code_object::GFX1250_PROBE.to_vec();
        let analysis = gfx1250::analyze(&bytes).unwrap();
        let f = &analysis.functions[0];
        let start = f.file_offset.unwrap() as usize;
        let code = &bytes[start..start + f.size as usize];
        let at = gfx1250::instructions(code, f.vaddr)
            .map(Result::unwrap)
            .find(|i| i.bytes.len() == replacement.len())
            .map(|i| start + (i.vaddr - f.vaddr) as usize)
            .expect("an instruction of that length");
        bytes[at..at + replacement.len()].copy_from_slice(replacement);
        bytes
    }

    /// `cluster_load_b32 v0, v[2:3], off`.
    pub const CLUSTER_LOAD: [u8; 12] = [
        0x7c, 0xc0, 0x19, 0xee, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
    ];
    /// Its A0 form, `global_load_b32 v0, v[2:3], off`.
    pub const GLOBAL_LOAD: [u8; 12] = [
        0x7c, 0x00, 0x05, 0xee, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
    ];
    /// `ds_load_2addr_b32 v[0:1], v2 offset0:1 offset1:2`: fixed by moving code.
    pub const DS_LOAD_2ADDR: [u8; 8] = [0x01, 0x02, 0xdc, 0xd8, 0x02, 0x00, 0x00, 0x00];
    /// `ds_load_addtid_b32 v5 offset:128`: needs code growth the native
    /// rewriter does not do.
    /// `v_wmma_f32_16x16x128_fp8_fp8 v[0:7], v[8:23], v[24:39], v[0:7]`
    /// (fixed by growth: split in two along K).
    pub const WMMA_K128: [u8; 8] = [0x00, 0x00, 0x80, 0xcc, 0x08, 0x31, 0xa2, 0x1c];
    /// `v_cvt_pk_fp8_f32 v1, v2, v3 clamp` (VOP3): a growth site no emitter
    /// fixes (B0's UE5M3 conversion is not known exactly).
    pub const FP8_CLAMP: [u8; 8] = [0x01, 0x80, 0x69, 0xd7, 0x02, 0x07, 0x02, 0x00];
}

#[cfg(test)]
mod tests {
    use super::test_objects::{probe_with, CLUSTER_LOAD, DS_LOAD_2ADDR, FP8_CLAMP, GLOBAL_LOAD};
    use super::*;
    use crate::rewriter::{retarget_with, Retargeted, A0_FEATURE, B0_FEATURE};
    use hotswap_code_object::gfx1250;

    const P: &str = "amdgcn-amd-amdhsa--";

    fn view(bytes: &[u8]) -> CodeObject<'_> {
        CodeObject::parse(bytes).unwrap()
    }

    fn b0_to_a0<'a>(source: &'a str, target: &'a str) -> Request<'a> {
        Request {
            source_isa: source,
            target_isa: target,
            flags: RewriteFlags::default(),
        }
    }

    #[test]
    fn a_fixable_object_is_rewritten_at_its_site_only() {
        let input = probe_with(&CLUSTER_LOAD);
        let (source, target) = (
            format!("{P}gfx1250{B0_FEATURE}"),
            format!("{P}gfx1250{A0_FEATURE}"),
        );
        let native = Native::new(Options::default());
        let Retargeted::Changed(out) =
            retarget_with(&native, &view(&input), &b0_to_a0(&source, &target)).unwrap()
        else {
            panic!("expected new bytes");
        };
        let at = input.windows(12).position(|w| w == CLUSTER_LOAD).unwrap();
        let mut expected = input.clone();
        expected[at..at + 12].copy_from_slice(&GLOBAL_LOAD);
        assert_eq!(out.bytes(), expected.as_slice());
        // gfx1250-strict names the A0 target too.
        let strict = format!("{P}gfx1250-strict");
        assert!(matches!(
            retarget_with(&native, &view(&input), &b0_to_a0(&source, &strict)),
            Ok(Retargeted::Changed(_))
        ));
        // Nothing to fix: unchanged.
        assert!(matches!(
            retarget_with(
                &native,
                &view(hotswap_code_object::GFX1250_PROBE),
                &b0_to_a0(&source, &target)
            ),
            Ok(Retargeted::Unchanged)
        ));
    }

    #[test]
    fn a_ds2_site_is_fixed_by_moving_its_function() {
        let input = probe_with(&DS_LOAD_2ADDR);
        let (source, target) = (format!("{P}gfx1250"), format!("{P}gfx1250{A0_FEATURE}"));
        let Retargeted::Changed(out) = retarget_with(
            &Native::new(Options::default()),
            &view(&input),
            &b0_to_a0(&source, &target),
        )
        .unwrap() else {
            panic!("expected new bytes");
        };
        let expected = rewrite::rewrite_b0_to_a0(&input, &Options::default()).unwrap();
        let out = out.bytes();
        assert!(out.len() > input.len());
        assert_eq!(out, &expected.bytes[..]);
        assert_eq!(expected.report.moved.len(), 1);
        let moved = rewrite::moved_functions(out).unwrap();
        assert_eq!(moved[0].new_vaddr, expected.report.moved[0].new_vaddr);
        // The kernel's entry now is the copy.
        let a = gfx1250::analyze(out).unwrap();
        assert!(a
            .kernels
            .iter()
            .any(|k| k.entry_vaddr == Some(moved[0].new_vaddr)));
    }

    #[test]
    fn a_growth_site_is_refused_with_kernel_offset_and_class() {
        let input = probe_with(&FP8_CLAMP);
        let (source, target) = (format!("{P}gfx1250"), format!("{P}gfx1250{A0_FEATURE}"));
        let e = retarget_with(
            &Native::new(Options::default()),
            &view(&input),
            &b0_to_a0(&source, &target),
        )
        .unwrap_err();
        let RetargetError::Refused(why) = &e else {
            panic!("{e:?}");
        };
        let offset = {
            let a = gfx1250::analyze(&input).unwrap();
            let f = &a.functions[0];
            let s = &f.sites[0];
            (f.name.clone(), s.vaddr - f.vaddr, s.vaddr)
        };
        assert_eq!(
            why,
            &format!(
                "1 site(s) need code growth; the first: fp8_clamp (v_cvt_pk_fp8_f32) in {} at \
                 offset {:#x} (vaddr {:#x}); HSA_HOTSWAP_NATIVE_ALLOW_PARTIAL=1 loads it partly fixed",
                offset.0, offset.1, offset.2
            )
        );
        assert_eq!(
            e.status(),
            crate::status::hotswap_status_t::HOTSWAP_STATUS_REWRITE_REFUSED
        );
        // Allowed partial: the object is returned as it is (nothing else to fix).
        let partial = Native::new(Options {
            allow_partial: true,
            ..Options::default()
        });
        assert!(matches!(
            retarget_with(&partial, &view(&input), &b0_to_a0(&source, &target)),
            Ok(Retargeted::Unchanged)
        ));
    }

    #[test]
    fn other_pairs_and_flags_are_unsupported() {
        let native = Native::new(Options::default());
        let input = probe_with(&CLUSTER_LOAD);
        let b0 = format!("{P}gfx1250{B0_FEATURE}");
        let a0 = format!("{P}gfx1250{A0_FEATURE}");
        for (s, t) in [(&b0, &b0), (&a0, &b0)] {
            assert_eq!(
                native.rewrite(&view(&input), &b0_to_a0(s, t)).unwrap_err(),
                RetargetError::Unsupported
            );
        }
        let flagged = Request {
            flags: RewriteFlags {
                entry_trampolines: true,
                strict_mode: false,
            },
            ..b0_to_a0(&b0, &a0)
        };
        assert_eq!(
            native.rewrite(&view(&input), &flagged).unwrap_err(),
            RetargetError::Unsupported
        );
        // An object the header says is another processor, or already A0.
        let mut strict = input.clone();
        strict[48..52].copy_from_slice(&0x0ebu32.to_le_bytes());
        let mut gfx942 = input.clone();
        gfx942[48..52].copy_from_slice(&0xe4cu32.to_le_bytes());
        for object in [strict, gfx942] {
            assert_eq!(
                native
                    .rewrite(&view(&object), &b0_to_a0(&b0, &a0))
                    .unwrap_err(),
                RetargetError::Unsupported
            );
        }
    }

    #[test]
    fn hsa_hotswap_rewriter_native_selects_this_backend() {
        let config = |rewriter: &str| Config {
            rewriter: Some(rewriter.to_owned()),
            ..Config::default()
        };
        let backend = crate::rewriter::select(&config("native")).unwrap();
        assert_eq!(backend.kind(), BackendKind::Native);
        for other in ["Native", "native ", "libnative.so"] {
            let e = crate::rewriter::select(&config(other)).unwrap_err();
            assert!(
                e.contains("is neither \"native\" nor an absolute path"),
                "{e}"
            );
        }
        // A library that does not exist stays "no rewriter": the way to run
        // without any rewriter now that the native one is the last fallback.
        assert!(crate::rewriter::select(&config("/nonexistent/librewriter.so")).is_err());
    }

    #[test]
    fn the_config_switch_allows_partial_objects() {
        let config = Config {
            native_allow_partial: true,
            ..Config::default()
        };
        let native = Native::from_config(&config);
        assert!(native.options.allow_partial);
        assert!(native.describe().contains(HSA_HOTSWAP_NATIVE_ALLOW_PARTIAL));
        assert_eq!(native.kind(), BackendKind::Native);
        assert!(
            !Native::from_config(&Config::default())
                .options
                .allow_partial
        );
    }
}
