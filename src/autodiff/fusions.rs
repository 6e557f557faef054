//! Every fusion the compiler introduces into a generated companion, one row each
//! (docs/autodiff.md § Fusion, with the naming grammar of the fused ops). Two kinds:
//!
//! - **Save-splits** ([`SPLITS`], read by forward.rs and rules.rs): the forward sweep
//!   computes a primal op as a pair — its result with the residual its backward needs,
//!   in one pass (`_cum_X`: "with X") — and the pair's first part (`_ex_pari`: "from
//!   the pair"), and the backward reads the kept residual instead of recomputing it.
//! - **Backward epilogues** ([`EPILOGUES`], read by fuse.rs): an op that consumes the
//!   first part of a backward helper's result folds into the helper, which applies it
//!   to each block of that part while it is in cache (`_derivata`: times a kept
//!   derivative; `_adde`: plus an addend).
//!
//! Each fused op has the bits of the ops it replaces. The op registry
//! (src/ir/ops.rs) names the same relations in its kind column
//! (`Kind::SaveSplit`, `Kind::Epilogue`); the tests below keep the two equal.

use crate::ir::ops::Op;

/// A primal op that a companion's forward sweep splits.
pub(crate) struct Split {
    /// The op as written.
    pub op: Op,
    /// `op`'s operands → the pair (result, residual), one pass.
    pub pair: Op,
    /// `op`'s operands and the pair → the pair's first part (no copy): the result.
    pub reads: Op,
    /// The pair's static type.
    pub pair_ty: PairTy,
    /// The VJP for `op`'s operands, from the output cotangent and the kept residual.
    pub backward: SplitBackward,
    /// How a user writes the op (diagnostics name it).
    pub write: &'static str,
    /// The pair the reader accepts, in words (its diagnostic names it).
    pub own_pair: &'static str,
}

/// The static type of a split's pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PairTy {
    /// The result's type twice (the residual is shaped like the result).
    ResultTwice,
    /// Two tensors of unknown shape.
    Tensors,
}

/// How a split op's backward uses the kept residual `r` (the pair's second part).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SplitBackward {
    /// The receiver's cotangent is `g.op(r)`.
    Receiver(Op),
    /// `g.op(r, operands…)` is a tuple of `n` parts, the cotangents of the first `n`
    /// operands in order.
    Parts(Op, usize),
}

pub(crate) const SPLITS: &[Split] = &[
    // gelu: the residual is gelu′(x), so the backward is g ⊙ d instead of a second tanh
    Split {
        op: Op::Gelu,
        pair: Op::GeluCumDerivata,
        reads: Op::GeluExPari,
        pair_ty: PairTy::ResultTwice,
        backward: SplitBackward::Receiver(Op::RetroGeluDerivata),
        write: "x.gelu()",
        own_pair: "the receiver's own `gelu_cum_derivata()`",
    },
    // attentio: the residual is the weights [B, H, T, T], read instead of recomputed
    Split {
        op: Op::Attentio,
        pair: Op::AttentioCumPonderibus,
        reads: Op::AttentioExPari,
        pair_ty: PairTy::Tensors,
        backward: SplitBackward::Parts(Op::RetroAttentio, 3),
        write: "q.attentio(k, v, capita)",
        own_pair: "`q.attentio_cum_ponderibus(k, v, capita)` of its own operands",
    },
];

/// A consumer of a backward helper's first part that folds into the helper.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Epilogue {
    /// The backward helper whose result is a tuple (∂a, …).
    pub product: Op,
    /// The op that reads ∂a …
    pub consumer: Op,
    /// … as its operand `part_at` (the other operand is the extra one).
    pub part_at: usize,
    /// `product` with the extra operand appended: (consumer(∂a, extra), …).
    pub fused: Op,
}

/// In the order fuse.rs tries them.
pub(crate) const EPILOGUES: &[Epilogue] = &[
    // the MLP's GELU backward after the linear layer's VJP
    Epilogue {
        product: Op::RetroMatMul,
        consumer: Op::RetroGeluDerivata,
        part_at: 0,
        fused: Op::RetroMatMulDerivata,
    },
    // a cotangent sum after a linear layer's VJP (the attention's q, k, v projections)
    Epilogue {
        product: Op::RetroMatMul,
        consumer: Op::Addita,
        part_at: 1,
        fused: Op::RetroMatMulAdde,
    },
    // a cotangent sum after a layernorm's VJP (the residual around a pre-LN block)
    Epilogue {
        product: Op::RetroLaminatio,
        consumer: Op::Addita,
        part_at: 1,
        fused: Op::RetroLaminatioAdde,
    },
];

/// The split of `op`, if a companion's forward sweep splits it.
pub(crate) fn split_of(op: Op) -> Option<&'static Split> {
    SPLITS.iter().find(|s| s.op == op)
}

/// The split whose pair or reader `op` is.
pub(crate) fn split_with(op: Op) -> Option<&'static Split> {
    SPLITS.iter().find(|s| s.pair == op || s.reads == op)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ops::{Kind, OpResult};

    #[test]
    fn splits_match_the_registry() {
        for s in SPLITS {
            assert_eq!(
                s.op.kind(),
                Kind::SaveSplit {
                    pair: s.pair,
                    reads: s.reads
                },
                "`{}`",
                s.op.name()
            );
            assert_eq!(s.pair.kind(), Kind::Helper);
            assert_eq!(s.reads.kind(), Kind::Helper);
            assert_eq!(s.pair.arity(), s.op.arity());
            assert_eq!(s.reads.arity(), s.op.arity() + 1);
            assert_eq!(s.pair.result(), OpResult::Pair);
            assert_eq!(s.reads.result(), s.op.result());
            match s.backward {
                SplitBackward::Receiver(h) => assert_eq!(h.arity(), 2),
                SplitBackward::Parts(h, n) => {
                    assert_eq!(h.arity(), 2 + s.op.arity());
                    assert!(n <= s.op.arity());
                }
            }
        }
        for &op in Op::ALL {
            if let Kind::SaveSplit { .. } = op.kind() {
                assert_eq!(
                    SPLITS.iter().filter(|s| s.op == op).count(),
                    1,
                    "`{}` is a save-split without exactly one row in SPLITS",
                    op.name()
                );
            }
        }
    }

    #[test]
    fn epilogues_match_the_registry() {
        for e in EPILOGUES {
            assert_eq!(
                e.fused.kind(),
                Kind::Epilogue {
                    of: e.product,
                    consumer: e.consumer
                },
                "`{}`",
                e.fused.name()
            );
            assert_eq!(e.fused.arity(), e.product.arity() + 1);
            assert_eq!(e.fused.result(), e.product.result());
            assert_eq!(e.consumer.arity(), 2);
            assert!(e.part_at < 2);
        }
        for &op in Op::ALL {
            if let Kind::Epilogue { .. } = op.kind() {
                assert_eq!(
                    EPILOGUES.iter().filter(|e| e.fused == op).count(),
                    1,
                    "`{}` is an epilogue without exactly one row in EPILOGUES",
                    op.name()
                );
            }
        }
    }
}
