//! Where the dynamic loader would find a library, without loading it: the
//! search `dlopen` makes (ld.so(8)), emulated from the files.
//!
//! Order for a name without `/`: the caller's `DT_RPATH` (only when it has no
//! `DT_RUNPATH`), `LD_LIBRARY_PATH`, the caller's `DT_RUNPATH` (`$ORIGIN`
//! expanded to the caller's directory), `/etc/ld.so.cache`, then the default
//! directories. A name with `/` is a path. Only an ELF64 x86-64 file counts as
//! found, as the loader skips other files in a directory it searches.
//!
//! Also here: the dynamic section of an ELF file (`DT_NEEDED`, `DT_SONAME`,
//! `DT_RUNPATH`, `DT_RPATH`), read with a few bounded reads (COMGR is 60 MB).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// `EM_X86_64`.
const EM_X86_64: u16 = 62;
/// The default directories of Debian's x86-64 loader, after the cache.
pub const DEFAULT_DIRS: [&str; 4] = [
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
];
/// The trusted directories every glibc searches last.
const TRUSTED_DIRS: [&str; 2] = ["/lib", "/usr/lib"];
/// The loader's cache.
pub const LD_SO_CACHE: &str = "/etc/ld.so.cache";
/// Largest dynamic section or string table read.
const MAX_TABLE: u64 = 16 << 20;

/// How a library was found.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FoundBy {
    /// The name is a path.
    Path,
    /// The caller's `DT_RPATH`.
    Rpath,
    /// `LD_LIBRARY_PATH`.
    LdLibraryPath,
    /// The caller's `DT_RUNPATH`.
    Runpath,
    /// `/etc/ld.so.cache`.
    LdSoCache,
    /// A default directory.
    DefaultPath,
    /// Next to another library (ROCr's rule for its own hook).
    NextTo,
}

impl FoundBy {
    /// For the human report.
    pub fn describe(&self) -> &'static str {
        match self {
            Self::Path => "the path given",
            Self::Rpath => "the caller's RPATH",
            Self::LdLibraryPath => "LD_LIBRARY_PATH",
            Self::Runpath => "the caller's RUNPATH",
            Self::LdSoCache => "/etc/ld.so.cache",
            Self::DefaultPath => "the default directories",
            Self::NextTo => "the directory of the library that loads it",
        }
    }
}

/// A library found by [`search`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Located {
    /// The path the loader opens.
    pub path: String,
    /// Symbolic links resolved.
    pub real_path: String,
    /// How it was found.
    pub found_by: FoundBy,
}

/// The dynamic-section facts of an ELF file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dynamic {
    /// `DT_SONAME`.
    pub soname: Option<String>,
    /// `DT_NEEDED`, in order.
    pub needed: Vec<String>,
    /// `DT_RUNPATH`, split on `:`.
    pub runpath: Vec<String>,
    /// `DT_RPATH`, split on `:`.
    pub rpath: Vec<String>,
}

/// What a search starts from: the object that calls `dlopen` (its path and
/// dynamic section) and the environment.
#[derive(Clone, Debug, Default)]
pub struct Search<'a> {
    /// The calling object's path (for `$ORIGIN`), if any.
    pub caller: Option<&'a Path>,
    /// The calling object's dynamic section.
    pub caller_dynamic: Option<&'a Dynamic>,
    /// `LD_LIBRARY_PATH`.
    pub ld_library_path: Option<&'a str>,
    /// The parsed `/etc/ld.so.cache` (name, path) pairs.
    pub cache: &'a [(String, String)],
}

/// Reads the header fields needed to find the section table of an ELF64 LE
/// file: `(e_machine, e_shoff, e_shnum)`.
fn elf64_header(file: &File) -> Option<(u16, u64, u16)> {
    let mut h = [0u8; 64];
    file.read_exact_at(&mut h, 0).ok()?;
    if h[..4] != *b"\x7fELF" || h[4] != 2 || h[5] != 1 {
        return None;
    }
    let machine = u16::from_le_bytes([h[18], h[19]]);
    let shoff = u64::from_le_bytes(h[40..48].try_into().ok()?);
    let shentsize = u16::from_le_bytes([h[58], h[59]]);
    let shnum = u16::from_le_bytes([h[60], h[61]]);
    if shnum != 0 && shentsize != 64 {
        return None;
    }
    Some((machine, shoff, shnum))
}

/// True when `path` is an ELF64 little-endian x86-64 file (what this loader loads).
pub fn is_loadable(path: &Path) -> bool {
    File::open(path)
        .ok()
        .and_then(|f| elf64_header(&f))
        .is_some_and(|(machine, _, _)| machine == EM_X86_64)
}

/// Reads `len` bytes at `offset`, at most [`MAX_TABLE`].
fn read_at(file: &File, offset: u64, len: u64) -> Option<Vec<u8>> {
    if len > MAX_TABLE {
        return None;
    }
    let mut buf = vec![0u8; usize::try_from(len).ok()?];
    file.read_exact_at(&mut buf, offset).ok()?;
    Some(buf)
}

/// The dynamic section of the ELF file at `path`; `None` when it is not an
/// ELF64 LE file or has no readable dynamic section.
pub fn dynamic(path: &Path) -> Option<Dynamic> {
    let file = File::open(path).ok()?;
    let (_, shoff, shnum) = elf64_header(&file)?;
    let table = read_at(&file, shoff, u64::from(shnum) * 64)?;
    let section = |i: usize| -> Option<(u32, u64, u64, u32)> {
        let s = table.get(i * 64..i * 64 + 64)?;
        Some((
            u32::from_le_bytes(s[4..8].try_into().ok()?),
            u64::from_le_bytes(s[24..32].try_into().ok()?),
            u64::from_le_bytes(s[32..40].try_into().ok()?),
            u32::from_le_bytes(s[40..44].try_into().ok()?),
        ))
    };
    const SHT_DYNAMIC: u32 = 6;
    let (_, offset, size, link) = (0..usize::from(shnum))
        .filter_map(section)
        .find(|&(t, ..)| t == SHT_DYNAMIC)?;
    let entries = read_at(&file, offset, size)?;
    let (_, str_offset, str_size, _) = section(usize::try_from(link).ok()?)?;
    let strings = read_at(&file, str_offset, str_size)?;
    Some(parse_dynamic(&entries, &strings))
}

/// Decodes dynamic entries (16 bytes each) with their string table.
pub fn parse_dynamic(entries: &[u8], strings: &[u8]) -> Dynamic {
    const DT_NULL: u64 = 0;
    const DT_NEEDED: u64 = 1;
    const DT_SONAME: u64 = 14;
    const DT_RPATH: u64 = 15;
    const DT_RUNPATH: u64 = 29;
    let string = |at: u64| -> String {
        let rest = usize::try_from(at)
            .ok()
            .and_then(|a| strings.get(a..))
            .unwrap_or(&[]);
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        String::from_utf8_lossy(&rest[..end]).into_owned()
    };
    let split = |s: String| -> Vec<String> { s.split(':').map(str::to_owned).collect() };
    let mut d = Dynamic::default();
    for e in entries.chunks_exact(16) {
        let tag = u64::from_le_bytes(e[..8].try_into().unwrap_or_default());
        let val = u64::from_le_bytes(e[8..].try_into().unwrap_or_default());
        match tag {
            DT_NULL => break,
            DT_NEEDED => d.needed.push(string(val)),
            DT_SONAME => d.soname = Some(string(val)),
            DT_RPATH => d.rpath = split(string(val)),
            DT_RUNPATH => d.runpath = split(string(val)),
            _ => {}
        }
    }
    d
}

/// Parses glibc's `ld.so.cache` (the `glibc-ld.so.cache1.1` format, possibly
/// after an old-format part): every (library name, path) pair, in cache order.
/// Malformed input gives what could be read.
pub fn parse_ld_so_cache(bytes: &[u8]) -> Vec<(String, String)> {
    const NEW_MAGIC: &[u8] = b"glibc-ld.so.cache1.1";
    const OLD_MAGIC: &[u8] = b"ld.so-1.7.0";
    let Some(start) = (if bytes.starts_with(NEW_MAGIC) {
        Some(0)
    } else if bytes.starts_with(OLD_MAGIC) {
        bytes.windows(NEW_MAGIC.len()).position(|w| w == NEW_MAGIC)
    } else {
        None
    }) else {
        return Vec::new();
    };
    let cache = &bytes[start..];
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(cache.get(at..at + 4)?.try_into().ok()?))
    };
    let Some(count) = u32_at(20) else {
        return Vec::new();
    };
    // Strings are offsets from the start of the new-format header.
    let string = |at: u32| -> Option<String> {
        let rest = cache.get(usize::try_from(at).ok()?..)?;
        let end = rest.iter().position(|&b| b == 0)?;
        Some(String::from_utf8_lossy(&rest[..end]).into_owned())
    };
    (0..count as usize)
        .map_while(|i| {
            let at = 48 + i * 24;
            Some((u32_at(at + 4)?, u32_at(at + 8)?))
        })
        .filter_map(|(key, value)| Some((string(key)?, string(value)?)))
        .collect()
}

/// The system's `ld.so.cache`, parsed (empty when unreadable).
pub fn system_cache() -> Vec<(String, String)> {
    std::fs::read(LD_SO_CACHE)
        .map(|b| parse_ld_so_cache(&b))
        .unwrap_or_default()
}

/// Expands `$ORIGIN` / `${ORIGIN}` in a search directory.
fn expand_origin(dir: &str, caller: Option<&Path>) -> Option<String> {
    if !dir.contains("ORIGIN") {
        return Some(dir.to_owned());
    }
    let origin = caller?.parent()?.to_string_lossy().into_owned();
    Some(
        dir.replace("${ORIGIN}", &origin)
            .replace("$ORIGIN", &origin),
    )
}

/// Where `dlopen(name)` from `search.caller` finds `name`, or `None`.
pub fn search(name: &str, search: &Search<'_>) -> Option<Located> {
    let located = |path: PathBuf, found_by: FoundBy| {
        is_loadable(&path).then(|| Located {
            real_path: std::fs::canonicalize(&path)
                .unwrap_or_else(|_| path.clone())
                .display()
                .to_string(),
            path: path.display().to_string(),
            found_by,
        })
    };
    if name.contains('/') {
        return located(PathBuf::from(name), FoundBy::Path);
    }
    if name.is_empty() {
        return None;
    }
    let in_dirs = |dirs: &mut dyn Iterator<Item = String>, by: FoundBy| {
        dirs.filter(|d| !d.is_empty())
            .find_map(|d| located(Path::new(&d).join(name), by.clone()))
    };
    let dynamic = search.caller_dynamic;
    if let Some(d) = dynamic.filter(|d| d.runpath.is_empty()) {
        let mut dirs = d
            .rpath
            .iter()
            .filter_map(|r| expand_origin(r, search.caller));
        if let Some(l) = in_dirs(&mut dirs, FoundBy::Rpath) {
            return Some(l);
        }
    }
    if let Some(paths) = search.ld_library_path {
        let mut dirs = paths.split([':', ';']).map(str::to_owned);
        if let Some(l) = in_dirs(&mut dirs, FoundBy::LdLibraryPath) {
            return Some(l);
        }
    }
    if let Some(d) = dynamic {
        let mut dirs = d
            .runpath
            .iter()
            .filter_map(|r| expand_origin(r, search.caller));
        if let Some(l) = in_dirs(&mut dirs, FoundBy::Runpath) {
            return Some(l);
        }
    }
    let cached = search
        .cache
        .iter()
        .filter(|(n, _)| n == name)
        .find_map(|(_, p)| located(PathBuf::from(p), FoundBy::LdSoCache));
    if cached.is_some() {
        return cached;
    }
    let mut dirs = DEFAULT_DIRS
        .iter()
        .chain(TRUSTED_DIRS.iter())
        .map(|d| d.to_string());
    in_dirs(&mut dirs, FoundBy::DefaultPath)
}

/// The version suffix of a resolved library file name
/// (`libhsa-runtime64.so.1.5.0` → `1.5.0`).
pub fn version_suffix(real_path: &str) -> Option<String> {
    let name = real_path.rsplit('/').next()?;
    let (_, version) = name.split_once(".so.")?;
    (!version.is_empty()).then(|| version.to_owned())
}

/// `libhsa-hotswap.so` in a `lib` directory next to this command's `bin`.
pub(crate) fn installed_with_cli() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let prefix = exe.parent()?.parent()?;
    let mut dirs = vec![prefix.join("lib"), prefix.join("lib64")];
    if let Ok(entries) = std::fs::read_dir(prefix.join("lib")) {
        dirs.extend(entries.flatten().map(|e| e.path()).filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains("-linux-"))
        }));
    }
    dirs.into_iter()
        .map(|d| d.join(hsa_hotswap::cli_api::HOTSWAP_TOOL_LIBRARY_NAME))
        .find(|p| is_loadable(p))
        .map(|p| p.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new-format cache with the given (name, path) entries.
    fn cache(entries: &[(&str, &str)]) -> Vec<u8> {
        let mut strings = Vec::new();
        let base = 48 + entries.len() * 24;
        let mut table = Vec::new();
        for (name, path) in entries {
            let key = base + strings.len();
            strings.extend_from_slice(name.as_bytes());
            strings.push(0);
            let value = base + strings.len();
            strings.extend_from_slice(path.as_bytes());
            strings.push(0);
            table.extend_from_slice(&0x303i32.to_le_bytes());
            table.extend_from_slice(&(key as u32).to_le_bytes());
            table.extend_from_slice(&(value as u32).to_le_bytes());
            table.extend_from_slice(&[0u8; 12]);
        }
        let mut out = b"glibc-ld.so.cache1.1".to_vec();
        out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
        out.extend_from_slice(&(strings.len() as u32).to_le_bytes());
        out.resize(48, 0);
        out.extend(table);
        out.extend(strings);
        out
    }

    #[test]
    fn the_cache_gives_its_pairs_in_order() {
        let c = cache(&[("liba.so.1", "/x/liba.so.1"), ("libb.so", "/y/libb.so")]);
        assert_eq!(
            parse_ld_so_cache(&c),
            vec![
                ("liba.so.1".to_owned(), "/x/liba.so.1".to_owned()),
                ("libb.so".to_owned(), "/y/libb.so".to_owned())
            ]
        );
        // Cut short: what could be read, never a panic.
        for cut in 0..c.len() {
            let _ = parse_ld_so_cache(&c[..cut]);
        }
        assert!(parse_ld_so_cache(b"not a cache").is_empty());
    }

    #[test]
    fn this_machine_has_a_readable_cache_naming_libc() {
        let pairs = system_cache();
        assert!(
            pairs
                .iter()
                .any(|(n, p)| n == "libc.so.6" && p.ends_with("libc.so.6")),
            "{} entries",
            pairs.len()
        );
    }

    #[test]
    fn dynamic_entries_with_their_strings() {
        let strings = b"\0libx.so.1\0liby.so\0$ORIGIN:/opt\0";
        let mut e = Vec::new();
        for (tag, val) in [(1u64, 1u64), (14, 11), (29, 19), (0, 0), (1, 11)] {
            e.extend_from_slice(&tag.to_le_bytes());
            e.extend_from_slice(&val.to_le_bytes());
        }
        let d = parse_dynamic(&e, strings);
        assert_eq!(d.needed, ["libx.so.1"], "entries after DT_NULL are ignored");
        assert_eq!(d.soname.as_deref(), Some("liby.so"));
        assert_eq!(d.runpath, ["$ORIGIN", "/opt"]);
        assert!(d.rpath.is_empty());
    }

    #[test]
    fn origin_is_the_callers_directory() {
        let caller = Path::new("/opt/rocm/lib/libhsa-runtime64.so.1");
        assert_eq!(
            expand_origin("$ORIGIN/../lib64", Some(caller)).as_deref(),
            Some("/opt/rocm/lib/../lib64")
        );
        assert_eq!(
            expand_origin("${ORIGIN}", Some(caller)).as_deref(),
            Some("/opt/rocm/lib")
        );
        assert_eq!(expand_origin("$ORIGIN", None), None);
        assert_eq!(expand_origin("/usr/lib", None).as_deref(), Some("/usr/lib"));
    }

    #[test]
    fn search_order_and_elf_check() {
        let dir = std::env::temp_dir().join(format!("hotswap-loader-{}", std::process::id()));
        let (a, b) = (dir.join("a"), dir.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let me = std::fs::read("/proc/self/exe").unwrap();
        std::fs::write(b.join("libt.so"), &me).unwrap();
        std::fs::write(a.join("libt.so"), b"not an ELF").unwrap();
        let path = format!("{}:{}", a.display(), b.display());
        let s = Search {
            ld_library_path: Some(&path),
            ..Search::default()
        };
        let found = search("libt.so", &s).unwrap();
        assert_eq!(found.path, b.join("libt.so").display().to_string());
        assert_eq!(found.found_by, FoundBy::LdLibraryPath);
        let runpath = Dynamic {
            runpath: vec!["$ORIGIN/b".into()],
            ..Dynamic::default()
        };
        let caller = dir.join("caller.so");
        let s = Search {
            caller: Some(&caller),
            caller_dynamic: Some(&runpath),
            ..Search::default()
        };
        assert_eq!(search("libt.so", &s).unwrap().found_by, FoundBy::Runpath);
        assert_eq!(search("libt-absent.so", &s), None);
        let by_path = search(&b.join("libt.so").display().to_string(), &Search::default());
        assert_eq!(by_path.unwrap().found_by, FoundBy::Path);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn versions_from_file_names() {
        assert_eq!(
            version_suffix("/lib/x/libhsa-runtime64.so.1.5.0").as_deref(),
            Some("1.5.0")
        );
        assert_eq!(version_suffix("/lib/libx.so"), None);
    }
}
