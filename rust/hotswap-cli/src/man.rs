//! The manual page `hotswap(1)`, rendered from the clap definitions.
//!
//! The build runs the hidden subcommand `hotswap man-page OUT` and installs
//! what it writes, so the page cannot drift from `--help`: it has every
//! visible subcommand with its description, arguments and options, the
//! top-level options, and the exit statuses of `after_help` as EXIT STATUS.
//! One page for the whole program (what `man hotswap` shows), not a page per
//! subcommand: there is no `hotswap-inspect` program for such a page to
//! describe. Text goes through the `roff` crate, which escapes what roff
//! would otherwise interpret (`-`, `\`, a leading `.` or `'`).

use std::io::Write;
use std::path::Path;

use clap::{Arg, ArgAction, Command};
use roff::{bold, italic, roman, Inline, Roff};

/// The section of the manual the page belongs to (user commands).
const SECTION: &str = "1";

/// The first line of `after_help` that introduces the exit statuses.
const EXIT_STATUS_HEADING: &str = "Exit status:";

/// Writes the page of `cmd` (the top-level command) to `output`, or to stdout.
pub fn run(cmd: Command, output: Option<&Path>) -> u8 {
    let page = match render(cmd) {
        Ok(page) => page,
        Err(e) => {
            eprintln!("hotswap man-page: {e}");
            return crate::exit::BAD_INPUT;
        }
    };
    let written = match output {
        Some(path) => std::fs::write(path, page.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display())),
        None => std::io::stdout()
            .lock()
            .write_all(page.as_bytes())
            .map_err(|e| format!("cannot write to stdout: {e}")),
    };
    match written {
        Ok(()) => crate::exit::OK,
        Err(e) => {
            eprintln!("hotswap man-page: {e}");
            crate::exit::BAD_INPUT
        }
    }
}

/// The page, as roff source for `man`. Fails when the definitions have a shape
/// the page cannot show faithfully (so that the build fails, not the page).
pub fn render(cmd: Command) -> Result<String, String> {
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let name = cmd.get_name().to_owned();
    let subcommands: Vec<&Command> = cmd.get_subcommands().filter(|s| !s.is_hide_set()).collect();
    let statuses = exit_statuses(&cmd, &subcommands)?;

    let mut page = Roff::new();
    page.control("SH", ["NAME"]);
    page.text([roman(format!("{name} - {}", about(&cmd)?))]);

    page.control("SH", ["SYNOPSIS"]);
    let top_args: Vec<&Arg> = visible_args(&cmd).collect();
    let mut forms: Vec<Vec<Inline>> = Vec::new();
    for sub in &subcommands {
        let mut form = vec![bold(format!("{name} {}", sub.get_name()))];
        form.extend(synopsis(&documented_args(sub)));
        forms.push(form);
    }
    if !top_args.is_empty() {
        let mut form = vec![bold(name.clone())];
        form.extend(synopsis(&top_args));
        forms.push(form);
    }
    // Neither hyphenate nor justify the forms: option names stay whole.
    page.control("nh", []).control("ad", ["l"]);
    for (i, form) in forms.into_iter().enumerate() {
        if i > 0 {
            page.control("br", []);
        }
        page.text(form);
    }
    page.control("ad", []).control("hy", []);

    page.control("SH", ["DESCRIPTION"]);
    paragraphs(&mut page, &long_about(&cmd)?);

    if !subcommands.is_empty() {
        page.control("SH", ["COMMANDS"]);
        for sub in &subcommands {
            let title = format!("{name} {}", sub.get_name());
            page.control("SS", [title.as_str()]);
            paragraphs(&mut page, &long_about(sub)?);
            for arg in documented_args(sub) {
                item(&mut page, arg);
            }
        }
    }

    if !top_args.is_empty() {
        page.control("SH", ["OPTIONS"]);
        for arg in top_args {
            item(&mut page, arg);
        }
    }

    if !statuses.is_empty() {
        page.control("SH", ["EXIT STATUS"]);
        for (code, meaning) in statuses {
            page.control("TP", []);
            page.text([bold(code)]);
            page.text([roman(meaning)]);
        }
    }

    let version = cmd.get_version().unwrap_or_default();
    let title = format!(
        ".TH {} {SECTION} \"\" \"{name} {version}\" \"User Commands\"\n",
        name.to_uppercase()
    );
    if title.chars().filter(|&c| c == '"').count() != 6 {
        return Err(format!(
            "a quote in the name or version would break the title line: {title}"
        ));
    }
    Ok(title + &page.render())
}

/// A subcommand's arguments and options as the page documents them: the visible
/// ones without `-h, --help` (listed once, at the top level).
fn documented_args(cmd: &Command) -> Vec<&Arg> {
    visible_args(cmd)
        .filter(|a| {
            !matches!(
                a.get_action(),
                ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong
            )
        })
        .collect()
}

fn visible_args(cmd: &Command) -> impl Iterator<Item = &Arg> {
    cmd.get_arguments().filter(|a| !a.is_hide_set())
}

fn about(cmd: &Command) -> Result<String, String> {
    cmd.get_about()
        .or_else(|| cmd.get_long_about())
        .map(|s| s.to_string())
        .ok_or_else(|| format!("`{}` has no description", cmd.get_name()))
}

fn long_about(cmd: &Command) -> Result<String, String> {
    match cmd.get_long_about() {
        Some(text) => Ok(text.to_string()),
        None => about(cmd),
    }
}

/// Text whose blank lines separate paragraphs; the lines of one paragraph are filled.
fn paragraphs(page: &mut Roff, text: &str) {
    page.control("PP", []);
    for line in text.lines() {
        if line.trim().is_empty() {
            page.control("PP", []);
        } else {
            page.text([roman(line.trim())]);
        }
    }
}

/// The value names of an argument that takes values (`DIR`, `FILE`), with `...`
/// when it takes several.
fn value_name(arg: &Arg) -> Option<String> {
    let takes = arg.get_num_args().is_some_and(|n| n.takes_values());
    if !takes {
        return None;
    }
    let names = match arg.get_value_names() {
        Some(names) => names
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(" "),
        None => arg.get_id().as_str().to_uppercase(),
    };
    let several = arg.get_num_args().is_some_and(|n| n.max_values() > 1);
    Some(if several {
        format!("{names}...")
    } else {
        names
    })
}

/// `[--json] [--extract DIR] -o OUT FILE...`: optional ones in brackets.
fn synopsis(args: &[&Arg]) -> Vec<Inline> {
    let mut out = Vec::new();
    let options = args.iter().filter(|a| !a.is_positional());
    let positionals = args.iter().filter(|a| a.is_positional());
    for arg in options.chain(positionals) {
        out.push(roman(" "));
        let optional = !arg.is_required_set();
        if optional {
            out.push(roman("["));
        }
        if !arg.is_positional() {
            let flags: Vec<String> = arg
                .get_short()
                .map(|s| format!("-{s}"))
                .into_iter()
                .chain(arg.get_long().map(|l| format!("--{l}")))
                .collect();
            for (i, flag) in flags.into_iter().enumerate() {
                if i > 0 {
                    out.push(roman("|"));
                }
                out.push(bold(flag));
            }
            if value_name(arg).is_some() {
                out.push(roman(" "));
            }
        }
        if let Some(value) = value_name(arg) {
            out.push(italic(value));
        }
        if optional {
            out.push(roman("]"));
        }
    }
    out
}

/// One `.TP` entry: `-o, --output OUT` or `FILE...`, then the help text.
fn item(page: &mut Roff, arg: &Arg) {
    let mut tag = Vec::new();
    if let Some(short) = arg.get_short() {
        tag.push(bold(format!("-{short}")));
    }
    if let Some(long) = arg.get_long() {
        if !tag.is_empty() {
            tag.push(roman(", "));
        }
        tag.push(bold(format!("--{long}")));
    }
    if let Some(value) = value_name(arg) {
        if !tag.is_empty() {
            tag.push(roman(" "));
        }
        tag.push(italic(value));
    }
    page.control("TP", []);
    page.text(tag);
    let help = arg
        .get_long_help()
        .or_else(|| arg.get_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    // The first paragraph follows the tag; later ones keep its indentation (.IP).
    for (i, paragraph) in help.split("\n\n").enumerate() {
        if i > 0 {
            page.control("IP", []);
        }
        for line in paragraph.lines().map(str::trim).filter(|l| !l.is_empty()) {
            page.text([roman(line)]);
        }
    }
}

/// The exit statuses of `after_help` ("Exit status:" then "CODE  meaning"
/// lines), which every subcommand must repeat or leave out.
fn exit_statuses(cmd: &Command, subcommands: &[&Command]) -> Result<Vec<(String, String)>, String> {
    let Some(text) = cmd.get_after_long_help().or_else(|| cmd.get_after_help()) else {
        return Ok(Vec::new());
    };
    let text = text.to_string();
    for sub in subcommands {
        if let Some(theirs) = sub.get_after_long_help().or_else(|| sub.get_after_help()) {
            if theirs.to_string() != text {
                return Err(format!(
                    "`{}` has an after_help of its own; the page shows only the exit statuses",
                    sub.get_name()
                ));
            }
        }
    }
    let mut lines = text.lines();
    if lines.next().map(str::trim) != Some(EXIT_STATUS_HEADING) {
        return Err(format!(
            "after_help must start with '{EXIT_STATUS_HEADING}': {text:?}"
        ));
    }
    lines
        .map(|line| {
            let line = line.trim();
            match line.split_once(char::is_whitespace) {
                Some((code, meaning)) if code.parse::<u8>().is_ok() => {
                    Ok((code.to_owned(), meaning.trim().to_owned()))
                }
                _ => Err(format!("after_help: '{line}' is not 'CODE  meaning'")),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Cli;
    use clap::CommandFactory;

    fn page() -> String {
        render(Cli::command()).expect("the page renders")
    }

    /// The text a reader sees: roff's escapes undone, fonts dropped.
    fn plain(page: &str) -> String {
        page.replace("\\fB", "")
            .replace("\\fI", "")
            .replace("\\fR", "")
            .replace("\\-", "-")
            .replace("\\*(Aq", "'")
            .replace("\\&", "")
    }

    #[test]
    fn title_and_name_line() {
        let page = page();
        let version = env!("CARGO_PKG_VERSION");
        assert!(
            page.starts_with(&format!(
                ".TH HOTSWAP 1 \"\" \"hotswap {version}\" \"User Commands\"\n"
            )),
            "{page}"
        );
        // whatis/apropos read "name \- description" from the NAME section.
        assert!(
            page.contains(".SH NAME\nhotswap \\- Inspect gfx1250 code objects"),
            "{page}"
        );
    }

    #[test]
    fn every_visible_subcommand_and_option_is_documented() {
        let page = page();
        let text = plain(&page);
        let mut cmd = Cli::command();
        cmd.build();
        let mut seen = 0;
        for sub in cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        {
            seen += 1;
            assert!(
                page.contains(&format!(".SS \"hotswap {}\"", sub.get_name())),
                "{}",
                sub.get_name()
            );
            let about = sub.get_about().expect("about").to_string();
            assert!(text.contains(&about), "description of {}", sub.get_name());
            for arg in documented_args(sub) {
                if let Some(long) = arg.get_long() {
                    assert!(
                        text.contains(&format!("--{long}")),
                        "--{long} of {}",
                        sub.get_name()
                    );
                }
                if let Some(short) = arg.get_short() {
                    assert!(
                        text.contains(&format!("-{short}, --")),
                        "-{short} of {}",
                        sub.get_name()
                    );
                }
                let help = arg.get_help().expect("help").to_string();
                assert!(text.contains(&help), "help of {:?}: {help}", arg.get_id());
            }
        }
        assert_eq!(seen, 4, "inspect, rewrite, doctor, cache");
        for flag in ["--help", "--version"] {
            assert!(text.contains(flag), "{flag}");
        }
        // The synopsis shows each subcommand's usage: required ones bare,
        // optional ones in brackets, repeated ones with "...".
        assert!(
            text.contains("hotswap inspect [--json] [--sites] [--extract DIR] FILE..."),
            "{text}"
        );
        assert!(
            text.contains(
                "hotswap rewrite -o|--output OUT [--json] [--allow-partial] [--replace-clauses] \
                 [--cache] [--backend BACKEND] IN"
            ),
            "{text}"
        );
        assert!(text.contains("hotswap doctor [--json]\n"), "{text}");
        assert!(
            text.contains("hotswap [-h|--help] [-V|--version]\n"),
            "{text}"
        );
    }

    #[test]
    fn hidden_subcommand_and_help_subcommand_are_not_documented() {
        let page = page();
        assert!(
            !page.contains("man\\-page"),
            "the generator is not part of the interface"
        );
        assert!(!page.contains(".SS \"hotswap help\""));
    }

    #[test]
    fn exit_statuses_are_the_programs() {
        let page = page();
        let section = page
            .split(".SH \"EXIT STATUS\"\n")
            .nth(1)
            .expect("EXIT STATUS section");
        let codes: Vec<u8> = section
            .lines()
            .filter_map(|l| l.strip_prefix("\\fB")?.strip_suffix("\\fR")?.parse().ok())
            .collect();
        use crate::exit::*;
        assert_eq!(codes, [OK, BAD_INPUT, USAGE, REFUSED, PARTIAL]);
        assert!(plain(section).contains("rewrite refused: the code object needs a fix"));
    }

    #[test]
    fn no_text_line_is_taken_for_a_request() {
        // roff escapes these; a line starting with '.' or '\'' that is not one
        // of the page's requests would be swallowed by man.
        let requests = [
            ".TH ", ".SH ", ".SS ", ".PP", ".TP", ".IP", ".br", ".nh", ".hy", ".ad", ".ie ", ".el ",
        ];
        for line in page().lines() {
            if line.starts_with('.') || line.starts_with('\'') {
                assert!(
                    requests.iter().any(|r| line.starts_with(r)),
                    "unexpected request line {line:?}"
                );
            }
        }
    }

    #[test]
    fn unfaithful_shapes_fail_the_build() {
        let odd = Command::new("x").about("x").after_help("Notes: none");
        assert!(render(odd).is_err());
        let sub_help = Command::new("x")
            .about("x")
            .after_help("Exit status:\n  0  ok")
            .subcommand(Command::new("y").about("y").after_help("something else"));
        assert!(render(sub_help).is_err());
        let fine = Command::new("x")
            .about("x")
            .after_help("Exit status:\n  0  ok\n  1  not ok");
        let page = render(fine).expect("renders");
        assert!(
            page.contains(".SH \"EXIT STATUS\"\n.TP\n\\fB0\\fR\nok\n.TP\n\\fB1\\fR\nnot ok\n"),
            "{page}"
        );
    }
}
