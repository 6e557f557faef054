#!/usr/bin/env python3
"""Independent reference for the loss traces of the gradus example programs.

examples/linear-regression, examples/mlp and examples/bert-tiny each print the loss before
every SGD step, one per line. This script recomputes those traces in numpy float64 with the
forward passes and the gradients WRITTEN BY HAND for each model (no autodiff library, nothing
read from faber), and writes tests/reference/examples.json, which tests/examples.rs compares
with faber's output at 1e-9 relative tolerance.

Definitions follow docs/gradus.md and docs/ops.md:
* linear_2x2 / linear_4x4: x·w + b (b a full matrix); linear_2x8: x·w + b[row];
* mse: mean((p − t)²);
* gelu_4x4: 0.5·x·(1 + tanh(u)), u = √(2/π)·(x + 0.044715·x³) (np.tanh, within 1e-16 of the
  correctly rounded tanh faber uses);
* gelu_2x8 (bert): the same with tanh(u) computed as 1 − 2/(e^{2u}+1) for u ≥ 0 and
  2/(e^{−2u}+1) − 1 for u < 0;
* layernorm_2x8: per row (x − mean)/√(var + 1e-5)·γ + β, population variance;
* scaled_dot_product_2x8: softmax_rows((q·kᵀ) ⊙ scale)·v;
* SGD: p − g·lr.

Run with the bench venv:

    benches/.venv/bin/python tests/reference/examples_ref.py          # write examples.json
    benches/.venv/bin/python tests/reference/examples_ref.py --fd     # also check every
                                                                     # hand-written gradient
                                                                     # by central differences
"""
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
C = math.sqrt(2.0 / math.pi)
B = 0.044715

# ----------------------------------------------------------------- building blocks


def arr(values, shape):
    return np.array(values, dtype=np.float64).reshape(shape)


def tabula(k, shape, d):
    """examples/bert-tiny's fixed tensors: element n = (((7n + 5k) mod 17) − 8) / d."""
    count = int(np.prod(shape))
    return arr([(((7 * n + 5 * k) % 17) - 8) / d for n in range(count)], shape)


def mse(p, t):
    d = p - t
    return float(np.mean(d * d)), 2.0 * d / d.size


def tanh_exp(u):
    """tanh by the exp identity (the bert shim's GELU)."""
    out = np.empty_like(u)
    pos = u >= 0
    out[pos] = 1.0 - 2.0 / (np.exp(2.0 * u[pos]) + 1.0)
    out[~pos] = 2.0 / (np.exp(-2.0 * u[~pos]) + 1.0) - 1.0
    return out


def gelu(x, tanh=np.tanh):
    t = tanh(C * (x + B * x * x * x))
    return 0.5 * x * (1.0 + t), t


def gelu_grad(x, t, g):
    du = C * (1.0 + 3.0 * B * x * x)
    return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du)


def layernorm(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    c = x - mean
    var = (c * c).mean(axis=-1, keepdims=True)
    inv = 1.0 / np.sqrt(var + eps)
    xh = c * inv
    return xh * gamma + beta, (xh, inv)


def layernorm_grad(cache, gamma, g):
    xh, inv = cache
    d = xh.shape[-1]
    ggamma = (xh * g).sum(axis=0)
    gbeta = g.sum(axis=0)
    h = g * gamma
    gx = inv * (h - h.sum(axis=-1, keepdims=True) / d - xh * (h * xh).sum(axis=-1, keepdims=True) / d)
    return gx, ggamma, gbeta


def softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# ----------------------------------------------------------------- linear regression


def lr_loss_grads(p, data):
    x, y = data["x"], data["y"]
    pred = x @ p["w"] + p["b"]
    loss, gpred = mse(pred, y)
    return loss, {"w": x.T @ gpred, "b": gpred}


def linear_regression():
    data = {
        "x": arr([1.0, 2.0, -1.0, 0.5], (2, 2)),
        "y": arr([0.5, -1.0, 1.5, 2.0], (2, 2)),
    }
    params = {
        "w": arr([0.3, -0.2, 0.1, 0.4], (2, 2)),
        "b": arr([0.0, 0.1, -0.1, 0.2], (2, 2)),
    }
    return lr_loss_grads, data, params, 0.1, 8


# ----------------------------------------------------------------- MLP


def mlp_loss_grads(p, data):
    x, t = data["x"], data["t"]
    z1 = x @ p["w1"] + p["b1"]
    h, th = gelu(z1)
    z2 = h @ p["w2"] + p["b2"]
    loss, gz2 = mse(z2, t)
    gh = gz2 @ p["w2"].T
    gz1 = gelu_grad(z1, th, gh)
    return loss, {"w1": x.T @ gz1, "b1": gz1, "w2": h.T @ gz2, "b2": gz2}


def mlp():
    data = {
        "x": arr([0.9, -0.3, 0.4, 1.2, -0.8, 0.5, -1.1, 0.2, 0.3, 1.0, 0.6, -0.4, -0.2, -0.7, 0.1, 0.8], (4, 4)),
        "t": arr([0.2, -0.5, 0.7, 0.1, 0.6, 0.3, -0.2, -0.8, -0.4, 0.9, 0.05, 0.3, 0.1, 0.0, -0.6, 0.5], (4, 4)),
    }
    params = {
        "w1": arr([0.2, -0.4, 0.1, 0.5, 0.3, 0.2, -0.3, -0.1, -0.5, 0.1, 0.4, 0.2, 0.1, 0.6, -0.2, 0.3], (4, 4)),
        "b1": arr([0.05, -0.1, 0.0, 0.1, 0.0, 0.05, -0.05, 0.1, 0.1, 0.0, 0.05, -0.1, -0.05, 0.1, 0.0, 0.05], (4, 4)),
        "w2": arr([-0.3, 0.2, 0.5, -0.1, 0.4, -0.5, 0.1, 0.3, 0.2, 0.3, -0.4, 0.6, -0.1, 0.4, 0.2, -0.2], (4, 4)),
        "b2": arr([0.0, 0.1, -0.1, 0.05, 0.1, 0.0, 0.05, -0.05, -0.1, 0.05, 0.0, 0.1, 0.05, -0.05, 0.1, 0.0], (4, 4)),
    }
    return mlp_loss_grads, data, params, 0.1, 100


# ----------------------------------------------------------------- BERT-tiny block


def bert_loss_grads(p, data):
    x, target, scale = data["input"], data["target"], data["dk_scale"]
    # forward
    ln1, c1 = layernorm(x, p["ln1_s"], p["ln1_o"])
    q = ln1 @ p["wq"] + p["bq"]
    k = ln1 @ p["wk"] + p["bk"]
    v = ln1 @ p["wv"] + p["bv"]
    s = (q @ k.T) * scale
    a = softmax(s)
    ctx = a @ v
    r1 = x + ctx @ p["wo"] + p["bo"]
    ln2, c2 = layernorm(r1, p["ln2_s"], p["ln2_o"])
    f1 = ln2 @ p["wf1"] + p["bf1"]
    hg, tg = gelu(f1, tanh_exp)
    r2 = ln2 + hg @ p["wf2"] + p["bf2"]
    out, c3 = layernorm(r2, p["ln3_s"], p["ln3_o"])
    loss, gout = mse(out, target)
    # backward
    g = {}
    gr2, g["ln3_s"], g["ln3_o"] = layernorm_grad(c3, p["ln3_s"], gout)
    g["wf2"], g["bf2"] = hg.T @ gr2, gr2.sum(axis=0)
    gf1 = gelu_grad(f1, tg, gr2 @ p["wf2"].T)
    g["wf1"], g["bf1"] = ln2.T @ gf1, gf1.sum(axis=0)
    gln2 = gr2 + gf1 @ p["wf1"].T
    gr1, g["ln2_s"], g["ln2_o"] = layernorm_grad(c2, p["ln2_s"], gln2)
    g["wo"], g["bo"] = ctx.T @ gr1, gr1.sum(axis=0)
    gctx = gr1 @ p["wo"].T
    ga = gctx @ v.T
    gv = a.T @ gctx
    gs = a * (ga - (ga * a).sum(axis=-1, keepdims=True))
    gqk = gs * scale
    gq = gqk @ k
    gk = gqk.T @ q
    g["wq"], g["bq"] = ln1.T @ gq, gq.sum(axis=0)
    g["wk"], g["bk"] = ln1.T @ gk, gk.sum(axis=0)
    g["wv"], g["bv"] = ln1.T @ gv, gv.sum(axis=0)
    gln1 = gq @ p["wq"].T + gk @ p["wk"].T + gv @ p["wv"].T
    _, g["ln1_s"], g["ln1_o"] = layernorm_grad(c1, p["ln1_s"], gln1)
    return loss, g


def bert_tiny():
    data = {
        "input": tabula(1, (2, 8), 8.0),
        "target": tabula(2, (2, 8), 8.0),
        "dk_scale": np.full((2, 2), 0.35355339059327373),
    }
    params = {}
    for ln in ("ln1", "ln2", "ln3"):
        params[ln + "_s"] = np.ones(8)
        params[ln + "_o"] = np.zeros(8)
    k = 3
    for name in ("q", "k", "v", "o", "f1", "f2"):
        params["w" + name] = tabula(k, (8, 8), 32.0)
        params["b" + name] = tabula(k + 1, (8,), 64.0)
        k += 2
    return bert_loss_grads, data, params, 0.1, 8


# ----------------------------------------------------------------- driver

EXAMPLES = {
    "linear-regression": linear_regression,
    "mlp": mlp,
    "bert-tiny": bert_tiny,
}


def trace(fn, data, params, lr, steps):
    params = {n: v.copy() for n, v in params.items()}
    losses = []
    for _ in range(steps):
        loss, grads = fn(params, data)
        losses.append(loss)
        for n in params:
            params[n] = params[n] - grads[n] * lr
    return losses


def fd_check(name, fn, data, params, eps=1e-6):
    """Every hand-written gradient element against a central difference of the loss."""
    _, grads = fn(params, data)
    worst = 0.0
    for n, p in params.items():
        assert grads[n].shape == p.shape, (name, n, grads[n].shape, p.shape)
        for idx in np.ndindex(p.shape):
            plus = {m: v.copy() for m, v in params.items()}
            minus = {m: v.copy() for m, v in params.items()}
            plus[n][idx] += eps
            minus[n][idx] -= eps
            num = (fn(plus, data)[0] - fn(minus, data)[0]) / (2 * eps)
            err = abs(num - grads[n][idx]) / max(1.0, abs(num))
            worst = max(worst, err)
    print(f"{name}: worst relative gradient error {worst:.2e}")
    return worst < 1e-7


def main():
    ok = True
    out = {}
    for name, make in EXAMPLES.items():
        fn, data, params, lr, steps = make()
        if "--fd" in sys.argv:
            ok &= fd_check(name, fn, data, params)
        out[name] = trace(fn, data, params, lr, steps)
        print(f"{name}: {len(out[name])} losses, first {out[name][0]!r}, last {out[name][-1]!r}")
    with open(os.path.join(HERE, "examples.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    if not ok:
        sys.exit("a hand-written gradient disagrees with finite differences")


if __name__ == "__main__":
    main()
