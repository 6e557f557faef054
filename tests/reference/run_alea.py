"""Independent reference for tests/run/299_tensor_alea.fab: SplitMix64 as specified in
src/tensor/rng.rs (uniform = top 53 bits · 2^-53; normal = Box–Muller cosine branch with
libm ln/cos; sample = first index whose running sum exceeds u · total).
Prints the expected stdout in faber's display format."""
import math

M = 2**64

class SplitMix64:
    def __init__(self, seed):
        self.state = seed % M
    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) % M
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % M
        return z ^ (z >> 31)
    def uniform(self):
        return (self.next() >> 11) * (1.0 / 9007199254740992.0)
    def normal(self):
        u1 = self.uniform(); u2 = self.uniform()
        return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(6.283185307179586 * u2)
    def sample(self, row):
        total = 0.0
        for p in row: total += p
        u = self.uniform() * total
        c = 0.0
        for i, p in enumerate(row):
            c += p
            if u < c: return i
        return max(i for i, p in enumerate(row) if p > 0)

def fmt(x):
    if x == int(x) and abs(x) < 1e16:
        return f"{x:.1f}"
    r = repr(x)
    if "e" in r:
        from decimal import Decimal
        r = format(Decimal(r), "f")
    return r

def lst(xs):
    return "[" + ", ".join(fmt(x) for x in xs) + "]"

if __name__ == "__main__":
    r = SplitMix64(7)
    u = [r.uniform() for _ in range(4)]
    print(lst(u))
    print("verum")
    r = SplitMix64(42)
    print(lst([0.0 + 1.0 * r.normal() for _ in range(3)]))
    r = SplitMix64(42)
    print(lst([10.0 + 2.0 * r.normal() for _ in range(3)]))
    r = SplitMix64(3)
    print(lst([float(r.sample(row)) for row in ([0.0, 1.0, 0.0], [0.5, 0.0, 0.5])]))
