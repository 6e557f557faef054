//! IR snapshot tests: each program under `tests/ir/` is compiled and every function's
//! IR is snapshotted, so a change in lowering shows up as a reviewable diff.

use faber::ir::print::print_function;
use faber::ir::FuncId;
use faber::resolve::MemoryLoader;
use faber::source::SourceMap;

#[test]
fn ir_snapshots() {
    insta::glob!("ir/*.fab", |path| {
        let text = std::fs::read_to_string(path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let mut sources = SourceMap::new();
        let id = sources.add(name, text);
        let mut loader = MemoryLoader {
            files: Default::default(),
        };
        let program = match faber::compile(&mut sources, id, &mut loader) {
            Ok(p) => p,
            Err(d) => panic!("{}", faber::diag::render(&d, &sources, false)),
        };
        let mut out = String::new();
        for i in 0..program.functions.len() {
            out.push_str(&print_function(&program, FuncId(i as u32)));
            out.push('\n');
        }
        insta::assert_snapshot!(out);
    });
}
