//! A unified diff of two texts, line by line, for `faber format --check`: the lines
//! an author would see change, three lines of context around each change.

/// The diff from `old` to `new`, with `---`/`+++` headers naming `path`; empty when
/// the texts are equal.
pub fn unified(path: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = edit_script(&a, &b);
    let mut out = format!("--- {path}\n+++ {path} (formatted)\n");
    const CONTEXT: usize = 3;
    // Indices into `ops` of the changes; hunks join changes closer than 2×CONTEXT.
    let changes: Vec<usize> = (0..ops.len())
        .filter(|&i| !matches!(ops[i], Op::Same(_)))
        .collect();
    let mut k = 0;
    while k < changes.len() {
        let start = changes[k].saturating_sub(CONTEXT);
        let mut end = changes[k];
        while k + 1 < changes.len() && changes[k + 1] <= end + 2 * CONTEXT + 1 {
            k += 1;
            end = changes[k];
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        let (mut a0, mut b0) = position(&ops[..start]);
        let (al, bl) = {
            let (x, y) = position(&ops[start..end]);
            (x, y)
        };
        if al > 0 {
            a0 += 1;
        }
        if bl > 0 {
            b0 += 1;
        }
        out.push_str(&format!("@@ -{a0},{al} +{b0},{bl} @@\n"));
        for op in &ops[start..end] {
            match op {
                Op::Same(i) => out.push_str(&format!(" {}\n", a[*i])),
                Op::Del(i) => out.push_str(&format!("-{}\n", a[*i])),
                Op::Add(j) => out.push_str(&format!("+{}\n", b[*j])),
            }
        }
        k += 1;
    }
    if old.ends_with('\n') != new.ends_with('\n') {
        out.push_str("\\ the final newline differs\n");
    }
    out
}

#[derive(Clone, Copy, Debug)]
enum Op {
    /// A line of both texts, by its index in the old one.
    Same(usize),
    Del(usize),
    Add(usize),
}

/// Lines of the old and new text that `ops` covers.
fn position(ops: &[Op]) -> (usize, usize) {
    ops.iter().fold((0, 0), |(a, b), op| match op {
        Op::Same(_) => (a + 1, b + 1),
        Op::Del(_) => (a + 1, b),
        Op::Add(_) => (a, b + 1),
    })
}

/// A shortest edit script: common prefix and suffix, then a longest common
/// subsequence of the middle (or, when the middle is very large, all of it replaced).
fn edit_script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    let mut ops: Vec<Op> = (0..pre).map(Op::Same).collect();
    if ma.len().saturating_mul(mb.len()) > 4_000_000 {
        ops.extend((0..ma.len()).map(|i| Op::Del(pre + i)));
        ops.extend((0..mb.len()).map(|j| Op::Add(pre + j)));
    } else {
        let (n, m) = (ma.len(), mb.len());
        // lcs[i][j]: length of the LCS of ma[i..] and mb[j..].
        let mut lcs = vec![0u32; (n + 1) * (m + 1)];
        let at = |i: usize, j: usize| i * (m + 1) + j;
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[at(i, j)] = if ma[i] == mb[j] {
                    lcs[at(i + 1, j + 1)] + 1
                } else {
                    lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && ma[i] == mb[j] {
                ops.push(Op::Same(pre + i));
                i += 1;
                j += 1;
            } else if i < n && (j == m || lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
                ops.push(Op::Del(pre + i));
                i += 1;
            } else {
                ops.push(Op::Add(pre + j));
                j += 1;
            }
        }
    }
    let a_end = a.len() - suf;
    ops.extend((0..suf).map(|k| Op::Same(a_end + k)));
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_have_no_diff() {
        assert_eq!(unified("f", "a\nb\n", "a\nb\n"), "");
    }

    #[test]
    fn a_changed_line_is_one_hunk_with_context() {
        let old = "1\n2\n3\n4\nx  \n6\n7\n8\n9\n";
        let new = "1\n2\n3\n4\nx\n6\n7\n8\n9\n";
        let d = unified("f.fab", old, new);
        assert_eq!(
            d,
            "--- f.fab\n+++ f.fab (formatted)\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-x  \n+x\n 6\n 7\n 8\n"
        );
    }

    #[test]
    fn added_and_removed_lines() {
        let d = unified("f", "a\n\n\nb\n", "a\n\nb\n");
        assert!(d.contains("@@ -1,4 +1,3 @@"), "{d}");
        assert_eq!(d.matches("\n-").count(), 1, "{d}");
    }
}
