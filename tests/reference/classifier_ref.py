#!/usr/bin/env python3
"""Independent reference for examples/classifier.

examples/classifier trains an MLP 2 → 16 → 16 → 3 (ReLU) full-batch on a synthetic three-arm
spiral with integer-target cross-entropy and AdamW, and prints the loss before each of its 60
steps, then `accuratio <fraction>`. This script recomputes all of it in numpy float64 with the
forward pass, the backward pass and AdamW WRITTEN BY HAND (no autodiff library, nothing read
from faber) and writes tests/reference/classifier.json, which tests/classifier.rs compares with
faber's output (every loss at 1e-9 relative tolerance, the accuracy exactly).

The order of floating-point operations follows faber's documented kernels, so the replay can
agree bit for bit (the test only needs 1e-9):
* data and weights: the program's literal formulas, with Python's math.sin/math.cos (the
  platform libm, as faber's `sinus`/`cosinus`);
* matmul (docs/ops.md, exact kernel for these sizes): acc = a[i,0]·b[0,j], then
  acc += a[i,p]·b[p,j] for p = 1, 2, … — done here column by column of a, vectorised over
  (i, j), which rounds every element exactly as the scalar loop;
* linear(x, w, b) = (x·w) + b per row; relu(z) = z where z > 0, else 0;
* crux_entropia_indices: per row m = max, s = Σ exp(z − m) left to right from 0.0,
  l = (m + ln s) − z[y]; loss = (Σ l from 0.0) / rows (math.exp / math.log per element);
* its gradient (src/tensor/softmax/cross_entropy.rs): per row e_j = exp(z_j − m), s = Σ e_j, p_j = e_j / s,
  p_y −= 1, then (p_j · 1.0) / rows;
* matmul backward: g·wᵀ and xᵀ·g as plain matmuls of explicit transposes; bias gradient:
  column sums starting from row 0, rows added in order; relu backward: g · [z > 0];
* AdamW exactly as gradus-fab/src/optimize.fab `adamw`, per leaf:
      t ← t + 1; bc1 = 1 − β1^t; bc2_sqrt = √(1 − β2^t); step = lr / bc1; decay = 1 − lr·wd
      m ← m·β1 + g·(1 − β1);  v ← v·β2 + (g⊙g)·(1 − β2)
      denom = √v · (1 / bc2_sqrt) + ε;  p ← p·decay − (m / denom)·step
  (β^t is C pow with a float exponent, as Rust's powf).

Run with the bench venv:

    benches/.venv/bin/python tests/reference/classifier_ref.py
"""
import json
import math
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

CLASSES = 3
PER_CLASS = 30
HIDDEN = 16
STEPS = 60
LR = 0.01
BETA1 = 0.9
BETA2 = 0.999
EPS = 1e-8
WD = 0.01


def spirals():
    """Class c, point i: r = 0.2 + 0.8·i/29, t = (2π/3)·c + 4.5·r + 0.3·sin(7i + c)."""
    xs, ys = [], []
    for c in range(CLASSES):
        for i in range(PER_CLASS):
            r = 0.2 + 0.8 * i / (PER_CLASS - 1)
            t = 2.0943951023931953 * c + 4.5 * r + 0.3 * math.sin(7.0 * i + c)
            xs.append([r * math.cos(t), r * math.sin(t)])
            ys.append(c)
    return np.array(xs, dtype=np.float64), ys


def weights(rows, cols, k, scale):
    """scale · sin(12.9898·(i·cols + j) + 78.233·k)."""
    return np.array(
        [[scale * math.sin(12.9898 * (i * cols + j) + 78.233 * k) for j in range(cols)] for i in range(rows)],
        dtype=np.float64,
    )


def matmul(a, b):
    """In-order matmul: acc = a[:,0]·b[0,:], then acc += a[:,p]·b[p,:]."""
    acc = a[:, 0:1] * b[0:1, :]
    for p in range(1, a.shape[1]):
        acc = acc + a[:, p : p + 1] * b[p : p + 1, :]
    return acc


def column_sums(g):
    acc = g[0].copy()
    for r in range(1, g.shape[0]):
        acc = acc + g[r]
    return acc


def relu(z):
    return np.where(z > 0.0, z, 0.0)


def row_max(row):
    m = -math.inf
    for v in row:
        m = max(m, v)
    return m


def cross_entropy(z, ys):
    total = 0.0
    for r, y in enumerate(ys):
        row = [float(v) for v in z[r]]
        m = row_max(row)
        s = 0.0
        for v in row:
            s += math.exp(v - m)
        total += (m + math.log(s)) - row[y]
    return total / len(ys)


def cross_entropy_grad(z, ys):
    n = float(len(ys))
    out = np.empty_like(z)
    for r, y in enumerate(ys):
        row = [float(v) for v in z[r]]
        m = row_max(row)
        e = []
        s = 0.0
        for v in row:
            ev = math.exp(v - m)
            s += ev
            e.append(ev)
        p = [ev / s for ev in e]
        p[y] -= 1.0
        out[r] = [(pv * 1.0) / n for pv in p]
    return out


def forward(params, x):
    w1, b1, w2, b2, w3, b3 = params
    z1 = matmul(x, w1) + b1
    h1 = relu(z1)
    z2 = matmul(h1, w2) + b2
    h2 = relu(z2)
    z3 = matmul(h2, w3) + b3
    return z1, h1, z2, h2, z3


def gradients(params, x, ys):
    w1, b1, w2, b2, w3, b3 = params
    z1, h1, z2, h2, z3 = forward(params, x)
    g3 = cross_entropy_grad(z3, ys)
    gw3 = matmul(h2.T.copy(), g3)
    gb3 = column_sums(g3)
    gh2 = matmul(g3, w3.T.copy())
    gz2 = gh2 * (z2 > 0.0).astype(np.float64)
    gw2 = matmul(h1.T.copy(), gz2)
    gb2 = column_sums(gz2)
    gh1 = matmul(gz2, w2.T.copy())
    gz1 = gh1 * (z1 > 0.0).astype(np.float64)
    gw1 = matmul(x.T.copy(), gz1)
    gb1 = column_sums(gz1)
    return [gw1, gb1, gw2, gb2, gw3, gb3]


def adamw(params, grads, m, v, t):
    t = t + 1
    bc1 = 1.0 - BETA1 ** float(t)
    bc2_sqrt = math.sqrt(1.0 - BETA2 ** float(t))
    step = LR / bc1
    decay = 1.0 - LR * WD
    out_p, out_m, out_v = [], [], []
    for p, g, mi, vi in zip(params, grads, m, v):
        mi = mi * BETA1 + g * (1.0 - BETA1)
        vi = vi * BETA2 + (g * g) * (1.0 - BETA2)
        denom = np.sqrt(vi) * (1.0 / bc2_sqrt) + EPS
        out_p.append(p * decay - (mi / denom) * step)
        out_m.append(mi)
        out_v.append(vi)
    return out_p, out_m, out_v, t


def accuracy(params, x, ys):
    z3 = forward(params, x)[4]
    right = 0
    for r, y in enumerate(ys):
        row = [float(v) for v in z3[r]]
        best = 0
        for j in range(1, len(row)):
            if row[j] > row[best]:
                best = j
        right += best == y
    return right, right / float(len(ys))


def main():
    x, ys = spirals()
    params = [
        weights(2, HIDDEN, 1, 1.0),
        np.zeros(HIDDEN),
        weights(HIDDEN, HIDDEN, 2, 0.35),
        np.zeros(HIDDEN),
        weights(HIDDEN, CLASSES, 3, 0.35),
        np.zeros(CLASSES),
    ]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    t = 0
    losses = []
    for _ in range(STEPS):
        losses.append(cross_entropy(forward(params, x)[4], ys))
        grads = gradients(params, x, ys)
        params, m, v, t = adamw(params, grads, m, v, t)
    right, acc = accuracy(params, x, ys)
    doc = {
        "losses": losses,
        "correct": right,
        "points": len(ys),
        "accuracy": acc,
    }
    with open(os.path.join(HERE, "classifier.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"first loss {losses[0]!r}, last loss {losses[-1]!r}, accuracy {right}/{len(ys)} = {acc!r}")


if __name__ == "__main__":
    main()
