//! `hotswap cache path|stats|list|clear`: the persistent rewrite cache (the
//! tool's own code, through `hsa_hotswap::cli_api`) as this user's processes
//! would use it now, and the `hotswap doctor` section about it ([`Report`]).
//!
//! `path`, `stats` and `list` never create anything; `clear` removes every
//! entry (not the directories or lock files).

use std::time::{SystemTime, UNIX_EPOCH};

use hsa_hotswap::cli_api::{
    process_is_secure, CacheEntryKind as Kind, CacheSettings as Settings, CacheStore as Store,
    CacheTotals as Totals, Config, HSA_HOTSWAP_CACHE, HSA_HOTSWAP_CACHE_DIR,
    HSA_HOTSWAP_CACHE_LOCK_TIMEOUT, HSA_HOTSWAP_CACHE_MAX,
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
    let (usable, reason, totals) = match Store::open_existing(&s) {
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
    if let Some(t) = &r.totals {
        writeln!(
            o,
            "  {} entries, {} bytes: {} rewritten, {} unchanged, {} refused, {} unreadable; {} temporary files",
            t.entries, t.bytes, t.rewritten, t.unchanged, t.refused, t.unreadable, t.temporary
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
pub fn run(action: Action, json: bool) -> u8 {
    let config = Config::from_env();
    let printed = match action {
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

/// By hand: `Totals` is the library's type, which has no serde.
impl Serialize for Report {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let r = self;
        let mut st = s.serialize_struct("Cache", 10)?;
        st.serialize_field("dir", &r.dir)?;
        st.serialize_field("entries_dir", &r.entries_dir)?;
        st.serialize_field("usable", &r.usable)?;
        st.serialize_field("reason", &r.reason)?;
        st.serialize_field("max_bytes", &r.max_bytes)?;
        st.serialize_field("lock_timeout_seconds", &r.lock_timeout_seconds)?;
        st.serialize_field("warnings", &r.warnings)?;
        st.serialize_field("totals", &r.totals.as_ref().map(TotalsJson))?;
        st.serialize_field("hit_counts", &r.hit_counts)?;
        st.serialize_field(
            "variables",
            &[
                HSA_HOTSWAP_CACHE,
                HSA_HOTSWAP_CACHE_DIR,
                HSA_HOTSWAP_CACHE_MAX,
                HSA_HOTSWAP_CACHE_LOCK_TIMEOUT,
            ],
        )?;
        st.end()
    }
}
