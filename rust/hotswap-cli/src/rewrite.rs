//! `hotswap rewrite IN -o OUT`.
use std::path::Path;

/// Runs `hotswap rewrite`.
pub fn run(_input: &Path, _output: &Path, _json: bool) -> u8 {
    eprintln!("hotswap: rewrite: not available yet");
    crate::exit::REFUSED
}
