//! The key of a cache entry: SHA-256 over everything that decides a rewrite's
//! outcome, so an entry answers exactly one question, and over nothing that
//! depends on where a file happens to live, so the same build of the tool and
//! of the backend compute the same key on every machine.
//!
//! Hashed, each field length-prefixed: a domain string with the entry format
//! version; the tool's version and build ([`tool_identity`]: the GNU build-id
//! note of the object this code was loaded from, or its content's SHA-256
//! where it has none, so a rebuilt tool never reads its predecessor's entries,
//! whose native rewriter may differ); the backend's identity
//! ([`crate::rewriter::Backend::cache_identity`]: the native rewriter's
//! version and options, or a library's ABI and build-id); the source and
//! target ISA names; the COMGR flag word; the input's size and SHA-256
//! ([`InputDigest`], from [`crate::digest`], which owns every pass over an
//! input).
//!
//! SHA-256 (crate `sha2`, which uses the CPU's SHA extensions when present):
//! the key outlives the process and is shared between users and machines
//! (read-only stores, exported archives), so it must resist collisions, not
//! only accidents: an input crafted to collide must not find another input's
//! entry. The input's SHA-256 is computed only when a cache layer is in use:
//! on a first load, in the same pass as the in-process memo's XXH3-128
//! ([`crate::retained`], keyed by the faster hash it needs no more than);
//! in a pass of its own only after a memo miss where the memo could have
//! answered (it held an entry of the same size and ISA pair), and for the
//! callers without a memo (the C API's rewrite, `hotswap cache warm`). Why
//! not one hash for both: BLAKE3,
//! collision resistant and about twice as fast as SHA-256 here, is not
//! available under MIT, the project's licence policy for linked crates
//! (`packaging/licenses/hotswap_licenses.py`); `examples/hash_bench.rs`
//! prints the two and their fused pass side by side. Its throughput on the build machine is
//! also printed by the cache benchmark.

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use crate::digest::InputDigest;
use crate::rewriter::identity::{file_build_identity, loaded_build_identity};
use crate::rewriter::Request;

const DOMAIN: &[u8] = b"hotswap rewrite cache key, entry format 2";

fn field(hasher: &mut Sha256, bytes: &[u8]) {
    hasher.update((bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

static TOOL: OnceLock<Option<String>> = OnceLock::new();

fn versioned(build: &str) -> String {
    format!(
        "{}\0{build}",
        crate::version::VERSION_CSTR.to_string_lossy()
    )
}

/// The tool's version and build identity (computed once per process from the
/// loaded object's notes); `None` when the object holding this code cannot be
/// identified, and then nothing is cached.
pub fn tool_identity() -> Option<&'static str> {
    TOOL.get_or_init(|| {
        let this = tool_identity as fn() -> Option<&'static str> as usize;
        loaded_build_identity(this).map(|build| versioned(&build))
    })
    .as_deref()
}

/// Makes this process compute keys as the tool library at `path` does (the
/// command line, which links the tool's code statically, fills the cache for
/// the installed library): its version (this build's, which the caller has
/// checked it matches) and the file's build identity. Must come before any
/// key is computed; returns the identity, or why it cannot be adopted.
pub fn adopt_tool_identity(path: &str) -> Result<String, String> {
    let build = file_build_identity(path).ok_or_else(|| format!("cannot read {path}"))?;
    let identity = versioned(&build);
    TOOL.set(Some(identity.clone()))
        .map_err(|_| "keys were computed before the tool library was named".to_owned())?;
    Ok(identity)
}

/// The key of rewriting the input `digest` names for `request` with the
/// backend named `identity`, by the tool named `tool`.
pub fn of_digest(
    tool: &str,
    identity: &str,
    request: &Request<'_>,
    digest: &InputDigest,
) -> [u8; 32] {
    let mut hasher = Sha256::new();
    field(&mut hasher, DOMAIN);
    field(&mut hasher, tool.as_bytes());
    field(&mut hasher, identity.as_bytes());
    field(&mut hasher, request.source_isa.as_bytes());
    field(&mut hasher, request.target_isa.as_bytes());
    hasher.update(request.flags.bits().to_le_bytes());
    hasher.update(digest.len.to_le_bytes());
    hasher.update(digest.sha256);
    hasher.finalize().into()
}

/// The key of rewriting `code_object` for `request` with the backend named
/// `identity` by this tool (`None` when the tool cannot be identified).
#[cfg(test)]
pub fn of(identity: &str, request: &Request<'_>, code_object: &[u8]) -> Option<[u8; 32]> {
    Some(of_digest(
        tool_identity()?,
        identity,
        request,
        &InputDigest::of(code_object),
    ))
}
