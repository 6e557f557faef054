#!/usr/bin/env python3
"""Peers of benches/linreg/: examples/linear-regression (2×2 linear x·w + b, mean squared
error against y, SGD with lr 0.1 on w and b) in PyTorch eager, jax.jit and numpy, float64.

Two modes:

    peers.py program torch|jax|numpy      # the 8-step program: prints the loss before each
                                          # step, like `faber run examples/linear-regression`;
                                          # imports only its own framework, so the shell can
                                          # time start-up + import + 8 steps (run.sh does)
    peers.py steps [--n 100000] [--rounds 3] [--only torch,jax,numpy]
                                          # per-step time: after warm-up, N chained steps,
                                          # prints `name mean_µs median_µs`: loop wall
                                          # time / N, and the median of N steps timed one
                                          # by one (each synced); best of --rounds

The step, per peer:
  torch  eager, 1 thread (torch.set_num_threads(1)); w, b leaf tensors with requires_grad;
         loss = mean((x@w + b − y)²); loss.backward(); under no_grad w −= lr·w.grad,
         b −= lr·b.grad; grads set to None (what optimizer.zero_grad() does).
  jax    one jax.jit function for the whole step: value_and_grad of the loss with respect
         to (w, b) and the update, returning (loss, w', b'); the loop feeds w', b' back.
         jax_enable_x64. In the mean loop, async dispatch lets python dispatch a step while
         XLA still runs the one before (as in a training loop); the loop ends with
         block_until_ready. The median times each step with block_until_ready.
  numpy  hand-written gradient: d = x@w + b − y, loss = mean(d²), g = 2d/4,
         gw = xᵀ·g, gb = g; w ← w − lr·gw, b ← b − lr·gb.
faber's step also computes the loss (its example prints it before each step): there it is
a separate primal call, here it comes out of the same forward.
"""
import sys
import time

X = [[1.0, 2.0], [-1.0, 0.5]]
Y = [[0.5, -1.0], [1.5, 2.0]]
W = [[0.3, -0.2], [0.1, 0.4]]
B = [[0.0, 0.1], [-0.1, 0.2]]
LR = 0.1


def torch_setup():
    import torch

    torch.set_num_threads(1)
    f = torch.float64
    x, y = torch.tensor(X, dtype=f), torch.tensor(Y, dtype=f)
    w = torch.tensor(W, dtype=f, requires_grad=True)
    b = torch.tensor(B, dtype=f, requires_grad=True)

    def step():
        d = x @ w + b - y
        loss = (d * d).mean()
        loss.backward()
        with torch.no_grad():
            w.sub_(LR * w.grad)
            b.sub_(LR * b.grad)
        w.grad = None
        b.grad = None
        return loss

    def sync(loss):
        return loss.item()

    return step, sync


def jax_setup():
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    f = jnp.float64
    x, y = jnp.asarray(X, dtype=f), jnp.asarray(Y, dtype=f)
    state = [jnp.asarray(W, dtype=f), jnp.asarray(B, dtype=f)]

    def loss_fn(w, b):
        d = x @ w + b - y
        return jnp.mean(d * d)

    @jax.jit
    def jstep(w, b):
        loss, (gw, gb) = jax.value_and_grad(loss_fn, argnums=(0, 1))(w, b)
        return loss, w - LR * gw, b - LR * gb

    def step():
        loss, state[0], state[1] = jstep(state[0], state[1])
        return loss

    def sync(loss):
        return float(loss.block_until_ready())

    return step, sync


def numpy_setup():
    import numpy as np

    x, y = np.array(X), np.array(Y)
    state = [np.array(W), np.array(B)]
    xt = x.T.copy()

    def step():
        w, b = state
        d = x @ w + b - y
        loss = (d * d).mean()
        g = d * (2.0 / d.size)
        state[0] = w - LR * (xt @ g)
        state[1] = b - LR * g
        return loss

    def sync(loss):
        return float(loss)

    return step, sync


SETUP = {"torch": torch_setup, "jax": jax_setup, "numpy": numpy_setup}


def program(name):
    """The 8-step program: the loss before each step, one per line (as the faber example)."""
    step, sync = SETUP[name]()
    for _ in range(8):
        print(repr(sync(step())))


def per_step(name, n, rounds):
    """Per-step seconds, fresh state each round, best over `rounds` of
      mean:   wall time of a loop of n chained steps (one sync at the end) / n — what
              faber's difference method measures;
      median: median of n individually timed steps, each synced (jax: block_until_ready),
              which drops the steps another job preempted (this host is shared)."""
    from statistics import median

    clock = time.perf_counter
    best_mean = best_median = float("inf")
    for _ in range(rounds):
        step, sync = SETUP[name]()
        for _ in range(1000):  # warm-up (jit compile, allocator, caches)
            loss = step()
        sync(loss)
        t0 = clock()
        for _ in range(n):
            loss = step()
        sync(loss)
        best_mean = min(best_mean, (clock() - t0) / n)
        times = [0.0] * n
        for i in range(n):
            t = clock()
            sync(step())
            times[i] = clock() - t
        best_median = min(best_median, median(times))
    return best_mean, best_median, sync(loss)


def main():
    argv = sys.argv[1:]
    if argv[:1] == ["program"] and len(argv) == 2:
        program(argv[1])
        return
    if argv[:1] != ["steps"]:
        sys.exit(__doc__)
    opts = dict(zip(argv[1::2], argv[2::2]))
    n = int(opts.get("--n", 100000))
    rounds = int(opts.get("--rounds", 3))
    names = opts.get("--only", "torch,jax,numpy").split(",")
    for name in names:
        mean, med, loss = per_step(name, n, rounds)
        # `loss` is the loss before the last step of a fresh state's 1000 + n steps
        print("%s %.3f %.3f loss=%r" % (name, mean * 1e6, med * 1e6, loss), flush=True)


if __name__ == "__main__":
    main()
