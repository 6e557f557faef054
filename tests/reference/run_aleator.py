"""Independent reference for the seeded draws of tests/run/431_norma_aleator.fab:
SplitMix64 as specified in src/tensor/rng.rs; `fractum` = uniform (top 53 bits · 2^-53);
`sortire(lo, hi)` = lo + an unbiased draw below span = hi − lo + 1 (draws at or above
the largest multiple of span below 2^64 are rejected, then x mod span).
Prints the lines of 431_norma_aleator.out that depend on the seed."""

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
    def below(self, span):
        if span >= M:
            return self.next()
        limit = M - M % span
        while True:
            x = self.next()
            if x < limit:
                return x % span

def sortire(r, lo, hi):
    return lo + r.below(hi - lo + 1)

r = SplitMix64(7)
print("[" + ", ".join(str(sortire(r, -3, 3)) for _ in range(5)) + "]")
print(repr(r.uniform()))
r = SplitMix64(42)
print("%r, %d, %d" % (r.uniform(), sortire(r, 1, 6), sortire(r, 5, 5)))
print(repr(SplitMix64(42).uniform()))
