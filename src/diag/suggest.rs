//! "did you mean …?": the nearest spellings to a misspelled name by edit distance.
//! One place for every diagnostic that suggests a name (keywords, locals, globals,
//! methods, modules, module members, record fields, diagnostic codes).

use super::skeleton::skeleton;

/// Levenshtein distance between `a` and `b`, counted in characters (not bytes), with
/// an adjacent transposition counted as one edit (`functoi` → `functio` is 1).
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let (n, m) = (a.len(), b.len());
    // Three rows: the one before the previous (for transpositions), the previous, this.
    let mut prev2: Vec<usize> = vec![0; m + 1];
    let mut prev: Vec<usize> = (0..=m).collect();
    let mut cur: Vec<usize> = vec![0; m + 1];
    for i in 1..=n {
        cur[0] = i;
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(prev2[j - 2] + 1);
            }
            cur[j] = d;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[m]
}

/// The largest distance still worth suggesting for a name of `len` characters: a third
/// of its length, at least 1 (rustc's rule of thumb), so short names need close matches.
fn budget(len: usize) -> usize {
    (len / 3).max(1)
}

/// The distance of candidate `c` from `name` when it is worth suggesting: within the
/// budget of `name`, and not a rewrite of every character of either word (`x` is not
/// suggested for `y`). A difference in case, width or diacritics alone counts as one
/// edit (`Summa`, `ｈàm` and `ham` are each one edit from `summa`, `hàm`); otherwise
/// the words are compared as written or by their skeletons, whichever is nearer.
fn score(name: &str, c: &str) -> Option<usize> {
    if c == name {
        return None;
    }
    let (skel_name, skel_c) = (skeleton(name), skeleton(c));
    if c.to_lowercase() == name.to_lowercase() || skel_c == skel_name {
        return Some(1);
    }
    let d = distance(name, c).min(distance(&skel_name, &skel_c));
    let shorter = name.chars().count().min(c.chars().count());
    (d <= budget(name.chars().count()) && d < shorter).then_some(d)
}

/// The candidates within the budget of `name`, nearest first (ties keep candidate
/// order), at most `limit` of them; `name` itself is never suggested.
pub fn nearest_n<'a, I>(name: &str, candidates: I, limit: usize) -> Vec<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let mut found: Vec<(usize, usize, &'a str)> = Vec::new();
    for (order, c) in candidates.into_iter().enumerate() {
        if found.iter().any(|f| f.2 == c) {
            continue;
        }
        if let Some(d) = score(name, c) {
            found.push((d, order, c));
        }
    }
    found.sort();
    found.into_iter().take(limit).map(|f| f.2).collect()
}

/// Every candidate at the smallest distance from `name` (within the budget), at most
/// three, in candidate order: the set a "did you mean" hint names.
pub fn nearest_ties<'a, I>(name: &str, candidates: I) -> Vec<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let found = nearest_n(name, candidates, usize::MAX);
    let Some(best) = found.first().map(|c| score(name, c)) else {
        return Vec::new();
    };
    found
        .into_iter()
        .filter(|c| score(name, c) == best)
        .take(3)
        .collect()
}

/// The "did you mean …?" hint for `name` among `candidates`, naming every nearest
/// candidate (ties included); `None` when nothing is close enough.
pub fn hint<'a, I>(name: &str, candidates: I) -> Option<String>
where
    I: IntoIterator<Item = &'a str>,
{
    did_you_mean(&nearest_ties(name, candidates))
}

/// The single nearest candidate within the budget of `name`, if any.
pub fn nearest<'a, I>(name: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    nearest_n(name, candidates, 1).into_iter().next()
}

/// The hint text for a suggestion: "did you mean `x`?" or "did you mean `x` or `y`?".
pub fn did_you_mean(found: &[&str]) -> Option<String> {
    match found {
        [] => None,
        [one] => Some(format!("did you mean `{one}`?")),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(|s| format!("`{s}`")).collect();
            Some(format!("did you mean {} or `{last}`?", init.join(", ")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(distance("", ""), 0);
        assert_eq!(distance("abc", ""), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("functoi", "functio"), 1);
        assert_eq!(distance("sumna", "summa"), 1);
        assert_eq!(distance("←x", "x←"), 1);
    }

    #[test]
    fn nearest_respects_the_budget() {
        let names = ["summa", "media", "maximum"];
        assert_eq!(nearest("sumna", names), Some("summa"));
        assert_eq!(nearest("zzz", names), None);
        // Short names need an exact-but-one match.
        assert_eq!(nearest("ab", ["xy"]), None);
        assert_eq!(nearest("Summa", names), Some("summa"));
        assert_eq!(nearest("summa", names), None);
        // A one-letter name is never "corrected" to another one-letter name.
        assert_eq!(nearest("y", ["x"]), None);
        assert_eq!(nearest("sii", ["si"]), Some("si"));
    }

    #[test]
    fn ties_are_all_named() {
        assert_eq!(
            nearest_ties("sii", ["fixum", "si", "sit"]),
            vec!["si", "sit"]
        );
        assert_eq!(
            hint("lr_mni", ["lr_max", "lr_min", "lr"]).unwrap(),
            "did you mean `lr_min`?"
        );
        assert_eq!(hint("zzz", ["summa"]), None);
    }

    #[test]
    fn hint_text() {
        assert_eq!(did_you_mean(&[]), None);
        assert_eq!(did_you_mean(&["a"]).unwrap(), "did you mean `a`?");
        assert_eq!(
            did_you_mean(&["a", "b", "c"]).unwrap(),
            "did you mean `a`, `b` or `c`?"
        );
    }
}
