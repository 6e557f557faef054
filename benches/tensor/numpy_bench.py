#!/usr/bin/env python3
"""numpy side of benches/tensor/run.sh: the same figures as benches/tensor.rs
(f64 GEMM at 64/256/1024 in GFLOP/s; add and softmax on 1M elements in GB/s),
printed as `<name> <value> <unit>`. Thread count pinned with threadpoolctl
(BLAS) — numpy's elementwise ufuncs are single-threaded anyway."""
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
quick = "--quick" in sys.argv
target = 0.2 if quick else 1.0


def best(f):
    f()
    t = time.perf_counter()
    f()
    one = max(time.perf_counter() - t, 1e-7)
    reps = max(1, min(100000, int(target / 5 / one)))
    b = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(reps):
            f()
        b = min(b, (time.perf_counter() - t) / reps)
    return b


def softmax(x):
    m = x.max(axis=-1, keepdims=True)
    e = np.exp(x - m)
    e /= e.sum(axis=-1, keepdims=True)
    return e


with threadpool_limits(limits=threads):
    rng = np.random.default_rng(1)
    for n in (64, 256, 1024):
        a = rng.standard_normal((n, n))
        b = rng.standard_normal((n, n))
        s = best(lambda: a @ b)
        print(f"gemm_{n} {2 * n ** 3 / s / 1e9:.2f} GFLOP/s")
    n = 1 << 20
    x = rng.standard_normal(n)
    y = rng.standard_normal(n)
    s = best(lambda: x + y)
    print(f"add_1M {3 * 8 * n / s / 1e9:.2f} GB/s")
    xm = x.reshape(1024, 1024)
    s = best(lambda: softmax(xm))
    print(f"softmax_1M {2 * 8 * n / s / 1e9:.2f} GB/s")
