//! The front end never panics or hangs: deep nesting, long operator chains and
//! random byte soup all end in diagnostics or success.

use faber::source::SourceMap;
use faber::syntax::parse;

fn parse_text(text: &str) -> Result<(), Vec<String>> {
    let mut sources = SourceMap::new();
    let id = sources.add("fuzz.fab", text);
    parse(&sources, id)
        .map(|_| ())
        .map_err(|ds| ds.iter().map(|d| d.code.id.to_string()).collect())
}

#[test]
fn deep_brackets_are_a_diagnostic() {
    let text = format!(
        "incipit {{ nota {}1{} }}",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let codes = parse_text(&text).unwrap_err();
    assert!(codes.contains(&"LEX013".to_string()), "{codes:?}");
}

#[test]
fn long_operator_chain_is_a_diagnostic() {
    let text = format!("incipit {{ nota 1{} }}", " + 1".repeat(200_000));
    let codes = parse_text(&text).unwrap_err();
    assert!(codes.contains(&"LEX013".to_string()), "{codes:?}");
}

#[test]
fn long_prefix_chain_is_a_diagnostic() {
    let text = format!("incipit {{ nota {}1 }}", "- ".repeat(200_000));
    let codes = parse_text(&text).unwrap_err();
    assert!(codes.contains(&"LEX013".to_string()), "{codes:?}");
}

#[test]
fn moderate_chains_still_parse() {
    let text = format!("incipit {{ nota 1{} }}", " + 1".repeat(2_000));
    assert!(parse_text(&text).is_ok());
}

/// xorshift64: a fixed-seed generator, so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Splices slices of real programs, glyphs and random characters together.
#[test]
fn random_soup_never_panics() {
    let mut corpus = Vec::new();
    for dir in ["tests/parse/ok", "tests/parse/err"] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            corpus.push(text);
        }
    }
    let pieces = [
        "{", "}", "(", ")", "[", "]", "←", "→", "⇥", "↦", "∷", "∴", "<", ">", "\"", "'", "|", "@",
        "#", "+++\n", "redde", "si", "ergo", "secus", "functio", "genus", "{rec", "\n", " ", "‥",
        "per", "x", "1", "1.5e", "§", "\u{00A0}", "\u{FEFF}", "é", "𝔉", "\\", "=", ",", ".",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..3000 {
        let mut text = String::new();
        for _ in 0..1 + rng.below(12) {
            match rng.below(3) {
                0 => {
                    let src = &corpus[rng.below(corpus.len())];
                    let chars: Vec<char> = src.chars().collect();
                    let a = rng.below(chars.len().max(1));
                    let b = (a + rng.below(200)).min(chars.len());
                    text.extend(&chars[a..b]);
                }
                1 => text.push_str(pieces[rng.below(pieces.len())]),
                _ => {
                    if let Some(c) = char::from_u32(rng.below(0x3000) as u32) {
                        text.push(c);
                    }
                }
            }
        }
        let _ = parse_text(&text);
    }
}
