"""Independent PyTorch (float64, and float32) reference for examples/gpt-shakespeare.

The same architecture, data pipeline, batch sampler (SplitMix64), optimizer (AdamW in
gradus:optimize's order of operations), gradient clipping and learning-rate schedule,
written from their documented definitions, not from faber's code. It reads the initial
parameters from a safetensors file (written by `faber run examples/gpt-shakespeare --
--tiny --steps 0 --sample 0 --out DIR`) so both start from identical values.

    python tests/reference/gpt_reference.py trace [--steps 50]
        writes tests/reference/gpt/grads0.safetensors (step-0 gradients of every
        parameter) and tests/reference/gpt/trace.json (the batch loss of each step),
        for the `--tiny` configuration, starting from tests/reference/gpt/init.safetensors.
    python tests/reference/gpt_reference.py trace --dtype float32 [--steps 50]
        the same in float32 (the initial parameters rounded once to float32, every
        tensor and every operation float32 as PyTorch computes them by default):
        tests/reference/gpt/grads0_f32.safetensors and tests/reference/gpt/trace_f32.json,
        for `faber run --precision f32` (tests/gpt_reference.rs).
    python tests/reference/gpt_reference.py full [--steps 2000] [--init PATH] [--dtype float32]
        trains the default configuration and prints the train/val estimates every 100
        steps (PyTorch's figures for the comparison in the issue note).
Run with the peers venv: benches/peers/setup.sh, then benches/.venv-peers/bin/python.
"""
import argparse
import json
import math
import os
import sys

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(ROOT, "examples", "gpt-shakespeare", "data", "shakespeare.txt")
M64 = 1 << 64

DEFAULT = dict(layers=2, heads=4, embd=64, block=64, batch=16, lr=3e-3, min_lr=3e-4,
               warmup=100, wd=0.1, beta1=0.9, beta2=0.99, clip=1.0, eval_batches=8,
               seed=1337)
TINY = dict(DEFAULT, layers=2, heads=2, embd=16, block=16, batch=4, warmup=5,
            eval_batches=2)


class SplitMix64:
    def __init__(self, seed):
        self.state = seed % M64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) % M64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % M64
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next() >> 11) * (1.0 / 9007199254740992.0)


def windows(data, seed, b, t):
    """B windows of T ids starting at floor(u * (N - T)), u from SplitMix64(seed)."""
    rng = SplitMix64(seed)
    n = data.shape[0]
    starts = [int(rng.uniform() * (n - t)) for _ in range(b)]
    x = torch.stack([data[s:s + t] for s in starts])
    y = torch.stack([data[s + 1:s + t + 1] for s in starts])
    return x, y


def load_data():
    text = open(DATA, encoding="utf-8").read()
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    ids = torch.tensor([index[c] for c in text], dtype=torch.long)
    k = int(len(ids) * 0.9)
    return chars, ids[:k], ids[k:]


def names(cfg):
    out = ["wte", "wpe"]
    for i in range(cfg["layers"]):
        for f in ["ln1_s", "ln1_o", "wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo",
                  "ln2_s", "ln2_o", "wf", "bf", "wp", "bp"]:
            out.append(f"strata.{i}.{f}")
    return out + ["lnf_s", "lnf_o", "wh"]


def forward(p, ids, cfg):
    b, t = ids.shape
    d, h = cfg["embd"], cfg["heads"]
    dh = d // h
    x = p["wte"][ids] + p["wpe"][:t]
    mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
    for i in range(cfg["layers"]):
        s = lambda f: p[f"strata.{i}.{f}"]
        a = F.layer_norm(x, (d,), s("ln1_s"), s("ln1_o"), eps=1e-5)
        q = (a @ s("wq") + s("bq")).view(b, t, h, dh).transpose(1, 2)
        k = (a @ s("wk") + s("bk")).view(b, t, h, dh).transpose(1, 2)
        v = (a @ s("wv") + s("bv")).view(b, t, h, dh).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (float(dh) ** -0.5)
        att = att.masked_fill(mask, -1e9).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + (y @ s("wo") + s("bo"))
        m = F.layer_norm(x, (d,), s("ln2_s"), s("ln2_o"), eps=1e-5)
        x = x + (F.gelu(m @ s("wf") + s("bf"), approximate="tanh") @ s("wp") + s("bp"))
    x = F.layer_norm(x, (d,), p["lnf_s"], p["lnf_o"], eps=1e-5)
    return x @ p["wh"]


def loss_fn(p, x, y, cfg):
    logits = forward(p, x, cfg)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def lr_at(cfg, step, total):
    lr, lo, w = cfg["lr"], cfg["min_lr"], cfg["warmup"]
    if step < w:
        return lr * (step + 1) / w
    if step >= total:
        return lo
    ratio = (step - w) / float(total - w)
    return lo + 0.5 * (1.0 + math.cos(3.141592653589793 * ratio)) * (lr - lo)


def train(p, cfg, train_ids, steps, on_step=None):
    order = names(cfg)
    m = {n: torch.zeros_like(p[n]) for n in order}
    v = {n: torch.zeros_like(p[n]) for n in order}
    for step in range(steps):
        x, y = windows(train_ids, cfg["seed"] * 1000003 + step, cfg["batch"], cfg["block"])
        for n in order:
            p[n].grad = None
        loss = loss_fn(p, x, y, cfg)
        loss.backward()
        g = {n: p[n].grad.detach().clone() for n in order}
        if on_step:
            on_step(step, loss.item(), g)
        # clipping: global L2 norm over the leaves in order, max / (norm + 1e-6) if < 1
        total = 0.0
        for n in order:
            total += (g[n] * g[n]).sum().item()
        coef = cfg["clip"] / (math.sqrt(total) + 1e-6)
        if coef < 1.0:
            g = {n: g[n] * coef for n in order}
        lr = lr_at(cfg, step, steps)
        t = step + 1
        bc1 = 1.0 - cfg["beta1"] ** float(t)
        bc2_sqrt = math.sqrt(1.0 - cfg["beta2"] ** float(t))
        with torch.no_grad():
            for n in order:
                m[n] = m[n] * cfg["beta1"] + g[n] * (1.0 - cfg["beta1"])
                v[n] = v[n] * cfg["beta2"] + (g[n] * g[n]) * (1.0 - cfg["beta2"])
                denom = torch.sqrt(v[n]) * (1.0 / bc2_sqrt) + 1e-8
                upd = (m[n] / denom) * (lr / bc1)
                p[n].copy_(p[n] * (1.0 - lr * cfg["wd"]) - upd)


def estimate(p, ids, cfg, seed):
    with torch.no_grad():
        s = 0.0
        for k in range(cfg["eval_batches"]):
            x, y = windows(ids, seed + k, cfg["batch"], cfg["block"])
            s += loss_fn(p, x, y, cfg).item()
        return s / cfg["eval_batches"]


def load_params(path, cfg, dtype=torch.float64):
    raw = load_file(path)
    return {n: raw[n].to(dtype).clone().requires_grad_(True) for n in names(cfg)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["trace", "full"])
    ap.add_argument("--steps", type=int)
    ap.add_argument("--init")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    dtype = getattr(torch, a.dtype)
    torch.set_default_dtype(dtype)
    suffix = "" if a.dtype == "float64" else "_f32"
    _, train_ids, val_ids = load_data()
    if a.mode == "trace":
        cfg, steps = TINY, a.steps or 50
        p = load_params(a.init or os.path.join(HERE, "gpt", "init.safetensors"), cfg, dtype)
        trace = []

        def on_step(step, loss, g):
            trace.append(repr(loss))
            if step == 0:
                save_file({n: g[n].contiguous() for n in names(cfg)},
                          os.path.join(HERE, "gpt", f"grads0{suffix}.safetensors"))

        train(p, cfg, train_ids, steps, on_step)
        with open(os.path.join(HERE, "gpt", f"trace{suffix}.json"), "w") as f:
            json.dump({"config": "tiny", "dtype": a.dtype, "steps": steps, "losses": trace},
                      f, indent=1)
        print("\n".join(trace[:3] + ["…", trace[-1]]))
    else:
        cfg, steps = DEFAULT, a.steps or 2000
        p = load_params(a.init, cfg, dtype)

        def on_step(step, loss, g):
            if (step + 1) % 100 == 0:
                print(f"step {step + 1} batch loss {loss}", flush=True)

        train(p, cfg, train_ids, steps, on_step)
        tr = estimate(p, train_ids, cfg, 7000)
        va = estimate(p, val_ids, cfg, 9000)
        print(f"after {steps} steps: train {tr} val {va}")


if __name__ == "__main__":
    sys.exit(main())
