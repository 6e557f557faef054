"""The GPT example's checkpoint loaded into an ordinary PyTorch module.

examples/gpt-shakespeare writes model.safetensors with gradus's names and layouts
(docs/gradus.md, "PyTorch interop"): linear weights are `[in, out]` (`y = x · w + b`),
while `torch.nn.Linear.weight` is `[out, in]` (`y = x · Wᵀ + b`), so each linear weight
is transposed on the way in; embeddings, LayerNorm scales/offsets and biases keep their
shape. `GPT` below is the model of examples/gpt-shakespeare/src/model.fab written with
torch.nn layers; `from_faber` maps the file's names to its state_dict, and
`load_state_dict(strict=True)` proves every parameter is covered exactly once. The file's
one other entry, `capita` (the head count, an I64 scalar), is a hyperparameter.

    python tests/reference/gpt_torch_module.py
        loads tests/reference/gpt/trained50.safetensors (the --tiny model after 50
        steps from init.safetensors: `faber run examples/gpt-shakespeare -- --tiny
        --steps 50 --eval-interval 1000 --sample 0 --init tests/reference/gpt/init.safetensors`),
        checks the module's logits against gpt_reference.py's functional forward on
        the raw file, and writes tests/reference/gpt/torch_logits.safetensors (the ids
        of the first 16 characters of the text, and the module's logits for them),
        which examples/gpt-shakespeare/src/interop.proba compares faber's logits with.
Run with the peers venv: benches/peers/setup.sh, then benches/.venv-peers/bin/python.
"""
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F
from safetensors.torch import load_file, save_file

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpt_reference  # noqa: E402  (the functional float64 reference)

LINEAR = ["wq", "wk", "wv", "wo", "wf", "wp"]


class Attention(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x):
        b, t, d = x.shape
        dh = d // self.h
        split = lambda z: z.view(b, t, self.h, dh).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        att = (q @ k.transpose(-2, -1)) * (float(dh) ** -0.5)
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        att = att.masked_fill(mask, -1e9).softmax(dim=-1)
        return self.o((att @ v).transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.ln1 = nn.LayerNorm(d, eps=1e-5)
        self.attn = Attention(d, h)
        self.ln2 = nn.LayerNorm(d, eps=1e-5)
        self.fc = nn.Linear(d, 4 * d)
        self.proj = nn.Linear(4 * d, d)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, vocab, block, d, h, layers):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(block, d)
        self.blocks = nn.ModuleList(Block(d, h) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d, eps=1e-5)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        t = ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(t))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


def from_faber(tensors):
    """A GPT state_dict from the tensors of a gradus checkpoint (name → tensor)."""
    sd = {
        "wte.weight": tensors["wte"],
        "wpe.weight": tensors["wpe"],
        "ln_f.weight": tensors["lnf_s"],
        "ln_f.bias": tensors["lnf_o"],
        # gradus `wh` is [D, V] (x · wh); nn.Linear keeps [V, D]
        "head.weight": tensors["wh"].t(),
    }
    layers = 1 + max(int(n.split(".")[1]) for n in tensors if n.startswith("strata."))
    for i in range(layers):
        s = lambda f: tensors[f"strata.{i}.{f}"]
        m = f"blocks.{i}."
        sd[m + "ln1.weight"], sd[m + "ln1.bias"] = s("ln1_s"), s("ln1_o")
        sd[m + "ln2.weight"], sd[m + "ln2.bias"] = s("ln2_s"), s("ln2_o")
        for fab, mod in [("q", "attn.q"), ("k", "attn.k"), ("v", "attn.v"),
                         ("o", "attn.o"), ("f", "fc"), ("p", "proj")]:
            sd[f"{m}{mod}.weight"] = s("w" + fab).t()  # [in, out] → [out, in]
            sd[f"{m}{mod}.bias"] = s("b" + fab)
    return {k: v.contiguous() for k, v in sd.items()}


def to_faber(state_dict):
    """The inverse: gradus names and [in, out] layouts from the module's state_dict."""
    out = {"wte": state_dict["wte.weight"], "wpe": state_dict["wpe.weight"],
           "lnf_s": state_dict["ln_f.weight"], "lnf_o": state_dict["ln_f.bias"],
           "wh": state_dict["head.weight"].t()}
    i = 0
    while f"blocks.{i}.ln1.weight" in state_dict:
        m = f"blocks.{i}."
        out[f"strata.{i}.ln1_s"], out[f"strata.{i}.ln1_o"] = state_dict[m + "ln1.weight"], state_dict[m + "ln1.bias"]
        out[f"strata.{i}.ln2_s"], out[f"strata.{i}.ln2_o"] = state_dict[m + "ln2.weight"], state_dict[m + "ln2.bias"]
        for fab, mod in [("q", "attn.q"), ("k", "attn.k"), ("v", "attn.v"),
                         ("o", "attn.o"), ("f", "fc"), ("p", "proj")]:
            out[f"strata.{i}.w{fab}"] = state_dict[f"{m}{mod}.weight"].t()
            out[f"strata.{i}.b{fab}"] = state_dict[f"{m}{mod}.bias"]
        i += 1
    return {k: v.contiguous() for k, v in out.items()}


def main():
    torch.set_default_dtype(torch.float64)
    cfg = gpt_reference.TINY
    path = os.path.join(HERE, "gpt", "trained50.safetensors")
    tensors = load_file(path)
    # the record's one non-tensor leaf, the head count, is an I64 entry `capita`
    heads = int(tensors.pop("capita"))
    assert heads == cfg["heads"]
    vocab = tensors["wte"].shape[0]
    model = GPT(vocab, cfg["block"], cfg["embd"], heads, cfg["layers"])
    model.load_state_dict(from_faber(tensors), strict=True)
    model.eval()
    # the round trip back to gradus names gives the file's tensors exactly
    back = to_faber(model.state_dict())
    assert sorted(back) == sorted(tensors), "every checkpoint entry maps to one module parameter"
    for n, t in tensors.items():
        assert torch.equal(back[n], t), n

    chars, train_ids, _ = gpt_reference.load_data()
    ids = train_ids[: cfg["block"]].view(1, -1)
    with torch.no_grad():
        logits = model(ids)
        functional = gpt_reference.forward(tensors, ids, cfg)
    diff = (logits - functional).abs().max().item()
    scale = functional.abs().max().item()
    assert diff <= 1e-12 * scale, f"module vs functional forward: {diff}"
    save_file({"ids": ids.to(torch.float64), "logitae": logits.contiguous()},
              os.path.join(HERE, "gpt", "torch_logits.safetensors"))
    print(f"{vocab} characters, logits {tuple(logits.shape)}, |module − functional| ≤ {diff:.3g} "
          f"(largest logit {scale:.3g}); first row {logits[0, 0, :4].tolist()}")


if __name__ == "__main__":
    sys.exit(main())
