//! What `hotswap doctor` reads besides the environment: the root the KFD files
//! are read under and the loader's cache. [`Inputs::system`] is this machine;
//! tests build one over a fake root and cache ([`super::diagnose_with`]).

use std::path::PathBuf;

use super::{loader, topology};

/// The files a diagnosis reads besides the libraries it finds.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    /// The root of `sys/class/kfd/kfd/topology` and `dev/kfd`.
    pub root: PathBuf,
    /// `/etc/ld.so.cache` as (name, path) pairs.
    pub ld_so_cache: Vec<(String, String)>,
}

impl Inputs {
    /// This machine: `/` (or `HOTSWAP_TEST_ROOT`) and the system's loader cache.
    pub fn system() -> Self {
        Self {
            root: topology::root(),
            ld_so_cache: loader::system_cache(),
        }
    }
}
