#!/usr/bin/env python3
"""High-precision reference points for the f32 transcendental kernels (issue 21):
exp, tanh, GELU (tanh form) and GELU's derivative, SiLU and its derivative, and ln, evaluated with mpmath at 300 bits
from the f32 inputs and rounded to f32 here (round to nearest, ties to even, with
subnormals and overflow), independently of faber.

Writes tests/reference/f32_transcendentals.json:

    {"exp": [[x_bits, lo_bits, hi_bits, cr_bits], ...], "tanh": [...], "gelu": [...],
     "gelu_derivative": [...], "silu": [...], "silu_derivative": [...], "log": [...]}

with f32 bit patterns (u32): the input x; `lo` ≤ f(x) ≤ `hi` the two adjacent f32 that
bracket the exact value (lo = hi when it is an f32 — or for NaN results, which are
written as the quiet NaN 0x7fc00000); `cr` the correctly rounded f32. The Rust test
(tests/tensor_f32.rs) checks that each kernel returns lo or hi (faithful
rounding) and counts how often it returns cr.

Definitions (mathematical, not faber's code): exp x; tanh x; gelu x = ½x(1 + tanh u),
u = √(2/π)·(x + 0.044715x³) (evaluated as x/(1 + e^(−2u)), the same function, so that
the cancellation of 1 + tanh u costs no precision); gelu′ by mpmath's numerical
derivative of that function at 300 bits; silu x = x/(1 + e^(−x)), silu′ likewise by
mp.diff; ln x for x > 0 (+∞ at +∞). Special values follow IEEE limits: exp(−∞) = 0,
tanh(±∞) = ±1, gelu(+∞) = silu(+∞) = +∞; gelu(−∞) and silu(−∞) are NaN, the value of the f64 kernel's
(½x)·(1 + tanh u) there (−∞·0), which the f32 kernel keeps so that both precisions agree.

Regenerate (Python with mpmath and numpy):

    python3 tests/reference/f32_transcendentals.py
"""
import json
import math
import os
import struct

import mpmath as mp
import numpy as np

mp.mp.prec = 300
NAN_BITS = 0x7FC00000
C = mp.sqrt(2 / mp.pi)
BETA = mp.mpf("0.044715")


def bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def from_bits(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def f32(x):
    """The f32 nearest a Python float (inputs are chosen as f32 already)."""
    return float(np.float32(x))


def next_up(b):
    """Bits of the next f32 above the finite f32 with bits b."""
    v = from_bits(b)
    return bits(float(np.nextafter(np.float32(v), np.float32(np.inf))))


def next_down(b):
    v = from_bits(b)
    return bits(float(np.nextafter(np.float32(v), np.float32(-np.inf))))


FLT_MAX = mp.mpf(float(np.finfo(np.float32).max))
HALF_ULP_MAX = mp.mpf(2) ** 103


def bracket(y):
    """(lo, hi, cr) bit patterns for the exact value y (an mpf, or ±inf)."""
    if mp.isnan(y):
        return NAN_BITS, NAN_BITS, NAN_BITS
    if mp.isinf(y):
        b = bits(math.inf if y > 0 else -math.inf)
        return b, b, b
    if y == 0:
        b = bits(0.0)
        return b, b, b
    if abs(y) > FLT_MAX:
        m = bits(float(FLT_MAX) if y > 0 else -float(FLT_MAX))
        inf = bits(math.inf if y > 0 else -math.inf)
        cr = inf if abs(y) >= FLT_MAX + HALF_ULP_MAX else m
        return (m, inf, cr) if y > 0 else (inf, m, cr)
    # A candidate near y, then step to the pair of adjacent f32 around it.
    c = bits(f32(float(y)))
    if math.isinf(from_bits(c)):
        c = bits(float(FLT_MAX) if y > 0 else -float(FLT_MAX))
    while mp.mpf(from_bits(c)) > y:
        c = next_down(c)
    while mp.mpf(from_bits(next_up(c))) <= y:
        c = next_up(c)
    lo = c
    if mp.mpf(from_bits(lo)) == y:
        return lo, lo, lo
    hi = next_up(lo)
    dl = y - mp.mpf(from_bits(lo))
    dh = mp.mpf(from_bits(hi)) - y
    if dl < dh:
        cr = lo
    elif dh < dl:
        cr = hi
    else:  # a tie: the even significand
        cr = lo if lo % 2 == 0 else hi
    # −0 for a negative value that rounds to zero
    if y < 0 and from_bits(cr) == 0.0:
        cr = bits(-0.0)
    if y < 0 and from_bits(lo) == 0.0:
        lo = bits(-0.0)
    if y < 0 and from_bits(hi) == 0.0:
        hi = bits(-0.0)
    return lo, hi, cr


def gelu(x):
    u = C * (x + BETA * x**3)
    return x / (1 + mp.exp(-2 * u))


def f_exp(x):
    if mp.isinf(x):
        return mp.mpf(0) if x < 0 else mp.inf
    return mp.exp(x)


def f_tanh(x):
    if mp.isinf(x):
        return mp.mpf(1) if x > 0 else mp.mpf(-1)
    return mp.tanh(x)


def f_gelu(x):
    if mp.isinf(x):
        return mp.inf if x > 0 else mp.nan
    return gelu(x)


def f_log(x):
    if mp.isinf(x):
        return mp.inf
    return mp.log(x)


def silu(x):
    return x / (1 + mp.exp(-x))


def f_silu(x):
    if mp.isinf(x):
        return mp.inf if x > 0 else mp.nan
    return silu(x)


def f_silu_derivative(x):
    if mp.isinf(x):
        return mp.nan
    return mp.diff(silu, x)


def f_gelu_derivative(x):
    if mp.isinf(x):
        return mp.nan
    return mp.diff(gelu, x)


def inputs(rng, specials, ranges, per_range):
    xs = list(specials)
    for lo, hi in ranges:
        xs.extend(f32(v) for v in rng.uniform(lo, hi, per_range))
    return xs


def neighbours(x, k):
    """The k f32 on either side of the f32 x, and x."""
    b = bits(f32(x))
    out = [from_bits(b)]
    up, down = b, b
    for _ in range(k):
        up, down = next_up(up), next_down(down)
        out.extend([from_bits(up), from_bits(down)])
    return out


def common_specials():
    sub = [from_bits(1), from_bits(2), from_bits(0x000FFFFF), f32(1e-40), f32(1e-45)]
    tiny = [f32(1e-30), f32(1e-20), f32(1e-8), f32(2.0**-12), f32(2.0**-13), f32(3e-4)]
    vals = [0.0, -0.0, math.inf, -math.inf, math.nan, float(np.finfo(np.float32).tiny)]
    for v in sub + tiny + [1.0, 0.5, 2.0, 10.0, 1e30, float(np.finfo(np.float32).max)]:
        vals.extend([v, -v])
    return vals


def main():
    rng = np.random.default_rng(20261202)
    cases = {}
    exp_specials = common_specials()
    # ln((2 − 2⁻²⁴)·2¹²⁷) = 88.7228391…: the overflow threshold; ln 2⁻¹²⁶ = −87.3365…
    # (normal/subnormal); ln 2⁻¹⁴⁹ = −103.2789…, ln 2⁻¹⁵⁰ = −103.9720… (underflow).
    for t in [88.72283935546875, -87.33654475, -103.27892990343184, -103.97207708399179]:
        exp_specials.extend(neighbours(t, 6))
    cases["exp"] = (
        f_exp,
        inputs(rng, exp_specials, [(-104.0, 89.0), (-1.0, 1.0), (-1e-3, 1e-3), (-110.0, -85.0), (80.0, 90.0)], 300),
    )
    tanh_specials = common_specials()
    # 1 − tanh x < 2⁻²⁵ (rounds to 1) from x ≈ 9.0109…; small x where tanh x rounds to x.
    tanh_specials.extend(neighbours(9.010913, 6))
    tanh_specials.extend(neighbours(2.0**-11.5, 4))
    cases["tanh"] = (
        f_tanh,
        inputs(rng, tanh_specials, [(-10.0, 10.0), (-1.0, 1.0), (-1e-2, 1e-2), (-20.0, 20.0)], 300),
    )
    gelu_specials = common_specials() + [f32(-12.0), f32(-13.5), f32(-14.0), f32(-20.0), f32(-0.7517)]
    cases["gelu"] = (
        f_gelu,
        inputs(rng, gelu_specials, [(-6.0, 6.0), (-1.0, 1.0), (-15.0, -5.0), (5.0, 12.0)], 300),
    )
    deriv_specials = [v for v in common_specials() if not math.isinf(v) and abs(v) < 1e29]
    cases["gelu_derivative"] = (
        f_gelu_derivative,
        inputs(rng, deriv_specials, [(-6.0, 6.0), (-1.0, 1.0), (-12.0, -4.0)], 200),
    )
    log_specials = [v for v in common_specials() if v > 0] + [math.inf] + neighbours(1.0, 8)
    cases["log"] = (
        f_log,
        inputs(rng, log_specials, [(0.0, 2.0), (0.9, 1.1), (1.0, 1e6), (1e-38, 1e-30)], 200),
    )
    silu_specials = common_specials() + [f32(-1.2785), f32(-90.0), f32(-104.0), f32(-110.0)]
    cases["silu"] = (
        f_silu,
        inputs(rng, silu_specials, [(-8.0, 8.0), (-110.0, -20.0), (20.0, 100.0)], 200),
    )
    cases["silu_derivative"] = (
        f_silu_derivative,
        inputs(rng, deriv_specials, [(-8.0, 8.0), (-60.0, -10.0)], 200),
    )
    out = {}
    for name, (f, xs) in cases.items():
        rows = []
        for x in xs:
            xb = NAN_BITS if math.isnan(x) else bits(x)
            xm = mp.nan if math.isnan(x) else (mp.inf if x == math.inf else (-mp.inf if x == -math.inf else mp.mpf(x)))
            y = mp.nan if math.isnan(x) else f(xm)
            lo, hi, cr = bracket(y)
            # mpmath has no signed zero: tanh and gelu are odd at 0, so −0 ↦ −0.
            if x == 0.0 and math.copysign(1.0, x) < 0 and name in ("tanh", "gelu", "silu"):
                lo = hi = cr = bits(-0.0)
            rows.append([xb, lo, hi, cr])
        out[name] = rows
        print(f"{name}: {len(rows)} points")
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "f32_transcendentals.json")
    with open(path, "w") as fh:
        json.dump(out, fh, separators=(",", ":"))
        fh.write("\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
