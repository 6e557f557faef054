//! The command line a program declares (docs/language.md § "Command-line arguments" and
//! § "Commands"): its options and operands (`@ optio`, `@ operandus`), and for a CLI
//! program its commands (`@ imperium`, `@ imperia`). The lowerer builds it from the
//! annotations (src/ir/lower/argumenta.rs, src/ir/lower/commands.rs) and hands it to
//! the run-time parser (src/eval/host_args.rs) as text, one declaration a line with
//! tab-separated fields; both sides use this one type, so the format is written and
//! read in one place.

/// What a declaration binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// `@ optio`: a flag or an option with a value.
    Opt,
    /// `@ operandus T x`: the next operand.
    One,
    /// `@ operandus ceteri T xs`: the operands left.
    Rest,
}

/// One `@ optio` or `@ operandus`.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgDecl {
    /// The command that declares it; None for the entry (`incipit`).
    pub owner: Option<usize>,
    pub kind: ArgKind,
    /// The field of the record it fills.
    pub name: String,
    /// `textus`, `numerus`, `fractus` or `bivalens`.
    pub ty: String,
    /// `brevis`: one character, or empty.
    pub short: String,
    /// `longum`, or empty.
    pub long: String,
    /// `ubique`: an option of the entry that every command accepts too.
    pub ubique: bool,
    /// `vel X`: the value when the word is absent, as text of its type.
    pub default: Option<String>,
    /// `descriptio`: its line in `--help`.
    pub descr: String,
}

/// One `@ imperium` command: its words after the program name (`config set`).
#[derive(Clone, Debug, PartialEq)]
pub struct Command {
    pub path: Vec<String>,
    /// `@ alias` spellings of its last word.
    pub aliases: Vec<String>,
    pub descr: String,
}

/// The whole declared command line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CliSpec {
    /// `@ cli "name"`; empty without one.
    pub name: String,
    /// `@ versio`; empty without one (then `--version` is not recognised).
    pub version: String,
    /// `@ descriptio` of the entry.
    pub descr: String,
    /// `--help` / `-h` (and `--version`) are recognised: the entry has `@ cli` or
    /// commands.
    pub help: bool,
    pub args: Vec<ArgDecl>,
    pub commands: Vec<Command>,
    /// Mounted command groups (`@ imperia "path" ex m`): path and description.
    pub groups: Vec<(Vec<String>, String)>,
}

/// A field of free text (a description) on one line, without the separator.
fn clean(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

impl CliSpec {
    /// The declarations that make the record of `target` (None: the entry), in field
    /// order: for a command, the entry's `ubique` options, then its own declarations.
    pub fn fields_of(&self, target: Option<usize>) -> Vec<&ArgDecl> {
        match target {
            None => self.args.iter().filter(|a| a.owner.is_none()).collect(),
            Some(_) => self
                .args
                .iter()
                .filter(|a| a.owner.is_none() && a.ubique && a.kind == ArgKind::Opt)
                .chain(self.args.iter().filter(|a| a.owner == target))
                .collect(),
        }
    }

    /// The text the run-time parser reads ([`CliSpec::from_text`]).
    pub fn to_text(&self) -> String {
        let mut out = vec![format!(
            "prog\t{}\t{}\t{}\t{}",
            clean(&self.name),
            clean(&self.version),
            clean(&self.descr),
            u8::from(self.help)
        )];
        for c in &self.commands {
            out.push(format!(
                "cmd\t{}\t{}\t{}",
                c.path.join(" "),
                c.aliases.join(" "),
                clean(&c.descr)
            ));
        }
        for (path, descr) in &self.groups {
            out.push(format!("group\t{}\t{}", path.join(" "), clean(descr)));
        }
        for a in &self.args {
            let kind = match a.kind {
                ArgKind::Opt => "opt",
                ArgKind::One => "one",
                ArgKind::Rest => "rest",
            };
            let owner = a.owner.map_or("-".to_string(), |o| o.to_string());
            let default = a
                .default
                .as_deref()
                .map_or("-".to_string(), |d| format!("={}", clean(d)));
            out.push(format!(
                "{kind}\t{owner}\t{}\t{}\t{}\t{}\t{}\t{default}\t{}",
                a.name,
                a.ty,
                a.short,
                a.long,
                u8::from(a.ubique),
                clean(&a.descr)
            ));
        }
        out.join("\n")
    }

    /// Reads [`CliSpec::to_text`]'s text back; None when it is not such a text.
    pub fn from_text(text: &str) -> Option<CliSpec> {
        let mut spec = CliSpec::default();
        let words = |s: &str| -> Vec<String> {
            s.split(' ')
                .filter(|w| !w.is_empty())
                .map(String::from)
                .collect()
        };
        for line in text.lines().filter(|l| !l.is_empty()) {
            let f: Vec<&str> = line.split('\t').collect();
            match f.as_slice() {
                ["prog", name, version, descr, help] => {
                    spec.name = name.to_string();
                    spec.version = version.to_string();
                    spec.descr = descr.to_string();
                    spec.help = *help == "1";
                }
                ["cmd", path, aliases, descr] => spec.commands.push(Command {
                    path: words(path),
                    aliases: words(aliases),
                    descr: descr.to_string(),
                }),
                ["group", path, descr] => spec.groups.push((words(path), descr.to_string())),
                [kind, owner, name, ty, short, long, ubique, default, descr] => {
                    let kind = match *kind {
                        "opt" => ArgKind::Opt,
                        "one" => ArgKind::One,
                        "rest" => ArgKind::Rest,
                        _ => return None,
                    };
                    let owner = match *owner {
                        "-" => None,
                        o => Some(o.parse().ok()?),
                    };
                    spec.args.push(ArgDecl {
                        owner,
                        kind,
                        name: name.to_string(),
                        ty: ty.to_string(),
                        short: short.to_string(),
                        long: long.to_string(),
                        ubique: *ubique == "1",
                        default: default.strip_prefix('=').map(String::from),
                        descr: descr.to_string(),
                    });
                }
                _ => return None,
            }
        }
        Some(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_reads_back() {
        let spec = CliSpec {
            name: "exemplum".into(),
            version: "1.0".into(),
            descr: "two\twords".into(),
            help: true,
            args: vec![
                ArgDecl {
                    owner: None,
                    kind: ArgKind::Opt,
                    name: "verbose".into(),
                    ty: "bivalens".into(),
                    short: "v".into(),
                    long: "verbose".into(),
                    ubique: true,
                    default: None,
                    descr: "more".into(),
                },
                ArgDecl {
                    owner: Some(0),
                    kind: ArgKind::One,
                    name: "nomen".into(),
                    ty: "textus".into(),
                    short: String::new(),
                    long: String::new(),
                    ubique: false,
                    default: Some(String::new()),
                    descr: String::new(),
                },
            ],
            commands: vec![Command {
                path: vec!["salve".into(), "dic".into()],
                aliases: vec!["d".into()],
                descr: "greets".into(),
            }],
            groups: vec![(vec!["salve".into()], "greetings".into())],
        };
        let back = CliSpec::from_text(&spec.to_text()).unwrap();
        assert_eq!(back.descr, "two words");
        assert_eq!(back.args, spec.args);
        assert_eq!(back.commands, spec.commands);
        assert_eq!(back.groups, spec.groups);
        assert_eq!(back.fields_of(Some(0)).len(), 2);
        assert_eq!(back.fields_of(None).len(), 1);
        assert!(CliSpec::from_text("nonsense").is_none());
    }
}
