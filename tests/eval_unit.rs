//! Evaluator tests over hand-built IR programs (no front end involved).

use faber::eval::{self, BufferIo, RuntimeError, Value};
use faber::ir::{BinOp, OutKind, UnOp};
use faber::ir::{
    Block, Const, EachKind, FatalKind, Field, FuncId, Function, Genus, GenusId, Global, GlobalId,
    IsTest, Method, Operand, Place, PlaceRoot, PlaceStep, Prim, Program, Rhs, Slot, SlotInfo, Stmt,
    TemplatePiece, Ty,
};
use faber::source::{FileId, Span};

// ---- builders ---------------------------------------------------------------

fn sp(lo: usize) -> Span {
    Span::new(FileId(0), lo, lo + 1)
}

fn s(n: u32) -> Operand {
    Operand::Slot(Slot(n))
}

fn int(n: i64) -> Operand {
    Operand::Const(Const::Int(n))
}

fn float(f: f64) -> Operand {
    Operand::Const(Const::Float(f))
}

fn text(t: &str) -> Operand {
    Operand::Const(Const::Text(t.into()))
}

fn let_(dst: u32, rhs: Rhs) -> Stmt {
    Stmt::Let {
        dst: Slot(dst),
        rhs,
        span: sp(dst as usize),
    }
}

fn let_at(dst: u32, rhs: Rhs, at: usize) -> Stmt {
    Stmt::Let {
        dst: Slot(dst),
        rhs,
        span: sp(at),
    }
}

fn bin(op: BinOp, a: Operand, b: Operand) -> Rhs {
    Rhs::Prim(Prim::Binary(op), vec![a, b])
}

fn nota(args: Vec<Operand>) -> Stmt {
    Stmt::Out {
        kind: OutKind::Nota,
        args,
        span: Span::default(),
    }
}

fn block(stmts: Vec<Stmt>) -> Block {
    Block { stmts }
}

fn func(name: &str, params: u32, nslots: u32, body: Vec<Stmt>) -> Function {
    Function {
        name: format!("main::{name}"),
        params,
        slots: (0..nslots)
            .map(|i| SlotInfo {
                name: format!("v{i}"),
                ty: Ty::Any,
                narrow: false,
            })
            .collect(),
        ret: Ty::Any,
        narrow_ret: false,
        throws: false,
        body: block(body),
        span: sp(1000),
    }
}

/// A program whose entry is function 0.
fn program(functions: Vec<Function>) -> Program {
    Program {
        functions,
        entry: Some(FuncId(0)),
        ..Program::default()
    }
}

fn run(p: &Program) -> (Result<i64, RuntimeError>, BufferIo) {
    let mut io = BufferIo::default();
    let r = eval::run_entry(p, &mut io, &Default::default());
    (r, io)
}

/// Runs on a thread with the CLI's 256 MiB stack.
fn run_big_stack(p: Program) -> (Result<i64, RuntimeError>, BufferIo) {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || run(&p))
        .unwrap()
        .join()
        .unwrap()
}

fn out(p: &Program) -> String {
    let (r, io) = run(p);
    if let Err(e) = r {
        panic!("unexpected error {e:?}; output so far: {}", io.out);
    }
    io.out
}

fn err(p: &Program) -> RuntimeError {
    match run(p).0 {
        Ok(code) => panic!("expected an error, got exit code {code}"),
        Err(e) => e,
    }
}

fn place(root: u32, path: Vec<PlaceStep>) -> Place {
    Place {
        root: PlaceRoot::Slot(Slot(root)),
        path,
    }
}

// ---- arithmetic -------------------------------------------------------------

#[test]
fn integer_and_float_arithmetic() {
    let p = program(vec![func(
        "incipit",
        0,
        4,
        vec![
            let_(0, bin(BinOp::Div, int(-7), int(2))),
            let_(1, bin(BinOp::Rem, int(-7), int(2))),
            let_(2, bin(BinOp::Div, float(7.0), float(0.0))),
            let_(3, bin(BinOp::Mul, int(3), float(0.5))),
            nota(vec![s(0), s(1), s(2), s(3)]),
            let_(0, bin(BinOp::Div, float(-7.0), int(0))),
            let_(1, bin(BinOp::Rem, int(7), int(-2))),
            let_(2, bin(BinOp::Shl, int(1), int(62))),
            let_(3, bin(BinOp::Shr, int(-16), int(2))),
            nota(vec![s(0), s(1), s(2), s(3)]),
            let_(0, bin(BinOp::BitXor, int(6), int(3))),
            let_(1, Rhs::Prim(Prim::Unary(UnOp::BitNot), vec![int(0)])),
            let_(2, bin(BinOp::Hadamard, int(3), int(4))),
            let_(3, bin(BinOp::Dot, float(1.5), int(2))),
            nota(vec![s(0), s(1), s(2), s(3)]),
        ],
    )]);
    assert_eq!(
        out(&p),
        "-3, -1, inf, 1.5\n-inf, 1, 4611686018427387904, -4\n5, -1, 12, 3.0\n"
    );
}

#[test]
fn overflow_and_division_by_zero_trap() {
    let overflow = program(vec![func(
        "incipit",
        0,
        1,
        vec![let_at(0, bin(BinOp::Add, int(i64::MAX), int(1)), 42)],
    )]);
    let e = err(&overflow);
    assert_eq!(e.code().id, "RUN004");
    assert_eq!(e.diagnostic.span, sp(42));

    let mul = program(vec![func(
        "incipit",
        0,
        1,
        vec![let_(0, bin(BinOp::Mul, int(i64::MIN), int(-1)))],
    )]);
    assert_eq!(err(&mul).code().id, "RUN004");

    let div = program(vec![func(
        "incipit",
        0,
        1,
        vec![let_(0, bin(BinOp::Div, int(1), int(0)))],
    )]);
    assert_eq!(err(&div).code().id, "RUN003");

    let shift = program(vec![func(
        "incipit",
        0,
        1,
        vec![let_(0, bin(BinOp::Shl, int(1), int(64)))],
    )]);
    assert_eq!(err(&shift).code().id, "RUN004");

    let text_plus_int = program(vec![func(
        "incipit",
        0,
        1,
        vec![let_(0, bin(BinOp::Add, text("a"), int(1)))],
    )]);
    assert_eq!(err(&text_plus_int).code().id, "RUN010");
}

#[test]
fn comparisons_and_equality() {
    let p = program(vec![func(
        "incipit",
        0,
        6,
        vec![
            let_(0, Rhs::List(vec![int(1), float(2.0)])),
            let_(1, Rhs::List(vec![float(1.0), int(2)])),
            let_(2, bin(BinOp::Eq, s(0), s(1))),
            let_(3, bin(BinOp::NumEq, int(2), float(2.0))),
            let_(4, bin(BinOp::Lt, text("abc"), text("abd"))),
            let_(5, bin(BinOp::Ne, text("a"), int(1))),
            nota(vec![s(2), s(3), s(4), s(5)]),
        ],
    )]);
    assert_eq!(out(&p), "verum, verum, verum, verum\n");
}

// ---- display ----------------------------------------------------------------

#[test]
fn display_format() {
    let p = program(vec![func(
        "incipit",
        0,
        4,
        vec![
            let_(0, bin(BinOp::Add, float(0.1), float(0.2))),
            let_(1, bin(BinOp::Mul, float(1e20), int(10))),
            let_(2, bin(BinOp::Div, float(1.0), float(1e7))),
            let_(3, Rhs::Prim(Prim::Unary(UnOp::Neg), vec![float(0.0)])),
            nota(vec![s(0)]),
            nota(vec![s(1)]),
            nota(vec![s(2)]),
            nota(vec![s(3)]),
            nota(vec![
                Operand::Const(Const::Bool(true)),
                Operand::Const(Const::Nihil),
                text("salve"),
            ]),
            Stmt::Out {
                kind: OutKind::Mone,
                args: vec![text("to stderr")],
                span: Span::default(),
            },
        ],
    )]);
    let (r, io) = run(&p);
    assert_eq!(r.unwrap(), 0);
    assert_eq!(
        io.out,
        "0.30000000000000004\n1000000000000000000000.0\n0.0000001\n-0.0\nverum, nihil, salve\n"
    );
    assert_eq!(io.err, "to stderr\n");
}

#[test]
fn template_display() {
    let p = program(vec![func(
        "incipit",
        0,
        2,
        vec![
            let_(0, Rhs::List(vec![text("a"), float(2.0)])),
            let_(
                1,
                Rhs::Template(
                    vec![
                        TemplatePiece::Text("n=".into()),
                        TemplatePiece::Arg(0),
                        TemplatePiece::Text(", xs=".into()),
                        TemplatePiece::Arg(1),
                        TemplatePiece::Text(", again ".into()),
                        TemplatePiece::Arg(0),
                    ],
                    vec![float(0.5), s(0)],
                ),
            ),
            nota(vec![s(1)]),
        ],
    )]);
    assert_eq!(out(&p), "n=0.5, xs=[a, 2.0], again 0.5\n");
}

// ---- calls and recursion ----------------------------------------------------

/// fib(n) = n < 2 ? n : fib(n-1) + fib(n-2), as function 1.
fn fib_function() -> Function {
    func(
        "fib",
        1,
        6,
        vec![
            let_(1, bin(BinOp::Lt, s(0), int(2))),
            Stmt::If {
                cond: s(1),
                then: block(vec![Stmt::Return(Some(s(0)))]),
                otherwise: Block::default(),
            },
            let_(2, bin(BinOp::Sub, s(0), int(1))),
            let_(3, Rhs::Call(FuncId(1), vec![s(2)])),
            let_(2, bin(BinOp::Sub, s(0), int(2))),
            let_(4, Rhs::Call(FuncId(1), vec![s(2)])),
            let_(5, bin(BinOp::Add, s(3), s(4))),
            Stmt::Return(Some(s(5))),
        ],
    )
}

#[test]
fn recursion_and_exit_code() {
    let p = program(vec![
        func(
            "incipit",
            0,
            1,
            vec![
                let_(0, Rhs::Call(FuncId(1), vec![int(20)])),
                nota(vec![s(0)]),
                Stmt::Return(Some(int(3))),
            ],
        ),
        fib_function(),
    ]);
    let (r, io) = run(&p);
    assert_eq!(r.unwrap(), 3);
    assert_eq!(io.out, "6765\n");

    let mut io = BufferIo::default();
    let v = eval::run_function(
        &p,
        FuncId(1),
        vec![Value::Int(10)],
        &mut io,
        &Default::default(),
    )
    .unwrap();
    assert!(matches!(v, Value::Int(55)));
}

#[test]
fn deep_recursion_is_run009_not_a_crash() {
    // f(n) = f(n + 1), no base case.
    let p = program(vec![
        func(
            "incipit",
            0,
            1,
            vec![let_at(0, Rhs::Call(FuncId(1), vec![int(0)]), 7)],
        ),
        func(
            "sine_fine",
            1,
            2,
            vec![
                let_(1, bin(BinOp::Add, s(0), int(1))),
                let_at(1, Rhs::Call(FuncId(1), vec![s(1)]), 99),
                Stmt::Return(Some(s(1))),
            ],
        ),
    ]);
    let (r, _) = run_big_stack(p);
    let e = r.unwrap_err();
    assert_eq!(e.code().id, "RUN009");
    assert_eq!(e.trace.len(), eval::TRACE_LIMIT);
    assert!(e.omitted > 9_000);
    assert_eq!(e.trace[0].0, "main::sine_fine");
    assert_eq!(e.trace[0].1, sp(99));
    let d = e.into_diagnostic();
    assert_eq!(d.labels.len(), eval::TRACE_LIMIT);
    assert!(d.hint.unwrap().contains("more call"));
}

#[test]
fn closures_capture_by_value() {
    // add(k, x) = k + x; incipit: k = 10; f = closure add [k]; k = 0; nota f(5)
    let p = program(vec![
        func(
            "incipit",
            0,
            3,
            vec![
                let_(0, Rhs::Use(int(10))),
                let_(1, Rhs::Closure(FuncId(1), vec![s(0)])),
                let_(0, Rhs::Use(int(0))),
                let_(2, Rhs::CallValue(s(1), vec![int(5)])),
                nota(vec![s(2), s(1)]),
            ],
        ),
        func(
            "<closure#1>",
            2,
            3,
            vec![
                let_(2, bin(BinOp::Add, s(0), s(1))),
                Stmt::Return(Some(s(2))),
            ],
        ),
    ]);
    assert_eq!(out(&p), "15, <functio <closure#1>>\n");
}

// ---- value semantics --------------------------------------------------------

#[test]
fn copy_on_write_lists() {
    let p = program(vec![func(
        "incipit",
        0,
        3,
        vec![
            let_(0, Rhs::List(vec![int(1), int(2)])),
            let_(1, Rhs::Use(s(0))),
            Stmt::MethodInPlace {
                dst: None,
                method: Method::Appende,
                place: place(1, vec![]),
                args: vec![int(3)],
                span: sp(5),
            },
            Stmt::Store {
                place: place(0, vec![PlaceStep::Index(int(0))]),
                value: int(9),
                span: sp(6),
            },
            nota(vec![s(0), s(1)]),
            Stmt::MethodInPlace {
                dst: Some(Slot(2)),
                method: Method::Detrahe,
                place: place(1, vec![]),
                args: vec![],
                span: sp(7),
            },
            nota(vec![s(1), s(2)]),
        ],
    )]);
    assert_eq!(out(&p), "[9, 2], [1, 2, 3]\n[1, 2], 3\n");
}

fn box_genus() -> Genus {
    Genus {
        name: "Arca".into(),
        fields: vec![
            Field {
                name: "items".into(),
                ty: Ty::List(Box::new(Ty::List(Box::new(Ty::Int)))),
                narrow: false,
            },
            Field {
                name: "n".into(),
                ty: Ty::Int,
                narrow: false,
            },
        ],
    }
}

#[test]
fn method_in_place_on_nested_place() {
    // r = Arca { items = [[1], [2]], n = 0 }; copy = r; r.items[1].appende(5)
    let mut p = program(vec![func(
        "incipit",
        0,
        5,
        vec![
            let_(0, Rhs::List(vec![int(1)])),
            let_(1, Rhs::List(vec![int(2)])),
            let_(2, Rhs::List(vec![s(0), s(1)])),
            let_(3, Rhs::Record(GenusId(0), vec![s(2), int(0)])),
            let_(4, Rhs::Use(s(3))),
            Stmt::MethodInPlace {
                dst: None,
                method: Method::Appende,
                place: place(3, vec![PlaceStep::Field(0), PlaceStep::Index(int(1))]),
                args: vec![int(5)],
                span: sp(8),
            },
            Stmt::Store {
                place: place(3, vec![PlaceStep::Field(1)]),
                value: int(7),
                span: sp(9),
            },
            nota(vec![s(3)]),
            nota(vec![s(4)]),
            nota(vec![s(1)]),
        ],
    )]);
    p.genera.push(box_genus());
    assert_eq!(
        out(&p),
        "Arca { items = [[1], [2, 5]], n = 7 }\nArca { items = [[1], [2]], n = 0 }\n[2]\n"
    );
}

#[test]
fn call_in_place_writes_back() {
    // genus Arca; functio Arca.incr(ego, k) → numerus { ego.n ← ego.n + k; ego.items.appende([k]); redde ego.n }
    let mut p = program(vec![
        func(
            "incipit",
            0,
            4,
            vec![
                let_(0, Rhs::List(vec![])),
                let_(1, Rhs::Record(GenusId(0), vec![s(0), int(0)])),
                let_(2, Rhs::List(vec![s(1)])),
                Stmt::CallInPlace {
                    dst: None,
                    func: FuncId(1),
                    place: place(1, vec![]),
                    args: vec![int(2)],
                    span: sp(3),
                },
                Stmt::CallInPlace {
                    dst: Some(Slot(3)),
                    func: FuncId(1),
                    place: place(2, vec![PlaceStep::Index(int(0))]),
                    args: vec![int(5)],
                    span: sp(4),
                },
                nota(vec![s(1)]),
                nota(vec![s(2), s(3)]),
            ],
        ),
        func(
            "Arca.incr",
            2,
            4,
            vec![
                let_(2, Rhs::Field(s(0), 1)),
                let_(2, bin(BinOp::Add, s(2), s(1))),
                Stmt::Store {
                    place: place(0, vec![PlaceStep::Field(1)]),
                    value: s(2),
                    span: sp(20),
                },
                let_(3, Rhs::List(vec![s(1)])),
                Stmt::MethodInPlace {
                    dst: None,
                    method: Method::Appende,
                    place: place(0, vec![PlaceStep::Field(0)]),
                    args: vec![s(3)],
                    span: sp(21),
                },
                Stmt::Return(Some(s(2))),
            ],
        ),
    ]);
    p.genera.push(box_genus());
    assert_eq!(
        out(&p),
        "Arca { items = [[2]], n = 2 }\n[Arca { items = [[5]], n = 5 }], 5\n"
    );
}

#[test]
fn maps_store_index_and_methods() {
    let p = program(vec![func(
        "incipit",
        0,
        5,
        vec![
            let_(0, Rhs::Map(vec![("a".into(), int(1))])),
            Stmt::Store {
                place: place(0, vec![PlaceStep::Index(text("b"))]),
                value: int(2),
                span: sp(1),
            },
            Stmt::MethodInPlace {
                dst: None,
                method: Method::Pone,
                place: place(0, vec![]),
                args: vec![int(3), text("tres")],
                span: sp(2),
            },
            let_(1, Rhs::Index(s(0), text("b"))),
            let_(2, Rhs::Method(Method::Accipe, s(0), vec![text("zz")])),
            let_(3, Rhs::Method(Method::Claves, s(0), vec![])),
            Stmt::MethodInPlace {
                dst: Some(Slot(4)),
                method: Method::Dele,
                place: place(0, vec![]),
                args: vec![text("a")],
                span: sp(3),
            },
            nota(vec![s(0), s(1), s(2), s(3), s(4)]),
            let_at(1, Rhs::Index(s(0), text("a")), 77),
        ],
    )]);
    let (r, io) = run(&p);
    assert_eq!(io.out, "{\"b\": 2, 3: tres}, 2, nihil, [a, b, 3], verum\n");
    let e = r.unwrap_err();
    assert_eq!(e.code().id, "RUN002");
    assert_eq!(e.diagnostic.span, sp(77));
}

#[test]
fn index_errors() {
    let read = program(vec![func(
        "incipit",
        0,
        2,
        vec![
            let_(0, Rhs::List(vec![int(1)])),
            let_(1, Rhs::Index(s(0), int(-1))),
        ],
    )]);
    assert_eq!(err(&read).code().id, "RUN001");
    let write = program(vec![func(
        "incipit",
        0,
        1,
        vec![
            let_(0, Rhs::List(vec![int(1)])),
            Stmt::Store {
                place: place(0, vec![PlaceStep::Index(int(1))]),
                value: int(0),
                span: sp(3),
            },
        ],
    )]);
    assert_eq!(err(&write).code().id, "RUN001");
    let text_index = program(vec![func(
        "incipit",
        0,
        2,
        vec![
            let_(0, Rhs::Use(text("añb"))),
            let_(1, Rhs::Index(s(0), int(1))),
            nota(vec![s(1)]),
        ],
    )]);
    assert_eq!(out(&text_index), "ñ\n");
}

// ---- control flow -----------------------------------------------------------

fn for_range(start: i64, end: i64, step: i64, inclusive: bool) -> Program {
    program(vec![func(
        "incipit",
        0,
        2,
        vec![
            let_(1, Rhs::List(vec![])),
            Stmt::ForRange {
                var: Slot(0),
                start: int(start),
                end: int(end),
                step: int(step),
                inclusive,
                body: block(vec![Stmt::MethodInPlace {
                    dst: None,
                    method: Method::Appende,
                    place: place(1, vec![]),
                    args: vec![s(0)],
                    span: sp(4),
                }]),
                span: sp(5),
            },
            nota(vec![s(1)]),
        ],
    )])
}

#[test]
fn for_range_steps() {
    assert_eq!(out(&for_range(10, 1, -3, true)), "[10, 7, 4, 1]\n");
    assert_eq!(out(&for_range(10, 1, -3, false)), "[10, 7, 4]\n");
    assert_eq!(out(&for_range(0, 3, 1, false)), "[0, 1, 2]\n");
    assert_eq!(out(&for_range(0, 3, 1, true)), "[0, 1, 2, 3]\n");
    assert_eq!(out(&for_range(3, 0, 1, false)), "[]\n");
    assert_eq!(
        out(&for_range(i64::MAX - 1, i64::MAX, 1, true)),
        "[9223372036854775806, 9223372036854775807]\n"
    );
    let e = err(&for_range(0, 3, 0, false));
    assert_eq!(e.code().id, "RUN011");
    assert_eq!(e.diagnostic.span, sp(5));

    let range_value = program(vec![func(
        "incipit",
        0,
        1,
        vec![
            let_(
                0,
                Rhs::Range {
                    start: int(0),
                    end: int(10),
                    step: int(4),
                    inclusive: false,
                },
            ),
            nota(vec![s(0)]),
        ],
    )]);
    assert_eq!(out(&range_value), "[0, 4, 8]\n");
}

#[test]
fn loop_break_continue() {
    // i = 0; sum = 0; loop { i = i + 1; if i > 10 break; if i % 2 == 0 continue; sum += i }
    let p = program(vec![func(
        "incipit",
        0,
        3,
        vec![
            let_(0, Rhs::Use(int(0))),
            let_(1, Rhs::Use(int(0))),
            Stmt::Loop {
                body: block(vec![
                    let_(0, bin(BinOp::Add, s(0), int(1))),
                    let_(2, bin(BinOp::Gt, s(0), int(10))),
                    Stmt::If {
                        cond: s(2),
                        then: block(vec![Stmt::Break]),
                        otherwise: Block::default(),
                    },
                    let_(2, bin(BinOp::Rem, s(0), int(2))),
                    let_(2, bin(BinOp::Eq, s(2), int(0))),
                    Stmt::If {
                        cond: s(2),
                        then: block(vec![Stmt::Continue]),
                        otherwise: Block::default(),
                    },
                    let_(1, bin(BinOp::Add, s(1), s(0))),
                ]),
                span: Span::default(),
            },
            nota(vec![s(1)]),
        ],
    )]);
    assert_eq!(out(&p), "25\n");
}

#[test]
fn for_each_over_maps_lists_and_text() {
    let each = |kind: EachKind, source: Operand| {
        program(vec![func(
            "incipit",
            0,
            3,
            vec![
                let_(
                    2,
                    Rhs::Map(vec![("x".into(), int(1)), ("y".into(), int(2))]),
                ),
                let_(1, Rhs::List(vec![])),
                Stmt::ForEach {
                    var: Slot(0),
                    kind,
                    source,
                    body: block(vec![Stmt::MethodInPlace {
                        dst: None,
                        method: Method::Appende,
                        place: place(1, vec![]),
                        args: vec![s(0)],
                        span: sp(4),
                    }]),
                    span: sp(5),
                },
                nota(vec![s(1)]),
            ],
        )])
    };
    assert_eq!(out(&each(EachKind::Values, s(2))), "[1, 2]\n");
    assert_eq!(out(&each(EachKind::Keys, s(2))), "[x, y]\n");
    assert_eq!(out(&each(EachKind::Values, text("ab"))), "[a, b]\n");
    assert_eq!(out(&each(EachKind::Keys, text("ab"))), "[0, 1]\n");
}

// ---- errors -----------------------------------------------------------------

#[test]
fn try_catches_a_throw_across_a_call() {
    let p = program(vec![
        func(
            "incipit",
            0,
            2,
            vec![
                Stmt::Try {
                    body: block(vec![
                        let_(0, Rhs::Call(FuncId(1), vec![int(1)])),
                        nota(vec![text("not reached")]),
                    ]),
                    catch_slot: Some(Slot(1)),
                    handler: block(vec![nota(vec![text("caught"), s(1)])]),
                },
                nota(vec![text("after")]),
                let_at(0, Rhs::Call(FuncId(1), vec![int(2)]), 50),
            ],
        ),
        func(
            "thrower",
            1,
            2,
            vec![
                let_(1, bin(BinOp::Add, s(0), int(1))),
                Stmt::Throw {
                    value: s(1),
                    span: sp(60),
                },
            ],
        ),
    ]);
    let (r, io) = run(&p);
    assert_eq!(io.out, "caught, 2\nafter\n");
    let e = r.unwrap_err();
    assert_eq!(e.code().id, "RUN006");
    assert_eq!(e.diagnostic.message, "uncaught `iace`: 3");
    assert_eq!(e.diagnostic.span, sp(60));
    assert_eq!(e.trace, vec![("main::thrower".to_string(), sp(50))]);
}

#[test]
fn failed_conversion_throws() {
    let p = program(vec![func(
        "incipit",
        0,
        3,
        vec![
            let_(0, Rhs::Convert(text("42"), Ty::Int)),
            let_(1, Rhs::Convert(s(0), Ty::Text)),
            Stmt::Try {
                body: block(vec![let_(2, Rhs::Convert(text("x"), Ty::Float))]),
                catch_slot: Some(Slot(2)),
                handler: block(vec![nota(vec![s(2)])]),
            },
            let_(2, Rhs::Is(s(1), IsTest::Type(Ty::Text), false)),
            nota(vec![s(0), s(1), s(2)]),
            let_at(2, Rhs::Convert(text("4.5"), Ty::Int), 33),
        ],
    )]);
    let (r, io) = run(&p);
    assert_eq!(io.out, "cannot convert \"x\" to fractus\n42, 42, verum\n");
    let e = r.unwrap_err();
    assert_eq!(e.code().id, "RUN005");
    assert_eq!(e.diagnostic.span, sp(33));
}

#[test]
fn fatal_errors_are_not_caught() {
    let p = program(vec![func(
        "incipit",
        0,
        1,
        vec![Stmt::Try {
            body: block(vec![Stmt::Fatal {
                kind: FatalKind::Mori,
                message: text("finis"),
                span: sp(3),
            }]),
            catch_slot: None,
            handler: block(vec![nota(vec![text("wrong")])]),
        }],
    )]);
    let e = err(&p);
    assert_eq!(e.code().id, "RUN007");
    assert_eq!(e.diagnostic.message, "finis");

    let assert = |message: Option<Operand>| {
        program(vec![func(
            "incipit",
            0,
            1,
            vec![
                let_(0, bin(BinOp::Eq, int(1), int(2))),
                Stmt::Assert {
                    cond: s(0),
                    message,
                    source: "1 ≡ 2".into(),
                    span: sp(4),
                },
            ],
        )])
    };
    let e = err(&assert(None));
    assert_eq!(e.code().id, "RUN008");
    assert_eq!(e.diagnostic.message, "adfirma failed: 1 ≡ 2");
    assert_eq!(err(&assert(Some(text("nope")))).diagnostic.message, "nope");
}

#[test]
fn globals_are_set_by_inits() {
    let mut p = program(vec![
        func(
            "incipit",
            0,
            1,
            vec![
                let_(0, bin(BinOp::Mul, Operand::Global(GlobalId(0)), int(2))),
                nota(vec![s(0)]),
            ],
        ),
        func(
            "<init>",
            0,
            0,
            vec![Stmt::SetGlobal {
                dst: GlobalId(0),
                value: int(21),
            }],
        ),
    ]);
    p.globals.push(Global {
        name: "N".into(),
        ty: Ty::Int,
    });
    p.inits.push(FuncId(1));
    assert_eq!(out(&p), "42\n");
}

#[test]
fn builtin_methods() {
    let m = |method: Method, recv: Operand, args: Vec<Operand>| Rhs::Method(method, recv, args);
    let p = program(vec![func(
        "incipit",
        0,
        8,
        vec![
            let_(0, Rhs::List(vec![int(1), int(2), int(3)])),
            let_(1, m(Method::Sectio, s(0), vec![int(1), int(3)])),
            let_(2, m(Method::Inverte, s(0), vec![])),
            let_(3, m(Method::Accipe, s(0), vec![int(5)])),
            let_(4, m(Method::Longitudo, text("añb"), vec![])),
            let_(5, m(Method::Sectio, text("añbc"), vec![int(1), int(3)])),
            let_(6, m(Method::Pavimentum, float(-2.5), vec![])),
            let_(7, m(Method::Potentia, int(2), vec![int(10)])),
            nota(vec![s(1), s(2), s(3), s(4), s(5), s(6), s(7)]),
            let_(1, m(Method::Maximus, int(2), vec![float(3.5)])),
            let_(
                2,
                m(
                    Method::Approximata,
                    float(1.0),
                    vec![float(1.05), float(0.1)],
                ),
            ),
            let_(3, m(Method::Initium, text("salve"), vec![text("sa")])),
            let_(4, m(Method::Minuscula, text("ÁB"), vec![])),
            let_(5, m(Method::Absolutum, int(-4), vec![])),
            let_(6, m(Method::Primus, s(0), vec![])),
            let_(7, m(Method::Vacua, s(0), vec![])),
            nota(vec![s(1), s(2), s(3), s(4), s(5), s(6), s(7)]),
        ],
    )]);
    assert_eq!(
        out(&p),
        "[2, 3], [3, 2, 1], nihil, 3, ñb, -3, 1024\n3.5, verum, verum, áb, 4, 1, falsum\n"
    );
}

#[test]
fn coercion_and_is_tests() {
    let p = program(vec![func(
        "incipit",
        0,
        4,
        vec![
            let_(0, Rhs::Coerce(int(3), Ty::Float)),
            let_(1, Rhs::List(vec![int(1), float(2.5)])),
            let_(1, Rhs::Coerce(s(1), Ty::List(Box::new(Ty::Float)))),
            let_(
                2,
                Rhs::Is(Operand::Const(Const::Nihil), IsTest::Nihil, false),
            ),
            let_(3, Rhs::Is(s(0), IsTest::Type(Ty::Int), true)),
            nota(vec![s(0), s(1), s(2), s(3)]),
        ],
    )]);
    assert_eq!(out(&p), "3.0, [1.0, 2.5], verum, verum\n");
}

#[test]
fn sieve_counts_primes() {
    // flags = [verum] * (n+1) built by appende; classic sieve; count primes below 10_000.
    let n = 10_000;
    let p = program(vec![func(
        "incipit",
        0,
        6,
        vec![
            let_(0, Rhs::List(vec![])),
            Stmt::ForRange {
                var: Slot(1),
                start: int(0),
                end: int(n),
                step: int(1),
                inclusive: true,
                body: block(vec![Stmt::MethodInPlace {
                    dst: None,
                    method: Method::Appende,
                    place: place(0, vec![]),
                    args: vec![Operand::Const(Const::Bool(true))],
                    span: sp(1),
                }]),
                span: sp(2),
            },
            let_(2, Rhs::Use(int(0))),
            Stmt::ForRange {
                var: Slot(1),
                start: int(2),
                end: int(n),
                step: int(1),
                inclusive: true,
                body: block(vec![
                    let_(3, Rhs::Index(s(0), s(1))),
                    Stmt::If {
                        cond: s(3),
                        then: block(vec![
                            let_(2, bin(BinOp::Add, s(2), int(1))),
                            let_(4, bin(BinOp::Mul, s(1), s(1))),
                            Stmt::ForRange {
                                var: Slot(5),
                                start: s(4),
                                end: int(n),
                                step: s(1),
                                inclusive: true,
                                body: block(vec![Stmt::Store {
                                    place: place(0, vec![PlaceStep::Index(s(5))]),
                                    value: Operand::Const(Const::Bool(false)),
                                    span: sp(3),
                                }]),
                                span: sp(4),
                            },
                        ]),
                        otherwise: Block::default(),
                    },
                ]),
                span: sp(5),
            },
            nota(vec![s(2)]),
        ],
    )]);
    assert_eq!(out(&p), "1229\n");
}
