"""Per-step time of the gpt-shakespeare model in PyTorch eager and jax.jit (float64 by
default, `--dtype float32`; other sizes with --layers … --batch), same architecture, same
configuration, same batch sequence (SplitMix64 windows) as `faber run
examples/gpt-shakespeare`. A step = draw the batch,
forward, backward, gradient clipping, AdamW update. Prints the median of `--steps`
timed steps after `--warmup` untimed ones, in ms.

    python benches/gpt/peers.py torch --threads 1
    python benches/gpt/peers.py jax --threads 1
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "reference"))


def sdpa_loss(ref, p, x, y, cfg):
    """ref.loss_fn with the attention as F.scaled_dot_product_attention (causal)."""
    import torch.nn.functional as F

    b, t = x.shape
    d, h = cfg["embd"], cfg["heads"]
    dh = d // h
    z = p["wte"][x] + p["wpe"][:t]
    for i in range(cfg["layers"]):
        s = lambda f: p[f"strata.{i}.{f}"]
        a = F.layer_norm(z, (d,), s("ln1_s"), s("ln1_o"), eps=1e-5)
        q = (a @ s("wq") + s("bq")).view(b, t, h, dh).transpose(1, 2)
        k = (a @ s("wk") + s("bk")).view(b, t, h, dh).transpose(1, 2)
        v = (a @ s("wv") + s("bv")).view(b, t, h, dh).transpose(1, 2)
        yy = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        z = z + (yy.transpose(1, 2).reshape(b, t, d) @ s("wo") + s("bo"))
        m = F.layer_norm(z, (d,), s("ln2_s"), s("ln2_o"), eps=1e-5)
        z = z + (F.gelu(m @ s("wf") + s("bf"), approximate="tanh") @ s("wp") + s("bp"))
    z = F.layer_norm(z, (d,), p["lnf_s"], p["lnf_o"], eps=1e-5)
    logits = z @ p["wh"]
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def torch_steps(threads, warmup, steps, dtype="float64", size=None, mode="eager"):
    import torch
    import gpt_reference as ref

    torch.set_num_threads(threads)
    torch.set_default_dtype(getattr(torch, dtype))
    cfg = dict(ref.DEFAULT, **(size or {}))
    _, train_ids, _ = ref.load_data()
    g = torch.Generator().manual_seed(0)
    d, v = cfg["embd"], 69
    p = {}
    for n in ref.names(cfg):
        leaf = n.split(".")[-1]
        if leaf in ("wte", "wpe", "wh") or leaf[0] == "w":
            rows = {"wte": v, "wpe": cfg["block"], "wh": d}.get(leaf, d if leaf != "wp" else 4 * d)
            cols = {"wh": v, "wf": 4 * d}.get(leaf, d)
            p[n] = (torch.randn(rows, cols, generator=g) * 0.02).requires_grad_(True)
        elif leaf.endswith("_s"):
            p[n] = torch.ones(d).requires_grad_(True)
        else:
            p[n] = torch.zeros(4 * d if leaf == "bf" else d).requires_grad_(True)
    opt = torch.optim.AdamW(list(p.values()), lr=cfg["lr"], betas=(0.9, 0.99),
                            eps=1e-8, weight_decay=cfg["wd"])
    loss_fn = ref.loss_fn if mode == "eager" else (lambda p, x, y, c: sdpa_loss(ref, p, x, y, c))
    if mode == "compile":
        loss_fn = torch.compile(loss_fn)
    times = []
    for step in range(warmup + steps):
        t0 = time.perf_counter()
        x, y = ref.windows(train_ids, cfg["seed"] * 1000003 + step, cfg["batch"], cfg["block"])
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(p, x, y, cfg)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(p.values()), 1.0)
        opt.step()
        times.append(time.perf_counter() - t0)
    return times[warmup:]


def jax_steps(threads, warmup, steps, dtype="float64", size=None):
    # XLA's CPU client sizes its intra-op thread pool by the CPUs the process may run
    # on (sched_getaffinity): only `taskset` bounds it. `--xla_cpu_multi_thread_eigen`
    # keeps Eigen's matmuls on the calling thread. (`intra_op_parallelism_threads` is
    # no XLA flag: without dashes XLA_FLAGS passes over it, with them XLA stops.) A
    # caller's XLA_FLAGS (benches/xla/run.sh) is left as it is.
    os.environ.setdefault(
        "XLA_FLAGS", f"--xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'}"
    )
    import jax
    import jax.numpy as jnp
    import numpy as np

    if dtype == "float64":
        jax.config.update("jax_enable_x64", True)
    import gpt_reference as ref

    cfg = dict(ref.DEFAULT, **(size or {}))
    dt = getattr(np, dtype)
    _, train_ids, _ = ref.load_data()
    train_np = train_ids.numpy()
    d, h, v, T = cfg["embd"], cfg["heads"], 69, cfg["block"]
    dh = d // h
    rng = np.random.default_rng(0)
    p = {}
    for n in ref.names(cfg):
        leaf = n.split(".")[-1]
        if leaf in ("wte", "wpe", "wh") or leaf[0] == "w":
            rows = {"wte": v, "wpe": T, "wh": d}.get(leaf, d if leaf != "wp" else 4 * d)
            cols = {"wh": v, "wf": 4 * d}.get(leaf, d)
            p[n] = jnp.asarray(rng.normal(0, 0.02, (rows, cols)).astype(dt))
        elif leaf.endswith("_s"):
            p[n] = jnp.ones(d, dt)
        else:
            p[n] = jnp.zeros(4 * d if leaf == "bf" else d, dt)

    def ln(x, s, o):
        m = x.mean(-1, keepdims=True)
        c = x - m
        return c / jnp.sqrt((c * c).mean(-1, keepdims=True) + 1e-5) * s + o

    def loss(p, x, y):
        b, t = x.shape
        z = p["wte"][x] + p["wpe"][:t]
        mask = jnp.triu(jnp.ones((t, t), bool), 1)
        for i in range(cfg["layers"]):
            s = lambda f: p[f"strata.{i}.{f}"]
            a = ln(z, s("ln1_s"), s("ln1_o"))
            q = (a @ s("wq") + s("bq")).reshape(b, t, h, dh).transpose(0, 2, 1, 3)
            k = (a @ s("wk") + s("bk")).reshape(b, t, h, dh).transpose(0, 2, 1, 3)
            vv = (a @ s("wv") + s("bv")).reshape(b, t, h, dh).transpose(0, 2, 1, 3)
            att = jnp.where(mask, -1e9, (q @ k.transpose(0, 1, 3, 2)) * dh ** -0.5)
            y_ = (jax.nn.softmax(att, -1) @ vv).transpose(0, 2, 1, 3).reshape(b, t, d)
            z = z + y_ @ s("wo") + s("bo")
            m = ln(z, s("ln2_s"), s("ln2_o"))
            z = z + jax.nn.gelu(m @ s("wf") + s("bf"), approximate=True) @ s("wp") + s("bp")
        logits = ln(z, p["lnf_s"], p["lnf_o"]) @ p["wh"]
        lp = jax.nn.log_softmax(logits, -1)
        return -jnp.take_along_axis(lp, y[..., None], -1).mean()

    @jax.jit
    def step(p, m, vv, t, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        norm = jnp.sqrt(sum((gi * gi).sum() for gi in g.values()))
        coef = jnp.minimum(1.0, 1.0 / (norm + 1e-6))
        out_p, out_m, out_v = {}, {}, {}
        lr, b1, b2, wd = cfg["lr"], 0.9, 0.99, cfg["wd"]
        for n in p:
            gi = g[n] * coef
            mi = b1 * m[n] + (1 - b1) * gi
            vi = b2 * vv[n] + (1 - b2) * gi * gi
            mh = mi / (1 - b1 ** t)
            vh = vi / (1 - b2 ** t)
            out_p[n] = p[n] * (1 - lr * wd) - lr * mh / (jnp.sqrt(vh) + 1e-8)
            out_m[n], out_v[n] = mi, vi
        return out_p, out_m, out_v, l

    m = {n: jnp.zeros_like(a) for n, a in p.items()}
    vv = {n: jnp.zeros_like(a) for n, a in p.items()}
    times = []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        x, y = ref.windows(train_ids, cfg["seed"] * 1000003 + i, cfg["batch"], cfg["block"])
        p, m, vv, l = step(p, m, vv, float(i + 1), jnp.asarray(x.numpy()), jnp.asarray(y.numpy()))
        l.block_until_ready()
        times.append(time.perf_counter() - t0)
    jax_steps.first = times[0]  # the step that traced and compiled (--first)
    return times[warmup:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("peer", choices=["torch", "jax"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--steps", type=int, default=50)
    # issue 21's comparison (benches/gpt/precision.sh), issue 24's (benches/xla/run.sh)
    ap.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    ap.add_argument("--first", action="store_true",
                    help="jax: also print the first step's time (tracing and compiling)")
    ap.add_argument("--mode", choices=["eager", "sdpa", "compile"], default="eager",
                    help="eager: the reference's attention; sdpa: F.scaled_dot_product_attention; "
                         "compile: torch.compile of the sdpa loss")
    for k in ["layers", "heads", "embd", "block", "batch"]:
        ap.add_argument(f"--{k}", type=int)
    a = ap.parse_args()
    size = {k: getattr(a, k) for k in ["layers", "heads", "embd", "block", "batch"]
            if getattr(a, k) is not None}
    if a.peer == "torch":
        times = torch_steps(a.threads, a.warmup, a.steps, a.dtype, size, a.mode)
    else:
        times = jax_steps(a.threads, a.warmup, a.steps, a.dtype, size)
    line = f"{statistics.median(times) * 1000:.2f}"
    if a.first and a.peer == "jax":
        line += f" {jax_steps.first * 1000:.2f}"
    print(line)


if __name__ == "__main__":
    main()
