//! `hotswap cache path|stats|list|clear|warm`: the persistent rewrite cache (the
//! tool's own code, through `hsa_hotswap::cli_api`) as this user's processes
//! would use it now, and the `hotswap doctor` section about it ([`Report`]).
//!
//! `path`, `stats` and `list` never create anything; `clear` removes every
//! entry (not the directories or lock files).

use std::time::{SystemTime, UNIX_EPOCH};

use hsa_hotswap::cli_api::{
    cache_store_dir, process_is_secure, CacheEntryKind as Kind, CacheSettings as Settings,
    CacheStore as Store, CacheTotals as Totals, Config, HSA_HOTSWAP_CACHE, HSA_HOTSWAP_CACHE_DIR,
    HSA_HOTSWAP_CACHE_LOCK_TIMEOUT, HSA_HOTSWAP_CACHE_MAX, HSA_HOTSWAP_CACHE_STORE,
};
use serde::Serialize;

/// What `hotswap cache` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Action {
    /// Where the entries are, and whether the cache is usable.
    Path,
    /// Entry counts and size.
    Stats,
    /// Every entry, most recently used first.
    List,
    /// Remove every entry.
    Clear,
    /// Rewrite every gfx1250 code object under PATH... into the cache.
    Warm,
    /// Write every valid entry into the archive PATH.
    Export,
    /// Add every entry of the archive PATH (verified whole first).
    Import,
}

/// The cache as the tool would use it now (also the doctor's section).
#[derive(Debug)]
pub struct Report {
    /// The cache directory (`null`: none; see `reason`).
    pub dir: Option<String>,
    /// The directory of the entries.
    pub entries_dir: Option<String>,
    /// Whether a process starting now would use the cache.
    pub usable: bool,
    /// Why not, when it would not (or why it is empty: not created yet).
    pub reason: Option<String>,
    /// The size bound in bytes.
    pub max_bytes: u64,
    /// The lock wait in seconds.
    pub lock_timeout_seconds: f64,
    /// Values not understood (defaults used).
    pub warnings: Vec<String>,
    /// Entry totals (when the directory exists and is usable).
    pub totals: Option<Totals>,
    /// Hits are not recorded across processes; each process logs its own at
    /// debug level.
    pub hit_counts: &'static str,
    /// The read-only store, consulted after the cache.
    pub store: StoreLayer,
    /// The file system of the entries (when they exist).
    pub filesystem: Option<String>,
    /// What the cache does there about concurrent misses.
    pub locking: Option<String>,
}

/// The read-only store as loads would use it now.
#[derive(Debug)]
pub struct StoreLayer {
    /// Its directory (`null`: none; see `reason`).
    pub dir: Option<String>,
    /// Whether loads would consult it.
    pub usable: bool,
    /// Why not.
    pub reason: Option<String>,
    /// Its entries.
    pub totals: Option<Totals>,
}

/// The store of `config`, located as the tool library loads use would
/// locate it (its prefix's `share/hotswap/store`).
fn store_layer(config: &Config) -> StoreLayer {
    let installed = crate::warm::tool_library(config).or_else(|| std::env::current_exe().ok());
    let dir = cache_store_dir(config, installed.as_deref());
    let (usable, reason, totals) = match &dir {
        Ok(d) => match Store::open_read_only(d) {
            Ok(store) => match store.totals() {
                Ok(t) => (true, None, Some(t)),
                Err(e) => (false, Some(format!("cannot list it: {e}")), None),
            },
            Err(why) => (false, Some(why), None),
        },
        Err(why) => (false, Some(why.clone()), None),
    };
    StoreLayer {
        dir: dir.ok().map(|d| d.display().to_string()),
        usable,
        reason,
        totals,
    }
}

impl Serialize for TotalsJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let t = self.0;
        let mut st = s.serialize_struct("Totals", 7)?;
        st.serialize_field("entries", &t.entries)?;
        st.serialize_field("bytes", &t.bytes)?;
        st.serialize_field("rewritten", &t.rewritten)?;
        st.serialize_field("unchanged", &t.unchanged)?;
        st.serialize_field("refused", &t.refused)?;
        st.serialize_field("unreadable", &t.unreadable)?;
        st.serialize_field("temporary", &t.temporary)?;
        st.end()
    }
}

struct TotalsJson<'a>(&'a Totals);

struct StoreJson<'a>(&'a StoreLayer);

impl Serialize for StoreJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let l = self.0;
        let mut st = s.serialize_struct("Store", 4)?;
        st.serialize_field("dir", &l.dir)?;
        st.serialize_field("usable", &l.usable)?;
        st.serialize_field("reason", &l.reason)?;
        st.serialize_field("totals", &l.totals.as_ref().map(TotalsJson))?;
        st.end()
    }
}

/// One entry of `list`.
#[derive(Debug, Serialize)]
struct Entry {
    key: String,
    outcome: &'static str,
    file_size: u64,
    input_size: u64,
    output_size: u64,
    /// Seconds since the epoch.
    last_use: Option<u64>,
}

fn kind_name(kind: Option<Kind>) -> &'static str {
    match kind {
        Some(Kind::Rewritten) => "rewritten",
        Some(Kind::Unchanged) => "unchanged",
        Some(Kind::Refused) => "refused",
        Some(Kind::Unsupported) => "unsupported pair",
        None => "unreadable",
    }
}

/// Where the cache of `config` is, even when it is switched off or this
/// process is `AT_SECURE` (so that its entries can still be listed and cleared).
fn settings(config: &Config) -> Settings {
    let located = Config {
        cache_off: false,
        ..config.clone()
    };
    Settings::from_config(&located, false)
}

/// The report for `config` (creates nothing).
pub fn report(config: &Config) -> Report {
    let s = settings(config);
    // Why a process starting now would not use it (off, AT_SECURE).
    let off = Settings::from_config(config, process_is_secure()).dir.err();
    let opened = Store::open_existing(&s);
    let place = match &opened {
        Ok(store) => {
            let (fs, flock) = store.filesystem();
            let locking = match flock {
                Ok(()) => format!(
                    "flock works: processes missing the same object serialise (each waits \
                     at most {} s)",
                    s.lock_timeout.as_secs_f64()
                ),
                Err(e) => format!(
                    "flock fails ({e}): lock-free: processes missing the same object at once \
                     may each rewrite it; the atomic rename keeps one whole entry"
                ),
            };
            (Some(fs), Some(locking))
        }
        Err(_) => (None, None),
    };
    let (usable, reason, totals) = match opened {
        Ok(store) => match store.totals() {
            Ok(t) => (off.is_none(), off, Some(t)),
            Err(e) => (
                false,
                Some(format!("cannot list {}: {e}", store.path().display())),
                None,
            ),
        },
        // Not created yet: a process would create it (if it can).
        Err(why) if s.dir.is_ok() && why.ends_with("does not exist yet") => {
            (off.is_none(), Some(off.unwrap_or(why)), None)
        }
        Err(why) => (false, Some(off.unwrap_or(why)), None),
    };
    Report {
        dir: s.dir.as_ref().ok().map(|d| d.display().to_string()),
        entries_dir: s.entries_dir().map(|d| d.display().to_string()),
        usable,
        reason,
        max_bytes: s.max_bytes,
        lock_timeout_seconds: s.lock_timeout.as_secs_f64(),
        warnings: s.warnings,
        totals,
        hit_counts: "not recorded across processes (each process logs its hits at debug level)",
        store: store_layer(config),
        filesystem: place.0,
        locking: place.1,
    }
}

/// Writes the human form of `r` (the doctor's section and `cache stats`).
pub fn print_section(o: &mut dyn std::io::Write, r: &Report) -> std::io::Result<()> {
    match (&r.entries_dir, r.usable) {
        (Some(dir), true) => writeln!(o, "  entries: {dir}")?,
        (Some(dir), false) => writeln!(o, "  entries: {dir} (not usable)")?,
        (None, _) => writeln!(o, "  no cache directory")?,
    }
    if let Some(why) = &r.reason {
        writeln!(o, "  {}: {why}", if r.usable { "note" } else { "not used" })?;
    }
    for w in &r.warnings {
        writeln!(o, "  warning: {w}")?;
    }
    writeln!(
        o,
        "  bound {} bytes ({HSA_HOTSWAP_CACHE_MAX}), lock wait {} s ({HSA_HOTSWAP_CACHE_LOCK_TIMEOUT})",
        r.max_bytes, r.lock_timeout_seconds
    )?;
    if let (Some(fs), Some(locking)) = (&r.filesystem, &r.locking) {
        writeln!(o, "  file system: {fs}; {locking}")?;
    }
    if let Some(t) = &r.totals {
        writeln!(
            o,
            "  {} entries, {} bytes: {} rewritten, {} unchanged, {} refused, {} unreadable; {} temporary files",
            t.entries, t.bytes, t.rewritten, t.unchanged, t.refused, t.unreadable, t.temporary
        )?;
    }
    let st = &r.store;
    match (&st.dir, st.usable) {
        (Some(dir), true) => writeln!(o, "  read-only store ({HSA_HOTSWAP_CACHE_STORE}): {dir}")?,
        (Some(dir), false) => writeln!(
            o,
            "  read-only store ({HSA_HOTSWAP_CACHE_STORE}): {dir} (not used: {})",
            st.reason.as_deref().unwrap_or("?")
        )?,
        (None, _) => writeln!(
            o,
            "  read-only store ({HSA_HOTSWAP_CACHE_STORE}): none ({})",
            st.reason.as_deref().unwrap_or("?")
        )?,
    }
    if let Some(t) = &st.totals {
        writeln!(
            o,
            "    {} entries, {} bytes: {} rewritten, {} unchanged, {} refused, {} unreadable",
            t.entries, t.bytes, t.rewritten, t.unchanged, t.refused, t.unreadable
        )?;
    }
    writeln!(o, "  hit counts: {}", r.hit_counts)
}

fn list(config: &Config) -> Result<Vec<Entry>, String> {
    let store = Store::open_existing(&settings(config))?;
    let entries = store
        .list()
        .map_err(|e| format!("cannot list {}: {e}", store.path().display()))?;
    Ok(entries
        .into_iter()
        .map(|e| Entry {
            key: e.name.trim_end_matches(".entry").to_owned(),
            outcome: kind_name(e.kind),
            file_size: e.file_size,
            input_size: e.input_size,
            output_size: e.output_size,
            last_use: e
                .last_use
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_secs()),
        })
        .collect())
}

#[derive(Debug, Serialize)]
struct Cleared {
    entries_dir: Option<String>,
    removed_entries: u64,
    removed_bytes: u64,
}

/// Runs `hotswap cache ACTION`.
pub fn run(
    action: Action,
    json: bool,
    paths: &[std::path::PathBuf],
    warm: &crate::warm::Options<'_>,
) -> u8 {
    let allowed = |ok: bool, what: &str| {
        if !ok {
            eprintln!("hotswap: {what}");
        }
        ok
    };
    let is = |a: &[Action]| a.contains(&action);
    let usage_ok = allowed(
        warm.backend.is_none() && warm.tool.is_none() && warm.jobs.is_none() || is(&[Action::Warm]),
        "--backend, --tool and --jobs go with `cache warm` only",
    ) && allowed(
        warm.into.is_none() || is(&[Action::Warm, Action::Import]),
        "--into goes with `cache warm` and `cache import` only",
    ) && allowed(
        warm.from.is_none() || is(&[Action::Export]),
        "--from goes with `cache export` only",
    ) && allowed(
        !paths.is_empty() || !is(&[Action::Warm, Action::Export, Action::Import]),
        "cache warm needs a PATH; export and import need the ARCHIVE",
    ) && allowed(
        paths.is_empty()
            || is(&[Action::Warm])
            || paths.len() == 1 && is(&[Action::Export, Action::Import]),
        "PATH goes with `cache warm` (any number), export and import (one archive) only",
    );
    if !usage_ok {
        return crate::exit::USAGE;
    }
    let config = Config::from_env();
    let printed = match action {
        Action::Export | Action::Import => {
            return archive(action, json, &config, &paths[0], warm);
        }
        Action::Warm => match crate::warm::warm(paths, warm) {
            Ok(summary) if json => crate::print_json(&summary),
            Ok(summary) => {
                let stdout = std::io::stdout();
                let mut o = stdout.lock();
                crate::warm::print_human(&mut o, &summary)
            }
            Err(why) => {
                eprintln!("hotswap: cannot warm: {why}");
                return crate::exit::BAD_INPUT;
            }
        },
        Action::Path | Action::Stats => {
            let r = report(&config);
            if json {
                crate::print_json(&r)
            } else if action == Action::Path {
                match &r.entries_dir {
                    Some(d) => {
                        println!("{d}");
                        if !r.usable {
                            eprintln!(
                                "hotswap: the cache is not used: {}",
                                r.reason.as_deref().unwrap_or("?")
                            );
                        }
                        Ok(())
                    }
                    None => {
                        eprintln!("hotswap: no cache: {}", r.reason.as_deref().unwrap_or("?"));
                        return crate::exit::BAD_INPUT;
                    }
                }
            } else {
                let stdout = std::io::stdout();
                let mut o = stdout.lock();
                print_section(&mut o, &r)
            }
        }
        Action::List => match list(&config) {
            Ok(entries) if json => crate::print_json(&entries),
            Ok(entries) => {
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                for e in &entries {
                    println!(
                        "{}  {:<16} {:>12} -> {:>12} bytes  used {} s ago",
                        e.key,
                        e.outcome,
                        e.input_size,
                        e.output_size,
                        e.last_use.map_or(0, |t| now.saturating_sub(t))
                    );
                }
                Ok(())
            }
            Err(why) if json => {
                crate::print_json(&Vec::<Entry>::new()).map(|()| eprintln!("hotswap: {why}"))
            }
            Err(why) => {
                eprintln!("hotswap: no entries: {why}");
                Ok(())
            }
        },
        Action::Clear => {
            let s = settings(&config);
            let (removed_entries, removed_bytes) = match Store::open_existing(&s) {
                Ok(store) => match store.clear() {
                    Ok(n) => n,
                    Err(e) => {
                        eprintln!("hotswap: cannot clear {}: {e}", store.path().display());
                        return crate::exit::BAD_INPUT;
                    }
                },
                Err(_) => (0, 0),
            };
            let c = Cleared {
                entries_dir: s.entries_dir().map(|d| d.display().to_string()),
                removed_entries,
                removed_bytes,
            };
            if json {
                crate::print_json(&c)
            } else {
                println!("removed {removed_entries} entries ({removed_bytes} bytes)");
                Ok(())
            }
        }
    };
    match printed {
        Ok(()) => crate::exit::OK,
        Err(e) => {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                eprintln!("hotswap: cannot write: {e}");
            }
            crate::exit::BAD_INPUT
        }
    }
}

#[derive(Debug, Serialize)]
struct Moved {
    archive: String,
    entries_dir: String,
    entries: u64,
    bytes: u64,
    /// export: entries left out (they fail the checks a load makes).
    skipped: Vec<String>,
}

/// `export ARCHIVE [--from DIR]`, `import ARCHIVE [--into DIR]`.
fn archive(
    action: Action,
    json: bool,
    config: &Config,
    path: &std::path::Path,
    o: &crate::warm::Options<'_>,
) -> u8 {
    let opened = match (action, o.from, o.into) {
        (Action::Export, Some(dir), _) => Store::open_read_only(dir),
        (Action::Import, _, Some(dir)) => Store::open_store_for_writing(dir),
        (Action::Export, None, _) => Store::open_existing(&settings(config)),
        _ => Store::open(&settings(config)),
    };
    let store = match opened {
        Ok(store) => store,
        Err(why) => {
            eprintln!("hotswap: no cache to use: {why}");
            return crate::exit::BAD_INPUT;
        }
    };
    let moved = if action == Action::Export {
        // A temporary file renamed into place: no half-written archive.
        let temp = path.with_extension("partial");
        let written = std::fs::File::create(&temp)
            .map(std::io::BufWriter::new)
            .and_then(|f| store.export(f))
            .and_then(|r| std::fs::rename(&temp, path).map(|()| r));
        match written {
            Ok((entries, bytes, skipped)) => Moved {
                archive: path.display().to_string(),
                entries_dir: store.path().display().to_string(),
                entries,
                bytes,
                skipped,
            },
            Err(e) => {
                let _ = std::fs::remove_file(&temp);
                eprintln!("hotswap: cannot export to {}: {e}", path.display());
                return crate::exit::BAD_INPUT;
            }
        }
    } else {
        let imported = std::fs::read(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))
            .and_then(|bytes| store.import(&bytes));
        match imported {
            Ok((entries, bytes)) => Moved {
                archive: path.display().to_string(),
                entries_dir: store.path().display().to_string(),
                entries,
                bytes,
                skipped: Vec::new(),
            },
            Err(why) => {
                eprintln!("hotswap: cannot import {}: {why}", path.display());
                return crate::exit::BAD_INPUT;
            }
        }
    };
    let printed = if json {
        crate::print_json(&moved)
    } else {
        let verb = if action == Action::Export {
            "exported"
        } else {
            "imported"
        };
        println!(
            "{verb} {} entries ({} bytes): {} {} {}",
            moved.entries,
            moved.bytes,
            moved.entries_dir,
            if action == Action::Export { "->" } else { "<-" },
            moved.archive
        );
        for s in &moved.skipped {
            println!("  left out: {s}");
        }
        Ok(())
    };
    match printed {
        Ok(()) => crate::exit::OK,
        Err(_) => crate::exit::BAD_INPUT,
    }
}

/// By hand: `Totals` is the library's type, which has no serde.
impl Serialize for Report {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let r = self;
        let mut st = s.serialize_struct("Cache", 13)?;
        st.serialize_field("dir", &r.dir)?;
        st.serialize_field("entries_dir", &r.entries_dir)?;
        st.serialize_field("usable", &r.usable)?;
        st.serialize_field("reason", &r.reason)?;
        st.serialize_field("max_bytes", &r.max_bytes)?;
        st.serialize_field("lock_timeout_seconds", &r.lock_timeout_seconds)?;
        st.serialize_field("warnings", &r.warnings)?;
        st.serialize_field("totals", &r.totals.as_ref().map(TotalsJson))?;
        st.serialize_field("hit_counts", &r.hit_counts)?;
        st.serialize_field("store", &StoreJson(&r.store))?;
        st.serialize_field("filesystem", &r.filesystem)?;
        st.serialize_field("locking", &r.locking)?;
        st.serialize_field(
            "variables",
            &[
                HSA_HOTSWAP_CACHE,
                HSA_HOTSWAP_CACHE_DIR,
                HSA_HOTSWAP_CACHE_MAX,
                HSA_HOTSWAP_CACHE_LOCK_TIMEOUT,
                HSA_HOTSWAP_CACHE_STORE,
            ],
        )?;
        st.end()
    }
}
