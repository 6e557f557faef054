"""Independent reference for the seeded draws of tests/run/431_norma_aleator.fab:
SplitMix64 as specified in src/tensor/rng.rs; `fractum` = uniform (top 53 bits · 2^-53);
`sortire(lo, hi)` = lo + an unbiased draw below span = hi − lo + 1 (draws at or above
the largest multiple of span below 2^64 are rejected, then x mod span).
Prints the lines of 431_norma_aleator.out that depend on the seed."""

from run_alea import M, SplitMix64 as Base


class SplitMix64(Base):
    """run_alea.py's generator with the unbiased bounded draw of `sortire`."""

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
