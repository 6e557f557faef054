#!/usr/bin/env python3
"""Writes tensor_ops.json, tensor_tanh.json and tensor_exp.json: expected results for
tests/tensor_ops.rs (the Rust tensor runtime, src/tensor/).

Run from the repository root with the bench venv (numpy, mpmath):

    benches/.venv/bin/python tests/reference/tensor_ops.py

Everything is float64. Results follow the numeric recipes of
docs/ops.md: sums run left to right in explicit Python loops (numpy's
pairwise `sum` would round differently), exp/log/cos come from Python's `math`
(the platform libm, as Rust's f64::exp/ln/cos), in-order matmul is an explicit
loop. Elementwise IEEE operations (+ − × ÷ sqrt), shape ops and gathers use
numpy directly, which is exact. Large matmuls compare against numpy's BLAS
`@` with a 1e-12 relative tolerance ("cmp": "rel"); everything else is exact.
tanh and exp are checked against mpmath at 300 bits, rounded once to float64.
"""
import json
import math
import os

import mpmath
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20240607)
CASES = []
M64 = (1 << 64) - 1


def enc(v):
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def T(a):
    a = np.asarray(a, dtype=np.float64)
    return {"shape": list(a.shape), "data": [enc(v) for v in a.reshape(-1)]}


def rand(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape)


def case(name, op, inputs, expect=None, error=None, cmp="exact", **params):
    c = {"name": name, "op": op, "inputs": [T(x) for x in inputs], "params": params, "cmp": cmp}
    if error is not None:
        c["error"] = error
    else:
        c["expect"] = T(expect)
    CASES.append(c)


# ---------------------------------------------------------------- recipes
def seqsum(xs, start=0.0):
    acc = start
    for v in xs:
        acc += float(v)
    return acc


def vmap(f, a):
    a = np.asarray(a, dtype=np.float64)
    return np.array([f(float(v)) for v in a.reshape(-1)]).reshape(a.shape)


def rows(a):
    return a.reshape(-1, a.shape[-1]) if a.shape[-1] else a.reshape(-1, 0)


def softmax_ref(x):
    out = np.zeros_like(x)
    ro = rows(out)
    for i, r in enumerate(rows(x)):
        if len(r) == 0:
            continue
        m = rowmax(r)
        e = [math.exp(float(v) - m) for v in r]
        s = seqsum(e)
        ro[i] = [v / s for v in e]
    return out


def rowmax(r):
    m = float(r[0])
    for v in r[1:]:
        v = float(v)
        if v > m or math.isnan(v):
            m = v
    return m


def log_softmax_ref(x):
    out = np.zeros_like(x)
    ro = rows(out)
    for i, r in enumerate(rows(x)):
        m = rowmax(r)
        s = seqsum(math.exp(float(v) - m) for v in r)
        ls = math.log(s)
        ro[i] = [(float(v) - m) - ls for v in r]
    return out


def layernorm_ref(x, g, b, eps):
    out = np.zeros_like(x)
    ro = rows(out)
    d = x.shape[-1]
    for i, r in enumerate(rows(x)):
        mean = seqsum(r) / d
        c = [float(v) - mean for v in r]
        var = seqsum(v * v for v in c) / d
        inv = 1.0 / math.sqrt(var + eps)
        ro[i] = [(c[j] * inv) * float(g[j]) + float(b[j]) for j in range(d)]
    return out


def crux_ref(x, t):
    c = x.shape[-1]
    p = softmax_ref(x)
    s = seqsum(float(tv) * math.log(float(pv) + 1e-7) for pv, tv in zip(p.reshape(-1), t.reshape(-1)))
    return np.array(-s / c)


def ce_idx_ref(z, y):
    tot = 0.0
    ys = y.reshape(-1)
    for r, yi in zip(rows(z), ys):
        m = rowmax(r)
        s = seqsum(math.exp(float(v) - m) for v in r)
        tot += (m + math.log(s)) - float(r[int(yi)])
    return np.array(tot / len(ys))


def mm2(a, b):
    m, k = a.shape
    n = b.shape[1]
    c = np.zeros((m, n))
    for i in range(m):
        for j in range(n):
            if k == 0:
                continue
            acc = float(a[i, 0]) * float(b[0, j])
            for p in range(1, k):
                acc += float(a[i, p]) * float(b[p, j])
            c[i, j] = acc
    return c


def matmul_ref(a, b):
    if a.ndim == 1 and b.ndim == 1:
        return mm2(a[None, :], b[:, None])[0, 0]
    if a.ndim == 2 and b.ndim == 1:
        return mm2(a, b[:, None])[:, 0]
    if a.ndim == 1 and b.ndim == 2:
        return mm2(a[None, :], b)[0]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    A = np.broadcast_to(a, batch + a.shape[-2:])
    B = np.broadcast_to(b, batch + b.shape[-2:])
    out = np.zeros(batch + (a.shape[-2], b.shape[-1]))
    for idx in np.ndindex(*batch):
        out[idx] = mm2(A[idx], B[idx])
    return out


def axis_fold(x, axis, keep, f):
    moved = np.moveaxis(x, axis, 0)
    acc = moved[0].copy()
    for k in range(1, moved.shape[0]):
        acc = f(acc, moved[k])
    return np.expand_dims(acc, axis) if keep else acc


GELU_C = math.sqrt(2.0 / math.pi)
BETA = 0.044715


def tanh_exp(t):
    if t >= 0:
        return 1.0 - 2.0 / (math.exp(2.0 * t) + 1.0)
    return 2.0 / (math.exp(-2.0 * t) + 1.0) - 1.0


mpmath.mp.prec = 300


def tanh_cr(x):
    if x == 0.0 or math.isnan(x):
        return x
    return float(mpmath.tanh(mpmath.mpf(x)))


def exp_cr(x):
    """Correctly rounded exp: mpmath at 300 bits, rounded once to float64 (subnormal
    results at their own quantum 2^-1074, which float() of an mpf does not do)."""
    if math.isnan(x):
        return x
    if x == math.inf:
        return x
    if x == -math.inf:
        return 0.0
    e = mpmath.exp(mpmath.mpf(x))
    if e < mpmath.ldexp(1, -1022):
        return math.ldexp(int(mpmath.nint(mpmath.ldexp(e, 1074))), -1074)
    if e > mpmath.mpf(2) ** 1024:
        return math.inf
    return float(e)


def gelu_ref(x, th):
    u = GELU_C * (x + BETA * ((x * x) * x))
    return (0.5 * x) * (1.0 + th(u))


class SplitMix64:
    def __init__(self, seed):
        self.s = seed & M64

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & M64
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next() >> 11) * (1.0 / 9007199254740992.0)

    def normal(self):
        u1 = self.uniform()
        u2 = self.uniform()
        return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(6.283185307179586 * u2)

    def sample(self, p):
        total = seqsum(p)
        u = self.uniform() * total
        c = 0.0
        for i, v in enumerate(p):
            c += float(v)
            if u < c:
                return i
        return max(i for i, v in enumerate(p) if v > 0)


# ---------------------------------------------------------------- cases
def build():
    # construction
    case("full_2x3", "full", [], np.full((2, 3), 1.5), fill=1.5, shape=[2, 3])
    case("full_rank0", "full", [], np.array(-2.0), fill=-2.0, shape=[])
    case("full_empty", "full", [], np.zeros((0, 4)), fill=1.0, shape=[0, 4])
    case("full_limit", "full", [], error="limit", fill=0.0, shape=[100000, 100000])
    case("zeros_3", "zeros", [], np.zeros(3), shape=[3])
    case("from_flat_ok", "from_flat", [np.arange(6.0)], np.arange(6.0).reshape(2, 3), shape=[2, 3])
    case("from_flat_count", "from_flat", [np.arange(5.0)], error="shape", shape=[2, 3])

    # shape ops
    x = rand(2, 3, 4)
    case("reshape", "reshape", [x], x.reshape(4, 6), shape=[4, 6])
    case("reshape_rank0", "reshape", [np.array([7.0])], np.array(7.0), shape=[])
    case("reshape_bad", "reshape", [x], error="shape", shape=[5, 5])
    m = rand(3, 5)
    case("transpose", "transpose", [m], m.T)
    big = rand(37, 70)
    case("transpose_big", "transpose", [big], big.T)
    case("transpose_rank3", "transpose", [x], error="shape")
    for axes in ([0, 1, 2], [2, 0, 1], [1, 0, 2], [0, 2, 1]):
        case(f"permute_{''.join(map(str, axes))}", "permute", [x], np.transpose(x, axes), axes=axes)
    x4 = rand(2, 3, 4, 5)
    case("permute_4d", "permute", [x4], np.transpose(x4, [0, 2, 1, 3]), axes=[0, 2, 1, 3])
    case("permute_bad", "permute", [x], error="shape", axes=[0, 0, 1])
    case("permute_rank0", "permute", [np.array(3.0)], np.array(3.0), axes=[])
    case("slice_rows", "slice_rows", [m], m[1:3], start=1, end=3)
    case("slice_rows_empty", "slice_rows", [m], m[2:2], start=2, end=2)
    case("slice_rows_oob", "slice_rows", [m], error="index", start=2, end=4)
    case("slice_rows_rank0", "slice_rows", [np.array(1.0)], error="shape", start=0, end=0)
    case("narrow_axis1", "narrow", [x], x[:, 1:3, :], axis=1, start=1, end=3)
    case("narrow_axis2", "narrow", [x], x[:, :, 3:4], axis=2, start=3, end=4)
    case("narrow_bad_axis", "narrow", [x], error="shape", axis=3, start=0, end=1)
    a, b = rand(2, 3), rand(2, 4)
    case("concat_axis1", "concat", [a, b], np.concatenate([a, b], 1), axis=1)
    c3 = rand(1, 3)
    case("concat_axis0", "concat", [a, c3, a], np.concatenate([a, c3, a], 0), axis=0)
    case("concat_mismatch", "concat", [a, b], error="shape", axis=0)
    case("concat_3d", "concat", [x, x[:, :, :2]], np.concatenate([x, x[:, :, :2]], 2), axis=2)

    # elementwise binary with broadcasting
    pats = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 4), (3, 1)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 1)),
            ((2, 1, 4), (1, 3, 1)), ((), (2, 3)), ((2, 3), ()), ((5,), (5,)), ((), ()), ((0, 3), (3,)),
            ((1, 1, 1), (4,)), ((2, 3, 4, 5), (3, 1, 5))]
    for sa, sb in pats:
        a, b = rand(*sa), rand(*sb, lo=0.5, hi=2.0)
        tag = "x".join(map(str, sa)) + "_" + "x".join(map(str, sb))
        case(f"add_{tag}", "add", [a, b], a + b)
        case(f"sub_{tag}", "sub", [a, b], a - b)
        case(f"mul_{tag}", "mul", [a, b], a * b)
        case(f"div_{tag}", "div", [a, b], a / b)
    case("add_nobroadcast", "add", [rand(3, 4), rand(3, 5)], error="shape")
    case("div_zero", "div", [rand(2, 2), np.array([1.0, 0.0])], error="domain")
    case("div_inf", "div", [rand(2, 2), np.array([1.0, np.inf])], error="domain")
    case("div_nan", "div", [rand(2), np.array(np.nan)], error="domain")
    case("add_nan_propagates", "add", [np.array([np.nan, 1.0, np.inf]), np.ones(3)], np.array([np.nan, 2.0, np.inf]))
    xb, bb = rand(4, 6), rand(6)
    case("add_bias", "add_bias", [xb, bb], xb + bb)
    b4 = rand(4)
    case("add_bias_3d", "add_bias", [x, b4], x + b4)
    case("add_bias_bad", "add_bias", [xb, rand(5)], error="shape")

    # unary
    u = np.concatenate([rand(40, lo=-5, hi=5), [0.0, -0.0, 1e-300, -3.0, 700.0, -745.0]])
    case("neg", "neg", [u], -u)
    case("scale", "scale", [u], u * 0.37, factor=0.37)
    case("reciprocal", "reciprocal", [u[:40]], 1.0 / u[:40])
    case("reciprocal_zero", "reciprocal", [u], error="domain")
    case("exp", "exp", [u], vmap(math.exp, u))
    case("exp_rank0", "exp", [np.array(1.0)], np.array(math.exp(1.0)))
    pos = rand(50, lo=1e-3, hi=100.0)
    case("log", "log", [pos], vmap(math.log, pos))
    case("log_zero", "log", [np.array([1.0, 0.0])], error="domain")
    case("log_negative", "log", [np.array([-1.0])], error="domain")
    case("log_nan", "log", [np.array([np.nan])], error="domain")
    case("sqrt", "sqrt", [np.concatenate([pos, [0.0, -0.0, 2.0]])], np.sqrt(np.concatenate([pos, [0.0, -0.0, 2.0]])))
    case("sqrt_negative", "sqrt", [np.array([4.0, -1e-300])], error="domain")
    case("relu", "relu", [u], np.where(u > 0, u, 0.0))
    g = rand(3, 30, lo=-6, hi=6)
    case("tanh", "tanh", [g], vmap(tanh_cr, g))
    case("tanh_exp_identity", "tanh_exp_identity", [g], vmap(tanh_exp, g))
    case("gelu", "gelu", [g], vmap(lambda v: gelu_ref(v, tanh_cr), g))
    case("gelu_exp_identity", "gelu_exp_identity", [g], vmap(lambda v: gelu_ref(v, tanh_exp), g))

    # reductions
    for shape in [(), (7,), (3, 4), (2, 3, 4), (0,)]:
        a = rand(*shape)
        tag = "x".join(map(str, shape)) or "rank0"
        case(f"sum_{tag}", "sum", [a], np.array(seqsum(a.reshape(-1))))
        if a.size:
            case(f"mean_{tag}", "mean", [a], np.array(seqsum(a.reshape(-1)) / a.size))
    case("mean_empty", "mean", [np.zeros((2, 0))], error="shape")
    x = rand(3, 4, 5)
    for axis in range(3):
        for keep in (False, True):
            case(f"sum_axis{axis}_{keep}", "sum_axis", [x], axis_fold(x, axis, keep, lambda p, q: p + q), axis=axis, keep=keep)
            case(f"mean_axis{axis}_{keep}", "mean_axis", [x], axis_fold(x, axis, keep, lambda p, q: p + q) / x.shape[axis], axis=axis, keep=keep)
            case(f"max_axis{axis}_{keep}", "max_axis", [x], x.max(axis=axis, keepdims=keep), axis=axis, keep=keep)
    case("sum_axis_bad", "sum_axis", [x], error="shape", axis=3, keep=False)
    case("sum_axis_empty", "sum_axis", [np.zeros((2, 0))], np.zeros(2), axis=1, keep=False)
    case("max_axis_empty", "max_axis", [np.zeros((2, 0))], error="shape", axis=1, keep=False)
    case("max_axis_nan", "max_axis", [np.array([[1.0, np.nan, 3.0], [2.0, 5.0, 4.0]])], np.array([np.nan, 5.0]), axis=1, keep=False)
    ties = np.array([[1.0, 3.0, 3.0, 0.0], [-1.0, -1.0, -2.0, -5.0], [0.0, np.nan, 9.0, 9.0]])
    case("argmax_ties_nan", "argmax", [ties], np.array([1.0, 0.0, 1.0]))
    case("argmax_3d", "argmax", [x], np.argmax(x, axis=-1).astype(float))
    case("argmax_rank1", "argmax", [x[0, 0]], np.array(float(np.argmax(x[0, 0]))))
    case("argmax_rank0", "argmax", [np.array(1.0)], error="shape")

    # matmul
    mm = [((5,), (5,)), ((0,), (0,)), ((3, 5), (5,)), ((5,), (5, 4)), ((3, 5), (5, 4)), ((1, 1), (1, 1)),
          ((3, 0), (0, 4)), ((2, 3, 5), (2, 5, 4)), ((2, 3, 5), (5, 4)), ((3, 5), (2, 5, 4)),
          ((2, 2, 3, 5), (2, 2, 5, 3)), ((2, 1, 3, 5), (1, 3, 5, 2)), ((2, 2, 4, 3), (3, 4)),
          ((16, 40), (40, 24))]
    for sa, sb in mm:
        a, b = rand(*sa), rand(*sb)
        tag = "x".join(map(str, sa)) + "_" + "x".join(map(str, sb))
        case(f"matmul_{tag}", "matmul", [a, b], matmul_ref(a, b))
        case(f"matmul_exact_{tag}", "matmul_exact", [a, b], matmul_ref(a, b))
    a, b = rand(80, 96), rand(96, 72)
    case("matmul_fast_path", "matmul", [a, b], a @ b, cmp="rel")
    a, b = rand(3, 5), rand(5, 4)
    case("matmul_fast_forced", "matmul_fast", [a, b], a @ b, cmp="rel")
    a, b = rand(2, 40, 50), rand(2, 50, 40)
    case("matmul_batched_fast", "matmul_fast", [a, b], a @ b, cmp="rel")
    case("matmul_exact_large", "matmul_exact", [a[0], b[0]], mm2(a[0], b[0]))
    case("matmul_mismatch", "matmul", [rand(3, 4), rand(5, 2)], error="shape")
    case("matmul_dot_mismatch", "matmul", [rand(3), rand(4)], error="shape")
    case("matmul_rank0", "matmul", [np.array(2.0), rand(2)], error="shape")
    case("matmul_rank5", "matmul", [rand(1, 1, 1, 2, 2), rand(2, 2)], error="shape")
    case("matmul_batch_mismatch", "matmul", [rand(2, 3, 4), rand(3, 4, 2)], error="shape")

    # nn
    for shape in [(5,), (3, 6), (2, 3, 4)]:
        a = rand(*shape, lo=-8, hi=8)
        tag = "x".join(map(str, shape))
        case(f"softmax_{tag}", "softmax", [a], softmax_ref(a))
        case(f"log_softmax_{tag}", "log_softmax", [a], log_softmax_ref(a))
    case("softmax_extreme", "softmax", [np.array([[1000.0, -1000.0, 999.0], [-np.inf, 0.0, 1.0]])],
         softmax_ref(np.array([[1000.0, -1000.0, 999.0], [-np.inf, 0.0, 1.0]])))
    case("softmax_empty_axis", "softmax", [np.zeros((2, 0))], np.zeros((2, 0)))
    case("softmax_rank0", "softmax", [np.array(1.0)], error="shape")
    for shape, eps in [((2, 8), 1e-5), ((3, 4, 6), 9.999999747378752e-06), ((5,), 1e-5)]:
        a, gm, bt = rand(*shape), rand(shape[-1]), rand(shape[-1])
        case(f"layernorm_{'x'.join(map(str, shape))}", "layernorm", [a, gm, bt], layernorm_ref(a, gm, bt, eps),
             axis=len(shape) - 1, eps=eps)
    case("layernorm_bad_axis", "layernorm", [rand(2, 8), rand(8), rand(8)], error="shape", axis=0, eps=1e-5)
    case("layernorm_bad_gamma", "layernorm", [rand(2, 8), rand(7), rand(8)], error="shape", axis=1, eps=1e-5)
    lg = rand(4, 6, lo=-3, hi=3)
    tg = rng.uniform(0, 1, size=(4, 6))
    case("crux_entropia", "cross_entropy", [lg, tg], crux_ref(lg, tg))
    oh = np.eye(6)[[1, 0, 5, 2]]
    case("crux_entropia_onehot", "cross_entropy", [lg, oh], crux_ref(lg, oh))
    l3, t3 = rand(2, 3, 4), rng.uniform(0, 1, (2, 3, 4))
    case("crux_entropia_3d", "cross_entropy", [l3, t3], crux_ref(l3, t3))
    # any finite targets (the definition is linear in them); NaN and ±∞ are errors
    wide = tg * 2 - 1.5
    case("crux_entropia_wide_targets", "cross_entropy", [lg, wide], crux_ref(lg, wide))
    t_inf, t_nan = tg * 2, tg * 2
    t_inf.reshape(-1)[3] = np.inf
    t_nan.reshape(-1)[5] = np.nan
    case("crux_entropia_target_inf", "cross_entropy", [lg, t_inf], error="domain")
    case("crux_entropia_target_nan", "cross_entropy", [lg, t_nan], error="domain")
    case("crux_entropia_shape", "cross_entropy", [lg, tg[:3]], error="shape")
    z, y = rand(5, 7, lo=-4, hi=4), np.array([0.0, 6.0, 3.0, 3.0, 1.0])
    case("ce_indices_2d", "cross_entropy_indices", [z, y], ce_idx_ref(z, y))
    z3, y3 = rand(2, 3, 7), np.array([[1.0, 2.0, 0.0], [6.0, 5.0, 4.0]])
    case("ce_indices_3d", "cross_entropy_indices", [z3, y3], ce_idx_ref(z3, y3))
    case("ce_indices_rank1", "cross_entropy_indices", [z[0], np.array(2.0)], ce_idx_ref(z[:1], np.array([2.0])))
    case("ce_indices_oob", "cross_entropy_indices", [z, np.array([0.0, 7.0, 0.0, 0.0, 0.0])], error="index")
    case("ce_indices_fraction", "cross_entropy_indices", [z, np.array([0.0, 1.5, 0.0, 0.0, 0.0])], error="index")
    case("ce_indices_negative", "cross_entropy_indices", [z, np.array([0.0, -1.0, 0.0, 0.0, 0.0])], error="index")
    case("ce_indices_shape", "cross_entropy_indices", [z, np.zeros(4)], error="shape")
    E = rand(6, 4)
    ids = np.array([[0.0, 5.0, 2.0], [2.0, 2.0, 1.0]])
    case("embedding_2d_ids", "embedding", [E, ids], E[ids.astype(int)])
    case("embedding_rank0_id", "embedding", [E, np.array(3.0)], E[3])
    case("embedding_oob", "embedding", [E, np.array([6.0])], error="index")
    case("embedding_nonint", "embedding", [E, np.array([0.5])], error="index")
    case("embedding_nan", "embedding", [E, np.array([np.nan])], error="index")
    case("embedding_table_rank", "embedding", [rand(6), ids], error="shape")
    s = rand(2, 2, 4, 4)
    mask = np.triu(np.ones((4, 4), dtype=bool), 1)
    case("causal_mask_4d", "causal_mask", [s], np.where(mask, -1e9, s), value=-1e9)
    r = rand(3, 5)
    case("causal_mask_rect", "causal_mask", [r], np.where(np.triu(np.ones((3, 5), dtype=bool), 1), -np.inf, r), value="-inf")
    case("causal_mask_rank1", "causal_mask", [rand(3)], error="shape", value=0.0)

    # VJP helpers
    gg = rand(2, 3, 4)
    for shp in [(4,), (3, 1), (1, 4), (2, 1, 4), (), (1, 1, 1), (2, 3, 4)]:
        cur = gg
        while cur.ndim > len(shp):
            cur = axis_fold(cur, 0, False, lambda p, q: p + q)
        for ax, sz in enumerate(shp):
            if sz == 1 and cur.shape[ax] != 1:
                cur = axis_fold(cur, ax, True, lambda p, q: p + q)
        tag = "x".join(map(str, shp)) or "rank0"
        case(f"sum_to_shape_{tag}", "sum_to_shape", [gg], cur, shape=list(shp))
    case("sum_to_shape_bad", "sum_to_shape", [gg], error="shape", shape=[3])
    ids = np.array([[1.0, 4.0, 1.0], [0.0, 1.0, 4.0]])
    ge = rand(2, 3, 5)
    want = np.zeros((6, 5))
    for i, row in zip(ids.reshape(-1).astype(int), ge.reshape(-1, 5)):
        want[i] = want[i] + row
    case("embedding_backward", "embedding_backward", [ids, ge], want, vocab=6)
    case("embedding_backward_oob", "embedding_backward", [ids, ge], error="index", vocab=4)
    case("embedding_backward_shape", "embedding_backward", [ids, ge[:1]], error="shape", vocab=6)
    gp = rand(2, 2, 3)
    want = np.zeros((2, 5, 3))
    want[:, 1:3, :] = gp
    case("pad_axis", "pad_axis", [gp], want, axis=1, start=1, full=5)
    case("pad_axis_oob", "pad_axis", [gp], error="index", axis=1, start=4, full=5)

    # rng
    g = SplitMix64(42)
    case("rng_u64", "rng_u64", [], np.array([float(g.next() >> 11) for _ in range(8)]), seed=42)
    g = SplitMix64(7)
    case("rng_uniform", "rng_uniform", [], np.array([g.uniform() for _ in range(12)]).reshape(3, 4), seed=7, shape=[3, 4])
    g = SplitMix64(9)
    case("rng_normal", "rng_normal", [], np.array([0.5 + 2.0 * g.normal() for _ in range(10)]), seed=9, shape=[10], mean=0.5, std=2.0)
    g = SplitMix64(11)
    P = rng.uniform(0, 1, size=(6, 5))
    P[2] = [0, 0, 1, 0, 0]
    case("rng_multinomial", "rng_multinomial", [P], np.array([float(g.sample(p)) for p in P]), seed=11)
    g = SplitMix64(5)
    case("rng_below", "rng_below", [], np.array([float(g.next() % 65) for _ in range(10)]), seed=5, n=65)
    case("rng_multinomial_negative", "rng_multinomial", [np.array([0.5, -0.1])], error="domain", seed=1)
    case("rng_multinomial_zero", "rng_multinomial", [np.array([0.0, 0.0])], error="domain", seed=1)


def tanh_points():
    pts = set()
    r = np.random.default_rng(99)
    pts.update(r.uniform(-1, 1, 1500))
    pts.update(r.uniform(-6, 6, 1500))
    pts.update(r.uniform(-20, 20, 800))
    pts.update(np.exp(r.uniform(math.log(1e-300), math.log(1e-3), 600)) * r.choice([-1, 1], 600))
    pts.update(np.exp(r.uniform(math.log(1e-9), math.log(1e-7), 300)))  # around the 2^-27 cut
    pts.update(r.uniform(18.5, 19.5, 200))  # around the ±1 cut
    pts.update(r.uniform(0.3, 0.7, 300))  # around the 2a = 1 switch
    pts.update([math.ldexp(1, -k) for k in range(0, 60)])
    pts.update([k / 8 for k in range(-200, 201)])
    pts.update([5e-324, 2.2250738585072014e-308, 7.450580596923828e-9, 7.45058059692383e-9,
                19.099999999999998, 19.1, 0.49999999999999994, 0.5, 709.0, 1e300])
    xs = sorted(float(p) for p in pts)
    return xs


def exp_points():
    pts = set()
    r = np.random.default_rng(77)
    pts.update(r.uniform(-1, 1, 1500))
    pts.update(r.uniform(-40, 0, 1500))  # softmax arguments
    pts.update(r.uniform(-750, 712, 1500))
    pts.update(r.uniform(-746, -706, 300))  # subnormal results and the underflow edge
    pts.update(r.uniform(708, 710, 200))  # the overflow edge
    pts.update(np.exp(r.uniform(math.log(1e-300), math.log(1e-3), 500)) * r.choice([-1, 1], 500))
    pts.update([k / 16 for k in range(-400, 401)])
    pts.update([k * math.log(2) for k in range(-1075, 1025, 7)])
    pts.update([0.0, 5e-324, 709.782712893384, 709.7827128933841, -745.1332191019411,
                -745.1332191019412, -708.3964185322641, -708.3964185322642, 1e300, -1e300,
                -705.47916666627])  # glibc 2.3x rounds this one the wrong way
    return sorted(float(p) for p in pts)


def main():
    build()
    path = os.path.join(HERE, "tensor_ops.json")
    with open(path, "w") as f:
        json.dump({"cases": CASES}, f, separators=(",", ":"))
    xs = tanh_points()
    ys = [tanh_cr(x) for x in xs]
    with open(os.path.join(HERE, "tensor_tanh.json"), "w") as f:
        json.dump({"x": xs, "tanh": ys}, f, separators=(",", ":"))
    libm_diff = sum(1 for x, y in zip(xs, ys) if math.tanh(x) != y)
    es = exp_points()
    ey = [exp_cr(x) for x in es]
    with open(os.path.join(HERE, "tensor_exp.json"), "w") as f:
        json.dump({"x": es, "exp": [enc(y) for y in ey]}, f, separators=(",", ":"))
    exp_diff = sum(1 for x, y in zip(es, ey) if x < 709 and math.exp(x) != y)
    print(f"{len(es)} exp points; math.exp differs from the correctly rounded value on {exp_diff}")
    print(f"{len(CASES)} cases -> {path} ({os.path.getsize(path)} bytes)")
    print(f"{len(xs)} tanh points; math.tanh differs from the correctly rounded value on {libm_diff}")


if __name__ == "__main__":
    main()
