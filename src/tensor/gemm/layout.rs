//! Where the GEMM kernels read their operands and which part of a product they form:
//! [`Strides`] (an operand read in place, transposed or not) and [`Tri`] (the causal
//! forms of the unpacked kernel).

/// Which part of a product over causal (lower-triangular) factors is formed (by the
/// unpacked AVX-512 kernel). Its accumulators start at +0.0 and so are never −0.0 (an
/// FMA whose exact result is zero gives +0.0 unless both addends are −0.0); adding a
/// ±0.0 product to such a value changes nothing. So leaving out terms `a[i][p]·b[p][j]`
/// with `a[i][p] = ±0.0` and `b[p][j]` finite gives the same bits as forming them; when
/// `b[p][j]` is ±∞ or NaN the term would have made the element NaN, and without it
/// does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::tensor) enum Tri {
    /// Every element of `c`.
    Full,
    /// Only `c[i][j]` for `j ≤ i` is wanted: of each 8-row block, the 16-column tiles
    /// wholly right of its last row's diagonal are not computed (their elements are
    /// left unwritten).
    LowerOut,
    /// `a` is lower triangular (`a[i][p] = 0` for `p > i`): row i's sum leaves out the
    /// terms p > i.
    LowerA,
    /// `a` is upper triangular (`a[i][p] = 0` for `p < i`): row i's sum leaves out the
    /// terms p < i.
    UpperA,
}

/// Where element `(i, j)` of an operand lives: `i·row + j·col` from its start.
/// Row-major `[r, c]` is `(c, 1)`; the transpose of a row-major `[c, r]` is `(1, c)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::tensor) struct Strides {
    pub row: usize,
    pub col: usize,
}

impl Strides {
    /// A row-major matrix with `cols` columns.
    pub(in crate::tensor) fn rows(cols: usize) -> Strides {
        Strides { row: cols, col: 1 }
    }
    /// The transpose of a row-major matrix with `cols` columns (read as `[cols, rows]`).
    pub(in crate::tensor) fn transposed(cols: usize) -> Strides {
        Strides { row: 1, col: cols }
    }
    /// Whether every element of a `rows×cols` matrix read with these strides lies
    /// among `len` elements (the largest offset is (rows−1)·row + (cols−1)·col); an
    /// empty matrix always does.
    pub(in crate::tensor) fn covers(self, rows: usize, cols: usize, len: usize) -> bool {
        rows == 0 || cols == 0 || (rows - 1) * self.row + (cols - 1) * self.col < len
    }
}
