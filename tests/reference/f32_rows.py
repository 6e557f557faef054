#!/usr/bin/env python3
"""Reference values for the f32 row kernels wired into the tensor ops (issue 21):
exp, tanh, GELU and SiLU with their VJPs and the exp-identity forms, softmax and
log-softmax with their VJPs, LayerNorm, RMSNorm, the cross-entropies and the embedding.

Every input is an f32 array (numpy float32, from a fixed seed); every reference is
computed here with numpy in float64 from those f32 values, from the mathematical
definitions in docs/ops.md, independently of faber's code. Writes
tests/reference/f32_rows.json:

    {"cases": [{"op": name,
                "inputs": {name: {"shape": [...], "bits": [f32 bits, ...]}, ...},
                "params": {name: number, ...},
                "outputs": [{"ref": [f64, ...], "mag": [f64, ...]}, ...]}, ...]}

`ref` is the exact-math value of each result element (to numpy's float64 accuracy,
about 1e-16 relative on these inputs); `mag` is the size the element's stated error
bound scales with (tests/f32_rows.rs multiplies it by each op's ε; see the comments
below for what it is per op). For results compared bit for bit (the embedding gather,
`retro_gelu_derivata`'s f32 product) `ref` holds the float32 value numpy computes.

Regenerate (numpy):

    benches/.venv-peers/bin/python tests/reference/f32_rows.py
"""
import json
import os

import numpy as np

RNG = np.random.default_rng(2121)
C = np.sqrt(2.0 / np.pi)  # the f64 constant GELU_C = 0.7978845608028654
BETA = 0.044715


def f32(a):
    return np.asarray(a, dtype=np.float32)


def normal(shape, scale, loc=0.0):
    return f32(RNG.normal(loc, scale, size=shape))


def tensor(a):
    a = f32(a)
    return {"shape": list(a.shape), "bits": a.reshape(-1).view(np.uint32).tolist()}


def out(ref, mag=None):
    ref = np.asarray(ref, dtype=np.float64).reshape(-1)
    mag = np.zeros_like(ref) if mag is None else np.asarray(mag, dtype=np.float64).reshape(-1)
    assert ref.shape == mag.shape
    return {"ref": [float(v) for v in ref], "mag": [float(v) for v in mag]}


def w(a):
    """The f32 values, exactly, in float64."""
    return np.asarray(a, dtype=np.float64)


CASES = []


def case(op, inputs, outputs, params=None):
    CASES.append(
        {
            "op": op,
            "inputs": {k: tensor(v) for k, v in inputs.items()},
            "params": params or {},
            "outputs": outputs,
        }
    )


def elementwise_x(scale, extra):
    x = np.concatenate([normal(126 - len(extra), scale), f32(extra)])
    return x.reshape(3, 42)


def gelu_parts(x):
    """GELU's u, σ(2u) = ½(1 + tanh u), and the derivative's two terms."""
    u = C * (x + BETA * x**3)
    s = 1.0 / (1.0 + np.exp(-2.0 * u))  # = ½(1 + tanh u), no cancellation
    dz = 2.0 * C * (1.0 + 3.0 * BETA * x * x)
    t1 = s
    t2 = x * s * (1.0 - s) * dz
    return u, s, t1, t2


# --- element-wise maps (mag unused where the test asks for faithful rounding) -------
x = elementwise_x(20.0, [0.0, -0.0, 1e-30, 88.5, -100.0, -104.0])
case("exp", {"x": x}, [out(np.exp(w(x)))])

x = elementwise_x(3.0, [0.0, -0.0, 1e-30, 9.5, -20.0])
case("tanh", {"x": x}, [out(np.tanh(w(x)))])
# tanh by the exp identity: absolute bound (mag 1), including small arguments.
x = elementwise_x(3.0, [0.0, 1e-30, 1e-9, -3e-6, 2e-4, 9.5, -20.0])
case("tanh_per_exp", {"x": x}, [out(np.tanh(w(x)), np.ones(x.size))])

x = elementwise_x(3.0, [0.0, -0.0, 1e-30, -9.0, -12.0, 11.0])
xw = w(x)
u, s, t1, t2 = gelu_parts(xw)
g = normal(x.shape, 1.5)
gw = w(g)
case("gelu", {"x": x}, [out(xw * s)])
# the exp-identity recipe cancels: mag |x|
case("gelu_per_exp", {"x": x}, [out(xw * s, np.abs(xw))])
# (y, d): y faithful; d with mag σ + |x·σ·(1 − σ)·z′|
case("gelu_cum_derivata", {"x": x}, [out(xw * s), out(t1 + t2, np.abs(t1) + np.abs(t2))])
case("retro_gelu", {"g": g, "x": x}, [out(gw * (t1 + t2), np.abs(gw) * (np.abs(t1) + np.abs(t2)))])
du = C * (1.0 + 3.0 * BETA * xw * xw)
case(
    "retro_gelu_per_exp",
    {"g": g, "x": x},
    [out(gw * (t1 + t2), np.abs(gw) * (1.0 + np.abs(xw) * du))],
)
d = normal(x.shape, 0.7)
case("retro_gelu_derivata", {"g": g, "d": d}, [out(g * d)])  # float32 product, exact

x = elementwise_x(4.0, [0.0, -0.0, 1e-30, -30.0, -200.0, 100.0])
xw = w(x)
s = 1.0 / (1.0 + np.exp(-xw))
g = normal(x.shape, 1.5)
gw = w(g)
case("silu", {"x": x}, [out(xw * s)])
t1, t2 = s, xw * s * (1.0 - s)
case("retro_silu", {"g": g, "x": x}, [out(gw * (t1 + t2), np.abs(gw) * (np.abs(t1) + np.abs(t2)))])


# --- the softmax family over the last axis ------------------------------------------
def softmax64(xw):
    m = xw.max(axis=-1, keepdims=True)
    e = np.exp(xw - m)
    s = e.sum(axis=-1, keepdims=True)
    return e / s, m, s


for shape, scale in [((2, 3, 65), 4.0), ((5, 8), 30.0), ((4, 1), 1.0)]:
    x = normal(shape, scale)
    xw = w(x)
    p, m, ssum = softmax64(xw)
    case("softmax", {"x": x}, [out(p)])
    # log-softmax: mag |x − m| + |ln s| + 1
    case(
        "log_softmax",
        {"x": x},
        [out((xw - m) - np.log(ssum), np.abs(xw - m) + np.abs(np.log(ssum)) + 1.0)],
    )
    g = normal(shape, 1.0)
    gw = w(g)
    y = f32(p)  # any f32 y: the VJP's input, here the rounded softmax
    yw = w(y)
    dot = (gw * yw).sum(axis=-1, keepdims=True)
    absdot = np.abs(gw * yw).sum(axis=-1, keepdims=True)
    ref = yw * (gw - dot)
    # retro_softmax: mag |yⱼ|·Σ|g·y| + |ref|
    case("retro_softmax", {"g": g, "y": y}, [out(ref, np.abs(yw) * absdot + np.abs(ref))])
    sg = gw.sum(axis=-1, keepdims=True)
    sa = np.abs(gw).sum(axis=-1, keepdims=True)
    # retro_log_softmax: mag pⱼ·Σ|g| + |gⱼ|
    case("retro_log_softmax", {"g": g, "x": x}, [out(gw - p * sg, p * sa + np.abs(gw))])


# --- LayerNorm and RMSNorm ------------------------------------------------------------
def layernorm_parts(xw, eps):
    mean = xw.mean(axis=-1, keepdims=True)
    c = xw - mean
    var = (c * c).mean(axis=-1, keepdims=True)
    inv = 1.0 / np.sqrt(var + eps)
    a = inv * np.abs(xw).mean(axis=-1, keepdims=True)  # the row's size over its spread
    return c * inv, inv, a


EPS = 1e-5
for rows, dd, loc in [(6, 64, 0.5), (5, 13, 3.0), (3, 1, 0.0)]:
    x = normal((rows, dd), 2.0, loc)
    gamma = normal(dd, 0.3, 1.0)
    beta = normal(dd, 0.3)
    g = normal((rows, dd), 1.0)
    r = normal((rows, dd), 1.0)
    rrow = normal(dd, 1.0)
    xw, gm, bt, gw = w(x), w(gamma), w(beta), w(g)
    xh, inv, a = layernorm_parts(xw, EPS)
    y = xh * gm + bt
    # laminatio: mag |x̂γ|·(1 + a) + |γ|·a + |β|
    case(
        "laminatio",
        {"x": x, "gamma": gamma, "beta": beta},
        [out(y, np.abs(xh * gm) * (1.0 + a) + np.abs(gm) * a + np.abs(bt))],
        {"eps": EPS},
    )
    h = gw * gm
    s1 = h.mean(axis=-1, keepdims=True)
    s2 = (h * xh).mean(axis=-1, keepdims=True)
    gx = inv * (h - s1 - xh * s2)
    mag_gx = (
        inv
        * (np.abs(h) + np.abs(h).mean(axis=-1, keepdims=True)
           + np.abs(xh) * np.abs(h * xh).mean(axis=-1, keepdims=True))
        * (1.0 + a)
    )
    gg = (xh * gw).sum(axis=0)
    mag_gg = (np.abs(xh * gw) * (1.0 + a)).sum(axis=0)
    gb = gw.sum(axis=0)
    mag_gb = np.abs(gw).sum(axis=0)
    outs = [out(gx, mag_gx), out(gg, mag_gg), out(gb, mag_gb)]
    case("retro_laminatio", {"g": g, "x": x, "gamma": gamma}, outs, {"eps": EPS})
    for addend in (r, rrow):
        ref = w(addend) + gx  # broadcast for the row
        outs = [out(ref, np.broadcast_to(mag_gx, ref.shape)), out(gg, mag_gg), out(gb, mag_gb)]
        case(
            "retro_laminatio_adde",
            {"g": g, "x": x, "gamma": gamma, "r": addend},
            outs,
            {"eps": EPS},
        )
    # RMSNorm
    ss = (xw * xw).mean(axis=-1, keepdims=True)
    invr = 1.0 / np.sqrt(ss + EPS)
    xhr = xw * invr
    yr = xhr * gm
    case("rms_norm", {"x": x, "gamma": gamma}, [out(yr, np.abs(yr))], {"eps": EPS})
    h = gw * gm
    m = (h * xhr).mean(axis=-1, keepdims=True)
    gxr = invr * (h - xhr * m)
    mag = invr * (np.abs(h) + np.abs(xhr) * np.abs(h * xhr).mean(axis=-1, keepdims=True))
    ggr = (gw * xhr).sum(axis=0)
    case(
        "retro_rms_norm",
        {"g": g, "x": x, "gamma": gamma},
        [out(gxr, mag), out(ggr, np.abs(gw * xhr).sum(axis=0))],
        {"eps": EPS},
    )


# --- the cross-entropies ------------------------------------------------------------
for shape, scale in [((2, 7, 65), 3.0), ((9, 5), 20.0)]:
    z = normal(shape, scale)
    zw = w(z)
    v = shape[-1]
    lead = shape[:-1]
    ids = RNG.integers(0, v, size=lead)
    y = f32(ids)
    p, m, ssum = softmax64(zw)
    lse = m[..., 0] + np.log(ssum[..., 0])
    zid = np.take_along_axis(zw, ids[..., None], axis=-1)[..., 0]
    rows = int(np.prod(lead))
    loss = (lse - zid).mean()
    # crux_entropia_indices: mag mean over rows of |m| + |z[id]| + |lse| + 1
    mag = (np.abs(m[..., 0]) + np.abs(zid) + np.abs(lse) + 1.0).mean()
    case("crux_entropia_indices", {"z": z, "y": y}, [out([loss], [mag])])
    G = 0.75
    onehot = np.zeros_like(zw)
    np.put_along_axis(onehot, ids[..., None], 1.0, axis=-1)
    # retro_crux_indices: mag (p + 1)·|g|/rows
    case(
        "retro_crux_indices",
        {"z": z, "y": y},
        [out((p - onehot) * G / rows, (p + 1.0) * G / rows)],
        {"g": G},
    )
    # probability targets (any finite values: some negative)
    t = f32(RNG.dirichlet(np.ones(v), size=lead) * 1.5 - 0.1 * RNG.random(size=shape))
    tw = w(t)
    lnp = np.log(p + 1e-7)
    cc = float(v)
    loss = -(tw * lnp).sum() / cc
    # crux_entropia: mag (Σ|t| + Σ|t·ln(p + 1e-7)|)/c
    mag = (np.abs(tw).sum() + np.abs(tw * lnp).sum()) / cc
    case("crux_entropia", {"x": z, "t": t}, [out([loss], [mag])])
    rr = tw * p / (p + 1e-7)
    sr = rr.sum(axis=-1, keepdims=True)
    sra = np.abs(rr).sum(axis=-1, keepdims=True)
    # retro_crux_entropia: mag (pₖ·Σ|r| + |rₖ|)·|g|/c
    case(
        "retro_crux_entropia",
        {"x": z, "t": t},
        [out((p * sr - rr) * G / cc, (p * sra + np.abs(rr)) * G / cc)],
        {"g": G},
    )
    # retro_crux_scopi: mag (1 + |ln(p + 1e-7)|)·|g|/c
    case(
        "retro_crux_scopi",
        {"x": z},
        [out(-lnp * G / cc, (1.0 + np.abs(lnp)) * G / cc)],
        {"g": G},
    )


# --- the embedding ------------------------------------------------------------------
table = normal((11, 6), 1.0)
ids = RNG.integers(0, 11, size=(3, 7))
ids[0, :4] = 5  # a repeated id
case("collige", {"table": table, "ids": f32(ids)}, [out(table[ids])])
g = normal((3, 7, 6), 1.0)
gt = np.zeros((11, 6))
mag = np.zeros((11, 6))
np.add.at(gt, ids, w(g))
np.add.at(mag, ids, np.abs(w(g)))
# retro_collige: mag Σ|terms| of each table element
case("retro_collige", {"ids": f32(ids), "g": g, "table": table}, [out(gt, mag)])

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "f32_rows.json")
with open(path, "w") as f:
    json.dump({"cases": CASES}, f, separators=(",", ":"))
    f.write("\n")
print(f"{path}: {len(CASES)} cases")
