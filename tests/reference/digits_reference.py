"""PyTorch replay of examples/digits: the same 64-32-10 MLP (float64), from the same
initial weights (the init.safetensors the faber program writes), over the same
mini-batches (the split and batch orders of gradus:data, re-implemented from their
documentation in digits_order.py), with torch.optim.Adam. Prints one `damnum <loss>` per
batch, as `faber run examples/digits -- --trace` does, the per-epoch lines and the test
accuracy, and the training time (model and training only, data loading excluded).

    python3 tests/reference/digits_reference.py INIT.safetensors [--json OUT.json]

Needs numpy, torch and safetensors (tests/reference/digits/README.md).
"""
import json
import pathlib
import sys
import time

import numpy as np
import torch
from safetensors.torch import load_file

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import digits_order  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
torch.set_num_threads(1)

table = np.loadtxt(ROOT / "examples/digits/data/digits.csv", delimiter=",", skiprows=1)
x_all = torch.tensor(table[:, :64], dtype=torch.float64) * (1.0 / 16.0)
y_all = torch.tensor(table[:, 64], dtype=torch.int64)
train, val, test = digits_order.partire(y_all.tolist(), 0.15, 0.15, 7)
xt, yt = x_all[train], y_all[train]

init = load_file(sys.argv[1])
params = [init[k].to(torch.float64).clone().requires_grad_(True) for k in ("w1", "b1", "w2", "b2")]


def logits(x):
    w1, b1, w2, b2 = params
    return torch.relu(x @ w1 + b1) @ w2 + b2


opt = torch.optim.Adam(params, lr=0.01, betas=(0.9, 0.999), eps=1e-8)
losses = []
t0 = time.perf_counter()
for epoch in range(20):
    batch_losses = []
    for idx in digits_order.acervi(len(train), 32, True, 100 + epoch):
        loss = torch.nn.functional.cross_entropy(logits(xt[idx]), yt[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        batch_losses.append(loss.item())
        print(f"damnum {loss.item()!r}")
    losses += batch_losses
    with torch.no_grad():
        acc = (logits(x_all[val]).argmax(1) == y_all[val]).double().mean().item()
    print(f"epoch {epoch + 1}  train loss {sum(batch_losses) / len(batch_losses)!r}  val accuracy {acc!r}")
seconds = time.perf_counter() - t0
with torch.no_grad():
    test_acc = (logits(x_all[test]).argmax(1) == y_all[test]).double().mean().item()
print(f"test accuracy {test_acc!r}")
print(f"seconds {seconds:.3f}", file=sys.stderr)
if "--json" in sys.argv:
    out = pathlib.Path(sys.argv[sys.argv.index("--json") + 1])
    out.write_text(json.dumps({
        "torch": torch.__version__,
        "losses": [repr(v) for v in losses],
        "test_accuracy": repr(test_acc),
        "seconds": seconds,
    }, indent=1) + "\n")
