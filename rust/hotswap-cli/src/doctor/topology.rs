//! The GPUs of the KFD topology in sysfs, read without initialising ROCr.
//!
//! `<sysfs>/class/kfd/kfd/topology/nodes/<n>/properties` holds one
//! `key value` pair per line (decimal). A node with `simd_count` > 0 is a GPU
//! (libhsakmt's rule); `gfx_target_version` is `major * 10000 + minor * 100 +
//! stepping`, named `gfx<major><minor:x><stepping:x>` (90010 → gfx90a, 120500
//! → gfx1250); the ASIC revision is `capability` bits 25:22 (the KFD's
//! `HSA_CAP_ASIC_REVISION_MASK` 0x03c00000, shift 22), which ROCr reports as
//! the agent's ASIC revision (0 = A0 on gfx1250).
//!
//! `HSA_OVERRIDE_GFX_VERSION` (`major.minor.stepping`) replaces every GPU's
//! version in libhsakmt, so it is applied here too.
//!
//! `HOTSWAP_TEST_ROOT` (test only) stands for `/` when reading
//! `/sys/class/kfd` and `/dev/kfd`, so that tests can give fake topology
//! trees; nothing else reads it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The test-only variable that stands for `/` (see the module documentation).
pub const TEST_ROOT_VARIABLE: &str = "HOTSWAP_TEST_ROOT";
/// `HSA_CAP_ASIC_REVISION_MASK` and its shift.
const ASIC_REVISION_MASK: u64 = 0x03c0_0000;
const ASIC_REVISION_SHIFT: u32 = 22;

/// One topology node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The node number (directory name).
    pub id: u32,
    /// Every property of the node.
    pub properties: BTreeMap<String, u64>,
    /// The node's `name` file, when present.
    pub name: Option<String>,
}

impl Node {
    /// A property, 0 when absent.
    pub fn get(&self, key: &str) -> u64 {
        self.properties.get(key).copied().unwrap_or(0)
    }

    /// True for a GPU node (`simd_count` > 0).
    pub fn is_gpu(&self) -> bool {
        self.get("simd_count") > 0
    }

    /// The ASIC revision (`capability` bits 25:22).
    pub fn asic_revision(&self) -> u32 {
        ((self.get("capability") & ASIC_REVISION_MASK) >> ASIC_REVISION_SHIFT) as u32
    }
}

/// What the topology holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Topology {
    /// The topology directory read.
    pub directory: PathBuf,
    /// Whether it exists (the amdgpu kernel driver exposes KFD).
    pub present: bool,
    /// The nodes, by number.
    pub nodes: Vec<Node>,
    /// Nodes whose properties could not be read (number, reason).
    pub unreadable: Vec<(String, String)>,
}

/// The root the KFD files are read under: `HOTSWAP_TEST_ROOT` when set
/// (tests), else `/`.
pub fn root() -> PathBuf {
    std::env::var_os(TEST_ROOT_VARIABLE)
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("/"), PathBuf::from)
}

/// Whether `<root>/dev/kfd` exists (ROCr opens it).
pub fn dev_kfd(root: &Path) -> bool {
    root.join("dev/kfd").exists()
}

/// Parses a `properties` file: `key value` per line; other lines are skipped.
pub fn parse_properties(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            let key = parts.next()?;
            let value = parts.next()?.parse().ok()?;
            Some((key.to_owned(), value))
        })
        .collect()
}

/// Reads the topology under `root` (`<root>/sys/class/kfd/kfd/topology`).
pub fn read(root: &Path) -> Topology {
    let directory = root.join("sys/class/kfd/kfd/topology");
    let mut topology = Topology {
        present: directory.is_dir(),
        directory: directory.clone(),
        ..Topology::default()
    };
    let Ok(entries) = std::fs::read_dir(directory.join("nodes")) else {
        return topology;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        let Ok(id) = file_name.parse::<u32>() else {
            continue;
        };
        match std::fs::read_to_string(entry.path().join("properties")) {
            Ok(text) => topology.nodes.push(Node {
                id,
                properties: parse_properties(&text),
                name: std::fs::read_to_string(entry.path().join("name"))
                    .ok()
                    .map(|n| n.trim().to_owned())
                    .filter(|n| !n.is_empty()),
            }),
            Err(e) => topology.unreadable.push((file_name, e.to_string())),
        }
    }
    topology.nodes.sort_by_key(|n| n.id);
    topology
}

/// `(major, minor, stepping)` of a `gfx_target_version`.
pub fn version_parts(gfx_target_version: u64) -> (u64, u64, u64) {
    (
        gfx_target_version / 10000,
        (gfx_target_version / 100) % 100,
        gfx_target_version % 100,
    )
}

/// The processor name of a version (`gfx1250`, `gfx90a`); `None` for 0.
pub fn gfx_name(gfx_target_version: u64) -> Option<String> {
    if gfx_target_version == 0 {
        return None;
    }
    let (major, minor, stepping) = version_parts(gfx_target_version);
    Some(format!("gfx{major}{minor:x}{stepping:x}"))
}

/// `HSA_OVERRIDE_GFX_VERSION` (`11.0.0`) as a `gfx_target_version`; `None`
/// when unset or malformed.
pub fn override_version(value: Option<&str>) -> Option<u64> {
    let mut parts = value?.trim().split('.');
    let major: u64 = parts.next()?.parse().ok()?;
    let minor: u64 = parts.next()?.parse().ok()?;
    let stepping: u64 = parts.next()?.parse().ok()?;
    (parts.next().is_none() && minor < 100 && stepping < 100)
        .then_some(major * 10000 + minor * 100 + stepping)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_versions() {
        assert_eq!(gfx_name(120500).as_deref(), Some("gfx1250"));
        assert_eq!(gfx_name(120501).as_deref(), Some("gfx1251"));
        assert_eq!(gfx_name(90402).as_deref(), Some("gfx942"));
        assert_eq!(gfx_name(90010).as_deref(), Some("gfx90a"));
        assert_eq!(gfx_name(110000).as_deref(), Some("gfx1100"));
        assert_eq!(gfx_name(0), None);
    }

    #[test]
    fn properties_and_the_asic_revision() {
        let p = parse_properties("cpu_cores_count 0\nsimd_count 256\ncapability 4194304\nbad\n");
        let node = Node {
            id: 1,
            properties: p,
            name: None,
        };
        assert!(node.is_gpu());
        assert_eq!(node.asic_revision(), 1, "bit 22 set");
        let a0 = Node {
            id: 2,
            properties: parse_properties("simd_count 8\ncapability 671088640\n"),
            name: None,
        };
        // 0x28000000: bits 27 and 29, none of 25:22.
        assert_eq!(a0.asic_revision(), 0);
        let cpu = Node {
            id: 0,
            properties: parse_properties("cpu_cores_count 16\nsimd_count 0\n"),
            name: None,
        };
        assert!(!cpu.is_gpu());
    }

    #[test]
    fn the_override_variable() {
        assert_eq!(override_version(Some("12.5.0")), Some(120500));
        assert_eq!(override_version(Some("9.4.2")), Some(90402));
        assert_eq!(override_version(Some("12.5")), None);
        assert_eq!(override_version(Some("x")), None);
        assert_eq!(override_version(None), None);
    }

    #[test]
    fn a_missing_tree_is_not_present() {
        let t = read(Path::new("/nonexistent-root"));
        assert!(!t.present && t.nodes.is_empty());
    }
}
