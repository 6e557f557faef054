#!/usr/bin/env python3
"""Peers side of benches/autodiff/run.sh: the two-layer MLP of mlp4.fab and
mlp256.fab (x·w1 + b1 → GELU tanh form → ·w2 + b2, mean squared error) in
PyTorch eager float64 (forward under no_grad; forward + loss.backward() with
grads set to None each step) at 1 and 2 threads, and jax.jit float64 (loss;
value_and_grad), gradients with respect to all six inputs as faber's companion
returns them. Per-step figure = median of many steps after warm-up, best of
--rounds. Prints the table; faber's per-call µs at T threads come in as
`mlp4/T=FWD,COMP`.

    benches/.venv-peers/bin/python benches/autodiff/peers.py [--rounds 3] [mlp4/1=5.5,15 ...]
"""
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import torch

jax.config.update("jax_enable_x64", True)
SIZES = {"mlp4": 4, "mlp256": 256}  # batch = in = hidden = out


def median_step(step, target=1.0):
    """Median wall time (s) of one call of `step` over ~`target` seconds."""
    for _ in range(10):
        step()
    t = time.perf_counter()
    step()
    one = time.perf_counter() - t
    times = []
    for _ in range(int(min(20000, max(50, target / one)))):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def data(n):
    """x, w1, b1, w2, b2, y as float64 numpy arrays, scaled like the .fab files."""
    r = np.random.default_rng(1)
    return [r.normal(0, s, shape) for s, shape in
            [(1, (n, n)), (0.1, (n, n)), (0.1, (n,)), (0.1, (n, n)), (0.1, (n,)), (1, (n, n))]]


def torch_loss(x, w1, b1, w2, b2, y):
    h = torch.nn.functional.gelu(x @ w1 + b1, approximate="tanh")
    e = h @ w2 + b2 - y
    return (e * e).mean()


def jax_loss(x, w1, b1, w2, b2, y):
    h = jax.nn.gelu(x @ w1 + b1, approximate=True)  # the tanh form
    e = h @ w2 + b2 - y
    return jnp.mean(e * e)


def torch_times(arrays, rounds):
    ps = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]

    def fwd():
        with torch.no_grad():
            torch_loss(*ps).item()

    def step():
        for p in ps:
            p.grad = None  # what optimizer.zero_grad() does
        torch_loss(*ps).backward()

    return (min(median_step(fwd) for _ in range(rounds)),
            min(median_step(step) for _ in range(rounds)))


def jax_times(arrays, rounds):
    ps = [jnp.asarray(a, dtype=jnp.float64) for a in arrays]
    fwd = jax.jit(jax_loss)
    vg = jax.jit(jax.value_and_grad(jax_loss, argnums=tuple(range(6))))
    return (min(median_step(lambda: fwd(*ps).block_until_ready()) for _ in range(rounds)),
            min(median_step(lambda: jax.block_until_ready(vg(*ps))) for _ in range(rounds)))


def main():
    argv = sys.argv[1:]
    rounds = 3
    if "--rounds" in argv:
        i = argv.index("--rounds")
        rounds = int(argv[i + 1])
        del argv[i:i + 2]
    faber = {m: tuple(map(float, v.split(","))) for m, v in (a.split("=") for a in argv)}
    print(f"torch {torch.__version__}, jax {jax.__version__} ({jax.device_count()} cpu device), "
          f"float64, median step, best of {rounds}; times in µs")
    head = ("model", "faber fwd", "faber comp", "ratio", "threads", "torch fwd",
            "torch f+b", "ratio", "jax fwd", "jax v&g", "ratio", "faber/torch")
    print("%-7s %10s %10s %6s %9s %10s %10s %6s %10s %10s %6s %11s" % head)
    for m, n in SIZES.items():
        arrays = data(n)
        jf, jg = jax_times(arrays, rounds)  # jax: XLA's own thread pool
        for threads in (1, 2):
            ff, fc = faber.get(f"{m}/{threads}", (float("nan"), float("nan")))
            torch.set_num_threads(threads)
            tf, tg = torch_times(arrays, rounds)
            print("%-7s %10.1f %10.1f %6.2f %9d %10.1f %10.1f %6.2f %10.1f %10.1f %6.2f %11.2f" % (
                m, ff, fc, fc / ff, threads, tf * 1e6, tg * 1e6, tg / tf,
                jf * 1e6, jg * 1e6, jg / jf, fc / (tg * 1e6)))
    print("faber comp = one call of the generated companion (it recomputes the forward),"
          " i.e. faber's fwd+bwd step; faber/torch = faber comp / torch f+b;\n"
          "threads = faber's and torch's; jax uses XLA's default pool.")


if __name__ == "__main__":
    main()
