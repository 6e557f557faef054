//! A flat `Stmt::Cond` compiles to exactly the code of the nested `If`s it means
//! (docs/robustness.md, "Compile time of long chains").

use super::emit_program;
use crate::ir::{Block, CondArm, Program, Stmt};
use crate::resolve::MemoryLoader;
use crate::source::SourceMap;

/// `Cond` rewritten as nested `If`s, at every depth (test-sized programs only).
fn nest_block(b: &mut Block) {
    let stmts = std::mem::take(&mut b.stmts);
    for s in stmts {
        nest_stmt(s, &mut b.stmts);
    }
}

fn nest_stmt(s: Stmt, out: &mut Vec<Stmt>) {
    match s {
        Stmt::Cond {
            arms,
            mut otherwise,
        } => {
            nest_block(&mut otherwise);
            let mut rest = otherwise;
            let mut arms: Vec<CondArm> = arms;
            while let Some(mut arm) = arms.pop() {
                nest_block(&mut arm.test);
                nest_block(&mut arm.then);
                let mut stmts = arm.test.stmts;
                stmts.push(Stmt::If {
                    cond: arm.cond,
                    then: arm.then,
                    otherwise: rest,
                });
                rest = Block { stmts };
            }
            out.extend(rest.stmts);
        }
        Stmt::If {
            cond,
            mut then,
            mut otherwise,
        } => {
            nest_block(&mut then);
            nest_block(&mut otherwise);
            out.push(Stmt::If {
                cond,
                then,
                otherwise,
            });
        }
        other => out.push(other),
    }
}

fn program(text: &str) -> Program {
    let mut sources = SourceMap::new();
    let id = sources.add("chain.fab", text);
    let mut loader = MemoryLoader {
        files: Default::default(),
    };
    match crate::compile(&mut sources, id, &mut loader) {
        Ok(p) => p,
        Err(d) => panic!("{}", crate::diag::render(&d, &sources, false)),
    }
}

fn listing(p: &Program) -> Vec<String> {
    emit_program(p)
        .iter()
        .map(|c| format!("{:?}\n{:?}\n{:?}", c.ins, c.args, c.targets))
        .collect()
}

#[test]
fn cond_compiles_like_the_nested_ifs() {
    // Compared conditions (fused compare-and-jump), a non-comparison condition, a
    // chain without `secus`, an `elige`, and a chain nested in an arm.
    let p = program(
        "functio f(numerus k, bivalens b) → numerus {\n    varia numerus r ← 0\n    si k < 0 {\n        r ← 1\n    } sin b {\n        r ← 2\n    } sin k ≡ 3 {\n        si k > 9 ergo r ← 3 sin k > 5 ergo r ← 4\n    } secus {\n        r ← 5\n    }\n    si k ≡ 1 ergo r ← r + 1 sin k ≡ 2 ergo r ← r + 2\n    elige k {\n        casu 4 ergo r ← r * 2\n        casu 5 ergo r ← r * 3\n        ceterum ergo r ← r - 1\n    }\n    redde r\n}\nincipit {\n    nota f(3, falsum)\n}\n",
    );
    let chains = p
        .functions
        .iter()
        .flat_map(|f| &f.body.stmts)
        .filter(|s| matches!(s, Stmt::Cond { .. }))
        .count();
    assert_eq!(chains, 3, "the top-level chains are `Cond`s");
    let mut nested = p.clone();
    for f in &mut nested.functions {
        nest_block(&mut f.body);
    }
    assert_ne!(p, nested);
    assert_eq!(listing(&p), listing(&nested));
}
