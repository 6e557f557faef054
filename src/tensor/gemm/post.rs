//! The operations the GEMM kernels apply to a product's elements as they finish
//! ([`Post`]), which a companion's fused VJPs use (docs/autodiff.md § Fusion).

/// What the GEMM kernels do with each finished element `c` of a product besides storing
/// it, reading the element `v` of the same place in a matrix laid out like `c` (same row
/// stride): `Mul` stores `c·v`, `Add` stores `v + c` — each rounded once, the bits of the
/// product followed by `multiplica(c, v)` / `addita(v, c)`. A companion's fused VJPs use
/// them (`retro_matmul_derivata`, `retro_matmul_adde`; docs/autodiff.md § Fusion).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::tensor) enum PostOp {
    Mul,
    Add,
}

/// A [`PostOp`] with its matrix, of the product's element type (f64 unless said).
#[derive(Clone, Copy, Debug)]
pub(in crate::tensor) struct Post<T = f64> {
    pub op: PostOp,
    pub m: *const T,
}

// SAFETY: the matrix is only read, and only while the product that owns the `Post` runs
// (its callers keep it alive and unwritten for that time).
unsafe impl<T> Send for Post<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Post<T> {}

impl<T: Copy + std::ops::Mul<Output = T> + std::ops::Add<Output = T>> Post<T> {
    /// The same operation on the matrix `off` elements further on (a block of `c`).
    pub fn at(self, off: usize) -> Post<T> {
        Post {
            m: self.m.wrapping_add(off),
            ..self
        }
    }

    /// `c[i][j] ← op(c[i][j], v[i][j])` for the `rows×cols` block of `c` (row stride
    /// `ld`, the matrix's too).
    ///
    /// # Safety
    /// `c` addresses the `rows×cols` writable elements of row stride `ld`, the matrix
    /// as many readable ones, not overlapping.
    #[inline]
    // `v + c`, not `c += v`: with two NaNs the first operand's payload is kept, as
    // `addita(v, c)` keeps it.
    #[allow(clippy::assign_op_pattern)]
    pub unsafe fn rows(self, rows: usize, cols: usize, c: *mut T, ld: usize) {
        for i in 0..rows {
            // SAFETY: row i's cols elements of each (as required).
            let (cr, vr) = unsafe {
                (
                    std::slice::from_raw_parts_mut(c.add(i * ld), cols),
                    std::slice::from_raw_parts(self.m.add(i * ld), cols),
                )
            };
            match self.op {
                PostOp::Mul => cr.iter_mut().zip(vr).for_each(|(x, &v)| *x = *x * v),
                PostOp::Add => cr.iter_mut().zip(vr).for_each(|(x, &v)| *x = v + *x),
            }
        }
    }
}
