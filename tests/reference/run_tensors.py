#!/usr/bin/env python3
"""Independent derivation of tests/run/2NN_tensor_*.out (the tensor programs).

Each function below mirrors one .fab program in Python. Tensors are numpy float64 arrays
(wrapped in `T` so that they display as tensors); the numeric recipes are those of
docs/ops.md, written out here without looking at faber:

* IEEE + − × ÷ and sqrt, shape operations and gathers come from numpy (exact);
* every sum runs left to right in an explicit loop (`seqsum`, `sum_axis`);
* exp/log/pow come from Python's `math` (the platform libm, like Rust's f64 methods);
* `tanh` (and so `gelu`) is correctly rounded: mpmath at 300 bits, rounded once;
  `tanh_per_exp` / `gelu_per_exp` follow the exp identity with `math.exp`;
* matmul is the in-order recipe `acc = a[i,0]·b[0,j]; acc += a[i,p]·b[p,j]` (no FMA);
* softmax, log_softmax, layernorm and both cross-entropies follow their per-row recipes.

Display follows docs/language.md § 8 (tests/reference/run/faber_ref.py: `fdisp`): a tensor of
any rank prints its elements flat, row-major, like a list; rank 0 prints `[x]`.

Run with the bench venv (numpy, mpmath):

    benches/.venv/bin/python tests/reference/run_tensors.py           # check every .out
    benches/.venv/bin/python tests/reference/run_tensors.py --write   # (re)write them
    benches/.venv/bin/python tests/reference/run_tensors.py --show N  # print one program's output

It also writes/checks tests/run/fail/1NN_tensor_*.{fab,err} (FAIL_CASES: the program, the
expected code and an anchor from which the `line:col` is computed).
"""
import math
import os
import sys

import mpmath
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "run"))
from faber_ref import fdisp  # noqa: E402  (§11 number format: {:.1} or shortest, no exponent)

mpmath.mp.prec = 300
INF = math.inf
NAN = math.nan


# ------------------------------------------------------------------ values and display
class T:
    """A tensor value: a float64 numpy array (value semantics: ops return new arrays)."""

    def __init__(self, a):
        self.a = np.array(a, dtype=np.float64)

    @property
    def shape(self):
        return list(self.a.shape)

    def flat(self):
        return [float(v) for v in self.a.reshape(-1)]

    def copy(self):
        return T(self.a.copy())


def disp(v):
    if v is None:
        return "nihil"
    if v is True:
        return "verum"
    if v is False:
        return "falsum"
    if isinstance(v, T):
        return "[" + ", ".join(fdisp(x) for x in v.flat()) + "]"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return fdisp(v)
    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(disp(x) for x in v) + "]"
    raise TypeError(repr(v))


class Out:
    def __init__(self):
        self.lines = []

    def nota(self, *vals):
        self.lines.append(", ".join(disp(v) for v in vals))

    def text(self):
        return "".join(l + "\n" for l in self.lines)


def tpl(text, *args):
    """Template `"… § …"(args)`: holes replaced left to right by display forms."""
    parts = text.split("§")
    assert len(parts) == len(args) + 1
    s = parts[0]
    for a, p in zip(args, parts[1:]):
        s += disp(a) + p
    return s


# ------------------------------------------------------------------ construction / shape
def crea(fill, shape):
    return T(np.full(shape, float(fill)))


def zeros(shape):
    return crea(0.0, shape)


def strue(flat, shape):
    n = 1
    for d in shape:
        n *= d
    assert len(flat) == n, "strue count"
    return T(np.array([float(v) for v in flat], dtype=np.float64).reshape(shape))


def forma(x, shape):
    return T(x.a.reshape(shape))


def transpone(x):
    assert x.a.ndim == 2
    return T(x.a.T)


def permute(x, axes):
    return T(np.transpose(x.a, axes))


def sectio(x, a, b):
    assert 0 <= a <= b <= x.a.shape[0]
    return T(x.a[a:b])


def angusta(x, axis, a, b):
    assert 0 <= a <= b <= x.a.shape[axis]
    idx = [slice(None)] * x.a.ndim
    idx[axis] = slice(a, b)
    return T(x.a[tuple(idx)])


def concatena(a, b, axis):
    return T(np.concatenate([a.a, b.a], axis=axis))


def magnitudines(x):
    return list(x.a.shape)


def longitudo(x):
    return x.a.ndim


def planata(x):
    return x.flat()


# ------------------------------------------------------------------ elementwise
def _arr(v):
    return v.a if isinstance(v, T) else np.float64(float(v))


def add(a, b):
    return T(_arr(a) + _arr(b))


def sub(a, b):
    return T(_arr(a) - _arr(b))


def mul(a, b):
    """`multiplica` / `⊙` (a number on either side scales)."""
    return T(_arr(a) * _arr(b))


def div(a, b):
    d = _arr(b)
    assert np.all(np.isfinite(d)) and np.all(d != 0.0), "divide: Domain"
    return T(_arr(a) / d)


def add_bias(x, b):
    assert x.a.shape[-1] == b.a.shape[0] and b.a.ndim == 1
    return T(x.a + b.a)


def vmap(f, x):
    return T(np.array([f(v) for v in x.flat()], dtype=np.float64).reshape(x.a.shape))


def neg(x):
    return T(-x.a)


def scala(x, f):
    return T(x.a * float(f))


def reciproca(x):
    assert all(v != 0.0 and math.isfinite(v) for v in x.flat())
    return T(1.0 / x.a)


def exp(x):
    return vmap(math.exp, x)


def log(x):
    assert all(v > 0.0 for v in x.flat()), "log: Domain"
    return vmap(math.log, x)


def sqrt(x):
    assert all(v >= 0.0 for v in x.flat())
    return T(np.sqrt(x.a))


def tanh_cr(x):
    """Correctly rounded tanh: mpmath at 300 bits, rounded once to float64."""
    if math.isnan(x):
        return x
    if x == 0.0:
        return x  # keeps the sign of zero (mpmath has none)
    return float(mpmath.tanh(mpmath.mpf(x)))


def tanh_exp(t):
    if t >= 0:
        return 1.0 - 2.0 / (math.exp(2.0 * t) + 1.0)
    return 2.0 / (math.exp(-2.0 * t) + 1.0) - 1.0


GELU_C = 0.7978845608028654
GELU_B = 0.044715
assert GELU_C == math.sqrt(2.0 / math.pi)


def _gelu(x, th):
    u = GELU_C * (x + GELU_B * ((x * x) * x))
    t = th(u)
    return (0.5 * x) * (1.0 + t)


def tanh(x):
    return vmap(tanh_cr, x)


def tanh_per_exp(x):
    return vmap(tanh_exp, x)


def gelu(x):
    return vmap(lambda v: _gelu(v, tanh_cr), x)


def gelu_per_exp(x):
    return vmap(lambda v: _gelu(v, tanh_exp), x)


def relu(x):
    return vmap(lambda v: v if (v > 0.0 or math.isnan(v)) else 0.0, x)


# ------------------------------------------------------------------ reductions
def seqsum(xs, start=0.0):
    acc = start
    for v in xs:
        acc += float(v)
    return acc


def summa(x):
    """→ a fractus number (in-order sum from 0.0)."""
    return seqsum(x.flat())


def media(x):
    n = x.a.size
    assert n > 0
    return summa(x) / n


def _keep(r, axis, keep):
    return T(np.expand_dims(r, axis) if keep else r)


def summa_axis(x, axis, keep):
    a = x.a
    n = a.shape[axis]
    if n == 0:
        r = np.zeros(a.shape[:axis] + a.shape[axis + 1:])
    else:
        r = np.take(a, 0, axis=axis).copy()
        for k in range(1, n):
            r = r + np.take(a, k, axis=axis)  # elementwise IEEE add, index order
    return _keep(r, axis, keep)


def media_axis(x, axis, keep):
    n = x.a.shape[axis]
    assert n > 0
    return T(summa_axis(x, axis, keep).a / n)


def _max(a, b):
    if math.isnan(a):
        return a
    if math.isnan(b) or b > a:
        return b
    return a


def maximum_axis(x, axis, keep):
    a = np.moveaxis(x.a, axis, -1)
    assert a.shape[-1] > 0
    rows = a.reshape(-1, a.shape[-1])
    out = []
    for r in rows:
        m = float(r[0])
        for v in r[1:]:
            m = _max(m, float(v))
        out.append(m)
    r = np.array(out).reshape(a.shape[:-1])
    return _keep(r, axis, keep)


def argmax(x):
    a = x.a
    assert a.ndim >= 1 and a.shape[-1] > 0
    out = []
    for r in a.reshape(-1, a.shape[-1]):
        best, bv = 0, float(r[0])
        if not math.isnan(bv):
            for k in range(1, len(r)):
                v = float(r[k])
                if math.isnan(v):
                    best = k
                    break
                if v > bv:
                    best, bv = k, v
        out.append(float(best))
    return T(np.array(out).reshape(a.shape[:-1]))


# ------------------------------------------------------------------ matrix product
def _mm2(a, b):
    m, k = a.shape
    k2, n = b.shape
    assert k == k2, "inner sizes"
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


def matmul(x, y):
    """`·`: dot, matvec, vecmat, matmul and batched (ranks 2–4, batch axes broadcast)."""
    a, b = x.a, y.a
    ra, rb = a.ndim, b.ndim
    if ra == 1 and rb == 1:
        return T(_mm2(a.reshape(1, -1), b.reshape(-1, 1)).reshape(()))
    if ra == 2 and rb == 1:
        return T(_mm2(a, b.reshape(-1, 1)).reshape(-1))
    if ra == 1 and rb == 2:
        return T(_mm2(a.reshape(1, -1), b).reshape(-1))
    assert 2 <= ra <= 4 and 2 <= rb <= 4, "matmul ranks"
    batch = list(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    A = np.broadcast_to(a, tuple(batch) + a.shape[-2:])
    B = np.broadcast_to(b, tuple(batch) + b.shape[-2:])
    out = np.zeros(tuple(batch) + (a.shape[-2], b.shape[-1]))
    for idx in np.ndindex(*batch):
        out[idx] = _mm2(A[idx], B[idx])
    return T(out)


# ------------------------------------------------------------------ network kernels
def _rows(a):
    return a.reshape(-1, a.shape[-1])


def _rowmax(r):
    m = float(r[0])
    for v in r[1:]:
        m = _max(m, float(v))
    return m


def softmax(x):
    assert x.a.ndim >= 1
    out = np.zeros_like(x.a)
    ro = _rows(out)
    for i, r in enumerate(_rows(x.a)):
        m = _rowmax(r)
        e = [math.exp(float(v) - m) for v in r]
        s = seqsum(e)
        ro[i] = [v / s for v in e]
    return T(out)


def log_softmax(x):
    out = np.zeros_like(x.a)
    ro = _rows(out)
    for i, r in enumerate(_rows(x.a)):
        m = _rowmax(r)
        s = seqsum(math.exp(float(v) - m) for v in r)
        ls = math.log(s)
        ro[i] = [(float(v) - m) - ls for v in r]
    return T(out)


def laminatio(x, axis, eps, g, b):
    assert axis == x.a.ndim - 1
    d = x.a.shape[-1]
    out = np.zeros_like(x.a)
    ro = _rows(out)
    for i, r in enumerate(_rows(x.a)):
        mean = seqsum(r) / d
        c = [float(v) - mean for v in r]
        var = seqsum(v * v for v in c) / d
        inv = 1.0 / math.sqrt(var + eps)
        ro[i] = [(c[j] * inv) * float(g.a[j]) + float(b.a[j]) for j in range(d)]
    return T(out)


def crux_entropia(x, t):
    assert x.a.shape == t.a.shape
    c = x.a.shape[-1]
    p = softmax(x).flat()
    s = seqsum(tv * math.log(pv + 1e-7) for pv, tv in zip(p, t.flat()))
    return -s / c


def crux_entropia_indices(z, y):
    assert list(y.a.shape) == list(z.a.shape[:-1])
    ys = y.flat()
    tot = 0.0
    for r, yi in zip(_rows(z.a), ys):
        assert yi == int(yi) and 0 <= yi < len(r)
        m = _rowmax(r)
        s = seqsum(math.exp(float(v) - m) for v in r)
        tot += (m + math.log(s)) - float(r[int(yi)])
    return tot / len(ys)


def collige(e, ids):
    assert e.a.ndim == 2
    flat = ids.flat()
    for v in flat:
        assert v == int(v) and 0 <= v < e.a.shape[0]
    rows = [e.a[int(v)] for v in flat]
    d = e.a.shape[1]
    out = np.array(rows, dtype=np.float64).reshape(list(ids.a.shape) + [d])
    return T(out)


def larva_causalis(x, v):
    assert x.a.ndim >= 2
    out = x.a.copy()
    n, m = out.shape[-2], out.shape[-1]
    for i in range(n):
        for j in range(m):
            if j > i:
                out[..., i, j] = v
    return T(out)


# ------------------------------------------------------------------ element access
def accipe(x, idx):
    if len(idx) != x.a.ndim:
        raise AssertionError("accipe: coordinate count")
    for i, d in zip(idx, x.a.shape):
        if i < 0 or i >= d:
            return None
    return float(x.a[tuple(idx)])


def ponde(x, idx, v):
    """Returns the updated copy (the caller rebinds: value semantics)."""
    y = x.copy()
    assert len(idx) == y.a.ndim
    y.a[tuple(idx)] = float(v)
    return y


def to_tensor(xs, shape):
    return strue(xs, shape)


def rng(a, b, step=1):
    i = a
    while (i < b) if step > 0 else (i > b):
        yield i
        i += step


# ================================================================== programs
CASES = {}


def case(name):
    def reg(f):
        CASES[name] = f
        return f
    return reg


@case("201_tensor_construct")
def _(o):
    semen = zeros([])
    o.nota(semen, magnitudines(semen), longitudo(semen))
    v = crea(1.5, [3])
    o.nota(v, magnitudines(v), longitudo(v))
    m = strue([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3])
    o.nota(m, magnitudines(m), longitudo(m))
    c = zeros([2, 2, 2])
    o.nota(c, magnitudines(c), longitudo(c))
    q = crea(-0.25, [2, 1, 2, 1])
    o.nota(q, magnitudines(q), longitudo(q))
    r = strue([7.5], [])
    o.nota(r, magnitudines(r), longitudo(r))
    o.nota(crea(-3.0, []))
    d = crea(0.1, [2, 2])
    o.nota(d, summa(d))
    nulla = crea(3.0, [0, 4])
    o.nota(nulla, magnitudines(nulla), summa(nulla))
    o.nota(strue([0.5, -2.0], [2]))
    o.nota(planata(zeros([3])))
    n = 3
    w = crea(2.0, [n, n - 1])
    o.nota(magnitudines(w), len(planata(w)), summa(w))
    g = crea(0.5, [2, 3, 4])
    o.nota(magnitudines(g), summa(g))


@case("202_tensor_display")
def _(o):
    a = strue([0.1, -0.0, 100.0, 0.00001, 12345678.9, -1.5], [2, 3])
    o.nota(a)
    o.nota(strue([1.0e16, 1.0e21, 0.0000001, 2.5e-8], [2, 2]))
    o.nota(strue([1.0 / 3.0, 2.0 / 3.0, 0.1 + 0.2], [3]))
    o.nota(strue([INF, -INF], [2]))
    o.nota(strue([NAN], [1]))
    f = strue([-7.0], [])
    o.nota(f)
    g = strue([-20.0, -10.0, -30.0], [3])
    o.nota(exp(g))
    o.nota(tpl("forma: §, valores: §", magnitudines(a), angusta(a, 1, 0, 2)))
    o.nota([sectio(a, 0, 1), f])


@case("203_tensor_reshape")
def _(o):
    v = strue([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [6])
    m = forma(v, [2, 3])
    o.nota(m, magnitudines(m))
    mt = transpone(m)
    o.nota(mt, magnitudines(mt))
    o.nota(transpone(mt))
    o.nota(forma(m, [3, 2]), transpone(forma(m, [3, 2])))
    o.nota(magnitudines(transpone(forma(m, [6, 1]))))
    o.nota(permute(m, [1, 0]), permute(m, [0, 1]))
    t = strue([float(i) for i in range(24)], [2, 3, 4])
    o.nota(permute(t, [2, 0, 1]), magnitudines(permute(t, [2, 0, 1])))
    o.nota(permute(t, [1, 0, 2]))
    o.nota(permute(t, [0, 2, 1]))
    t4 = forma(t, [2, 1, 3, 4])
    o.nota(magnitudines(t4), longitudo(t4))
    o.nota(permute(t4, [3, 1, 2, 0]), magnitudines(permute(t4, [3, 1, 2, 0])))
    o.nota(transpone(forma(permute(t4, [1, 2, 0, 3]), [6, 4])))
    unum = strue([4.5], [1])
    o.nota(forma(unum, []), longitudo(forma(unum, [])), magnitudines(forma(unum, [1, 1, 1])))
    o.nota(sectio(forma(t, [24]), 20, 24))


@case("204_tensor_slice_concat")
def _(o):
    m = strue([float(i) for i in range(1, 13)], [4, 3])
    o.nota(sectio(m, 1, 3), magnitudines(sectio(m, 1, 3)))
    o.nota(magnitudines(sectio(m, 0, 0)), sectio(m, 3, 4))
    o.nota(angusta(m, 0, 2, 4), angusta(m, 1, 1, 3), magnitudines(angusta(m, 1, 2, 3)))
    v = strue([0.5, 1.5, 2.5, 3.5, 4.5], [5])
    o.nota(sectio(v, 2, 5), angusta(v, 0, 0, 2))
    t = forma(m, [2, 2, 3])
    o.nota(sectio(t, 1, 2), angusta(t, 1, 0, 1), angusta(t, 2, 1, 2), magnitudines(angusta(t, 2, 1, 2)))
    a = sectio(m, 0, 2)
    b = crea(-1.0, [1, 3])
    o.nota(concatena(a, b, 0), magnitudines(concatena(a, b, 0)))
    c = strue([100.0, 200.0], [2, 1])
    o.nota(concatena(a, c, 1), magnitudines(concatena(a, c, 1)))
    o.nota(concatena(v, v, 0))
    o.nota(magnitudines(concatena(t, t, 2)), concatena(t, t, 2))
    o.nota(concatena(t, angusta(t, 1, 1, 2), 1))
    q = forma(t, [1, 2, 2, 3])
    o.nota(magnitudines(concatena(q, q, 0)), angusta(concatena(q, q, 3), 3, 2, 4))


@case("205_tensor_broadcast_add")
def _(o):
    a = strue([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3])
    r = strue([0.1, 0.2, 0.3], [3])
    o.nota(add(a, r), add(r, a))
    o.nota(sub(a, r), sub(r, a))
    col = strue([10.0, 20.0], [2, 1])
    row = strue([0.5, 0.25, 0.125], [1, 3])
    o.nota(add(col, row), magnitudines(add(col, row)))
    o.nota(sub(row, col))
    s = crea(0.7, [])
    o.nota(add(a, s), sub(s, a), add(s, s))
    o.nota(add(a, a), sub(a, a))
    t = strue([float(i) for i in range(1, 13)], [2, 2, 3])
    o.nota(add(t, a), add(t, r), magnitudines(add(t, col)))
    c3 = strue([-1.0, 1.0], [2, 1, 1])
    o.nota(add(c3, row), magnitudines(add(c3, row)))
    q = strue([0.3, 0.6, 0.9, 1.2, 1.5, 1.8], [1, 2, 1, 3])
    p = strue([1.0, 2.0, 3.0, 4.0], [2, 1, 2, 1])
    o.nota(magnitudines(add(q, p)), add(q, p))
    o.nota(sub(q, s))
    o.nota(sub(add(a, r), r))


@case("206_tensor_mul_div")
def _(o):
    a = strue([1.0, -2.0, 3.0, 0.5, 0.1, -6.0], [2, 3])
    r = strue([0.1, 3.0, -0.7], [3])
    o.nota(mul(a, r), mul(a, r), mul(r, a))
    o.nota(mul(a, a))
    o.nota(mul(a, 0.1), mul(0.1, a), mul(a, 3))
    o.nota(scala(a, 0.1), scala(a, -2.0))
    col = strue([3.0, 7.0], [2, 1])
    o.nota(div(a, col), div(col, a))
    o.nota(div(a, r), div(r, r))
    s = crea(0.3, [])
    o.nota(div(a, s), div(s, a), mul(a, s))
    o.nota(neg(a), neg(neg(a)), neg(s))
    o.nota(reciproca(a), reciproca(r), reciproca(s))
    b4 = strue([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [2, 2, 1, 2])
    d = strue([0.3, 3.0], [2])
    o.nota(mul(b4, d), div(b4, d), magnitudines(mul(b4, b4)))
    o.nota(mul(add(mul(a, 2.0), r), 0.5))
    o.nota(2.0 * 3.0, 2 * 0.1)


@case("207_tensor_bias")
def _(o):
    b = strue([0.1, -0.2, 0.3], [3])
    x = strue([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3])
    o.nota(add_bias(x, b))
    o.nota(add_bias(b, b))
    t = strue([0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.2, 2.4], [2, 2, 3])
    o.nota(add_bias(t, b), magnitudines(add_bias(t, b)))
    q = forma(sectio(t, 0, 1), [1, 2, 1, 3])
    o.nota(add_bias(q, b), magnitudines(add_bias(q, b)))
    c = strue([1.0, 2.0, 3.0], [3, 1])
    b1 = strue([0.5], [1])
    o.nota(add_bias(c, b1))
    o.nota(sub(add_bias(x, b), x))


@case("208_tensor_matmul")
def _(o):
    u = strue([0.1, 0.2, 0.3], [3])
    w = strue([0.7, -0.3, 1.1], [3])
    o.nota(matmul(u, w), magnitudines(matmul(u, w)), matmul(w, w))
    a = strue([1.0, 2.0, 3.0, 0.1, 0.2, 0.3], [2, 3])
    o.nota(matmul(a, u), magnitudines(matmul(a, u)))
    v2 = strue([0.5, -1.5], [2])
    b = strue([0.3, -0.1, 0.7, 0.9, -1.3, 0.01], [3, 2])
    o.nota(matmul(a, b), magnitudines(matmul(a, b)))
    o.nota(matmul(b, a), magnitudines(matmul(b, a)))
    o.nota(matmul(matmul(a, b), v2), matmul(a, matmul(b, v2)))
    o.nota(matmul(matmul(a, b), matmul(a, b)))
    i2 = strue([1.0, 0.0, 0.0, 1.0], [2, 2])
    o.nota(matmul(i2, a), matmul(transpone(a), a))
    h = strue([1.0e16, 1.0, -1.0e16, 1.0], [1, 4])
    k = crea(1.0, [4, 1])
    o.nota(matmul(h, k))
    o.nota(matmul(forma(h, [4]), forma(k, [4])))
    o.nota(matmul(a, b))
    o.nota(matmul(a, b), matmul(b, angusta(forma(u, [3]), 0, 0, 2)))


@case("209_tensor_batched_matmul")
def _(o):
    a = strue([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0], [2, 2, 3])
    b = strue([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.7, 0.3, -0.2, 1.1, 0.9, -0.4], [2, 3, 2])
    c = matmul(a, b)
    o.nota(c, magnitudines(c))
    a4 = forma(a, [2, 1, 2, 3])
    b4 = forma(b, [1, 2, 3, 2])
    o.nota(magnitudines(matmul(a4, b4)), matmul(a4, b4))
    r44 = crea(0.5, [2, 2, 2, 2])
    s44 = matmul(r44, r44)
    o.nota(summa(s44), magnitudines(s44))
    o.nota(matmul(a, permute(a, [0, 2, 1])))


@case("210_tensor_exp_log_sqrt")
def _(o):
    s = crea(0.5, [])
    o.nota(exp(s), log(s), sqrt(s))
    v = strue([0.1, 1.0, 2.0, 10.0, 0.001], [5])
    o.nota(exp(v))
    o.nota(log(v))
    o.nota(sqrt(v))
    m = strue([-1.0, -0.5, 0.0, 0.25, 3.0, -7.5], [2, 3])
    o.nota(exp(m))
    o.nota(log(exp(m)))
    o.nota(mul(m, m))
    o.nota(sqrt(mul(m, m)))
    t = strue([1.5, 2.5, 3.5, 4.5], [2, 1, 2])
    o.nota(log(t), magnitudines(sqrt(t)))
    q = strue([0.2, 0.4, 0.6, 0.8], [1, 2, 1, 2])
    o.nota(exp(q), log(q), sqrt(q))
    z = strue([0.0, -0.0, 1.0e-300], [3])
    o.nota(sqrt(z), exp(z))
    o.nota(exp(log(v)))


@case("211_tensor_tanh")
def _(o):
    s = crea(0.5, [])
    o.nota(tanh(s), tanh_per_exp(s))
    v = strue([0.0, 0.1, -0.3, 0.7, 1.5, -2.25, 5.0, 25.0], [8])
    o.nota(tanh(v))
    o.nota(tanh_per_exp(v))
    m = strue([0.001, -0.02, 0.123456789, -1.0, 3.3, -0.0], [2, 3])
    o.nota(tanh(m))
    o.nota(tanh_per_exp(m))
    t = strue([1.0e-10, -19.5, 0.625, 0.375], [2, 1, 2])
    o.nota(tanh(t), tanh_per_exp(t))


@case("212_tensor_gelu_relu")
def _(o):
    s = crea(1.0, [])
    o.nota(gelu(s), gelu_per_exp(s), relu(s))
    v = strue([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0], [7])
    o.nota(gelu(v))
    o.nota(gelu_per_exp(v))
    o.nota(relu(v))
    m = strue([0.1, -0.1, 2.5, -2.5, 0.0001, 10.0], [2, 3])
    o.nota(gelu(m))
    o.nota(gelu_per_exp(m))
    o.nota(relu(m), relu(neg(m)))
    z = strue([-0.0, NAN, -INF], [3])
    o.nota(relu(z))
    t = strue([0.75, -0.75, 1.25, -1.25], [2, 2, 1])
    o.nota(gelu(t), magnitudines(relu(t)))


@case("213_tensor_reductions")
def _(o):
    v = strue([0.1, 0.2, 0.3, 0.4], [4])
    o.nota(summa(v), media(v))
    big = strue([1.0e16, 1.0, 1.0, -1.0e16], [4])
    o.nota(summa(big), media(big))
    m = strue([0.1, 0.7, -0.2, 0.3, 0.25, 1.0e-3], [2, 3])
    o.nota(summa(m), media(m))
    o.nota(summa_axis(m, 0, False), magnitudines(summa_axis(m, 0, True)))
    o.nota(summa_axis(m, 1, False), summa_axis(m, 1, True), magnitudines(summa_axis(m, 1, True)))
    o.nota(media_axis(m, 0, False), media_axis(m, 1, True))
    o.nota(maximum_axis(m, 0, False), maximum_axis(m, 1, False), magnitudines(maximum_axis(m, 1, True)))
    t = strue([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, -0.7, 0.8, 0.9, -1.0, 1.1, 1.2], [2, 3, 2])
    o.nota(summa(t), media(t))
    o.nota(summa_axis(t, 0, False), summa_axis(t, 1, False), summa_axis(t, 2, False))
    o.nota(magnitudines(summa_axis(t, 1, True)), media_axis(t, 1, False), maximum_axis(t, 1, False))
    o.nota(maximum_axis(t, 2, True), magnitudines(maximum_axis(t, 0, True)))
    q = strue([3.0, -1.0, 0.5, 0.25, -2.0, 8.0, 0.125, 1.0], [2, 1, 2, 2])
    o.nota(summa_axis(q, 3, False), magnitudines(summa_axis(q, 0, True)), media_axis(q, 2, False))
    o.nota(magnitudines(maximum_axis(q, 1, False)), maximum_axis(q, 3, False))
    r = crea(2.5, [])
    o.nota(summa(r), media(r))
    leer = crea(1.0, [2, 0])
    o.nota(summa(leer), summa_axis(leer, 1, False))
    third = strue([0.1, 0.1, 0.1], [3])
    o.nota(media(third), media_axis(third, 0, False))


@case("214_tensor_argmax")
def _(o):
    v = strue([0.3, 2.0, -1.0, 2.0, 1.5], [5])
    o.nota(argmax(v), magnitudines(argmax(v)), longitudo(argmax(v)))
    m = strue([1.0, 5.0, 5.0, 0.0, -2.0, -3.0, -1.0, -1.0, 0.0, 0.0, 0.0, 0.0], [3, 4])
    o.nota(argmax(m), magnitudines(argmax(m)))
    t = strue([0.1, 0.3, 0.2, 9.0, 8.0, 7.0, -5.0, -4.0, -6.0, 1.0, 1.0, 2.0], [2, 2, 3])
    o.nota(argmax(t), magnitudines(argmax(t)))
    q = strue([0.5, 0.25, -0.5, -0.25], [1, 2, 1, 2])
    o.nota(argmax(q), magnitudines(argmax(q)))
    n = strue([1.0, NAN, 3.0, NAN], [4])
    o.nota(argmax(n))
    l = planata(argmax(m))
    o.nota(l, l[2] + 1.0)


@case("215_tensor_softmax")
def _(o):
    v = strue([1.0, 2.0, 3.0, 4.0], [4])
    o.nota(softmax(v))
    o.nota(log_softmax(v))
    o.nota(summa(softmax(v)))
    m = strue([0.1, 0.2, 0.7, 1000.0, 1000.0, 999.0, -5.0, 0.0, 5.0], [3, 3])
    o.nota(softmax(m))
    o.nota(log_softmax(m))
    t = strue([0.5, -0.5, 2.0, 2.0, -1.0, 3.0, 0.0, 0.001], [2, 2, 2])
    o.nota(softmax(t), magnitudines(softmax(t)))
    o.nota(log_softmax(t))
    q = strue([0.3, 0.2, 0.1, -0.3, -0.2, -0.1], [1, 2, 1, 3])
    o.nota(softmax(q))
    negi = strue([0.0, -INF, -INF, 1.0, 2.0, -INF], [2, 3])
    o.nota(softmax(negi))
    o.nota(summa_axis(softmax(m), 1, False))


@case("216_tensor_layernorm")
def _(o):
    x = strue([1.0, 2.0, 3.0, 4.0, 0.1, -0.3, 0.7, 0.05], [2, 4])
    unus = crea(1.0, [4])
    nulla = crea(0.0, [4])
    o.nota(laminatio(x, 1, 1.0e-5, unus, nulla))
    g = strue([0.5, 1.5, -1.0, 2.0], [4])
    b = strue([0.1, 0.0, -0.1, 0.25], [4])
    o.nota(laminatio(x, 1, 1.0e-5, g, b))
    o.nota(laminatio(x, 1, 0.0, g, b))
    o.nota(laminatio(x, 1, 0.5, unus, nulla))
    t = strue([0.2, 0.4, 0.9, -1.0, 0.0, 1.0, 5.0, 5.0, 5.0, 3.0, -2.0, 0.125], [2, 2, 3])
    g3 = strue([1.0, 0.5, 2.0], [3])
    b3 = strue([0.0, 0.1, -0.2], [3])
    o.nota(laminatio(t, 2, 1.0e-5, g3, b3), magnitudines(laminatio(t, 2, 1.0e-5, g3, b3)))
    v = strue([1.0, 2.0, 4.0], [3])
    o.nota(laminatio(v, 0, 1.0e-6, g3, b3))
    o.nota(media_axis(laminatio(x, 1, 1.0e-5, unus, nulla), 1, False))


@case("217_tensor_cross_entropy")
def _(o):
    z = strue([2.0, 1.0, 0.1, 0.5, 2.5, -1.0], [2, 3])
    unum = strue([1.0, 0.0, 0.0, 0.0, 1.0, 0.0], [2, 3])
    o.nota(crux_entropia(z, unum))
    molle = strue([0.7, 0.2, 0.1, 0.25, 0.25, 0.5], [2, 3])
    o.nota(crux_entropia(z, molle))
    v = strue([0.0, 0.0, 0.0, 0.0], [4])
    tv = strue([0.0, 0.0, 1.0, 0.0], [4])
    o.nota(crux_entropia(v, tv))
    y = strue([0.0, 1.0], [2])
    o.nota(crux_entropia_indices(z, y))
    y2 = strue([2.0, 2.0], [2])
    o.nota(crux_entropia_indices(z, y2))
    y0 = strue([2.0], [])
    z1 = strue([0.1, 0.2, 0.3, 0.4], [4])
    o.nota(crux_entropia_indices(z1, y0))
    z3 = strue([1.0, 2.0, 3.0, 3.0, 2.0, 1.0, 0.0, 0.0, 0.0, 10.0, -10.0, 0.5], [2, 2, 3])
    y3 = strue([2.0, 0.0, 1.0, 0.0], [2, 2])
    o.nota(crux_entropia_indices(z3, y3))
    ids = argmax(z)
    o.nota(ids, crux_entropia_indices(z, ids))
    t3 = strue([0.0, 0.0, 1.0, 0.5, 0.5, 0.0, 0.2, 0.3, 0.5, 1.0, 0.0, 0.0], [2, 2, 3])
    o.nota(crux_entropia(z3, t3))


@case("218_tensor_gather")
def _(o):
    e = strue([0.0, 0.1, 0.2, 1.0, 1.1, 1.2, 2.0, 2.1, 2.2, 3.0, 3.1, 3.2], [4, 3])
    ids = strue([3.0, 0.0, 3.0, 3.0, 1.0], [5])
    h = collige(e, ids)
    o.nota(h, magnitudines(h))
    ids2 = strue([2.0, 2.0, 0.0, 1.0, 3.0, 2.0], [2, 3])
    o.nota(collige(e, ids2), magnitudines(collige(e, ids2)))
    one = strue([1.0], [])
    o.nota(collige(e, one), magnitudines(collige(e, one)))
    leer = crea(0.0, [0])
    o.nota(magnitudines(collige(e, leer)))
    lista_ids = to_tensor([0, 0, 2], [3])
    o.nota(summa_axis(collige(e, lista_ids), 0, False))
    ids3 = strue([0.0, 1.0, 2.0, 3.0, 3.0, 2.0, 1.0, 0.0], [2, 2, 2])
    o.nota(magnitudines(collige(e, ids3)), angusta(collige(e, ids3), 3, 2, 3))


@case("219_tensor_causal_mask")
def _(o):
    s = strue([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], [3, 3])
    o.nota(larva_causalis(s, 0.0))
    ninf = -INF
    masked = larva_causalis(s, ninf)
    o.nota(masked)
    o.nota(softmax(masked))
    wide = crea(1.0, [2, 4])
    o.nota(larva_causalis(wide, -9.0))
    tall = crea(1.0, [4, 2])
    o.nota(larva_causalis(tall, -9.0))
    t = strue([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [2, 2, 2])
    o.nota(larva_causalis(t, -1.0e9))
    o.nota(softmax(larva_causalis(t, -1.0e9)))
    q = crea(0.5, [1, 2, 2, 3])
    o.nota(larva_causalis(q, -2.0), magnitudines(larva_causalis(q, -2.0)))
    o.nota(exp(larva_causalis(s, ninf)))


@case("220_tensor_access")
def _(o):
    v = strue([0.5, 1.5, 2.5, 3.5], [4])
    o.nota(accipe(v, [0]), accipe(v, [3]), accipe(v, [1]) + accipe(v, [2]))
    v = ponde(v, [2], -7.25)
    v = ponde(v, [0], accipe(v, [0]) * 4.0)
    o.nota(v)
    vel = lambda a, b: b if a is None else a  # noqa: E731
    o.nota(accipe(v, [1]), accipe(v, [4]), accipe(v, [-1]), vel(accipe(v, [3]), 0.0), vel(accipe(v, [9]), 0.0))
    v = ponde(v, [3], 100.0)
    o.nota(v, planata(v)[3])
    m = crea(0.0, [2, 3])
    m = ponde(m, [0, 1], 1.0)
    m = ponde(m, [1, 2], 2.0)
    m = ponde(m, [1, 0], 3.0)
    o.nota(m, accipe(m, [1, 2]), accipe(m, [0, 0]))
    o.nota(accipe(m, [1, 2]), accipe(m, [2, 0]), accipe(m, [0, 3]), vel(accipe(m, [1, -1]), -1.0))
    r = 1
    for c in range(3):
        m = ponde(m, [r, c], accipe(m, [r, c]) + 0.1 * c)
    o.nota(m)
    t = zeros([2, 2, 2])
    t = ponde(t, [1, 0, 1], 5.5)
    o.nota(t, accipe(t, [1, 0, 1]), accipe(t, [1, 2, 0]))
    q = crea(1.0, [1, 2, 1, 2])
    q = ponde(q, [0, 1, 0, 1], -1.0)
    o.nota(q, accipe(q, [0, 1, 0, 1]), accipe(q, [0, 1, 1, 0]))
    s = crea(3.0, [])
    o.nota(accipe(s, []))
    s = ponde(s, [], 4.0)
    o.nota(s)
    dyn = crea(2.0, [3])
    dyn = ponde(dyn, [1], 9.0)
    o.nota(dyn, accipe(dyn, [1]))


def teq(a, b):
    """`≡` on tensors: same shape, equal elements."""
    return a.shape == b.shape and bool(np.all(a.a == b.a))


@case("221_tensor_value_semantics")
def _(o):
    def muta(t):
        u = t.copy()
        u = ponde(u, [0, 0], -100.0)
        return u

    def muta_param(t):
        t = ponde(t, [1, 1], 42.0)
        return summa(t)

    a = strue([1.0, 2.0, 3.0, 4.0], [2, 2])
    b = a.copy()
    b = ponde(b, [0, 1], 20.0)
    o.nota(a, b)
    b = ponde(b, [1, 0], 30.0)
    o.nota(a, b)
    c = muta(a)
    o.nota(a, c)
    o.nota(muta_param(a), a)
    f = forma(a, [4])
    f = ponde(f, [0], 0.5)
    o.nota(a, f)
    d = a.copy()
    a = ponde(a, [1, 1], 8.0)
    o.nota(a, d)
    xs = [a.copy(), b.copy()]
    xs[0] = ponde(xs[0], [0, 0], 11.0)
    o.nota(xs, a)
    e = xs[1].copy()
    e = ponde(e, [0, 0], -1.0)
    o.nota(xs[1], e)
    g = transpone(a)
    a = ponde(a, [0, 1], 99.0)
    o.nota(g, a)
    o.nota(teq(a, a), teq(a, d), teq(d, strue([1.0, 2.0, 3.0, 4.0], [2, 2])))


@case("222_tensor_conversions")
def _(o):
    m = to_tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3])
    o.nota(m, magnitudines(m))
    n = to_tensor([1, 2, 3, 4, 5, 6], [3, 2])
    o.nota(n, magnitudines(n), summa(n))
    l = m.flat()
    o.nota(l, len(l), l[4])
    p = planata(m)
    o.nota(p, p == l)
    t = to_tensor([0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5], [2, 2, 2])
    o.nota(permute(t, [2, 1, 0]).flat())
    v = to_tensor([0.1, 0.2, 0.3, 0.4], [4])
    o.nota(summa(v), v.flat()[3])
    s = crea(2.5, [])
    o.nota(s.flat(), planata(s))
    roundtrip = to_tensor(l, [3, 2]).flat()
    o.nota(roundtrip == l, roundtrip)
    back = to_tensor(transpone(m).flat(), [2, 3])
    o.nota(back)
    bonum = to_tensor([9.0, 8.0, 7.0, 6.0], [2, 2])
    o.nota(bonum)
    o.nota(len(m.flat()), longitudo(m))


@case("223_tensor_program_attention")
def _(o):
    def attentio(x, wq, wk, wv):
        q = matmul(x, wq)
        k = matmul(x, wk)
        v = matmul(x, wv)
        sc = 1.0 / 2.0
        ninf = -INF
        s = mul(matmul(q, transpone(k)), sc)
        p = softmax(larva_causalis(s, ninf))
        return matmul(p, v)

    e = strue([0.1, -0.2, 0.3, 0.0, 0.5, 0.5, -0.5, 0.25, -0.3, 0.8, 0.1, -0.1, 0.9, 0.0, 0.0, 0.4,
               -0.6, -0.2, 0.7, 0.3], [5, 4])
    tokens = strue([4.0, 1.0, 4.0], [3])
    x = collige(e, tokens)
    wq = strue([0.2, 0.0, -0.1, 0.3, 0.1, 0.4, 0.0, -0.2, 0.0, 0.1, 0.5, 0.0, -0.3, 0.2, 0.1, 0.1], [4, 4])
    wk = transpone(wq)
    wv = strue([1.0, 0.0, 0.0, 0.5, 0.0, 1.0, 0.5, 0.0, 0.0, -0.5, 1.0, 0.0, 0.5, 0.0, 0.0, 1.0], [4, 4])
    h = attentio(x, wq, wk, wv)
    o.nota(magnitudines(h))
    o.nota(h)
    g = crea(1.0, [4])
    b = crea(0.0, [4])
    y = laminatio(add(x, h), 1, 1.0e-5, g, b)
    o.nota(y)
    wo = transpone(e)
    logits = matmul(y, wo)
    o.nota(argmax(logits))
    nxt = strue([1.0, 4.0, 2.0], [3])
    o.nota(crux_entropia_indices(logits, nxt))
    o.nota(maximum_axis(log_softmax(logits), 1, False))


@case("224_tensor_program_regression")
def _(o):
    x = strue([1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, -1.0], [4, 2])
    y = strue([1.5, -0.5, 1.0, 3.5], [4])
    w = zeros([2])
    b = 0.0
    lr = 0.1
    for passus in range(5):
        pred = add(matmul(x, w), crea(b, [4]))
        err = sub(pred, y)
        damnum = media(mul(err, err))
        gw = mul(matmul(transpone(x), err), 2.0 / 4.0)
        gb = summa(err) * 2.0 / 4.0
        w = sub(w, mul(gw, lr))
        b = b - lr * gb
        o.nota(passus, damnum)
    o.nota(w, b)
    o.nota(add(matmul(x, w), crea(b, [4])))


@case("225_tensor_functions")
def _(o):
    def norma(v):
        return math.pow(summa(mul(v, v)), 0.5)

    def unitas(v):
        return scala(v, 1.0 / norma(v))

    def summa_per_ordines(m):
        return summa_axis(m, 1, False)

    def identitas(n):
        i = crea(0.0, [n, n])
        for k in range(n):
            i = ponde(i, [k, k], 1.0)
        return i

    def potentia_matricis(m, p):
        r = identitas(magnitudines(m)[0])
        for _k in range(p):
            r = matmul(r, m)
        return r

    v = strue([3.0, 4.0, 12.0], [3])
    o.nota(norma(v), unitas(v), norma(unitas(v)))
    m = strue([0.5, 1.5, 2.5, -1.0, 0.25, 0.125], [2, 3])
    o.nota(summa_per_ordines(m))
    o.nota(identitas(3))
    f = strue([1.0, 1.0, 1.0, 0.0], [2, 2])
    o.nota(potentia_matricis(f, 10))
    rot = strue([0.6, -0.8, 0.8, 0.6], [2, 2])
    o.nota(potentia_matricis(rot, 4))
    normae = [norma(t) for t in [m, transpone(m), mul(m, 2.0)]]
    o.nota(normae)


@case("226_tensor_matmul_mixed_rank")
def _(o):
    a = strue([1.0, 2.0, 3.0, 0.1, 0.2, 0.3], [2, 3])
    v2 = strue([0.5, -1.5], [2])
    vn = matmul(v2, a)
    o.nota(vn, magnitudines(vn))
    t = strue([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0], [2, 2, 3])
    w = strue([0.5, -0.5, 0.25, 0.75, -1.0, 2.0], [3, 2])
    tw = matmul(t, w)
    assert tw.shape == [2, 2, 2]
    o.nota(tw)
    b = strue([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.7, 0.3, -0.2, 1.1, 0.9, -0.4], [2, 3, 2])
    prod = matmul(a, b)
    assert prod.shape == [2, 2, 2]
    o.nota(prod)
    a4 = forma(t, [2, 1, 2, 3])
    b3 = strue([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8], [3, 3, 2])
    r4 = matmul(a4, b3)
    assert r4.shape == [2, 3, 2, 2]
    o.nota(r4)
    b4 = forma(b, [1, 2, 3, 2])
    r44 = matmul(a4, b4)
    assert r44.shape == [2, 2, 2, 2]
    o.nota(r44)


@case("227_tensor_conversion_failure")
def _(o):
    # [1.0, 2.0] ↦ tensor<f32, [3]> fails (count 2 ≠ 3): `⇥` yields the default.
    o.nota(crea(-1.0, [3]))
    # 5 elements ↦ [2, 2] fails.
    o.nota(crea(0.5, [2, 2]))
    # 5 elements ↦ [2, 3] fails without `⇥`: unwinds to `cape`.
    o.nota("captum")
    o.nota("finis")


@case("228_tensor_large")
def _(o):
    def series(n, mult, modulus, gradus):
        return [((i * mult) % modulus - modulus // 2) * gradus for i in range(n)]

    x = strue(series(1200, 37, 101, 0.0731), [30, 40])
    o.nota(gelu(x))
    o.nota(summa(tanh(x)), summa(gelu_per_exp(x)), summa(tanh_per_exp(x)))
    o.nota(planata(angusta(tanh(x), 1, 0, 3)))
    a = strue(series(2048, 53, 97, 0.013), [32, 64])
    b = strue(series(2048, 29, 89, 0.0171), [64, 32])
    o.nota(matmul(a, b))
    z = strue(series(40000, 7919, 1009, 0.0097), [40, 1000])
    p = softmax(z)
    o.nota(summa_axis(p, 1, False))
    o.nota(summa(p), summa(exp(z)), summa(log_softmax(z)), summa(sub(log(exp(z)), z)))
    o.nota(planata(angusta(p, 1, 0, 2)))


@case("229_tensor_signed_zero")
def _(o):
    x = strue([0.0, -0.0], [2])
    o.nota(neg(x), scala(x, -1.0), mul(x, -1.0), mul(-1.0, x))
    o.nota(relu(x), exp(x), sqrt(x))
    o.nota(tanh(x), tanh_per_exp(x), gelu(x), gelu_per_exp(x))
    o.nota(summa(x), summa(neg(x)), argmax(x))
    z = strue([-0.0, -0.0, -0.0, 0.0], [2, 2])
    o.nota(summa_axis(z, 0, False), summa_axis(z, 1, False), summa(z))
    o.nota(add(z, z), sub(z, z), mul(z, z), add_bias(z, x))
    u = crea(1.0, [2])
    o.nota(matmul(x, u), matmul(neg(x), u), matmul(z, x))


# ================================================================== failing programs
# tests/run/fail/1NN_tensor_*.fab + .err: (name, code, anchor, source). The primary location
# comes from the anchor (line fragment, token): the first line (not a comment) containing the
# fragment, column of `token` inside it, 1-based, counted in characters.
#
# Rules: static shape errors are SEM023, reported by `faber run` before anything runs, at
# the start of the offending expression (a declared binding: its initialiser; `a · b`: its
# left operand; `strue` with literal list and shape: the list literal; a method call: its
# receiver). Runtime errors (shapes unknown statically, `tf32`): RUN013 shape, RUN001 index
# or id, RUN016 domain, RUN012 allocation limit, at the start of the failing expression.
FAIL_CASES = [
("101_tensor_decl_shape_transpone", "SEM023", ("tf32[2, 3] t ←", "m.transpone"), """\
# A `tf32[2, 3]` binding initialised with a [3, 2] value (the transpose of a [2, 3]).
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32[2, 3] m ← semen.crea(1.0, [2, 3])
    fixum tf32[2, 3] t ← m.transpone()
    nota t
}
"""),
("102_tensor_matmul_inner_static", "SEM023", ("c ← a · b", "a · b"), """\
# `·` of declared shapes [2, 3] and [2, 3]: inner sizes 3 and 2 differ.
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32[2, 3] a ← semen.crea(1.0, [2, 3])
    fixum tf32[2, 3] b ← semen.crea(2.0, [2, 3])
    nota "ante"
    fixum tf32 c ← a · b
    nota c
}
"""),
("103_tensor_strue_literal_count", "SEM023", ("semen.strue([1.0", "[1.0"), """\
# `strue` with a literal list of 5 elements for the literal shape [2, 3] (6 elements).
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32 t ← semen.strue([1.0, 2.0, 3.0, 4.0, 5.0], [2, 3])
    nota t
}
"""),
("104_tensor_addita_static", "SEM023", ("nota a.addita(b)", "a.addita"), """\
# `addita` of [2, 3] and [2]: the trailing sizes 3 and 2 do not broadcast.
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32[2, 3] a ← semen.crea(1.0, [2, 3])
    fixum tf32[2] b ← semen.crea(1.0, [2])
    nota a.addita(b)
}
"""),
("105_tensor_forma_count_static", "SEM023", ("m.forma([4, 2])", "m.forma"), """\
# `forma` of a [2, 3] (6 elements) to the literal shape [4, 2] (8 elements).
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32[2, 3] m ← semen.crea(1.0, [2, 3])
    fixum tf32 r ← m.forma([4, 2])
    nota r
}
"""),
("106_tensor_transpone_rank3", "SEM023", ("t.transpone()", "t.transpone"), """\
# `transpone` takes rank 2 only; t is declared rank 3.
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32[2, 2, 3] t ← semen.crea(1.0, [2, 2, 3])
    nota t.transpone()
}
"""),
("107_tensor_bias_length_static", "SEM023", ("x.addita_bias(b)", "x.addita_bias"), """\
# `addita_bias` needs a bias as long as the last axis: [2, 3] with a [2] bias.
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32[2, 3] x ← semen.crea(1.0, [2, 3])
    fixum tf32[2] b ← semen.crea(0.5, [2])
    fixum tf32[2, 3] y ← x.addita_bias(b)
    nota y
}
"""),
("108_tensor_shape_runtime", "RUN013", ("⊙ x.addita(y)", "x.addita"), """\
# Shapes unknown statically (`tf32`): [2, 3] plus [2] fails when it runs, after the first line.
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32 x ← semen.crea(1.0, [2, 3])
    fixum tf32 y ← semen.crea(1.0, [2])
    nota "ante"
    nota 2.0 ⊙ x.addita(y)
}
"""),
("109_tensor_index_range", "RUN001", ("nota t[[5, 0]]", "t[[5"), """\
# Reading t[[5, 0]] from a [2, 3] tensor.
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32 t ← semen.crea(1.0, [2, 3])
    nota t[[1, 2]]
    nota t[[5, 0]]
}
"""),
("110_tensor_gather_id_range", "RUN001", ("e.collige(ids)", "e.collige"), """\
# `collige` with the id 4 for a table of 4 rows (ids must lie in [0, 4)).
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32[4, 2] e ← semen.crea(1.0, [4, 2])
    fixum tf32[3] ids ← semen.strue([0.0, 4.0, 1.0], [3])
    fixum tf32 h ← e.collige(ids)
    nota h
}
"""),
("111_tensor_log_zero", "RUN016", ("nota x.log()", "x.log"), """\
# `log` of a tensor holding 0.0 (domain: x > 0).
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32[3] x ← semen.strue([1.0, 0.0, 2.0], [3])
    nota x.exp()
    nota x.log()
}
"""),
("112_tensor_alloc_limit", "RUN012", ("semen.crea(0.0, [100000", "semen.crea"), """\
# 10¹⁰ elements is beyond the element limit: an error, not an abort.
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32 grandis ← semen.crea(0.0, [100000, 100000])
    nota grandis.magnitudines()
}
"""),
("113_tensor_strue_count_runtime", "RUN013", ("semen.strue([1.0, 2.0, 3.0], forma)", "semen.strue"), """\
# `strue` whose shape comes from a variable: 3 elements for [2, 2] fails when it runs.
incipit {
    fixum tf32[] semen ← vacua
    fixum lista<numerus> forma ← [2, 2]
    fixum tf32 t ← semen.strue([1.0, 2.0, 3.0], forma)
    nota t
}
"""),
("114_tensor_matmul_runtime", "RUN013", ("redde a · b", "a · b"), """\
# `·` of [2, 3] and [2, 3] inside a function whose parameters are any-shape `tf32`.
functio productum(tf32 a, tf32 b) → tf32 {
    redde a · b
}

incipit {
    fixum tf32[] semen ← vacua
    fixum tf32 a ← semen.crea(1.0, [2, 3])
    nota productum(a, a.transpone())
    nota productum(a, a)
}
"""),
("115_tensor_index_write_range", "RUN001", ("m[[2, 0]] ←", "m[[2"), """\
# Writing m[[2, 0]] into a [2, 2] tensor.
incipit {
    fixum tf32[] semen ← vacua
    varia tf32 m ← semen.crea(0.0, [2, 2])
    m[[1, 1]] ← 1.0
    m[[2, 0]] ← 1.0
    nota m
}
"""),
("116_tensor_sqrt_negative", "RUN016", ("v.sqrt()", "v.sqrt"), """\
# `sqrt` of a negative element (domain: x ≥ 0).
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32[2] v ← semen.strue([4.0, -1.0], [2])
    fixum tf32[2] r ← v.sqrt()
    nota r
}
"""),
("117_tensor_target_range", "RUN001", ("z.crux_entropia_indices(y)", "z.crux"), """\
# `crux_entropia_indices` with the target 3 for 3 classes.
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32[2, 3] z ← semen.crea(0.5, [2, 3])
    fixum tf32[2] y ← semen.strue([0.0, 3.0], [2])
    nota z.crux_entropia_indices(y)
}
"""),
("118_tensor_divide_zero", "RUN016", ("a.divide(b)", "a.divide"), """\
# `divide` by a tensor holding 0.0 (a checked division: domain error).
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32[3] a ← semen.crea(1.0, [3])
    fixum tf32[3] b ← semen.strue([1.0, 0.0, 2.0], [3])
    nota a.divide(b)
}
"""),
("119_tensor_decl_shape_forma", "SEM023", ("tf32[3, 2] r ←", "v.forma"), """\
# A `tf32[3, 2]` binding initialised with a [2, 3] value (the count fits, the shape does not).
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32[6] v ← semen.crea(1.0, [6])
    fixum tf32[3, 2] r ← v.forma([2, 3])
    nota r
}
"""),
("120_tensor_concat_runtime", "RUN013", ("a.concatena(b, 0)", "a.concatena"), """\
# `concatena` along axis 0 of [2, 3] and [2, 2] (sizes off the axis differ), shapes dynamic.
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32 a ← semen.crea(1.0, [2, 3])
    fixum tf32 b ← semen.crea(1.0, [2, 2])
    nota a.concatena(b, 1)
    nota a.concatena(b, 0)
}
"""),
]


def fail_position(src, anchor):
    frag, tok = anchor
    for ln, line in enumerate(src.split("\n"), 1):
        if frag in line and not line.lstrip().startswith("#"):
            if tok in frag:
                return ln, line.index(frag) + frag.index(tok) + 1
            return ln, line.index(tok) + 1
    raise SystemExit("anchor not found: %r" % (anchor,))


def fail_main(write):
    faildir = os.path.normpath(os.path.join(HERE, "..", "run", "fail"))
    bad = 0
    for name, code, anchor, src in FAIL_CASES:
        ln, col = fail_position(src, anchor)
        err = "%s\n%d:%d\n" % (code, ln, col)
        for ext, text in (("fab", src), ("err", err)):
            path = os.path.join(faildir, name + "." + ext)
            if write:
                with open(path, "w", encoding="utf-8", newline="\n") as fh:
                    fh.write(text)
            elif not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
                print("MISMATCH", name + "." + ext)
                bad += 1
    print("%d fail cases, %d problems" % (len(FAIL_CASES), bad))
    return bad


# ================================================================== driver
# Tensor programs whose expected output another script derives.
OTHER_REFERENCES = {"299_tensor_alea": "run_alea.py"}

def main():
    rundir = os.path.normpath(os.path.join(HERE, "..", "run"))
    args = sys.argv[1:]
    if "--show" in args:
        key = args[args.index("--show") + 1]
        for name, f in CASES.items():
            if name.startswith(key):
                out = Out()
                f(out)
                sys.stdout.write(out.text())
        return
    write = "--write" in args
    bad = fail_main(write)
    for name, f in CASES.items():
        out = Out()
        f(out)
        text = out.text()
        path = os.path.join(rundir, name + ".out")
        assert os.path.exists(os.path.join(rundir, name + ".fab")), name
        if write:
            with open(path, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        elif not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
            print("MISMATCH", name)
            bad += 1
    fabs = sorted(n[:-4] for n in os.listdir(rundir) if n.endswith(".fab") and "_tensor_" in n)
    missing = [n for n in fabs if n not in CASES and n not in OTHER_REFERENCES]
    if missing:
        print("no reference for:", missing)
        bad += 1
    print("%d cases, %d problems" % (len(CASES), bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
