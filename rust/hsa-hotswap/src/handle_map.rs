//! The map the tool keys by ROCr handles (readers, executables): opaque
//! 64-bit values, hashed with one multiplication.

use std::collections::HashMap;

/// Hashes a reader handle (an opaque 64-bit value, in ROCr a heap address) with
/// one multiplication: SipHash's DoS resistance buys nothing for handles ROCr
/// chooses, and this map sits on every create, load and destroy.
#[derive(Debug, Default)]
pub struct HandleHasher(u64);

impl std::hash::Hasher for HandleHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0 ^ value)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_right(29);
    }
}

/// A map keyed by a ROCr handle.
pub(crate) type HandleMap<V> = HashMap<u64, V, std::hash::BuildHasherDefault<HandleHasher>>;
