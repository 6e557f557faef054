#!/usr/bin/env python3
"""Independent derivation of tests/run/3NN_ad_*.out (autodiff programs, `@ radix backward`).

Each function below mirrors one .fab program: the forward pass uses the tensor reference
(run_tensors.py: in-order sums, in-order matmul, mpmath-rounded tanh, the per-row softmax /
layernorm / cross-entropy recipes of docs/ops.md), and the gradients are WRITTEN BY HAND
for each model — no autodiff library, nothing read from faber — with the recipes of
docs/ops.md:

* `media` backward: `g · (1/N)` filled (a multiplication by the rounded 1/N, not g/N);
* `d ⊙ d`: two contributions `g ⊙ d`, summed;
* matmul VJPs: `g · bᵀ` and `aᵀ · g`, in-order matmuls against explicitly transposed operands;
* `addita_bias`: `g`, and column sums of `g` from row 0 in order;
* `subtrahe`: `g`, `−g`; `scala(f)`: `g · f`; `tanh`: `g ⊙ (1 − y·y)`; `relu`: `g ⊙ [x > 0]`;
* GELU: `u = c·(x + β·((x·x)·x))`, `t = tanh(u)` correctly rounded,
  `g · (0.5·(1 + t) + ((0.5·x)·(1 − t·t))·du)`, `du = c·(1 + (3β)·(x·x))`;
* softmax: per row `s = Σ_j g_j·y_j` left to right, `gx_j = y_j·(g_j − s)`;
* layernorm: `xh = c·inv`, `gγ = colsum(xh ⊙ g)`, `gβ = colsum(g)`, per row `h = g ⊙ γ`,
  `s1 = Σh`, `s2 = Σ h ⊙ xh`, `gx = inv·((h − s1/d) − xh·(s2/d))`;
* `crux_entropia_indices`: `((softmax(z) − onehot(y)) · g) / T`, T = rows;
* fan-out: statements walked in reverse, a cotangent is `acc + new`, so for uses in source
  order q, k, v the total is `(g_v + g_k) + g_q`;
* SGD update `p − (g · lr)`.

Display follows docs/language.md § 8 (shortest round-trip, positional, `.0` when integral).

Run with the bench venv (numpy, mpmath):

    benches/.venv/bin/python tests/reference/run_autodiff.py           # check every .out
    benches/.venv/bin/python tests/reference/run_autodiff.py --write   # (re)write them
    benches/.venv/bin/python tests/reference/run_autodiff.py --show N  # print one program's output
    benches/.venv/bin/python tests/reference/run_autodiff.py --fd      # finite-difference check
"""
import math
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_tensors as rt  # noqa: E402  (forward recipes, display, `Out`)
from run_tensors import T, Out, strue, seqsum, tanh_cr, GELU_B, GELU_C  # noqa: E402

# ------------------------------------------------------------------ small helpers (np arrays)


def mm(a, b):
    """In-order matmul of two rank-2 float64 arrays (the §1 recipe)."""
    return rt._mm2(np.asarray(a), np.asarray(b))


def tr(a):
    return np.ascontiguousarray(np.asarray(a).T)


def colsum(g):
    """Column sums: start from row 0, add rows in order."""
    g = np.asarray(g)
    acc = g[0].copy()
    for r in range(1, g.shape[0]):
        acc = acc + g[r]
    return acc


def add_bias(x, b):
    return np.asarray(x) + np.asarray(b)[None, :]


def mean_fwd(a):
    """`media`: in-order sum from 0.0, divided by the count."""
    a = np.asarray(a)
    return seqsum(a.reshape(-1).tolist()) / a.size


def mse_fwd(p, t):
    d = np.asarray(p) - np.asarray(t)
    return mean_fwd(d * d)


def mse_bwd(d, g=1.0):
    """Cotangent of d for `(d ⊙ d).media()`: gm = fill(g·(1/N)); gm⊙d + gm⊙d."""
    n = d.size
    gm = np.full(d.shape, g * (1.0 / n))
    return gm * d + gm * d


def tanh_arr(x):
    return np.vectorize(tanh_cr, otypes=[float])(np.asarray(x))


def gelu_fwd(x):
    return rt.gelu(T(x)).a


def gelu_bwd(x, g):
    out = np.zeros_like(x)
    fx, fg, fo = x.reshape(-1), g.reshape(-1), out.reshape(-1)
    b3 = 3.0 * GELU_B
    for i in range(fx.size):
        xv, gv = float(fx[i]), float(fg[i])
        u = GELU_C * (xv + GELU_B * ((xv * xv) * xv))
        t = tanh_cr(u)
        du = GELU_C * (1.0 + b3 * (xv * xv))
        fo[i] = gv * (0.5 * (1.0 + t) + ((0.5 * xv) * (1.0 - t * t)) * du)
    return out


def softmax_fwd(x):
    return rt.softmax(T(x)).a


def softmax_bwd(y, g):
    out = np.zeros_like(y)
    for i in range(y.shape[0]):
        s = seqsum(float(g[i, j]) * float(y[i, j]) for j in range(y.shape[1]))
        out[i] = [float(y[i, j]) * (float(g[i, j]) - s) for j in range(y.shape[1])]
    return out


def layernorm_fwd(x, gamma, beta, eps):
    return rt.laminatio(T(x), 1, eps, T(gamma), T(beta)).a


def layernorm_bwd(x, gamma, eps, g):
    """→ (gx, gγ, gβ) by the §1 recipe (row statistics recomputed as in the forward)."""
    rows, d = x.shape
    xh = np.zeros_like(x)
    invs = []
    for i in range(rows):
        r = [float(v) for v in x[i]]
        mean = seqsum(r) / d
        c = [v - mean for v in r]
        var = seqsum(v * v for v in c) / d
        inv = 1.0 / math.sqrt(var + eps)
        invs.append(inv)
        xh[i] = [cv * inv for cv in c]
    ggamma = colsum(xh * g)
    gbeta = colsum(g)
    gx = np.zeros_like(x)
    for i in range(rows):
        h = [float(g[i, j]) * float(gamma[j]) for j in range(d)]
        s1 = seqsum(h)
        s2 = seqsum(h[j] * float(xh[i, j]) for j in range(d))
        gx[i] = [invs[i] * ((h[j] - s1 / d) - float(xh[i, j]) * (s2 / d)) for j in range(d)]
    return gx, ggamma, gbeta


def ce_indices_fwd(z, y):
    return rt.crux_entropia_indices(T(z), T(y))


def ce_indices_bwd(z, y, g=1.0):
    p = softmax_fwd(z)
    oh = np.zeros_like(z)
    for r, yi in enumerate(y):
        oh[r, int(yi)] = 1.0
    return ((p - oh) * g) / z.shape[0]


def sgd(p, g, lr):
    return p - g * lr


def A(flat, shape):
    return strue(flat, shape).a


def t_(a):
    return T(np.asarray(a))


# ================================================================== programs
CASES = {}


def case(name):
    def reg(f):
        CASES[name] = f
        return f
    return reg


# ------------------------------------------------------------------ 301
def m301_loss(x, w, b, y):
    return mse_fwd(mm(x, w) + b, y)


def m301_grad(x, w, b, y, g=1.0):
    z = mm(x, w) + b
    d = z - y
    gd = mse_bwd(d, g)
    gy = -gd
    gz = gd
    gb = gz
    gw = mm(tr(x), gz)
    gx = mm(gz, tr(w))
    return gx, gw, gb, gy


@case("301_ad_linear_mse")
def _(o):
    x = A([1.0, 2.0, -0.5, 1.5], [2, 2])
    y = A([0.5, -1.0, 2.0, 0.25], [2, 2])
    w = A([0.1, -0.2, 0.3, 0.4], [2, 2])
    b = A([0.0, 0.1, -0.1, 0.2], [2, 2])
    lr = 0.1
    for passus in range(8):
        gx, gw, gb, gy = m301_grad(x, w, b, y)
        o.nota(passus, m301_loss(x, w, b, y))
        if passus == 0:
            for g in (gx, gw, gb, gy):
                o.nota(t_(g))
        w = sgd(w, gw, lr)
        b = sgd(b, gb, lr)
    o.nota(m301_loss(x, w, b, y))
    o.nota(t_(w))
    o.nota(t_(b))


@case("308_ad_demanded_gradients")
def _(o):
    x = A([0.5, -1.0, 2.0, 0.75], [2, 2])
    y = A([1.0, 0.5, -0.5, 1.5], [2, 2])
    w = A([0.2, 0.1, -0.3, 0.6], [2, 2])
    b = A([0.05, 0.0, 0.1, -0.2], [2, 2])
    lr = 0.1
    for passus in range(6):
        _, gw, gb, _ = m301_grad(x, w, b, y)
        o.nota(passus, m301_loss(x, w, b, y))
        w = sgd(w, gw, lr)
        b = sgd(b, gb, lr)
    o.nota(t_(w))
    o.nota(t_(b))
    # upstream 2.0: the mean's cotangent is 2·(1/N) before the products
    o.nota(t_(m301_grad(x, w, b, y, 2.0)[0]))
    o.nota("[" + ", ".join(rt.disp(t_(g)) for g in m301_grad(x, w, b, y)) + "]")


# ------------------------------------------------------------------ 302
def m302_loss(x, w1, b1, w2, b2, t):
    h = gelu_fwd(add_bias(mm(x, w1), b1))
    return mse_fwd(add_bias(mm(h, w2), b2), t)


def m302_grad(x, w1, b1, w2, b2, t):
    a1 = add_bias(mm(x, w1), b1)
    h = gelu_fwd(a1)
    z = add_bias(mm(h, w2), b2)
    d = z - t
    gz = mse_bwd(d)
    gb2 = colsum(gz)
    gw2 = mm(tr(h), gz)
    gh = mm(gz, tr(w2))
    ga1 = gelu_bwd(a1, gh)
    gb1 = colsum(ga1)
    gw1 = mm(tr(x), ga1)
    gx = mm(ga1, tr(w1))
    return gx, gw1, gb1, gw2, gb2, -gz


@case("302_ad_mlp_gelu")
def _(o):
    x = A([0.5, -1.0, 1.5, 0.25, -0.75, 0.2, 0.9, -1.2, 1.1, 0.4, -0.3, 0.6, -0.2, -0.9, 0.35, 1.3], [4, 4])
    t = A([0.1, 0.6, -0.4, 0.8, -0.5, 0.3, 0.2, -0.1, 0.7, -0.6, 0.05, 0.4, 0.0, 0.9, -0.3, -0.7], [4, 4])
    w1 = A([0.3, -0.2, 0.5, 0.1, -0.4, 0.6, 0.2, -0.3, 0.15, 0.25, -0.5, 0.45, 0.7, -0.1, 0.05, 0.35], [4, 4])
    b1 = A([0.1, -0.05, 0.2, 0.0], [4])
    w2 = A([-0.3, 0.4, 0.1, 0.6, 0.5, -0.2, 0.3, -0.45, 0.2, 0.35, -0.6, 0.1, -0.15, 0.05, 0.4, 0.3], [4, 4])
    b2 = A([0.0, 0.1, -0.1, 0.05], [4])
    lr = 0.1
    for passus in range(20):
        _gx, gw1, gb1, gw2, gb2, _gt = m302_grad(x, w1, b1, w2, b2, t)
        o.nota(passus, m302_loss(x, w1, b1, w2, b2, t))
        if passus == 0:
            for g in (gw1, gb1, gw2, gb2):
                o.nota(t_(g))
        w1, b1, w2, b2 = sgd(w1, gw1, lr), sgd(b1, gb1, lr), sgd(w2, gw2, lr), sgd(b2, gb2, lr)
    o.nota(m302_loss(x, w1, b1, w2, b2, t))
    for p in (w1, b1, w2, b2):
        o.nota(t_(p))


# ------------------------------------------------------------------ 303
EPS303 = 0.00001
SCALE303 = 0.57735


def m303_loss(x, gamma, beta, wq, wk, wv, wo, t):
    h = layernorm_fwd(x, gamma, beta, EPS303)
    q, k, v = mm(h, wq), mm(h, wk), mm(h, wv)
    s = mm(q, tr(k)) * SCALE303
    p = softmax_fwd(s)
    o = mm(mm(p, v), wo)
    return mse_fwd(o, t)


def m303_grad(x, gamma, beta, wq, wk, wv, wo, t):
    h = layernorm_fwd(x, gamma, beta, EPS303)
    q, k, v = mm(h, wq), mm(h, wk), mm(h, wv)
    kt = tr(k)
    s = mm(q, kt) * SCALE303
    p = softmax_fwd(s)
    pv = mm(p, v)
    m = mm(pv, wo)
    o = m
    d = o - t
    # reverse sweep
    gd = mse_bwd(d)
    gt = -gd
    go = gd
    gm = go
    gwo = mm(tr(pv), gm)
    gpv = mm(gm, tr(wo))
    gp = mm(gpv, tr(v))
    gv = mm(tr(p), gpv)
    gs = softmax_bwd(p, gp)
    gqk = gs * SCALE303    # scala(f): g · f
    gq = mm(gqk, tr(kt))
    gkt = mm(tr(q), gqk)
    gk = tr(gkt)
    # h's uses in source order q, k, v: total (g_v + g_k) + g_q
    gwv = mm(tr(h), gv)
    gh = mm(gv, tr(wv))
    gwk = mm(tr(h), gk)
    gh = gh + mm(gk, tr(wk))
    gwq = mm(tr(h), gq)
    gh = gh + mm(gq, tr(wq))
    gx, ggamma, gbeta = layernorm_bwd(x, gamma, EPS303, gh)
    return gx, ggamma, gbeta, gwq, gwk, gwv, gwo, gt


@case("303_ad_attention_block")
def _(o):
    x = A([0.9, -0.4, 0.3, 1.2, -0.6, 0.8, 0.1, -1.1, 0.25, 0.5, -0.7, 0.05], [4, 3])
    t = A([0.5, 0.0, 0.4, 0.9, -0.2, 0.6, 0.3, -0.8, 0.1, 0.7, -0.5, 0.3], [4, 3])
    gamma = A([1.0, 0.9, 1.1], [3])
    beta = A([0.0, 0.1, -0.1], [3])
    wq = A([0.4, -0.1, 0.2, 0.3, 0.1, 0.5, -0.3, 0.2, -0.2], [3, 3])
    wk = A([0.2, 0.3, -0.1, 0.5, -0.4, 0.1, 0.3, 0.2, 0.5], [3, 3])
    wv = A([0.6, 0.1, 0.0, -0.2, 0.2, 0.4, -0.1, 0.3, -0.3], [3, 3])
    wo = A([0.3, -0.2, 0.1, 0.4, 0.0, 0.5, 0.2, -0.3, 0.4], [3, 3])
    lr = 0.2
    names = ["x", "gamma", "beta", "wq", "wk", "wv", "wo", "t"]
    for passus in range(5):
        grads = m303_grad(x, gamma, beta, wq, wk, wv, wo, t)
        o.nota(passus, m303_loss(x, gamma, beta, wq, wk, wv, wo, t))
        if passus == 0:
            for n, g in zip(names, grads):
                o.nota(n, t_(g))
        _gx, ggamma, gbeta, gwq, gwk, gwv, gwo, _gt = grads
        gamma, beta = sgd(gamma, ggamma, lr), sgd(beta, gbeta, lr)
        wq, wk, wv, wo = sgd(wq, gwq, lr), sgd(wk, gwk, lr), sgd(wv, gwv, lr), sgd(wo, gwo, lr)
    o.nota(m303_loss(x, gamma, beta, wq, wk, wv, wo, t))


# ------------------------------------------------------------------ 304 (+ lib/ad_strata.fab)
def strata_fwd(x, w, b):
    return tanh_arr(add_bias(mm(x, w), b))


def strata_bwd(x, w, y, g):
    """y = tanh(x·w + b) → (gx, gw, gb)."""
    ga = g * (1.0 - y * y)
    return mm(ga, tr(w)), mm(tr(x), ga), colsum(ga)


def m304_perditio(x, w, b, t):
    return mse_fwd(strata_fwd(x, w, b), t)


def m304_perditio_grad(x, w, b, t):
    y = strata_fwd(x, w, b)
    gy = mse_bwd(y - t)
    gx, gw, gb = strata_bwd(x, w, y, gy)
    return gx, gw, gb, -gy


def m304_loss(x, w1, b1, w2, b2, t):
    return mse_fwd(strata_fwd(strata_fwd(x, w1, b1), w2, b2), t)


def m304_grad(x, w1, b1, w2, b2, t):
    h = strata_fwd(x, w1, b1)
    y = strata_fwd(h, w2, b2)
    gy = mse_bwd(y - t)
    gh, gw2, gb2 = strata_bwd(h, w2, y, gy)
    gx, gw1, gb1 = strata_bwd(x, w1, h, gh)
    return gx, gw1, gb1, gw2, gb2, -gy


@case("304_ad_import")
def _(o):
    x = A([1.0, -0.5, 0.3, 0.8, -1.2, 0.4], [3, 2])
    t = A([0.2, -0.6, 0.7, 0.1, -0.4, 0.5], [3, 2])
    w1 = A([0.5, -0.3, 0.2, 0.8], [2, 2])
    b1 = A([0.1, -0.2], [2])
    w2 = A([-0.4, 0.6, 0.7, 0.1], [2, 2])
    b2 = A([0.05, 0.0], [2])
    lr = 0.5
    grads = m304_perditio_grad(x, w1, b1, t)
    o.nota(m304_perditio(x, w1, b1, t))
    for g in grads:
        o.nota(t_(g))
    for passus in range(5):
        _gx, gw1, gb1, gw2, gb2, _gt = m304_grad(x, w1, b1, w2, b2, t)
        o.nota(passus, m304_loss(x, w1, b1, w2, b2, t))
        if passus == 0:
            for g in (gw1, gb1, gw2, gb2):
                o.nota(t_(g))
        w1, b1, w2, b2 = sgd(w1, gw1, lr), sgd(b1, gb1, lr), sgd(w2, gw2, lr), sgd(b2, gb2, lr)
    o.nota(m304_loss(x, w1, b1, w2, b2, t))
    o.nota(t_(w1), t_(b1))
    o.nota(t_(w2), t_(b2))


# ------------------------------------------------------------------ 305
def relu_fwd(x):
    return rt.relu(T(x)).a


def m305_loss(r, x, t):
    h = relu_fwd(add_bias(mm(x, r["w1"]), r["b1"]))
    return mse_fwd(add_bias(mm(h, r["w2"]), r["b2"]), t)


def m305_grad(r, x, t, upstream=1.0):
    a1 = add_bias(mm(x, r["w1"]), r["b1"])
    h = relu_fwd(a1)
    z = add_bias(mm(h, r["w2"]), r["b2"])
    gz = mse_bwd(z - t, upstream)
    g = {}
    g["b2"] = colsum(gz)
    g["w2"] = mm(tr(h), gz)
    gh = mm(gz, tr(r["w2"]))
    ga1 = gh * np.where(a1 > 0.0, 1.0, 0.0)     # g ⊙ [x > 0]
    g["b1"] = colsum(ga1)
    g["w1"] = mm(tr(x), ga1)
    return g


@case("305_ad_genus_params")
def _(o):
    x = A([0.8, -0.3, 0.5, 1.0, -0.7, 0.9, 0.2, -0.4, 0.3, 0.6, -1.1, 0.7], [3, 4])
    t = A([0.5, -0.2, 0.8, 0.1, 0.0, 0.4, -0.6, 0.3, -0.3, 0.9, 0.2, -0.5], [3, 4])
    r = {
        "w1": A([0.5, -0.3, 0.2, 0.4, 0.1, 0.6, -0.4, 0.2, -0.2, 0.3, 0.7, -0.1, 0.4, -0.1, 0.3, 0.5], [4, 4]),
        "b1": A([0.1, 0.05, -0.1, 0.2], [4]),
        "w2": A([0.3, 0.2, -0.5, 0.1, -0.4, 0.5, 0.3, 0.2, 0.6, -0.2, 0.1, -0.3, 0.2, 0.4, -0.1, 0.5], [4, 4]),
        "b2": A([0.0, -0.1, 0.1, 0.05], [4]),
    }
    fields = ["w1", "b1", "w2", "b2"]
    lr = 0.1
    for passus in range(10):
        g = m305_grad(r, x, t)
        o.nota(passus, m305_loss(r, x, t))
        if passus == 0:
            for f in fields:
                o.nota(t_(g[f]))
            g37 = m305_grad(r, x, t, 0.37)
            o.nota(t_(g37["w1"]))
            o.nota(t_(g37["b2"]))
        r = {f: sgd(r[f], g[f], lr) for f in fields}
    o.nota(m305_loss(r, x, t))
    for f in fields:
        o.nota(t_(r[f]))


# ------------------------------------------------------------------ 306
def m306_loss(x, w, b, y):
    return ce_indices_fwd(add_bias(mm(x, w), b), y)


def m306_grad(x, w, b, y):
    z = add_bias(mm(x, w), b)
    gz = ce_indices_bwd(z, y)
    return mm(gz, tr(w)), mm(tr(x), gz), colsum(gz), np.zeros_like(y)


@case("306_ad_cross_entropy")
def _(o):
    x = A([1.0, 0.2, -0.5, 0.9, -0.1, 0.3, -0.4, 1.1, 0.2, 0.1, 0.8, -0.6, -0.3, -0.2, 1.2, 0.5, -0.7, 0.9], [6, 3])
    y = A([0.0, 0.0, 1.0, 1.0, 2.0, 2.0], [6])
    w = A([0.1, -0.2, 0.05, 0.3, 0.1, -0.1, -0.2, 0.25, 0.15], [3, 3])
    b = A([0.0, 0.1, -0.1], [3])
    lr = 0.5
    for passus in range(10):
        grads = m306_grad(x, w, b, y)
        o.nota(passus, m306_loss(x, w, b, y))
        if passus == 0:
            for g in grads:
                o.nota(t_(g))
        w = sgd(w, grads[1], lr)
        b = sgd(b, grads[2], lr)
    o.nota(m306_loss(x, w, b, y))
    o.nota(t_(w))
    o.nota(t_(b))
    o.nota(rt.argmax(T(add_bias(mm(x, w), b))))


# ================================================================== finite differences
# Central differences (ε = 1e-6, f64) of each model's step-0 loss against the hand-written
# gradients (tolerance 1e-5 relative, floor 1e-3): a check that the hand derivations above
# are right, independent of the rounding recipes.
def _fd_check(name, loss, grad, args, which):
    worst = 0.0
    gs = grad(*args)
    for i in which:
        base = args[i]
        g = gs[i]
        for idx in np.ndindex(*base.shape):
            eps = 1e-6
            up = [a.copy() for a in args]
            dn = [a.copy() for a in args]
            up[i][idx] += eps
            dn[i][idx] -= eps
            fd = (loss(*up) - loss(*dn)) / (2 * eps)
            err = abs(fd - g[idx]) / max(1e-3, abs(fd))
            worst = max(worst, err)
    print("%-26s worst relative FD error %.2e" % (name, worst))
    return worst


def fd_main():
    rnd = np.random.default_rng(0)
    bad = 0
    a22 = lambda: rnd.normal(size=(2, 2))  # noqa: E731
    args = [a22() for _ in range(4)]
    bad += _fd_check("301", m301_loss, m301_grad, args, range(4)) > 1e-5
    args = [rnd.normal(size=s) for s in ([4, 4], [4, 4], [4], [4, 4], [4], [4, 4])]
    bad += _fd_check("302", m302_loss, m302_grad, args, range(6)) > 1e-5
    args = [rnd.normal(size=s) * 0.5 for s in ([4, 3], [3], [3], [3, 3], [3, 3], [3, 3], [3, 3], [4, 3])]
    bad += _fd_check("303", m303_loss, m303_grad, args, range(8)) > 1e-5
    args = [rnd.normal(size=s) for s in ([3, 2], [2, 2], [2], [3, 2])]
    bad += _fd_check("304 perditio", m304_perditio, m304_perditio_grad, args, range(4)) > 1e-5
    args = [rnd.normal(size=s) for s in ([3, 2], [2, 2], [2], [2, 2], [2], [3, 2])]
    bad += _fd_check("304 totalis", m304_loss, m304_grad, args, range(6)) > 1e-5
    fields = ["w1", "b1", "w2", "b2"]
    x, t = rnd.normal(size=(3, 4)), rnd.normal(size=(3, 4))
    flat_l = lambda w1, b1, w2, b2: m305_loss(dict(zip(fields, (w1, b1, w2, b2))), x, t)  # noqa: E731

    def flat_g(w1, b1, w2, b2):
        g = m305_grad(dict(zip(fields, (w1, b1, w2, b2))), x, t)
        return [g[f] for f in fields]
    args = [rnd.normal(size=s) for s in ([4, 4], [4], [4, 4], [4])]
    bad += _fd_check("305", flat_l, flat_g, args, range(4)) > 1e-5
    y = np.array([0.0, 0.0, 1.0, 1.0, 2.0, 2.0])
    l6 = lambda x, w, b: m306_loss(x, w, b, y)  # noqa: E731
    g6 = lambda x, w, b: m306_grad(x, w, b, y)[:3]  # noqa: E731
    args = [rnd.normal(size=s) for s in ([6, 3], [3, 3], [3])]
    bad += _fd_check("306", l6, g6, args, range(3)) > 1e-5
    print("FD:", "ok" if not bad else "%d models FAIL" % bad)
    return bad


# ================================================================== driver

# ------------------------------------------------------------------ 307
@case("307_ad_branch_reshape")
def _(o):
    x = A([0.1, 0.2, 0.3, -0.4, 0.5, 0.6], [2, 3])
    # d/dx Σ exp(reshape(x)) = exp(x); upstream 2 doubles it
    o.nota(t_(np.exp(x)))
    o.nota(t_(2.0 * np.exp(x)))

def main():
    rundir = os.path.normpath(os.path.join(HERE, "..", "run"))
    args = sys.argv[1:]
    if "--fd" in args:
        sys.exit(1 if fd_main() else 0)
    if "--show" in args:
        key = args[args.index("--show") + 1]
        for name, f in CASES.items():
            if name.startswith(key):
                out = Out()
                f(out)
                sys.stdout.write(out.text())
        return
    write = "--write" in args
    bad = 0
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
    fabs = sorted(n[:-4] for n in os.listdir(rundir) if re.match(r"3\d\d_ad_.*\.fab$", n))
    missing = [n for n in fabs if n not in CASES]
    if missing:
        print("no reference for:", missing)
        bad += 1
    print("%d cases, %d problems" % (len(CASES), bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
