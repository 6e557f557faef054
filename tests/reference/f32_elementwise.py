#!/usr/bin/env python3
"""Reference results for the native f32 element-wise ops, reductions, shape copies,
VJP helpers, seeded constructors and AdamW (issue 21), computed with numpy float32 and
exact arithmetic, independently of faber. Writes tests/reference/f32_elementwise.json,
read by tests/f32_elementwise.rs.

Regenerate (numpy ≥ 2, whose float32 arithmetic is IEEE single precision; a Python
float operand of a float32 array is rounded to float32 first, NEP 50):

    benches/.venv-peers/bin/python tests/reference/f32_elementwise.py

Every tensor is {"shape": [...], "bits": [u32, ...]}: float32 bit patterns, so that
values, signed zeros and NaN compare exactly. Each case:

    {"name", "op", "inputs": [tensor...], "params": {...}, "cmp": ..., "expect": ...}

`cmp` says how the Rust test compares (each bound is the one the kernel's module docs
state):
* "exact": bit for bit with `expect` (a tensor). Used where the result is exact (copies,
  maxima, masks, indices, rounding of a literal), or is one IEEE single operation on
  f32 operands (numpy float32 computes it correctly rounded), or is defined as an f64
  expression of the f32 inputs rounded once and numpy float64 evaluates the same
  expression (the number operands, the mean's VJP, AdamW) — and then `np32`, numpy's
  float32 result (the number rounded to f32 first, as PyTorch does), is also given
  with its bound (`ulps` and `abs`: |got − np32| ≤ ulps·ulp(np32) + abs).
* "ulp1": within one f32 ulp of `expect` (ln: the f64 ln rounded once is faithful).
* "sum": `expect` is the exact sum (math.fsum, then correctly rounded to f64; for a
  mean, divided by the count) per element with `abs` = Σ|terms| and `n` terms: the f64
  accumulation in any order is within (n − 1)·2⁻⁵³·Σ|t| of it, so an f32 result is
  within ½ ulp + n·2⁻⁵³·Σ|t| and a number result (`summa`, `media`) within
  n·2⁻⁵³·Σ|t| + 2⁻⁵³·|expect|.
"""
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run_alea import SplitMix64  # noqa: E402  (the one reference generator)

F32 = np.float32
rng = np.random.default_rng(20260521)
CASES = []


def bits(a):
    a = np.ascontiguousarray(np.asarray(a, dtype=F32))
    return [int(b) for b in a.reshape(-1).view(np.uint32)]


def T(a):
    a = np.asarray(a, dtype=F32)
    return {"shape": list(a.shape), "bits": bits(a)}


def rand(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(F32)


def case(name, op, inputs, expect, cmp="exact", **params):
    c = {"name": name, "op": op, "inputs": [T(x) for x in inputs], "params": params, "cmp": cmp}
    c["expect"] = expect if cmp == "sum" else T(expect)
    CASES.append(c)
    return c


def w(a):
    """float32 → float64, exactly."""
    return np.asarray(a, dtype=F32).astype(np.float64)


def exact_sums(terms):
    """(fsum, Σ|t|) of float64 terms."""
    return math.fsum(terms), math.fsum(abs(t) for t in terms)


# ---- binary ops of two f32 tensors (correctly rounded single operations) ----
BIN = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}
for ash, bsh in [([3, 4], [3, 4]), ([3, 4], [4]), ([3, 1], [1, 4]), ([2, 3, 4], [3, 1]),
                 ([1], [2, 5]), ([2, 1, 4], [1]), ([2, 3, 1, 4], [3, 5, 1])]:
    a = rand(*ash)
    b = rand(*bsh, lo=0.25, hi=3.0) * np.where(rand(*bsh) < 0, -1, 1).astype(F32)
    for op, f in BIN.items():
        case(f"{op} {ash} {bsh}", op, [a, b], f(a, b))
# f32 rounding shows: 1e8 + 1 is 1e8 in f32 (the spacing there is 8), so − 1e8 gives 0.
case("1e8 + 1", "add", [[1e8], [1.0]], np.array([1e8], F32) + np.array([1.0], F32))
case("(1e8 + 1) - 1e8", "sub", [[F32(1e8) + F32(1.0)], [1e8]], np.array([0.0], F32))

# ---- a tensor and a number: the f64 operation on the widened element, rounded once ----
SCALAR = {"add_scalar": (np.add, "add"), "sub_scalar": (np.subtract, "sub"),
          "scale": (np.multiply, "mul"), "div_scalar": (np.divide, "div")}
x = rand(4, 9)
x[0, 0], x[0, 1] = 0.0, -0.0
for s in [0.5, -1e9, 3.0, 0.1, 1e-6, -0.3333333333333333]:
    for op, (f, kind) in SCALAR.items():
        want = f(w(x), s).astype(F32)
        np32 = f(x, F32(s))
        exact_s = float(F32(s)) == s
        if exact_s:
            # One IEEE single operation: numpy float32 gives the same bits.
            assert (bits(want) == bits(np32)), (op, s)
        # Bounds against numpy float32 (the number rounded to f32 first, |Δs| ≤ ½ulp(s)):
        # × ÷ differ by < 2 ulps; + − by ≤ ulp + ½ ulp(s) (the absolute error of s).
        ulps, ab = (0, 0.0) if exact_s else ((2, 0.0) if kind in ("mul", "div") else
                                            (1, float(np.spacing(abs(F32(s)))) / 2))
        c = case(f"{op} {s!r}", op, [x], want, s=s)
        c["np32"] = T(np32)
        c["ulps"], c["abs"] = ulps, ab

# ---- the bias add, the unary maps ----
xb, bb = rand(4, 5), rand(5)
case("add_bias [4,5] [5]", "add_bias", [xb, bb], xb + bb)
u = np.concatenate([rand(40), np.array([0.0, -0.0, 1e-45, -3.5, np.inf, -np.inf, np.nan, 7.0], F32)])
case("neg", "neg", [u], -u)
case("relu", "relu", [u], np.where((u > 0) | np.isnan(u), u, F32(0.0)))
case("positive", "positive", [u], np.where(u > 0, F32(1.0), F32(0.0)))
pos = np.concatenate([rand(60, lo=1e-3, hi=50.0), np.array([1e-45, 1e30, 2.0, 0.5, 1.0], F32)])
sq = np.concatenate([pos, np.array([0.0, -0.0, np.inf], F32)])
case("sqrt", "sqrt", [sq], np.sqrt(sq))
with np.errstate(over="ignore"):  # 1/1e-45 overflows to +inf, as in faber
    case("reciprocal", "reciprocal", [pos], F32(1.0) / pos)
case("log", "log", [pos], np.log(w(pos)).astype(F32), cmp="ulp1")

# ---- reductions to a number: f64 sums of the f32 elements ----
for name, v in [("sum [37,11]", rand(37, 11, lo=-3, hi=5)),
                ("sum cancel", np.array([1e8, 1.0, -1e8], F32)),
                ("sum 2001", rand(2001, lo=-1e3, hi=1e3))]:
    s, ab = exact_sums(w(v).reshape(-1).tolist())
    case(name, "sum_value", [v], {"value": s, "abs": ab, "n": v.size}, cmp="sum")
    case(name.replace("sum", "mean"), "mean_value", [v],
         {"value": s / v.size, "abs": ab / v.size, "n": v.size}, cmp="sum")

# ---- axis sums and means: the f64 sum in index order, rounded once ----
xs = rand(3, 20, 5, lo=-4, hi=6)
for axis in range(3):
    for keep in (False, True):
        for op in ("sum_axis", "mean_axis"):
            moved = np.moveaxis(w(xs), axis, -1)
            vals, abss = [], []
            for row in moved.reshape(-1, xs.shape[axis]):
                s, ab = exact_sums(row.tolist())
                d = 1 if op == "sum_axis" else xs.shape[axis]
                vals.append(s / d)
                abss.append(ab / d)
            shape = [d for i, d in enumerate(xs.shape) if i != axis]
            if keep:
                shape.insert(axis, 1)
            case(f"{op} {axis} {keep}", op, [xs],
                 {"shape": shape, "value": vals, "abs": abss, "n": xs.shape[axis]},
                 cmp="sum", axis=axis, keep=keep)

# ---- maxima and argmax (exact; NaN propagates, the first maximum wins) ----
xm = rand(4, 6, 5)
xm[1, 2, 3] = np.nan
for axis in range(3):
    case(f"max_axis {axis}", "max_axis", [xm], np.max(xm, axis=axis), axis=axis, keep=False)
xa = rand(6, 9)
xa[2, 4] = np.nan
xa[3, 1] = xa[3, 7] = 5.0
case("argmax", "argmax", [xa], np.argmax(xa, axis=-1).astype(F32))

# ---- shape copies (exact) ----
x2, x3, x4 = rand(5, 7), rand(2, 3, 4), rand(2, 3, 4, 5)
case("transpose", "transpose", [x2], x2.T)
case("transpose_last", "transpose_last", [x3], np.swapaxes(x3, -1, -2))
for axes in ([0, 2, 1, 3], [3, 1, 0, 2], [1, 0, 2, 3]):
    case(f"permute {axes}", "permute", [x4], np.transpose(x4, axes), axes=axes)
    case(f"retro_permute {axes}", "retro_permute", [np.transpose(x4, axes)], x4, axes=axes)
case("slice_rows", "slice_rows", [x3], x3[1:2], start=1, end=2)
case("narrow", "narrow", [x4], x4[:, :, 1:3, :], axis=2, start=1, end=3)
ya, yb = rand(2, 3, 4), rand(2, 5, 4)
case("concat 1", "concat", [ya, yb], np.concatenate([ya, yb], axis=1), axis=1)
case("concat 0", "concat", [x3, x3], np.concatenate([x3, x3], axis=0), axis=0)
xc = rand(2, 4, 5)
for v in (-1e9, 0.1):
    mask = np.triu(np.ones((4, 5), bool), k=1)
    case(f"causal_mask {v}", "causal_mask", [xc], np.where(mask, F32(v), xc), value=v)

# ---- VJP helpers ----
g = rand(2, 2, 3)
pad = np.zeros((2, 5, 3), F32)
pad[:, 1:3, :] = g
case("narrow_backward", "narrow_backward", [g, np.zeros((2, 5, 3), F32)], pad, axis=1, start=1)
gc = rand(2, 7)
case("concat_part x", "concat_part", [gc, rand(2, 3), rand(2, 4)], gc[:, :3], axis=1, first=True)
case("concat_part y", "concat_part", [gc, rand(2, 3), rand(2, 4)], gc[:, 3:], axis=1, first=False)
gs = rand(3, 4, 5, lo=-5, hi=5)
for shape in ([5], [4, 1], [1, 5], [3, 1, 5], [4, 5], []):
    full = list(gs.shape)
    lead = len(full) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape) if d == 1 and full[lead + i] != 1)
    # Exact sum per output element: the terms that broadcast from it.
    kept = [i for i in range(len(full)) if i not in axes]
    moved = np.transpose(w(gs), kept + list(axes)).reshape(int(np.prod([full[i] for i in kept], dtype=int)), -1)
    vals, abss = zip(*(exact_sums(r.tolist()) for r in moved))
    case(f"sum_to_shape {shape}", "sum_to_shape", [gs],
         {"shape": shape, "value": list(vals), "abs": list(abss), "n": moved.shape[1]},
         cmp="sum", shape=shape)
gd = rand(2, 3)
like = np.zeros((2, 4, 3), F32)
case("sum_axis_backward sum", "sum_axis_backward", [gd, like],
     np.broadcast_to(gd[:, None, :], (2, 4, 3)), axis=1, mean=False)
case("sum_axis_backward mean", "sum_axis_backward", [gd, like],
     np.broadcast_to((w(gd) * (1.0 / 4))[:, None, :], (2, 4, 3)).astype(F32), axis=1, mean=True)
xmx = rand(2, 4, 3)
xmx[1, 0, 2] = xmx[1, 3, 2] = 9.0  # a tie: the first maximum takes the gradient
first = np.argmax(xmx, axis=1)
back = np.zeros_like(xmx)
for o in range(2):
    for i in range(3):
        back[o, first[o, i], i] = gd[o, i]
case("max_axis_backward", "max_axis_backward", [gd, xmx], back, axis=1)

# ---- gradient trees: zeros of a tensor's shape; a tensor's elements as numbers and back ----
case("zeros_like", "zeros_like", [rand(3, 4)], np.zeros((3, 4), F32))
case("planata round trip", "planata", [u.reshape(6, 8)], u.reshape(6, 8))

# ---- constructors (the f64 value rounded once) and seeded draws ----
case("full_of 0.1", "full_of", [], np.full((2, 3), 0.1, np.float64).astype(F32), fill=0.1, shape=[2, 3])
lit = [0.1, 1.0 / 3.0, 1e30, -0.0, 16777217.0, 2.5e-46]
case("from_flat_of", "from_flat_of", [], np.array(lit, np.float64).astype(F32), data=lit, shape=[6])
r = SplitMix64(42)
below_one = np.nextafter(F32(1.0), F32(0.0))
case("uniform_tensor_of", "uniform_tensor_of", [],
     np.minimum(np.array([r.uniform() for _ in range(1000)]).astype(F32), below_one), seed=42, shape=[1000])
r = SplitMix64(7)
case("normal_tensor_of", "normal_tensor_of", [],
     np.array([0.5 + 0.02 * r.normal() for _ in range(500)]).astype(F32),
     seed=7, shape=[500], mean=0.5, std=0.02)
probs = rand(4, 6, lo=0.0, hi=1.0)
probs[1, :3] = 0.0
r = SplitMix64(9)
case("multinomial", "multinomial", [probs],
     np.array([r.sample(w(row).tolist()) for row in probs], F32), seed=9)

# ---- AdamW: the f64 step of the widened f32 p, g, m, v rounded once; numpy float32 ----
n = 300
p, gr, m = rand(n, lo=-2, hi=2), rand(n, lo=-0.1, hi=0.1), rand(n, lo=-0.01, hi=0.01)
v = rand(n, lo=0.0, hi=1e-4)
b1, b2, lr, wd, eps, t = 0.9, 0.999, 3e-3, 0.1, 1e-8, 7
coef = [b1, 1.0 - b1, b2, 1.0 - b2, 1.0 / math.sqrt(1.0 - b2 ** t), eps, 1.0 - lr * wd, lr / (1.0 - b1 ** t)]
P, G, M, V = w(p), w(gr), w(m), w(v)
m1 = M * coef[0] + G * coef[1]
v1 = V * coef[2] + (G * G) * coef[3]
d = np.sqrt(v1) * coef[4] + coef[5]
p1 = P * coef[6] - (m1 / d) * coef[7]
# numpy float32 replay: every coefficient and every operation in f32.
c32 = [F32(c) for c in coef]
m32 = m * c32[0] + gr * c32[1]
v32 = v * c32[2] + (gr * gr) * c32[3]
d32 = np.sqrt(v32) * c32[4] + c32[5]
p32 = p * c32[6] - (m32 / d32) * c32[7]
c = case("adamw", "adamw", [p, gr, m, v], p1.astype(F32), coef=coef)
c["expect_m"], c["expect_v"] = T(m1.astype(F32)), T(v1.astype(F32))
c["np32"], c["np32_m"], c["np32_v"] = T(p32), T(m32), T(v32)
with open(os.path.join(HERE, "f32_elementwise.json"), "w") as f:
    json.dump({"cases": CASES}, f, separators=(",", ":"))
print(f"{len(CASES)} cases")
