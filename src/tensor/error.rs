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
