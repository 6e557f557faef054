//! Parameter trees in the function tracer (function.rs): the host calls
//! `hospes.folia(tree)` and `hospes.ex_foliis(tree, list)` on traced values, walked
//! as the interpreter walks them (src/eval/tree.rs `leaves`, src/eval/host.rs
//! `rebuild`): depth first, a record's fields in declaration order, a list's and a
//! tuple's items in order; only tensors are leaves — numbers (even those the device
//! computes), integers, flags, `nihil` are kept as they are. What the interpreter
//! would refuse (a replacement of another shape, too few or too many of them, a
//! number where a tensor was) does not lower, so the interpreter runs the call and
//! reports it. Every other host function does not lower.

use super::bound::Bound;
use super::lower::LowerError;
use super::Function;
use crate::ir::host::Host;

/// As src/eval/tree.rs: deeper trees are refused (the walk recurses).
const MAX_DEPTH: usize = 64;

fn unsupported<T>(what: impl Into<String>) -> Result<T, LowerError> {
    Err(LowerError::Unsupported { what: what.into() })
}

fn too_deep<T>() -> Result<T, LowerError> {
    unsupported(format!(
        "a parameter tree nested more than {MAX_DEPTH} levels deep"
    ))
}

/// The value of `hospes.<h>(args)` on traced values.
pub(super) fn host(f: &Function, h: Host, args: &[Bound]) -> Result<Bound, LowerError> {
    match (h, args) {
        (Host::Folia, [tree]) => {
            let mut out = Vec::new();
            leaves(tree, &mut out, 0)?;
            Ok(Bound::List(out))
        }
        (Host::ExFoliis, [tree, list]) => {
            let items: Vec<Bound> = match list {
                Bound::List(items) => items.clone(),
                // A literal list of integers (`[]` before any `appende`).
                Bound::Ints(v) => v.iter().map(|&n| Bound::Int(n)).collect(),
                _ => return unsupported("`hospes.ex_foliis` of other than a lista"),
            };
            let mut next = 0;
            let rebuilt = rebuild(f, tree, &items, &mut next, 0)?;
            if next != items.len() {
                return unsupported(format!(
                    "`hospes.ex_foliis` of a tree of {next} tensors with {} items",
                    items.len()
                ));
            }
            Ok(rebuilt)
        }
        _ => unsupported(format!("the host function `hospes.{}`", h.name())),
    }
}

/// The tree's children in walk order, or `None` for a leaf or another value.
fn children(b: &Bound) -> Option<&[Bound]> {
    match b {
        Bound::Record(parts) | Bound::List(parts) | Bound::Tuple(parts) => Some(parts),
        _ => None,
    }
}

/// The tensors of a tree, depth first, appended to `out`.
fn leaves(b: &Bound, out: &mut Vec<Bound>, depth: usize) -> Result<(), LowerError> {
    if depth > MAX_DEPTH {
        return too_deep();
    }
    match b {
        Bound::Device(_) => out.push(b.clone()),
        _ => {
            for c in children(b).unwrap_or(&[]) {
                leaves(c, out, depth + 1)?;
            }
        }
    }
    Ok(())
}

/// `tree` with its tensors replaced, in walk order, by `items[next..]`; each
/// replacement a tensor of its leaf's shape.
fn rebuild(
    f: &Function,
    tree: &Bound,
    items: &[Bound],
    next: &mut usize,
    depth: usize,
) -> Result<Bound, LowerError> {
    if depth > MAX_DEPTH {
        return too_deep();
    }
    let mut parts = |parts: &[Bound]| -> Result<Vec<Bound>, LowerError> {
        parts
            .iter()
            .map(|c| rebuild(f, c, items, next, depth + 1))
            .collect()
    };
    Ok(match tree {
        Bound::Device(old) => {
            let new = match items.get(*next) {
                Some(Bound::Device(new)) if f.ty(*new).dims == f.ty(*old).dims => *new,
                Some(other) => {
                    return unsupported(format!(
                        "`hospes.ex_foliis` with item {} ({other:?}) for a tensor {}",
                        *next,
                        f.ty(*old)
                    ))
                }
                None => {
                    return unsupported(format!(
                        "`hospes.ex_foliis` with only {} items",
                        items.len()
                    ))
                }
            };
            *next += 1;
            Bound::Device(new)
        }
        Bound::Record(p) => Bound::Record(parts(p)?),
        Bound::List(p) => Bound::List(parts(p)?),
        Bound::Tuple(p) => Bound::Tuple(parts(p)?),
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xla::exec::ElementType;
    use crate::xla::stablehlo::TensorType;

    fn t(dims: &[usize]) -> TensorType {
        TensorType::new(ElementType::F32, dims)
    }

    #[test]
    fn leaves_in_walk_order_and_rebuilt_in_place() {
        let (f, v) = Function::new(&[t(&[2]), t(&[3]), t(&[]), t(&[2]), t(&[3])]);
        // {a: v0, b: [v1, 0.5, n], c: (7, {d: v2})} where n is a device number.
        let tree = Bound::Record(vec![
            Bound::Device(v[0]),
            Bound::List(vec![
                Bound::Device(v[1]),
                Bound::Float(0.5),
                Bound::Number(v[2]),
            ]),
            Bound::Tuple(vec![
                Bound::Int(7),
                Bound::Record(vec![Bound::Device(v[2])]),
            ]),
        ]);
        let got = host(&f, Host::Folia, std::slice::from_ref(&tree)).unwrap();
        let want = [v[0], v[1], v[2]].map(Bound::Device).to_vec();
        assert_eq!(got, Bound::List(want));

        let (f, w) = Function::new(&[t(&[2]), t(&[3]), t(&[]), t(&[3]), t(&[2]), t(&[])]);
        let tree = Bound::Record(vec![
            Bound::Device(w[0]),
            Bound::List(vec![Bound::Device(w[1]), Bound::Number(w[2])]),
        ]);
        let items = Bound::List(vec![Bound::Device(w[4]), Bound::Device(w[3])]);
        let got = host(&f, Host::ExFoliis, &[tree.clone(), items]).unwrap();
        let want = Bound::Record(vec![
            Bound::Device(w[4]),
            Bound::List(vec![Bound::Device(w[3]), Bound::Number(w[2])]),
        ]);
        assert_eq!(got, want);

        // What the interpreter refuses does not lower: a shape that differs, one item
        // too many or too few, a number for a tensor; other host functions.
        let refused = |items: Vec<Bound>| {
            host(&f, Host::ExFoliis, &[tree.clone(), Bound::List(items)]).unwrap_err()
        };
        let (a, b, n) = (
            Bound::Device(w[4]),
            Bound::Device(w[3]),
            Bound::Number(w[5]),
        );
        refused(vec![b.clone(), a.clone()]);
        refused(vec![a.clone(), b.clone(), a.clone()]);
        refused(vec![a.clone()]);
        refused(vec![n, b]);
        let e = host(&f, Host::PrimumNonFinitum, &[tree]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no StableHLO lowering for the host function `hospes.primum_non_finitum`"
        );
        // No leaves: `[]` rebuilds the tree unchanged.
        let empty = Bound::Tuple(vec![Bound::Int(1)]);
        let got = host(&f, Host::ExFoliis, &[empty.clone(), Bound::Ints(vec![])]);
        assert_eq!(got.unwrap(), empty);
    }
}
