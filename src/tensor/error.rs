//! Errors as data. Every tensor kernel returns `Result<_, TensorError>`; the
//! evaluator maps the kind to a diagnostic code and adds the source span.

use std::fmt;

/// What went wrong, coarse enough for the evaluator to pick a diagnostic code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TensorErrorKind {
    /// Shapes that do not fit the operation, a wrong element count, a bad axis
    /// or permutation, an empty axis where a value is needed (→ RUN013).
    Shape,
    /// An index or integer id outside its range, or an id that is not an
    /// integer (→ RUN001).
    Index,
    /// A value outside an operation's domain: zero or non-finite divisor,
    /// log/sqrt of an invalid argument, non-finite cross-entropy targets, a bad
    /// probability row (the evaluator picks its arithmetic-domain code, e.g.
    /// RUN003 for a zero divisor).
    Domain,
    /// A result larger than `Limits::max_elements`, or a size whose product
    /// overflows, or an allocation the system refused (→ RUN012).
    Limit,
}

impl TensorErrorKind {
    /// A stable lowercase name ("shape", "index", "domain", "limit").
    pub fn name(self) -> &'static str {
        match self {
            TensorErrorKind::Shape => "shape",
            TensorErrorKind::Index => "index",
            TensorErrorKind::Domain => "domain",
            TensorErrorKind::Limit => "limit",
        }
    }
}

/// A failed tensor operation: a kind plus a human-readable message that names
/// the operation (by its Latin method name) and the offending shapes or values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorError {
    pub kind: TensorErrorKind,
    pub message: String,
}

impl TensorError {
    pub fn new(kind: TensorErrorKind, message: impl Into<String>) -> Self {
        TensorError {
            kind,
            message: message.into(),
        }
    }
    pub fn shape(message: impl Into<String>) -> Self {
        Self::new(TensorErrorKind::Shape, message)
    }
    pub fn index(message: impl Into<String>) -> Self {
        Self::new(TensorErrorKind::Index, message)
    }
    pub fn domain(message: impl Into<String>) -> Self {
        Self::new(TensorErrorKind::Domain, message)
    }
    pub fn limit(message: impl Into<String>) -> Self {
        Self::new(TensorErrorKind::Limit, message)
    }
}

impl fmt::Display for TensorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TensorError {}

/// Result alias used by every kernel.
pub type TResult<T> = Result<T, TensorError>;

// ---- shape-mismatch wording ------------------------------------------------------
// Message construction only (called on error paths): every shape-mismatch message
// names the axes that disagree and their sizes (docs/diagnostics.md).

/// Where two shapes that must be equal differ: `axis 1: 3 against 4` for each
/// differing axis (`; `-separated), or `rank 2 against rank 3`. Empty when equal.
pub fn shape_difference(a: &[usize], b: &[usize]) -> String {
    if a.len() != b.len() {
        return format!("rank {} against rank {}", a.len(), b.len());
    }
    let diffs: Vec<String> = a
        .iter()
        .zip(b)
        .enumerate()
        .filter(|(_, (x, y))| x != y)
        .map(|(i, (x, y))| format!("axis {i}: {x} against {y}"))
        .collect();
    diffs.join("; ")
}

/// Where two shapes fail to broadcast (aligned at the right, sizes equal or 1):
/// `axis 1: 3 against 4` for each conflicting axis, or with the axis of each
/// operand (`axis 1 of [2, 3] (3) against axis 0 of [4] (4)`) when their ranks
/// differ. Empty when they broadcast.
pub fn broadcast_conflict(a: &[usize], b: &[usize]) -> String {
    let n = a.len().min(b.len());
    let mut diffs = Vec::new();
    for k in 1..=n {
        let (ia, ib) = (a.len() - k, b.len() - k);
        let (x, y) = (a[ia], b[ib]);
        if x != y && x != 1 && y != 1 {
            diffs.push(if ia == ib {
                format!("axis {ia}: {x} against {y}")
            } else {
                format!(
                    "axis {ia} of {} ({x}) against axis {ib} of {} ({y})",
                    super::fmt_shape(a),
                    super::fmt_shape(b)
                )
            });
        }
    }
    diffs.reverse();
    diffs.join("; ")
}

/// `shapes A and B do not broadcast (axis …: x against y)`.
pub fn broadcast_message(a: &[usize], b: &[usize]) -> String {
    format!(
        "shapes {} and {} do not broadcast ({}; sizes must be equal or 1)",
        super::fmt_shape(a),
        super::fmt_shape(b),
        broadcast_conflict(a, b)
    )
}

/// Why bias `b` does not fit the last axis of `x` (error wording).
pub(in crate::tensor) fn bias_conflict(x: &[usize], b: &[usize]) -> String {
    match (x.last(), b) {
        (None, _) => "a rank-0 tensor has no last axis".to_string(),
        (Some(&c), &[bc]) => format!(
            "the last axis, axis {}, has {c} elements, the bias {bc}",
            x.len() - 1
        ),
        (Some(&c), _) => format!(
            "the bias must have rank 1 and {c} elements, found rank {}",
            b.len()
        ),
    }
}

// ---- checks every kernel family makes --------------------------------------------

/// `Ok` when `a` and `b` have the same shape, else the `Shape` error
/// `{name}: [..] against [..] (axis …)`.
pub(in crate::tensor) fn check_same(
    name: &str,
    a: &super::Tensor,
    b: &super::Tensor,
) -> TResult<()> {
    if a.shape() == b.shape() {
        Ok(())
    } else {
        Err(TensorError::shape(format!(
            "{name}: {} against {} ({})",
            super::fmt_shape(a.shape()),
            super::fmt_shape(b.shape()),
            shape_difference(a.shape(), b.shape())
        )))
    }
}

/// Size of the last axis, or a `Shape` error at rank 0.
pub(in crate::tensor) fn last_axis(name: &str, x: &super::Tensor) -> TResult<usize> {
    x.shape()
        .last()
        .copied()
        .ok_or_else(|| TensorError::shape(format!("{name}: a rank-0 tensor has no last axis")))
}

/// Size of a non-empty last axis, or a `Shape` error (rank 0 or an empty last axis).
pub(in crate::tensor) fn nonempty_last_axis(name: &str, x: &super::Tensor) -> TResult<usize> {
    match x.shape().last() {
        Some(&d) if d > 0 => Ok(d),
        _ => Err(TensorError::shape(format!(
            "{name}: needs a non-empty last axis"
        ))),
    }
}

#[cfg(test)]
mod wording_tests {
    use super::*;

    #[test]
    fn differences_name_axes_and_sizes() {
        assert_eq!(shape_difference(&[2, 3], &[2, 4]), "axis 1: 3 against 4");
        assert_eq!(
            shape_difference(&[5, 3], &[2, 4]),
            "axis 0: 5 against 2; axis 1: 3 against 4"
        );
        assert_eq!(shape_difference(&[2, 3], &[3]), "rank 2 against rank 1");
        assert_eq!(shape_difference(&[2, 3], &[2, 3]), "");
    }

    #[test]
    fn broadcast_conflicts_align_at_the_right() {
        assert_eq!(
            broadcast_conflict(&[3, 3], &[2, 4]),
            "axis 0: 3 against 2; axis 1: 3 against 4"
        );
        assert_eq!(
            broadcast_conflict(&[2, 3], &[4]),
            "axis 1 of [2, 3] (3) against axis 0 of [4] (4)"
        );
        assert_eq!(broadcast_conflict(&[2, 1, 3], &[5, 3]), "");
        assert_eq!(
            broadcast_message(&[2, 3], &[2, 4]),
            "shapes [2, 3] and [2, 4] do not broadcast (axis 1: 3 against 4; sizes must be equal or 1)"
        );
    }
}
