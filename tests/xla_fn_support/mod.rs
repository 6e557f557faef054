//! What the whole-function XLA tests share (tests/xla_functions.rs,
//! tests/xla_companions.rs): compiling a program, finding its functions, random f32
//! tensors, the interpreter's result under `--precision f32` flattened as the
//! device's results are, and the comparison within 1e-5·(1 + |y|).
#![allow(dead_code)]

use crate::common::pjrt_plugin;
use faber::eval::{self, BufferIo, RunConfig, Value};
use faber::ir::{FuncId, Program};
use faber::resolve::MemoryLoader;
use faber::source::SourceMap;
use faber::tensor::{DType, SplitMix64, Tensor};
use faber::xla::{Device, FnArg, Plugin};

/// `source` (shown as `name` in messages) compiled with gradus' optimizer at hand
/// (`gradus:optimize`).
pub fn compile_source(name: &str, source: &str) -> Program {
    let mut sources = SourceMap::new();
    let id = sources.add(name, source.to_string());
    let mut loader = MemoryLoader {
        files: [(
            "gradus:optimize.fab".to_string(),
            include_str!("../../gradus-fab/src/optimize.fab").to_string(),
        )]
        .into_iter()
        .collect(),
    };
    match faber::compile(&mut sources, id, &mut loader) {
        Ok(p) => p,
        Err(d) => panic!("{}", faber::diag::render(&d, &sources, false)),
    }
}

pub fn func(p: &Program, name: &str) -> FuncId {
    let i = p
        .functions
        .iter()
        .position(|f| f.name.ends_with(&format!("::{name}")))
        .unwrap_or_else(|| panic!("no function {name}"));
    FuncId(i as u32)
}

pub fn rand32(rng: &mut SplitMix64, shape: &[usize]) -> Tensor {
    rng.normal_tensor(shape, 0.0, 1.0)
        .unwrap()
        .to_dtype(DType::F32)
        .unwrap()
}

/// The interpreter's result under `--precision f32`.
pub fn interpret(p: &Program, f: FuncId, args: Vec<Value>) -> Value {
    let config = RunConfig {
        precision: DType::F32,
        ..RunConfig::default()
    };
    let mut io = BufferIo::default();
    eval::run_function(p, f, args, &mut io, &config)
        .unwrap_or_else(|e| panic!("{}", e.into_diagnostic().message))
}

/// The interpreter's result, flattened as the device's results are: a tensor, a
/// number, the parts of a tuple, record or list; integers (known when traced) are
/// not program outputs.
pub fn interpreted(p: &Program, f: FuncId, args: Vec<Value>) -> Vec<Vec<f64>> {
    fn flat(v: &Value, out: &mut Vec<Vec<f64>>) {
        match v {
            Value::Tensor(t) => out.push(t.values().into_owned()),
            Value::Float(x) => out.push(vec![*x]),
            Value::Tuple(parts) | Value::List(parts) => parts.iter().for_each(|p| flat(p, out)),
            Value::Record(r) => r.fields.iter().for_each(|p| flat(p, out)),
            // The cotangent of an integer or flag operand; a step count.
            Value::Nihil | Value::Int(_) => {}
            other => panic!("unexpected result {}", other.type_name()),
        }
    }
    let mut out = Vec::new();
    flat(&interpret(p, f, args), &mut out);
    out
}

/// The device argument for an interpreter value: tensors, numbers, integers, records
/// and lists of them.
pub fn arg_of(v: &Value) -> FnArg<'_> {
    match v {
        Value::Tensor(t) => FnArg::Tensor(t),
        Value::Float(x) => FnArg::Number(*x),
        Value::Int(n) => FnArg::Int(*n),
        Value::Record(r) => FnArg::Record(r.fields.iter().map(arg_of).collect()),
        Value::List(items) => FnArg::List(items.iter().map(arg_of).collect()),
        other => panic!("no device argument for {}", other.type_name()),
    }
}

pub fn close(got: &[Tensor], want: &[Vec<f64>], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: result count");
    for (g, w) in got.iter().zip(want) {
        let g = g.values();
        assert_eq!(g.len(), w.len(), "{what}: element count");
        for (i, (x, y)) in g.iter().zip(w).enumerate() {
            assert!(
                (x - y).abs() <= 1e-5 * (1.0 + y.abs()),
                "{what}: element {i}: device {x} against interpreter {y}"
            );
        }
    }
}

pub fn device() -> Option<Device<'static>> {
    let path = pjrt_plugin()?;
    let plugin: &'static Plugin = Box::leak(Box::new(Plugin::load(&path).unwrap()));
    Some(Device::new(plugin.client().unwrap(), 0).unwrap())
}
