"""gradus:data's documented orders, written again from docs/gradus.md (## data) and
docs/ops.md (SplitMix64), independently of faber: the seeded permutation
(`data.permutatio`), the split (`data.partire`, `data.partire_stratificata`) and the
mini-batches of an epoch (`data.acervi`). Pure Python integers and floats, no numpy.

    python3 tests/reference/digits_order.py 10 42     # prints permutatio(10, 42)
"""
import math
import sys

MASK = (1 << 64) - 1


def splitmix64_uniforms(seed, n):
    """n draws of SplitMix64(seed) as (next >> 11) * 2**-53 (docs/ops.md)."""
    state = seed & MASK
    out = []
    for _ in range(n):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        out.append((z >> 11) * 2.0**-53)
    return out


def permutatio(n, seed):
    """Fisher-Yates: for k = 0 .. n-2, i = n-1-k swaps with j = min(floor(u_k*(i+1)), i)."""
    p = list(range(n))
    if n < 2:
        return p
    u = splitmix64_uniforms(seed, n - 1)
    for k in range(n - 1):
        i = n - 1 - k
        j = min(math.floor(u[k] * (i + 1)), i)
        p[i], p[j] = p[j], p[i]
    return p


def partire(classes, f_val, f_test, seed):
    """(train, validation, test) row indices; `classes` is [0]*N for the plain split."""
    total = {}
    for c in classes:
        total[c] = total.get(c, 0) + 1
    seen = {}
    train, val, test = [], [], []
    for r in permutatio(len(classes), seed):
        c = classes[r]
        m = seen.get(c, 0)
        seen[c] = m + 1
        n_test = math.floor(total[c] * f_test)
        if m < n_test:
            test.append(r)
        elif m < n_test + math.floor(total[c] * f_val):
            val.append(r)
        else:
            train.append(r)
    return train, val, test


def acervi(n, b, drop_last, seed):
    """The row indices of each mini-batch of one epoch."""
    order = permutatio(n, seed)
    out = []
    a = 0
    while a < n and (not drop_last or a + b <= n):
        out.append(order[a:min(a + b, n)])
        a += b
    return out


if __name__ == "__main__":
    print(permutatio(int(sys.argv[1]), int(sys.argv[2])))
