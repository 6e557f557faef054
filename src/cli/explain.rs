//! `faber explain [CODE]`: prints the explanation of a diagnostic code on stdout, as
//! `rustc --explain` does: what it means, a program that triggers it and how to fix
//! it. The entries are the Markdown files under `docs/explain/`, embedded in the
//! binary (src/diag/explain.rs), printed as they are. Codes are case-insensitive.
//! Without a code it lists every code with its summary. An unknown code is CLI003
//! with the nearest codes suggested.

use std::process::ExitCode;

use clap::Args;

use super::{print_stdout, Context};
use faber::diag::{codes, explain, suggest, Diagnostic};
use faber::source::{SourceMap, Span};

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// A diagnostic code such as `SEM001` (any case); without one, every code is listed.
    pub code: Option<String>,
}

pub fn run(args: &ExplainArgs, ctx: &Context) -> ExitCode {
    let Some(code) = &args.code else {
        print_stdout(&listing());
        return ExitCode::SUCCESS;
    };
    match codes::lookup(code).and_then(|c| explain::entry(c.id)) {
        Some(text) => {
            print_stdout(text);
            ExitCode::SUCCESS
        }
        None => {
            let mut sources = SourceMap::new();
            let d = unknown_code(&mut sources, code);
            ctx.report(&sources, &[d])
        }
    }
}

/// Every code with its summary, one line each, a blank line between families.
fn listing() -> String {
    let mut out = String::from("Diagnostic codes (`faber explain CODE` explains one):\n");
    let mut family = "";
    for c in codes::ALL {
        let f = c.id.trim_end_matches(|ch: char| ch.is_ascii_digit());
        if f != family {
            out.push('\n');
            family = f;
        }
        out.push_str(&format!("{:<9}{}\n", c.id, c.summary));
    }
    out
}

/// CLI003, pointing at the argument on a pseudo-file that holds the command line.
fn unknown_code(sources: &mut SourceMap, code: &str) -> Diagnostic {
    let prefix = "faber explain ";
    let file = sources.add("<command line>", format!("{prefix}{code}"));
    let span = Span::new(file, prefix.len(), prefix.len() + code.len());
    let wanted = code.to_ascii_uppercase();
    let near = suggest::nearest_n(&wanted, codes::ALL.iter().map(|c| c.id), 3);
    let hint = suggest::did_you_mean(&near)
        .unwrap_or_else(|| "`faber explain` with no code lists every code".to_string());
    Diagnostic::error(
        codes::CLI_UNKNOWN_CODE,
        format!("`{code}` is not a diagnostic code"),
        span,
    )
    .with_hint(hint)
}
