//! `hotswap`: the command line of the hotswap project.
//!
//! - `hotswap inspect FILE...`: every code object in the files (bare, offload
//!   bundles, compressed bundles, host binaries) and, for gfx125x objects, every
//!   function with its instruction count and A0 findings ([`inspect`]);
//! - `hotswap rewrite IN -o OUT`: the native B0→A0 rewrite of one code object
//!   or of every gfx1250 entry of an uncompressed bundle ([`rewrite`]);
//! - `hotswap doctor`: what would happen if an application started now
//!   ([`doctor`]);
//! - `hotswap cache path|stats|list|clear|warm`: the persistent rewrite
//!   cache ([`cache`]), filled ahead of time by `warm` ([`warm`]);
//! - `hotswap man-page [OUT]` (hidden): the manual page `hotswap(1)`, rendered
//!   from these definitions; the build installs it ([`man`]).
//!
//! `--json` on every subcommand prints one JSON document on stdout; the human
//! output is the default. A progress bar goes to stderr when it is a terminal
//! and the run is long ([`progress`]).
#![forbid(unsafe_code)]

mod cache;
mod doctor;
mod inspect;
mod man;
mod progress;
mod rewrite;
#[cfg(test)]
mod tests;
mod warm;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// Exit statuses, shared by the subcommands and listed in `--help`.
pub mod exit {
    /// Success: every input read (inspect), the rewrite complete (rewrite),
    /// the report printed (doctor).
    pub const OK: u8 = 0;
    /// An input could not be read or is not a code object / container; an
    /// output could not be written.
    pub const BAD_INPUT: u8 = 1;
    /// Wrong usage (clap's own status).
    pub const USAGE: u8 = 2;
    /// rewrite: refused; the object needs fixes the rewriter cannot make (or
    /// its analysis is incomplete). Nothing is written.
    pub const REFUSED: u8 = 3;
    /// rewrite `--allow-partial`: written, but sites that need code growth remain.
    pub const PARTIAL: u8 = 4;
}

const AFTER_HELP: &str = "\
Exit status:
  0  success (inspect: every input read; rewrite: complete; doctor: report printed)
  1  an input could not be read, is not a code object or container, or the output could not be written
  2  wrong usage
  3  rewrite refused: the code object needs a fix the rewriter cannot make; nothing written
  4  rewrite --allow-partial: written, but sites that need code growth remain";

#[derive(Debug, Parser)]
#[command(
    name = "hotswap",
    version,
    about = "Inspect gfx1250 code objects for the A0 stepping, rewrite them, and diagnose the hotswap tool",
    after_help = AFTER_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Every code object in FILE... and, for gfx125x objects, every function's
    /// size, instruction count and A0 sites.
    #[command(after_help = AFTER_HELP)]
    Inspect {
        /// Code objects, offload bundles (plain or compressed), or host binaries
        /// with a .hip_fatbin section.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Print one JSON document instead of the human report.
        #[arg(long)]
        json: bool,
        /// Human report: list every A0 site, not only the counts.
        #[arg(long)]
        sites: bool,
        /// Also write every code object found into DIR (for llvm-objdump and
        /// other tools), named INDEX-FILE-PROCESSOR.co.
        #[arg(long, value_name = "DIR")]
        extract: Option<PathBuf>,
    },
    /// Rewrite a gfx1250 B0 code object (or every gfx1250 entry of an
    /// uncompressed offload bundle) for the A0 stepping.
    #[command(after_help = AFTER_HELP)]
    Rewrite {
        /// The code object or bundle to rewrite.
        #[arg(value_name = "IN")]
        input: PathBuf,
        /// Where to write the result (never the input itself).
        #[arg(short, long, value_name = "OUT")]
        output: PathBuf,
        /// Print one JSON document instead of the human summary.
        #[arg(long)]
        json: bool,
        /// Write the object even when sites that need code growth remain
        /// (exit status 4); without it such an object is refused (3).
        #[arg(long)]
        allow_partial: bool,
        /// Replace every s_clause with s_nop 0 (an early COMGR rewriter's
        /// behaviour); by default clauses are kept.
        #[arg(long)]
        replace_clauses: bool,
        /// Go through the tool's rewrite cache, with the backend the tool
        /// would pick (or --backend): the answer a load would get, stored
        /// under its key (a bare code object; no site report).
        #[arg(long, conflicts_with_all = ["allow_partial", "replace_clauses"])]
        cache: bool,
        /// With --cache: the rewriter, as HSA_HOTSWAP_REWRITER names it.
        #[arg(long, value_name = "BACKEND", requires = "cache")]
        backend: Option<String>,
    },
    /// What would happen if an application started now: HSA_TOOLS_LIB as ROCr
    /// parses it, which ROCr, COMGR and tool libraries the loader finds, ROCr's
    /// own hotswap hook and rocprofiler-register's gate, the rewriter backends,
    /// and the GPUs of the KFD topology.
    #[command(after_help = AFTER_HELP)]
    Doctor {
        /// Print one JSON document instead of the human report.
        #[arg(long)]
        json: bool,
    },
    /// The persistent rewrite cache: where it is (path), its size and entry
    /// counts and its read-only store's (stats), its entries (list), remove
    /// them (clear), fill it ahead of time with every gfx1250 code object
    /// under PATH... (warm), or move its entries as one archive (export
    /// ARCHIVE, import ARCHIVE).
    #[command(after_help = AFTER_HELP)]
    Cache {
        /// path, stats, list, clear, warm, export or import.
        #[arg(value_enum)]
        action: cache::Action,
        /// warm: files and directories (recursively) holding code objects;
        /// export, import: the archive.
        #[arg(value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// Print one JSON document instead of the human output.
        #[arg(long)]
        json: bool,
        /// warm: the rewriter, as HSA_HOTSWAP_REWRITER names it (native, or a
        /// library's absolute path); default: the one the tool would pick.
        #[arg(long, value_name = "BACKEND")]
        backend: Option<String>,
        /// warm: the tool library whose loads will use the entries; default:
        /// the one HSA_TOOLS_LIB names by path, else the one installed with
        /// this command.
        #[arg(long, value_name = "LIB")]
        tool: Option<PathBuf>,
        /// warm, import: write into the store DIR instead of the cache.
        #[arg(long, value_name = "DIR")]
        into: Option<PathBuf>,
        /// export: read the store DIR instead of the cache.
        #[arg(long, value_name = "DIR")]
        from: Option<PathBuf>,
        /// warm: worker threads (default: one per core).
        #[arg(long, value_name = "N")]
        jobs: Option<usize>,
    },
    /// Write the manual page hotswap(1) (roff) to OUT, or to standard output.
    /// Run by the build, which installs the page; hidden from --help and the page.
    #[command(hide = true)]
    ManPage {
        /// Where to write the page.
        #[arg(value_name = "OUT")]
        output: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(parse_error_status(&e));
        }
    };
    let status = match cli.command {
        Command::Inspect {
            files,
            json,
            sites,
            extract,
        } => inspect::run(&files, json, sites, extract.as_deref()),
        Command::Rewrite {
            input,
            output,
            json,
            allow_partial,
            replace_clauses,
            cache: true,
            backend,
        } => {
            let (outcome, status) = warm::rewrite_cached(&input, &output, backend.as_deref());
            let printed = if json {
                print_json(&outcome)
            } else {
                warm::print_cached(&outcome)
            };
            if let Err(e) = printed {
                eprintln!("hotswap: cannot write the summary: {e}");
            }
            let _ = (allow_partial, replace_clauses);
            status
        }
        Command::Rewrite {
            input,
            output,
            json,
            allow_partial,
            replace_clauses,
            ..
        } => rewrite::run(
            &input,
            &output,
            json,
            rewrite::options(allow_partial, replace_clauses),
        ),
        Command::Doctor { json } => doctor::run(json),
        Command::Cache {
            action,
            paths,
            json,
            backend,
            tool,
            into,
            from,
            jobs,
        } => cache::run(
            action,
            json,
            &paths,
            &warm::Options {
                backend: backend.as_deref(),
                tool: tool.as_deref(),
                into: into.as_deref(),
                from: from.as_deref(),
                jobs,
            },
        ),
        Command::ManPage { output } => man::run(Cli::command(), output.as_deref()),
    };
    ExitCode::from(status)
}

/// The exit status for what clap returns instead of a command line: 0 for
/// `--help` and `--version` (printed on stdout), [`exit::USAGE`] for an error.
fn parse_error_status(e: &clap::Error) -> u8 {
    if e.use_stderr() {
        exit::USAGE
    } else {
        exit::OK
    }
}

/// Writes `value` as pretty JSON on stdout, followed by a newline.
pub fn print_json<T: serde::Serialize>(value: &T) -> std::io::Result<()> {
    use std::io::Write;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    serde_json::to_writer_pretty(&mut out, value)?;
    out.write_all(b"\n")?;
    out.flush()
}
