//! `faber test <path>`: discovers `.fab` and `.proba` files (a file, or every file
//! under a directory), compiles each, and runs its `proba` cases, each with fresh
//! module state. Prints `PASS|FAIL|SKIP file::suite/path::name` per case (reasons
//! indented under failures), then `N passed, N failed, N blocked, N skipped`
//! (blocked = a file that failed to compile). `--json` prints one JSON object instead.
//! Exit 1 when anything failed or was blocked.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use rustc_hash::FxHashSet;

use super::hostfs::{host_file_methods, HostFiles};
use super::{load, modules::FsLoader, print_stdout, Context};
use faber::ir::TestCase;
use faber::source::SourceMap;

#[derive(Args, Debug)]
pub struct TestArgs {
    /// A `.fab`/`.proba` file, or a directory searched recursively.
    pub path: PathBuf,
    /// Run only cases whose full path (`file::suite/…::name`) contains this text.
    #[arg(long)]
    pub filter: Option<String>,
    /// Run only cases with exactly this name.
    #[arg(long)]
    pub name: Option<String>,
    /// Run only cases inside a suite whose name contains this text.
    #[arg(long)]
    pub suite: Option<String>,
    /// Run only cases carrying this tag.
    #[arg(long)]
    pub tag: Option<String>,
    /// Only files whose path contains this text.
    #[arg(long)]
    pub include: Option<String>,
    /// Skip files whose path contains this text.
    #[arg(long)]
    pub exclude: Option<String>,
    /// Print a JSON report on stdout instead of the human one.
    #[arg(long)]
    pub json: bool,
    /// Element type of the floating tensors (`f32` or `f64`; default: the
    /// `[run] precision` of the faber.toml above each file, else f64; docs/precision.md).
    #[arg(long, value_name = "f32|f64", value_parser = super::flags::precision)]
    pub precision: Option<faber::tensor::DType>,
}

struct Outcome {
    path: String,
    case: Option<TestCase>,
    status: &'static str,
    reason: Option<String>,
    millis: u128,
}

/// Every `.fab`/`.proba` file under `path`, in sorted order. Each directory is
/// walked once, by its real path, so symlinks back up the tree (`a -> .`) cannot
/// make the walk loop or multiply; hidden entries and `target` are skipped.
pub(super) fn discover(path: &Path, out: &mut Vec<PathBuf>, seen: &mut FxHashSet<PathBuf>) {
    if !path.is_dir() {
        out.push(path.to_path_buf());
        return;
    }
    match std::fs::canonicalize(path) {
        Ok(real) => {
            if !seen.insert(real) {
                return;
            }
        }
        Err(_) => return,
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if p.is_dir() {
            discover(&p, out, seen);
        } else if p.extension().is_some_and(|e| e == "fab" || e == "proba") {
            out.push(p);
        }
    }
}

fn selected(args: &TestArgs, case: &TestCase, full: &str) -> bool {
    args.filter
        .as_ref()
        .is_none_or(|f| full.contains(f.as_str()))
        && args.name.as_ref().is_none_or(|n| case.name == *n)
        && args
            .suite
            .as_ref()
            .is_none_or(|s| case.suites.iter().any(|x| x.contains(s.as_str())))
        && args.tag.as_ref().is_none_or(|t| case.tags.contains(t))
}

fn full_name(file: &str, case: &TestCase) -> String {
    let mut s = format!("{file}::");
    if !case.suites.is_empty() {
        s.push_str(&case.suites.join("/"));
        s.push_str("::");
    }
    s.push_str(&case.name);
    s
}

pub fn run(args: &TestArgs, ctx: &Context) -> ExitCode {
    let mut files = Vec::new();
    if !args.path.exists() {
        let mut sources = SourceMap::new();
        return match load::read_source(&args.path, &mut sources) {
            Err(d) => ctx.report(&sources, &[d]),
            Ok(_) => ExitCode::FAILURE,
        };
    }
    discover(&args.path, &mut files, &mut FxHashSet::default());
    files.retain(|f| {
        let s = f.display().to_string();
        args.include.as_ref().is_none_or(|i| s.contains(i.as_str()))
            && args
                .exclude
                .as_ref()
                .is_none_or(|x| !s.contains(x.as_str()))
    });
    let mut outcomes: Vec<Outcome> = Vec::new();
    let mut programs = Vec::new();
    for file in &files {
        let mut sources = SourceMap::new();
        let entry = match load::read_source(file, &mut sources) {
            Ok(e) => e,
            Err(d) => {
                let _ = ctx.report(&sources, &[d]);
                outcomes.push(blocked(file));
                continue;
            }
        };
        let mut loader = FsLoader::new(ctx.lib_root.clone());
        let package = match load::package_above(file, &mut sources) {
            Ok(m) => m,
            Err(ds) => {
                let _ = ctx.report(&sources, &ds);
                outcomes.push(blocked(file));
                continue;
            }
        };
        loader.use_package(package.as_ref());
        let precision = super::flags::precision_of(args.precision, package.as_ref());
        match faber::compile(&mut sources, entry, &mut loader) {
            Ok(p) => programs.push((file.display().to_string(), p, precision)),
            Err(diags) => {
                let _ = ctx.report(&sources, &diags);
                outcomes.push(blocked(file));
            }
        }
    }
    let any_only = programs
        .iter()
        .any(|(_, p, _)| p.tests.iter().any(|t| t.only));
    for (file, program, precision) in &programs {
        let config = faber::eval::RunConfig {
            precision: *precision,
            ..ctx.run
        };
        for case in &program.tests {
            let full = full_name(file, case);
            if !selected(args, case, &full) || (any_only && !case.only) {
                continue;
            }
            let mut outcome = Outcome {
                path: full,
                case: Some(case.clone()),
                status: "passed",
                reason: None,
                millis: 0,
            };
            if let Some(why) = &case.skip {
                outcome.status = "skipped";
                outcome.reason = Some(why.clone()).filter(|w| !w.is_empty());
                outcomes.push(outcome);
                continue;
            }
            let start = Instant::now();
            for _ in 0..case.repeat {
                let mut io = TestIo {
                    out: faber::eval::BufferIo::default(),
                    files: HostFiles::new(&config),
                };
                if let Err(e) =
                    faber::eval::run_function(program, case.func, Vec::new(), &mut io, &config)
                {
                    outcome.status = "failed";
                    outcome.reason = Some(e.diagnostic.message.clone());
                    break;
                }
            }
            outcome.millis = start.elapsed().as_millis();
            outcomes.push(outcome);
        }
    }
    let count = |s: &str| outcomes.iter().filter(|o| o.status == s).count();
    let (passed, failed, blocked_n, skipped) = (
        count("passed"),
        count("failed"),
        count("blocked"),
        count("skipped"),
    );
    if args.json {
        print_stdout(&json_report(&outcomes, passed, failed, blocked_n, skipped));
    } else {
        let mut text = String::new();
        for o in &outcomes {
            let tag = match o.status {
                "passed" => "PASS",
                "failed" => "FAIL",
                "skipped" => "SKIP",
                _ => "BLOCKED",
            };
            text.push_str(&format!("{tag} {}\n", o.path));
            if o.status == "failed" {
                if let Some(r) = &o.reason {
                    text.push_str(&format!("    {r}\n"));
                }
            }
        }
        text.push_str(&format!(
            "{passed} passed, {failed} failed, {blocked_n} blocked, {skipped} skipped\n"
        ));
        print_stdout(&text);
    }
    if failed + blocked_n > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn blocked(file: &Path) -> Outcome {
    Outcome {
        path: file.display().to_string(),
        case: None,
        status: "blocked",
        reason: Some("the file failed to compile".into()),
        millis: 0,
    }
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_report(
    outcomes: &[Outcome],
    passed: usize,
    failed: usize,
    blocked: usize,
    skipped: usize,
) -> String {
    let cases: Vec<String> = outcomes
        .iter()
        .map(|o| {
            let (name, unit, suite) = match &o.case {
                Some(c) => (c.name.clone(), c.file.clone(), c.suites.join("/")),
                None => (String::new(), o.path.clone(), String::new()),
            };
            let reason = o.reason.as_deref().map_or("null".to_string(), json_str);
            format!(
                "{{\"name\":{},\"path\":{},\"unit\":{},\"suite\":{},\"status\":{},\"reason\":{},\"duration_ms\":{}}}",
                json_str(&name),
                json_str(&o.path),
                json_str(&unit),
                json_str(&suite),
                json_str(o.status),
                reason,
                o.millis
            )
        })
        .collect();
    format!(
        "{{\"success\":{},\"passed\":{passed},\"failed\":{failed},\"blocked\":{blocked},\"skipped\":{skipped},\"cases\":[{}]}}\n",
        failed + blocked == 0,
        cases.join(",")
    )
}

/// A test case's host: its output is collected and dropped; the `hospes` file
/// functions reach the file system.
struct TestIo {
    out: faber::eval::BufferIo,
    files: HostFiles,
}

impl faber::eval::Io for TestIo {
    fn stdout(&mut self, s: &str) {
        self.out.stdout(s);
    }
    fn stderr(&mut self, s: &str) {
        self.out.stderr(s);
    }
    host_file_methods!(files);
}
