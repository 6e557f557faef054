//! The rendered text of every SEM and RUN diagnostic, one snapshot per code
//! (`tests/snapshots/diagnostic_snapshots__SEM001.snap`), so that every wording change
//! shows in review. The inputs are the examples of the `faber explain` entries under
//! `docs/explain/` (one source of truth, see tests/common/entries.rs): each is run
//! through the built binary with the command its entry names, colour off, in a fresh
//! directory (so paths render as `main.fab`), and its stderr is the snapshot.

mod common;

use common::entries;

#[test]
fn every_sem_and_run_diagnostic_renders_as_snapshotted() {
    let mut failures = Vec::new();
    let mut count = 0;
    for e in entries::all() {
        if !(e.code.starts_with("SEM") || e.code.starts_with("RUN")) {
            continue;
        }
        // Codes faber never reports have no example (tests/explain.rs checks that).
        let Some(example) = &e.example else { continue };
        count += 1;
        let out = entries::execute(
            &format!("{}-snapshot", e.code),
            &example.files,
            &example.args,
        );
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let description = format!(
            "faber {} (docs/explain/{}.md), exit {:?}",
            example.args.join(" "),
            e.code,
            out.status.code()
        );
        let code = e.code.clone();
        let result = std::panic::catch_unwind(|| {
            insta::with_settings!({ description => description, omit_expression => true }, {
                insta::assert_snapshot!(code.as_str(), stderr);
            });
        });
        if result.is_err() {
            failures.push(e.code.clone());
        }
    }
    assert!(count >= 40, "only {count} SEM/RUN examples found");
    assert!(failures.is_empty(), "snapshots differ: {failures:?}");
}
