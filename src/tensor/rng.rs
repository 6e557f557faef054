//! Seeded random numbers (SplitMix64), specified bit-for-bit so a Python
//! reference reproduces every draw (tests/reference/tensor_ops.py does):
//!
//! ```text
//! next_u64:  state = (state + 0x9E3779B97F4A7C15) mod 2^64
//!            z = state
//!            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) mod 2^64
//!            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) mod 2^64
//!            return z ^ (z >> 31)
//! uniform:   (next_u64 >> 11) · 2^-53                       ∈ [0, 1)
//! normal:    u1 = uniform, u2 = uniform (in that order)
//!            sqrt(−2·ln(1 − u1)) · cos(2π·u2)   (2π = 6.283185307179586; libm ln, cos)
//! normal(μ, σ): μ + σ·normal
//! below(n):  next_u64 mod n                                   (n ≥ 1)
//! sample(p): total = Σ p left to right from 0.0; u = uniform · total;
//!            c = 0.0; for i: c += p[i]; if u < c: return i
//!            (if rounding leaves none: the last i with p[i] > 0)
//! ```
//! Tensors are filled in row-major order, one draw (or one `normal`, i.e. two
//! uniforms) per element.
//!
//! f32 tensors (`*_of(DType::F32, …)`, a `multinomial` of f32 probabilities) take the
//! same draws: each f64 value rounded once to f32 — except that a uniform draw which
//! rounds up to 1.0 (those ≥ 1 − 2⁻²⁵) becomes the largest f32 below 1, so f32
//! uniforms stay in [0, 1) as the f64 ones do. `multinomial` samples an f32 row from its
//! exactly widened values (the same draw as the f64 row) and gives f32 indices.

use super::elem::{Elem, Sink};
use super::{alloc, checked_numel, f32_vec, fmt_shape, DType, TResult, Tensor, TensorError};

/// The largest f32 below 1.
const BELOW_ONE_F32: f32 = 1.0 - f32::EPSILON / 2.0;

/// SplitMix64 generator (Steele, Lea, Flood 2014).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The internal state (to save and restore a stream).
    pub fn state(&self) -> u64 {
        self.state
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
    }

    /// Standard normal by Box–Muller (cosine branch only; two uniforms).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.uniform();
        let u2 = self.uniform();
        (-2.0 * (1.0 - u1).ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Uniform integer in `[0, n)` as `next_u64 mod n`; `n = 0` is a `Domain`
    /// error.
    pub fn below(&mut self, n: u64) -> TResult<u64> {
        if n == 0 {
            return Err(TensorError::domain("below: empty range"));
        }
        Ok(self.next_u64() % n)
    }

    /// [`SplitMix64::uniform_tensor`] of element type `dtype` (module docs).
    pub fn uniform_tensor_of(&mut self, dtype: DType, shape: &[usize]) -> TResult<Tensor> {
        if dtype == DType::F64 {
            return self.uniform_tensor(shape);
        }
        let n = checked_numel(shape)?;
        let mut out = f32_vec(n)?;
        out.extend((0..n).map(|_| (self.uniform() as f32).min(BELOW_ONE_F32)));
        Tensor::from_f32(out, shape)
    }

    /// [`SplitMix64::normal_tensor`] of element type `dtype` (module docs).
    pub fn normal_tensor_of(
        &mut self,
        dtype: DType,
        shape: &[usize],
        mean: f64,
        std: f64,
    ) -> TResult<Tensor> {
        if dtype == DType::F64 {
            return self.normal_tensor(shape, mean, std);
        }
        let n = checked_numel(shape)?;
        let mut out = f32_vec(n)?;
        out.extend((0..n).map(|_| (mean + std * self.normal()) as f32));
        Tensor::from_f32(out, shape)
    }

    /// A tensor of uniform [0, 1) draws.
    pub fn uniform_tensor(&mut self, shape: &[usize]) -> TResult<Tensor> {
        let n = checked_numel(shape)?;
        let mut out = alloc(n)?;
        out.extend((0..n).map(|_| self.uniform()));
        Ok(Tensor::from_parts(shape, out))
    }

    /// A tensor of `mean + std·normal` draws.
    pub fn normal_tensor(&mut self, shape: &[usize], mean: f64, std: f64) -> TResult<Tensor> {
        let n = checked_numel(shape)?;
        let mut out = alloc(n)?;
        out.extend((0..n).map(|_| mean + std * self.normal()));
        Ok(Tensor::from_parts(shape, out))
    }

    /// One index drawn from an unnormalised probability row (see the module
    /// docs). Elements must be finite and ≥ 0 with a positive total.
    pub fn sample(&mut self, probs: &[f64]) -> TResult<usize> {
        self.sample_of(probs)
    }

    /// [`SplitMix64::sample`] of a row of either element type (f32 widened exactly).
    fn sample_of<T: Elem + Into<f64>>(&mut self, probs: &[T]) -> TResult<usize> {
        let mut total = 0.0;
        for &p in probs {
            let p: f64 = p.into();
            if !(p >= 0.0 && p.is_finite()) {
                return Err(TensorError::domain(format!(
                    "multinomial: probability {p} is negative or not finite"
                )));
            }
            total += p;
        }
        if !(total > 0.0 && total.is_finite()) {
            return Err(TensorError::domain(format!(
                "multinomial: probabilities sum to {total}"
            )));
        }
        let u = self.uniform() * total;
        let mut c = 0.0;
        for (i, &p) in probs.iter().enumerate() {
            c += p.into();
            if u < c {
                return Ok(i);
            }
        }
        Ok(probs.iter().rposition(|&p| p > T::ZERO).unwrap_or(0))
    }

    /// `multinomial(p)`: one draw per last-axis row of a rank-1 `[V]` (→ rank
    /// 0) or rank-2 `[N, V]` (→ `[N]`) probability tensor, rows in order.
    pub fn multinomial(&mut self, probs: &Tensor) -> TResult<Tensor> {
        let (rows_shape, v) = match probs.shape() {
            &[v] => (vec![], v),
            &[n, v] => (vec![n], v),
            s => {
                return Err(TensorError::shape(format!(
                    "multinomial: needs [V] or [N, V], found {}",
                    fmt_shape(s)
                )))
            }
        };
        if v == 0 {
            return Err(TensorError::shape("multinomial: no classes"));
        }
        match probs.dtype() {
            DType::F64 => self.multinomial_of::<f64>(probs, v, &rows_shape),
            DType::F32 => self.multinomial_of::<f32>(probs, v, &rows_shape),
        }
    }

    /// [`SplitMix64::multinomial`] of checked rows of `v ≥ 1` classes.
    fn multinomial_of<T: Elem + Into<f64>>(
        &mut self,
        probs: &Tensor,
        v: usize,
        rows_shape: &[usize],
    ) -> TResult<Tensor> {
        let mut out = T::buf(probs.numel() / v)?;
        for row in T::of(probs).chunks_exact(v) {
            out.put(T::from_index(self.sample_of(row)?));
        }
        Ok(T::finish(rows_shape, out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_values() {
        // Published SplitMix64 outputs for seed 1234567.
        let mut r = SplitMix64::new(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
    }
}
