//! Spellings a newcomer brings from other languages (Python, Rust, C, JavaScript)
//! and the Faber word for each: `else` is `secus`, `print(x)` is `nota x`,
//! `xs.len()` is `xs.longitudo()`. Edit distance cannot find these (`else` and
//! `secus` share nothing), so they are looked up by name. See docs/diagnostics.md.

/// Keywords and literals of other languages → the Faber keyword.
const KEYWORDS: &[(&str, &str)] = &[
    ("if", "si"),
    ("else", "secus"),
    ("elif", "sin"),
    ("elsif", "sin"),
    ("while", "dum"),
    ("loop", "dum"),
    ("for", "itera"),
    ("foreach", "itera"),
    ("return", "redde"),
    ("let", "fixum"),
    ("const", "fixum"),
    ("val", "fixum"),
    ("var", "varia"),
    ("mut", "varia"),
    ("fn", "functio"),
    ("def", "functio"),
    ("func", "functio"),
    ("function", "functio"),
    ("true", "verum"),
    ("True", "verum"),
    ("false", "falsum"),
    ("False", "falsum"),
    ("null", "nihil"),
    ("nil", "nihil"),
    ("None", "nihil"),
    ("none", "nihil"),
    ("undefined", "nihil"),
    ("import", "importa"),
    ("use", "importa"),
    ("from", "importa"),
    ("struct", "genus"),
    ("class", "genus"),
    ("type", "typus"),
    ("break", "rumpe"),
    ("continue", "perge"),
    ("throw", "iace"),
    ("raise", "iace"),
    ("try", "fac"),
    ("catch", "cape"),
    ("except", "cape"),
    ("assert", "adfirma"),
    ("self", "ego"),
    ("this", "ego"),
    ("and", "et"),
    ("or", "aut"),
    ("not", "non"),
    ("switch", "elige"),
    ("match", "elige"),
    ("case", "casu"),
    ("default", "ceterum"),
    ("main", "incipit"),
    ("pass", "tacet"),
    ("panic", "mori"),
];

/// Functions of other languages that Faber writes as a statement, method or operator.
const FUNCTIONS: &[(&str, &str)] = &[
    ("print", "nota …"),
    ("println", "nota …"),
    ("printf", "nota …"),
    ("puts", "nota …"),
    ("len", "x.longitudo()"),
    ("length", "x.longitudo()"),
    ("range", "0 ‥ n"),
    ("str", "x ↦ textus"),
    ("string", "x ↦ textus"),
    ("int", "x ↦ numerus"),
    ("float", "x ↦ fractus"),
    ("bool", "x ↦ bivalens"),
    ("assert", "adfirma …"),
    ("exit", "mori …"),
    ("panic", "mori …"),
];

/// Method names of other languages → the Faber method (only suggested where the
/// receiver has it).
const METHODS: &[(&str, &str)] = &[
    ("len", "longitudo"),
    ("length", "longitudo"),
    ("size", "longitudo"),
    ("count", "longitudo"),
    ("append", "appende"),
    ("push", "appende"),
    ("add", "appende"),
    ("get", "accipe"),
    ("first", "primus"),
    ("last", "ultimus"),
    ("pop", "detrahe"),
    ("slice", "sectio"),
    ("is_empty", "vacua"),
    ("empty", "vacua"),
    ("reverse", "inverte"),
    ("reversed", "inverte"),
    ("contains", "continet"),
    ("includes", "continet"),
    ("has", "habet"),
    ("has_key", "habet"),
    ("startswith", "initium"),
    ("starts_with", "initium"),
    ("endswith", "finis"),
    ("ends_with", "finis"),
    ("lower", "minuscula"),
    ("to_lower", "minuscula"),
    ("to_lowercase", "minuscula"),
    ("toLowerCase", "minuscula"),
    ("keys", "claves"),
    ("set", "pone"),
    ("insert", "pone"),
    ("remove", "dele"),
    ("delete", "dele"),
    ("abs", "absolutum"),
    ("max", "maximus"),
    ("min", "minimus"),
    ("floor", "pavimentum"),
    ("pow", "potentia"),
    ("round", "approximata"),
    ("sqrt", "radix"),
    ("exp", "exponens"),
    ("log", "logarithmus"),
    ("ln", "logarithmus"),
    ("sin", "sinus"),
    ("cos", "cosinus"),
    ("sum", "summa"),
    ("mean", "media"),
    ("reshape", "forma"),
    ("view", "forma"),
    ("transpose", "transpone"),
    ("t", "transpone"),
    ("flatten", "planata"),
    ("numel", "numerus_elementorum"),
    ("shape", "magnitudines"),
    ("cat", "concatena"),
    ("concat", "concatena"),
    ("concatenate", "concatena"),
    ("sub", "subtrahe"),
    ("subtract", "subtrahe"),
    ("mul", "multiplica"),
    ("multiply", "multiplica"),
    ("div", "divide"),
    ("mm", "matmul"),
    ("dot", "matmul"),
    ("softmax", "activatio_softmax"),
];

fn find(table: &[(&'static str, &'static str)], word: &str) -> Option<&'static str> {
    table.iter().find(|(w, _)| *w == word).map(|(_, f)| *f)
}

/// The Faber keyword for a keyword of another language (`else` → `secus`).
pub fn keyword(word: &str) -> Option<&'static str> {
    find(KEYWORDS, word)
}

/// The hint for a keyword of another language: "Faber writes `secus` for `else`".
pub fn keyword_hint(word: &str) -> Option<String> {
    keyword(word).map(|k| format!("Faber writes `{k}` for `{word}`"))
}

/// The hint for a call to a function that Faber spells differently (`print(x)`).
pub fn function_hint(word: &str) -> Option<String> {
    find(FUNCTIONS, word).map(|f| format!("Faber writes `{f}` for `{word}(…)`"))
}

/// The Faber method for a method name of another language, if `available` has it.
pub fn method<'a>(word: &str, available: &[&'a str]) -> Option<&'a str> {
    let faber = find(METHODS, word)?;
    available.iter().copied().find(|m| *m == faber)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_keyword_target_is_a_faber_keyword() {
        for (_, k) in KEYWORDS {
            assert!(crate::syntax::token::Kw::from_word(k).is_some(), "{k}");
        }
    }

    #[test]
    fn methods_only_where_available() {
        assert_eq!(method("len", &["longitudo", "summa"]), Some("longitudo"));
        assert_eq!(method("len", &["summa"]), None);
        assert_eq!(
            keyword_hint("else").unwrap(),
            "Faber writes `secus` for `else`"
        );
    }
}
