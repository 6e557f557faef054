//! What `--help` and `--version` print for a program's declared command line
//! (src/ir/cli_spec.rs): the usage line, the commands of the level asked about, the
//! operands and the options (docs/language.md § "Commands" shows an example).

use crate::ir::cli_spec::{ArgDecl, ArgKind, CliSpec};

/// The program's name in usage lines: `@ cli "name"`, else `program`.
fn program(spec: &CliSpec) -> &str {
    if spec.name.is_empty() {
        "program"
    } else {
        &spec.name
    }
}

/// `--version`: `name version`.
pub(super) fn version(spec: &CliSpec) -> String {
    format!("{} {}\n", program(spec), spec.version)
}

/// The words that may follow `node`: its commands and groups, in declaration order.
pub(super) fn children(spec: &CliSpec, node: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in &spec.commands {
        if c.path.len() > node.len() && c.path[..node.len()] == *node {
            let next = c.path[node.len()].clone();
            if !out.contains(&next) {
                out.push(next);
            }
        }
    }
    out
}

/// Two columns: each left cell padded to the widest, then its description.
fn table(out: &mut String, title: &str, rows: &[(String, String)]) {
    if rows.is_empty() {
        return;
    }
    let width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    out.push_str(&format!("\n{title}:\n"));
    for (left, right) in rows {
        if right.is_empty() {
            out.push_str(&format!("  {left}\n"));
        } else {
            let pad = width - left.chars().count();
            out.push_str(&format!("  {left}{}  {right}\n", " ".repeat(pad)));
        }
    }
}

fn option_row(d: &ArgDecl) -> (String, String) {
    let mut left = match (d.short.is_empty(), d.long.is_empty()) {
        (false, false) => format!("-{}, --{}", d.short, d.long),
        (false, true) => format!("-{}", d.short),
        _ => format!("    --{}", d.long),
    };
    if d.ty != "bivalens" {
        left.push_str(&format!(" <{}>", d.ty));
    }
    let mut right = d.descr.clone();
    if let Some(def) = &d.default {
        let sep = if right.is_empty() { "" } else { " " };
        right.push_str(&format!("{sep}(default: {def})"));
    }
    (left, right)
}

fn operand_word(d: &ArgDecl) -> String {
    match (d.kind, &d.default) {
        (ArgKind::Rest, _) => format!("[{}...]", d.name),
        (_, Some(_)) => format!("[{}]", d.name),
        _ => format!("<{}>", d.name),
    }
}

/// The help of the program (`node` empty, no command), of a group, or of command `cmd`.
pub(super) fn text(spec: &CliSpec, node: &[String], cmd: Option<usize>) -> String {
    let mut out = String::new();
    let title = match cmd {
        Some(k) => spec.commands[k].descr.clone(),
        None if node.is_empty() => {
            let mut head = program(spec).to_string();
            if !spec.version.is_empty() {
                head.push(' ');
                head.push_str(&spec.version);
            }
            if !spec.descr.is_empty() {
                head.push('\n');
                head.push_str(&spec.descr);
            }
            head
        }
        None => spec
            .groups
            .iter()
            .find(|g| g.0 == node)
            .map_or(String::new(), |g| g.1.clone()),
    };
    if !title.is_empty() {
        out.push_str(&title);
        out.push_str("\n\n");
    }
    // Who owns the options and operands shown: the command, or the entry at the top.
    let owner = cmd;
    let shown = |d: &&ArgDecl| match owner {
        Some(_) => d.owner == owner || (d.owner.is_none() && d.ubique && d.kind == ArgKind::Opt),
        None if node.is_empty() => d.owner.is_none(),
        None => d.owner.is_none() && d.ubique && d.kind == ArgKind::Opt,
    };
    let decls: Vec<&ArgDecl> = spec.args.iter().filter(shown).collect();
    let mut usage = format!("Usage: {}", program(spec));
    for w in node {
        usage.push(' ');
        usage.push_str(w);
    }
    usage.push_str(" [options]");
    let at_commands = cmd.is_none() && !spec.commands.is_empty();
    if at_commands {
        usage.push_str(" <command>");
    }
    for d in decls.iter().filter(|d| d.kind != ArgKind::Opt) {
        usage.push(' ');
        usage.push_str(&operand_word(d));
    }
    out.push_str(&usage);
    out.push('\n');
    if at_commands {
        let mut rows = Vec::new();
        for next in children(spec, node) {
            let mut path = node.to_vec();
            path.push(next.clone());
            match spec.commands.iter().find(|c| c.path == path) {
                Some(c) => {
                    let mut left = next;
                    for a in &c.aliases {
                        left.push_str(", ");
                        left.push_str(a);
                    }
                    rows.push((left, c.descr.clone()));
                }
                None => {
                    let descr = spec
                        .groups
                        .iter()
                        .find(|g| g.0 == path)
                        .map_or(String::new(), |g| g.1.clone());
                    rows.push((format!("{next} ..."), descr));
                }
            }
        }
        table(&mut out, "Commands", &rows);
    }
    let operands: Vec<(String, String)> = decls
        .iter()
        .filter(|d| d.kind != ArgKind::Opt)
        .map(|d| (operand_word(d), d.descr.clone()))
        .collect();
    table(&mut out, "Arguments", &operands);
    let mut options: Vec<(String, String)> = decls
        .iter()
        .filter(|d| d.kind == ArgKind::Opt)
        .map(|d| option_row(d))
        .collect();
    let h_taken = decls
        .iter()
        .any(|d| d.kind == ArgKind::Opt && d.short == "h");
    let help = if h_taken { "    --help" } else { "-h, --help" };
    options.push((help.to_string(), "Show this help".to_string()));
    if node.is_empty() && cmd.is_none() && !spec.version.is_empty() {
        options.push(("    --version".to_string(), "Show the version".to_string()));
    }
    table(&mut out, "Options", &options);
    out
}
