//! The `+++` frontmatter at the top of a file, as the formatter sees it: where it
//! ends (found the way the lexer finds it, src/syntax/lexer/frontmatter.rs), and its
//! `locale` line rewritten for a translation. Everything else in it is kept byte for
//! byte.

/// Where a file's code begins: after the byte-order mark and the frontmatter.
pub(super) struct Head {
    /// Length of the byte-order mark (0 or 3).
    pub bom: usize,
    /// The text between the two `+++` lines, when there is frontmatter.
    pub content: Option<std::ops::Range<usize>>,
    /// Where the code starts.
    pub body_start: usize,
}

pub(super) fn head(text: &str) -> Head {
    let bom = if text.starts_with('\u{FEFF}') { 3 } else { 0 };
    let none = Head {
        bom,
        content: None,
        body_start: bom,
    };
    let first_end = text[bom..].find('\n').map_or(text.len(), |i| bom + i);
    if text[bom..first_end].trim() != "+++" {
        return none;
    }
    let content_start = (first_end + 1).min(text.len());
    let mut pos = content_start;
    while pos < text.len() {
        let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
        if text[pos..end].trim() == "+++" {
            return Head {
                bom,
                content: Some(content_start..pos),
                body_start: (end + 1).min(text.len()),
            };
        }
        pos = end + 1;
    }
    // Not closed: the lexer reports it, and the file never reaches the layout.
    none
}

/// The text before the code, as it is (with a final newline ensured).
pub(super) fn kept(text: &str, head: &Head) -> String {
    let mut s = text[..head.body_start].to_string();
    if head.content.is_some() && !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// The text before the code with its `locale` set to `code`, or removed (`None`);
/// frontmatter left empty by the removal goes, and frontmatter is added when a file
/// without one needs a locale.
pub(super) fn with_locale(text: &str, head: &Head, code: Option<&str>) -> String {
    let bom = &text[..head.bom];
    let line = code.map(|c| format!("locale = \"{c}\"\n"));
    let Some(range) = head.content.clone() else {
        return match line {
            Some(l) => format!("{bom}+++\n{l}+++\n"),
            None => bom.to_string(),
        };
    };
    let mut body = String::new();
    let mut placed = false;
    for l in text[range].split_inclusive('\n') {
        if is_locale_line(l) {
            if let Some(new) = &line {
                if !placed {
                    body.push_str(new);
                    placed = true;
                }
            }
            continue;
        }
        body.push_str(l);
        if !body.ends_with('\n') {
            body.push('\n');
        }
    }
    if let (Some(new), false) = (&line, placed) {
        body.insert_str(0, new);
    }
    if body.trim().is_empty() {
        return bom.to_string();
    }
    format!("{bom}+++\n{body}+++\n")
}

/// A TOML line that sets the top-level key `locale`.
fn is_locale_line(line: &str) -> bool {
    line.trim_start()
        .strip_prefix("locale")
        .is_some_and(|rest| rest.trim_start().starts_with('='))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_end_of_frontmatter() {
        let t = "+++\nlocale = \"en\"\n+++\nmain {}\n";
        let h = head(t);
        assert_eq!(&t[h.content.clone().unwrap()], "locale = \"en\"\n");
        assert_eq!(&t[h.body_start..], "main {}\n");
        assert_eq!(head("incipit {}\n").body_start, 0);
    }

    #[test]
    fn sets_adds_and_removes_the_locale() {
        let t = "+++\nlocale = \"en\"\nauctor = \"x\"\n+++\nmain {}\n";
        let h = head(t);
        assert_eq!(
            with_locale(t, &h, Some("vi")),
            "+++\nlocale = \"vi\"\nauctor = \"x\"\n+++\n"
        );
        assert_eq!(with_locale(t, &h, None), "+++\nauctor = \"x\"\n+++\n");
        let only = "+++\nlocale = \"en\"\n+++\nmain {}\n";
        assert_eq!(with_locale(only, &head(only), None), "");
        let bare = "incipit {}\n";
        assert_eq!(
            with_locale(bare, &head(bare), Some("en")),
            "+++\nlocale = \"en\"\n+++\n"
        );
        assert_eq!(with_locale(bare, &head(bare), None), "");
    }
}
