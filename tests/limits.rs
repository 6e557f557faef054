//! Resource limits are configurable and end in diagnostics, not aborts.

mod common;

#[test]
fn tensor_allocation_limit_is_configurable() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("faber-limits");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("big.fab");
    std::fs::write(
        &file,
        "incipit {\n    fixum tf32[] semen ← vacua\n    fixum tf32 t ← semen.crea(0.0, [1000, 1000])\n    nota t.magnitudines()\n}\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let mut args: Vec<&str> = extra.to_vec();
        args.extend(["run", file.to_str().unwrap()]);
        common::faber(&args)
    };
    let ok = run(&[]);
    assert_eq!(ok.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&ok.stdout), "[1000, 1000]\n");
    // 0.001 GiB = 134,217 f64 elements < 1,000,000.
    let limited = run(&["--max-tensor-gib", "0.001"]);
    assert_eq!(limited.status.code(), Some(1));
    let err = String::from_utf8_lossy(&limited.stderr);
    assert!(err.starts_with("error[RUN012]"), "{err}");
    assert!(err.contains(":3:20"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn text_and_list_growth_limits_end_in_diagnostics() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("faber-limits-growth");
    std::fs::create_dir_all(&dir).unwrap();
    let text = dir.join("text.fab");
    // "ab" doubled 10 times = 2048 bytes
    std::fs::write(
        &text,
        "incipit {\n    varia textus s ← \"ab\"\n    itera ab 0 ‥ 10 fixum i {\n        s ← s + s\n    }\n    nota s.longitudo()\n}\n",
    )
    .unwrap();
    let list = dir.join("list.fab");
    std::fs::write(
        &list,
        "incipit {\n    varia lista<numerus> xs ← []\n    itera ab 0 ‥ 100 fixum i {\n        xs.appende(i)\n    }\n    nota xs.longitudo()\n}\n",
    )
    .unwrap();
    let run = |args: &[&str], file: &std::path::Path| {
        let mut v: Vec<&str> = vec!["run"];
        v.extend(args);
        v.push(file.to_str().unwrap());
        common::faber(&v)
    };
    let ok = run(&["--max-text-bytes", "2048"], &text);
    assert_eq!(String::from_utf8_lossy(&ok.stdout), "2048\n");
    let over = run(&["--max-text-bytes", "2047"], &text);
    assert_eq!(over.status.code(), Some(1));
    let err = String::from_utf8_lossy(&over.stderr);
    assert!(err.starts_with("error[RUN012]"), "{err}");
    assert!(err.contains(":4:13"), "{err}");

    let ok = run(&["--max-list-items", "100"], &list);
    assert_eq!(String::from_utf8_lossy(&ok.stdout), "100\n");
    let over = run(&["--max-list-items", "99"], &list);
    assert_eq!(over.status.code(), Some(1));
    let err = String::from_utf8_lossy(&over.stderr);
    assert!(err.starts_with("error[RUN012]"), "{err}");
    assert!(err.contains(":4:9"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
