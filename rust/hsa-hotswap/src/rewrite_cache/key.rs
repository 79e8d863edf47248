//! The key of a cache entry: SHA-256 over everything that decides a rewrite's
//! outcome, so an entry answers exactly one question.
//!
//! Hashed, each field length-prefixed: a domain string with the entry format
//! version; the tool's version and build (the file this code was loaded from,
//! by path, size, modification time, inode and device, so a rebuilt tool never
//! reads its predecessor's entries, whose native rewriter may differ); the
//! backend's identity ([`crate::rewriter::Backend::cache_identity`]: the native
//! rewriter's options, or a library's description and file); the source and
//! target ISA names; the COMGR flag word; the input's size and bytes.
//!
//! SHA-256 (crate `sha2`, which uses the CPU's SHA extensions when present):
//! the key outlives the process, so it must resist collisions, not only
//! accidents. Its throughput on the build machine is printed by the cache
//! benchmark.

use crate::rewriter::identity::file_identity;
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use crate::rewriter::Request;

const DOMAIN: &[u8] = b"hotswap rewrite cache key, entry format 1";

fn field(hasher: &mut Sha256, bytes: &[u8]) {
    hasher.update((bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

/// The tool's version and the identity of the file its code was loaded from.
pub fn tool_identity() -> &'static str {
    static TOOL: OnceLock<String> = OnceLock::new();
    TOOL.get_or_init(|| {
        let version = crate::version::VERSION_CSTR.to_string_lossy();
        let this = tool_identity as fn() -> &'static str as usize;
        let file = crate::dl::object_of(this)
            .and_then(|path| file_identity(&path))
            .unwrap_or_else(|| "unknown build".to_owned());
        format!("{version}\0{file}")
    })
}

/// The key of rewriting `code_object` for `request` with the backend named
/// `identity`.
pub fn of(identity: &str, request: &Request<'_>, code_object: &[u8]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    field(&mut hasher, DOMAIN);
    field(&mut hasher, tool_identity().as_bytes());
    field(&mut hasher, identity.as_bytes());
    field(&mut hasher, request.source_isa.as_bytes());
    field(&mut hasher, request.target_isa.as_bytes());
    hasher.update(request.flags.bits().to_le_bytes());
    field(&mut hasher, code_object);
    hasher.finalize().into()
}
