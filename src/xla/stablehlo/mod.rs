//! A small StableHLO text emitter: [`Function`] builds one `func.func @main` in
//! MLIR's generic operation form (`%v3 = "stablehlo.add"(%v1, %v2) : (tensor<2x3xf32>,
//! tensor<2x3xf32>) -> tensor<2x3xf32>`), which every StableHLO version parses the
//! same way; [`Function::finish`] wraps it in a module, the text `PJRT_Client_Compile`
//! takes with format "mlir". [`lower`] maps the Radix IR's tensor ops ([`Op`]) onto
//! these building blocks; [`function`] traces a whole straight-line IR function
//! through them into one program.
//!
//! The builder computes every result type from its operands, so the text is well
//! typed by construction; its methods take operands the caller has checked (axes in
//! range, shapes that fit) — [`lower`] checks them and reports a [`LowerError`]
//! instead of emitting a program XLA would refuse.
//!
//! Float constants are written as the hexadecimal bits of their element type
//! (`dense<0x3F800000> : tensor<f32>` is 1.0), so the text carries the exact value.
//!
//! Besides f32 and f64 tensors, a program may compute with unsigned 64-bit integers
//! ([`U64`], `tensor<…xui64>`, integer constants in decimal): intermediate values of
//! the seeded random ops (random.rs), which never reach a parameter or a result.
//!
//! [`Op`]: crate::ir::ops::Op

mod attention;
mod bound;
mod cotangent;
mod dispatch;
pub mod function;
pub mod lower;
mod nn;
mod numbers;
mod optim;
mod random;
mod reduce;
mod trees;

use std::fmt::{self, Write as _};

use super::exec::ElementType;

pub use dispatch::lower_op;
pub use function::{lower_function, lower_function_with_template, Param, Template};
pub use lower::{LowerError, Operand};

/// A ranked tensor type: `tensor<2x3xf32>`, `tensor<f64>` for rank 0.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorType {
    pub elem: ElementType,
    pub dims: Vec<usize>,
    /// `ui64` elements (`elem` then means nothing): the type of a [`U64`] value.
    unsigned: bool,
}

impl TensorType {
    pub fn new(elem: ElementType, dims: &[usize]) -> TensorType {
        TensorType {
            elem,
            dims: dims.to_vec(),
            unsigned: false,
        }
    }

    /// `tensor<…xui64>`.
    fn u64(dims: &[usize]) -> TensorType {
        TensorType {
            unsigned: true,
            ..TensorType::new(ElementType::F64, dims)
        }
    }

    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// The element count (saturating: a type this large never compiles anyway).
    pub fn numel(&self) -> usize {
        self.dims.iter().fold(1usize, |n, &d| n.saturating_mul(d))
    }

    fn with_dims(&self, dims: Vec<usize>) -> TensorType {
        TensorType {
            elem: self.elem,
            dims,
            unsigned: self.unsigned,
        }
    }
}

fn elem_name(e: ElementType) -> &'static str {
    match e {
        ElementType::F32 => "f32",
        ElementType::F64 => "f64",
    }
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("tensor<")?;
        for d in &self.dims {
            write!(f, "{d}x")?;
        }
        let elem = if self.unsigned {
            "ui64"
        } else {
            elem_name(self.elem)
        };
        write!(f, "{elem}>")
    }
}

/// An SSA value of the function being built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Value(usize);

/// An SSA value of unsigned 64-bit integers (`tensor<…xui64>`), kept apart from
/// [`Value`] so no float operation takes one: made by [`Function::iota_u64`] and
/// [`Function::splat_u64`], combined by [`Function::int_binary`] (arithmetic mod
/// 2⁶⁴), and leaving the integers only through [`Function::u64_to_float`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct U64(Value);

/// Element-wise operations of two [`U64`] operands of one shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntBinary {
    /// `a + b` mod 2⁶⁴.
    Add,
    /// `a · b` mod 2⁶⁴.
    Multiply,
    Xor,
    /// `a >> b`, zeros shifted in.
    ShiftRightLogical,
}

/// Element-wise operations of one operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unary {
    Negate,
    Exponential,
    Log,
    Sqrt,
    Tanh,
    /// σ(x) = 1 / (1 + e^−x).
    Logistic,
    Cosine,
}

/// Element-wise operations of two operands of one type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binary {
    Add,
    Subtract,
    Multiply,
    Divide,
    Maximum,
    Minimum,
    /// `a` to the power `b`.
    Power,
}

/// A comparison direction of [`Function::select_if`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    Gt,
    Eq,
    /// Unequal: also true of NaN against anything, itself included.
    Ne,
    /// `≥` (false of NaN).
    Ge,
    /// `<` (false of NaN).
    Lt,
}

/// The combining function of a reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    /// Starts from 0.
    Sum,
    /// Starts from −∞.
    Max,
    /// Starts from +∞.
    Min,
}

/// The axes of a `stablehlo.dot_general`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DotDims {
    pub lhs_batch: Vec<usize>,
    pub rhs_batch: Vec<usize>,
    pub lhs_contract: Vec<usize>,
    pub rhs_contract: Vec<usize>,
}

/// One `func.func @main` under construction.
pub struct Function {
    params: Vec<TensorType>,
    /// The type of each value; values `0..params.len()` are the parameters.
    types: Vec<TensorType>,
    body: String,
}

fn list(xs: &[usize]) -> String {
    xs.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn i64_array(xs: &[usize]) -> String {
    if xs.is_empty() {
        "array<i64>".to_string()
    } else {
        format!("array<i64: {}>", list(xs))
    }
}

/// The exact bits of `v` in `elem` as an MLIR hexadecimal float literal.
fn float_literal(elem: ElementType, v: f64) -> String {
    match elem {
        ElementType::F32 => format!("0x{:08X}", (v as f32).to_bits()),
        ElementType::F64 => format!("0x{:016X}", v.to_bits()),
    }
}

impl Function {
    /// A function of parameters of these types; returns it with the parameters'
    /// values.
    pub fn new(params: &[TensorType]) -> (Function, Vec<Value>) {
        let f = Function {
            params: params.to_vec(),
            types: params.to_vec(),
            body: String::new(),
        };
        (f, (0..params.len()).map(Value).collect())
    }

    pub fn ty(&self, v: Value) -> &TensorType {
        &self.types[v.0]
    }

    fn name(&self, v: Value) -> String {
        if v.0 < self.params.len() {
            format!("%arg{}", v.0)
        } else {
            format!("%v{}", v.0)
        }
    }

    /// Appends `%vN = "op"(operands) {attrs} : (operand types) -> result` and
    /// returns `%vN`.
    fn emit(&mut self, op: &str, operands: &[Value], attrs: &str, result: TensorType) -> Value {
        let v = Value(self.types.len());
        let names: Vec<String> = operands.iter().map(|&o| self.name(o)).collect();
        let types: Vec<String> = operands.iter().map(|&o| self.ty(o).to_string()).collect();
        let attrs = if attrs.is_empty() {
            String::new()
        } else {
            format!(" {{{attrs}}}")
        };
        let _ = writeln!(
            self.body,
            "    {} = \"{op}\"({}){attrs} : ({}) -> {result}",
            self.name(v),
            names.join(", "),
            types.join(", ")
        );
        self.types.push(result);
        v
    }

    pub fn unary(&mut self, op: Unary, x: Value) -> Value {
        let name = match op {
            Unary::Negate => "stablehlo.negate",
            Unary::Exponential => "stablehlo.exponential",
            Unary::Log => "stablehlo.log",
            Unary::Sqrt => "stablehlo.sqrt",
            Unary::Tanh => "stablehlo.tanh",
            Unary::Logistic => "stablehlo.logistic",
            Unary::Cosine => "stablehlo.cosine",
        };
        let ty = self.ty(x).clone();
        self.emit(name, &[x], "", ty)
    }

    /// `a ∘ b` for operands of one type.
    pub fn binary(&mut self, op: Binary, a: Value, b: Value) -> Value {
        debug_assert_eq!(self.ty(a), self.ty(b));
        let name = match op {
            Binary::Add => "stablehlo.add",
            Binary::Subtract => "stablehlo.subtract",
            Binary::Multiply => "stablehlo.multiply",
            Binary::Divide => "stablehlo.divide",
            Binary::Maximum => "stablehlo.maximum",
            Binary::Minimum => "stablehlo.minimum",
            Binary::Power => "stablehlo.power",
        };
        let ty = self.ty(a).clone();
        self.emit(name, &[a, b], "", ty)
    }

    /// A rank-0 constant.
    pub fn constant(&mut self, elem: ElementType, v: f64) -> Value {
        let ty = TensorType::new(elem, &[]);
        let attrs = format!("value = dense<{}> : {ty}", float_literal(elem, v));
        self.emit("stablehlo.constant", &[], &attrs, ty)
    }

    /// The rank-1 tensor of `values` in `elem`, each written as its exact bits
    /// (`dense<[0x…, 0x…]>`); at least one value.
    pub fn literal(&mut self, elem: ElementType, values: &[f64]) -> Value {
        debug_assert!(!values.is_empty());
        let ty = TensorType::new(elem, &[values.len()]);
        let items: Vec<String> = values.iter().map(|&v| float_literal(elem, v)).collect();
        let attrs = format!("value = dense<[{}]> : {ty}", items.join(", "));
        self.emit("stablehlo.constant", &[], &attrs, ty)
    }

    /// A tensor of `dims` with every element `v`.
    pub fn splat(&mut self, elem: ElementType, v: f64, dims: &[usize]) -> Value {
        let c = self.constant(elem, v);
        self.broadcast_in_dim(c, &[], dims)
    }

    /// `x` converted to `elem` (`stablehlo.convert`); `x` itself when it is one.
    pub fn convert(&mut self, x: Value, elem: ElementType) -> Value {
        if self.ty(x) == &TensorType::new(elem, &self.ty(x).dims) {
            return x;
        }
        let ty = TensorType::new(elem, &self.ty(x).dims.clone());
        self.emit("stablehlo.convert", &[x], "", ty)
    }

    /// `x` broadcast to `dims`, operand axis i becoming result axis `map[i]`
    /// (`stablehlo.broadcast_in_dim`); `x` itself when nothing changes.
    pub fn broadcast_in_dim(&mut self, x: Value, map: &[usize], dims: &[usize]) -> Value {
        let identity = map.iter().enumerate().all(|(i, &m)| i == m);
        if identity && self.ty(x).dims == dims {
            return x;
        }
        let ty = self.ty(x).with_dims(dims.to_vec());
        let attrs = format!("broadcast_dimensions = {}", i64_array(map));
        self.emit("stablehlo.broadcast_in_dim", &[x], &attrs, ty)
    }

    /// `x` with the same elements in shape `dims`; `x` itself when it has it.
    pub fn reshape(&mut self, x: Value, dims: &[usize]) -> Value {
        if self.ty(x).dims == dims {
            return x;
        }
        let ty = self.ty(x).with_dims(dims.to_vec());
        self.emit("stablehlo.reshape", &[x], "", ty)
    }

    /// Result axis i is operand axis `perm[i]`.
    pub fn transpose(&mut self, x: Value, perm: &[usize]) -> Value {
        let src = &self.ty(x).dims;
        let ty = self.ty(x).with_dims(perm.iter().map(|&p| src[p]).collect());
        let attrs = format!("permutation = {}", i64_array(perm));
        self.emit("stablehlo.transpose", &[x], &attrs, ty)
    }

    /// `x` reduced over `axes` (ascending, distinct), those axes removed.
    pub fn reduce(&mut self, x: Value, axes: &[usize], kind: Reduction) -> Value {
        let xt = self.ty(x).clone();
        let scalar = TensorType::new(xt.elem, &[]);
        let init = match kind {
            Reduction::Sum => self.constant(xt.elem, 0.0),
            Reduction::Max => self.constant(xt.elem, f64::NEG_INFINITY),
            Reduction::Min => self.constant(xt.elem, f64::INFINITY),
        };
        let dims: Vec<usize> = (0..xt.rank())
            .filter(|i| !axes.contains(i))
            .map(|i| xt.dims[i])
            .collect();
        let ty = xt.with_dims(dims);
        let v = Value(self.types.len());
        let combine = match kind {
            Reduction::Sum => "stablehlo.add",
            Reduction::Max => "stablehlo.maximum",
            Reduction::Min => "stablehlo.minimum",
        };
        let (xn, inn) = (self.name(x), self.name(init));
        let _ = write!(
            self.body,
            "    {vn} = \"stablehlo.reduce\"({xn}, {inn}) ({{\n    \
             ^bb0(%lhs: {scalar}, %rhs: {scalar}):\n      \
             %r = \"{combine}\"(%lhs, %rhs) : ({scalar}, {scalar}) -> {scalar}\n      \
             \"stablehlo.return\"(%r) : ({scalar}) -> ()\n    \
             }}) {{dimensions = {axes}}} : ({xt}, {scalar}) -> {ty}\n",
            vn = self.name(v),
            axes = i64_array(axes),
        );
        self.types.push(ty);
        v
    }

    /// `stablehlo.dot_general`: the result's axes are the batch axes, then lhs's
    /// free axes, then rhs's free axes, each in order.
    pub fn dot_general(&mut self, a: Value, b: Value, d: &DotDims) -> Value {
        let (at, bt) = (self.ty(a).clone(), self.ty(b).clone());
        let free = |t: &TensorType, batch: &[usize], contract: &[usize]| -> Vec<usize> {
            (0..t.rank())
                .filter(|i| !batch.contains(i) && !contract.contains(i))
                .map(|i| t.dims[i])
                .collect()
        };
        let mut dims: Vec<usize> = d.lhs_batch.iter().map(|&i| at.dims[i]).collect();
        dims.extend(free(&at, &d.lhs_batch, &d.lhs_contract));
        dims.extend(free(&bt, &d.rhs_batch, &d.rhs_contract));
        let mut parts = Vec::new();
        if !d.lhs_batch.is_empty() {
            parts.push(format!(
                "lhs_batching_dimensions = [{}]",
                list(&d.lhs_batch)
            ));
            parts.push(format!(
                "rhs_batching_dimensions = [{}]",
                list(&d.rhs_batch)
            ));
        }
        parts.push(format!(
            "lhs_contracting_dimensions = [{}]",
            list(&d.lhs_contract)
        ));
        parts.push(format!(
            "rhs_contracting_dimensions = [{}]",
            list(&d.rhs_contract)
        ));
        let attrs = format!(
            "dot_dimension_numbers = #stablehlo.dot<{}>",
            parts.join(", ")
        );
        self.emit("stablehlo.dot_general", &[a, b], &attrs, at.with_dims(dims))
    }

    /// Elements `start[i]..limit[i]` of every axis i (stride 1).
    pub fn slice(&mut self, x: Value, start: &[usize], limit: &[usize]) -> Value {
        let dims = start.iter().zip(limit).map(|(s, l)| l - s).collect();
        let ty = self.ty(x).with_dims(dims);
        let attrs = format!(
            "start_indices = {}, limit_indices = {}, strides = {}",
            i64_array(start),
            i64_array(limit),
            i64_array(&vec![1; start.len()])
        );
        self.emit("stablehlo.slice", &[x], &attrs, ty)
    }

    /// `a` and `b` joined along `axis`.
    pub fn concatenate(&mut self, a: Value, b: Value, axis: usize) -> Value {
        let mut dims = self.ty(a).dims.clone();
        dims[axis] += self.ty(b).dims[axis];
        let ty = self.ty(a).with_dims(dims);
        let attrs = format!("dimension = {axis} : i64");
        self.emit("stablehlo.concatenate", &[a, b], &attrs, ty)
    }

    /// 1 where `x > 0`, else 0 (NaN gives 0).
    pub fn positive_mask(&mut self, x: Value) -> Value {
        let xt = self.ty(x).clone();
        let zero = self.splat(xt.elem, 0.0, &xt.dims);
        let one = self.splat(xt.elem, 1.0, &xt.dims);
        self.select_if(x, Compare::Gt, zero, one, zero)
    }

    /// `a ⋚ b ? on_true : on_false` element by element (`stablehlo.compare`, whose
    /// `i1` result feeds `stablehlo.select` on the same line pair); all four of one
    /// shape, `on_true`/`on_false` of one type.
    pub fn select_if(
        &mut self,
        a: Value,
        dir: Compare,
        b: Value,
        on_true: Value,
        on_false: Value,
    ) -> Value {
        let (at, ot) = (self.ty(a).clone(), self.ty(on_true).clone());
        let mut pred = String::from("tensor<");
        for d in &at.dims {
            let _ = write!(pred, "{d}x");
        }
        pred.push_str("i1>");
        let v = Value(self.types.len());
        let vn = self.name(v);
        let (an, bn) = (self.name(a), self.name(b));
        let dir = match dir {
            Compare::Gt => "GT",
            Compare::Eq => "EQ",
            Compare::Ne => "NE",
            Compare::Ge => "GE",
            Compare::Lt => "LT",
        };
        let _ = writeln!(
            self.body,
            "    {vn}p = \"stablehlo.compare\"({an}, {bn}) {{comparison_direction = \
             #stablehlo<comparison_direction {dir}>}} : ({at}, {at}) -> {pred}"
        );
        let (tn, fnm) = (self.name(on_true), self.name(on_false));
        let _ = writeln!(
            self.body,
            "    {vn} = \"stablehlo.select\"({vn}p, {tn}, {fnm}) : ({pred}, {ot}, {ot}) -> {ot}"
        );
        self.types.push(ot);
        v
    }

    /// A tensor of `dims` whose elements count along `axis` (0, 1, 2, …), in
    /// `elem` (`stablehlo.iota`).
    pub fn iota(&mut self, elem: ElementType, dims: &[usize], axis: usize) -> Value {
        let ty = TensorType::new(elem, dims);
        let attrs = format!("iota_dimension = {axis} : i64");
        self.emit("stablehlo.iota", &[], &attrs, ty)
    }

    /// The running sums of `x` along `axis`: element j is `((0 + x₀) + x₁) + … + x_j`
    /// (`stablehlo.reduce_window` over a window of the axis' extent, padded before;
    /// the CPU plugin adds a window's elements in order).
    pub fn cumulative_sum(&mut self, x: Value, axis: usize) -> Value {
        let xt = self.ty(x).clone();
        let scalar = TensorType::new(xt.elem, &[]);
        let init = self.constant(xt.elem, 0.0);
        let mut window = vec![1; xt.rank()];
        window[axis] = xt.dims[axis];
        let pads: Vec<String> = (0..xt.rank())
            .map(|i| {
                let before = if i == axis {
                    xt.dims[i].saturating_sub(1)
                } else {
                    0
                };
                format!("[{before}, 0]")
            })
            .collect();
        let v = Value(self.types.len());
        let (xn, inn) = (self.name(x), self.name(init));
        let _ = write!(
            self.body,
            "    {vn} = \"stablehlo.reduce_window\"({xn}, {inn}) ({{\n    \
             ^bb0(%lhs: {scalar}, %rhs: {scalar}):\n      \
             %r = \"stablehlo.add\"(%lhs, %rhs) : ({scalar}, {scalar}) -> {scalar}\n      \
             \"stablehlo.return\"(%r) : ({scalar}) -> ()\n    \
             }}) {{padding = dense<[{pads}]> : tensor<{rank}x2xi64>, \
             window_dimensions = {window}}} : ({xt}, {scalar}) -> {xt}\n",
            vn = self.name(v),
            pads = pads.join(", "),
            rank = xt.rank(),
            window = i64_array(&window),
        );
        self.types.push(xt);
        v
    }

    /// A `ui64` tensor of `dims` counting along `axis` (0, 1, 2, …).
    pub fn iota_u64(&mut self, dims: &[usize], axis: usize) -> U64 {
        let attrs = format!("iota_dimension = {axis} : i64");
        U64(self.emit("stablehlo.iota", &[], &attrs, TensorType::u64(dims)))
    }

    /// A `ui64` tensor of `dims` with every element `v` (written in decimal).
    pub fn splat_u64(&mut self, v: u64, dims: &[usize]) -> U64 {
        let ty = TensorType::u64(&[]);
        let attrs = format!("value = dense<{v}> : {ty}");
        let c = self.emit("stablehlo.constant", &[], &attrs, ty);
        U64(self.broadcast_in_dim(c, &[], dims))
    }

    /// `a ∘ b` for `ui64` operands of one shape.
    pub fn int_binary(&mut self, op: IntBinary, a: U64, b: U64) -> U64 {
        debug_assert_eq!(self.ty(a.0), self.ty(b.0));
        let name = match op {
            IntBinary::Add => "stablehlo.add",
            IntBinary::Multiply => "stablehlo.multiply",
            IntBinary::Xor => "stablehlo.xor",
            IntBinary::ShiftRightLogical => "stablehlo.shift_right_logical",
        };
        let ty = self.ty(a.0).clone();
        U64(self.emit(name, &[a.0, b.0], "", ty))
    }

    /// `x` converted to the float type `elem` (rounded to nearest, exact below 2⁵³
    /// in f64).
    pub fn u64_to_float(&mut self, x: U64, elem: ElementType) -> Value {
        self.convert(x.0, elem)
    }

    /// The module: `func.func public @main` returning `results`.
    pub fn finish(self, results: &[Value]) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .enumerate()
            .map(|(i, t)| format!("%arg{i}: {t}"))
            .collect();
        let names: Vec<String> = results.iter().map(|&r| self.name(r)).collect();
        let types: Vec<String> = results.iter().map(|&r| self.ty(r).to_string()).collect();
        format!(
            "module @faber {{\n  func.func public @main({}) -> ({}) {{\n{}    \
             \"func.return\"({}) : ({}) -> ()\n  }}\n}}\n",
            params.join(", "),
            types.join(", "),
            self.body,
            names.join(", "),
            types.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_print_as_mlir_tensor_types() {
        assert_eq!(
            TensorType::new(ElementType::F32, &[2, 3]).to_string(),
            "tensor<2x3xf32>"
        );
        assert_eq!(
            TensorType::new(ElementType::F64, &[]).to_string(),
            "tensor<f64>"
        );
    }

    #[test]
    fn constants_carry_their_exact_bits() {
        assert_eq!(float_literal(ElementType::F32, 1.0), "0x3F800000");
        assert_eq!(
            float_literal(ElementType::F32, f64::NEG_INFINITY),
            "0xFF800000"
        );
        assert_eq!(float_literal(ElementType::F64, -2.0), "0xC000000000000000");
    }

    /// The whole text of a small function, written out by hand.
    #[test]
    fn a_function_prints_in_generic_form() {
        let t = TensorType::new(ElementType::F32, &[2, 3]);
        let (mut f, p) = Function::new(&[t.clone(), t]);
        let s = f.binary(Binary::Add, p[0], p[1]);
        let r = f.reduce(s, &[1], Reduction::Sum);
        let text = f.finish(&[r]);
        let want = "module @faber {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> (tensor<2xf32>) {
    %v2 = \"stablehlo.add\"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %v3 = \"stablehlo.constant\"() {value = dense<0x00000000> : tensor<f32>} : () -> tensor<f32>
    %v4 = \"stablehlo.reduce\"(%v2, %v3) ({
    ^bb0(%lhs: tensor<f32>, %rhs: tensor<f32>):
      %r = \"stablehlo.add\"(%lhs, %rhs) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      \"stablehlo.return\"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    \"func.return\"(%v4) : (tensor<2xf32>) -> ()
  }
}
";
        assert_eq!(text, want);
    }

    /// `ui64` values: their types, decimal constants, and the way back to floats.
    #[test]
    fn u64_values_print_as_ui64_with_decimal_constants() {
        let (mut f, _) = Function::new(&[]);
        let i = f.iota_u64(&[3], 0);
        let c = f.splat_u64(u64::MAX, &[3]);
        let m = f.int_binary(IntBinary::Multiply, i, c);
        let x = f.u64_to_float(m, ElementType::F64);
        let text = f.finish(&[x]);
        for want in [
            "%v0 = \"stablehlo.iota\"() {iota_dimension = 0 : i64} : () -> tensor<3xui64>",
            "{value = dense<18446744073709551615> : tensor<ui64>} : () -> tensor<ui64>",
            "\"stablehlo.multiply\"(%v0, %v2) : (tensor<3xui64>, tensor<3xui64>) -> tensor<3xui64>",
            "\"stablehlo.convert\"(%v3) : (tensor<3xui64>) -> tensor<3xf64>",
        ] {
            assert!(text.contains(want), "{want}\n{text}");
        }
    }

    #[test]
    fn cumulative_sums_pad_the_axis_before() {
        let (mut f, p) = Function::new(&[TensorType::new(ElementType::F64, &[2, 5])]);
        let c = f.cumulative_sum(p[0], 1);
        assert_eq!(f.ty(c), &TensorType::new(ElementType::F64, &[2, 5]));
        let text = f.finish(&[c]);
        assert!(
            text.contains(
                "{padding = dense<[[0, 0], [4, 0]]> : tensor<2x2xi64>, \
                 window_dimensions = array<i64: 1, 5>}"
            ),
            "{text}"
        );
    }

    #[test]
    fn dot_general_orders_batch_then_free_axes() {
        let a = TensorType::new(ElementType::F32, &[4, 2, 3]);
        let b = TensorType::new(ElementType::F32, &[4, 3, 5]);
        let (mut f, p) = Function::new(&[a, b]);
        let d = DotDims {
            lhs_batch: vec![0],
            rhs_batch: vec![0],
            lhs_contract: vec![2],
            rhs_contract: vec![1],
        };
        let r = f.dot_general(p[0], p[1], &d);
        assert_eq!(f.ty(r).dims, [4, 2, 5]);
        assert!(f.finish(&[r]).contains(
            "#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], \
             lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>"
        ));
    }
}
