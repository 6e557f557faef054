//! Value trees as gradients: a tree of zeros shaped like another (`retro_nihil`) and
//! the element-wise sum of two trees (`retro_adde`, a gradient accumulated), records,
//! lists and tuples walked in step. Whether an accumulation may keep its addend is the
//! tensor runtime's call (`tensor::accumulation_is_addend`).
//!
//! Element types: a tensor's zeros are of its type (f32 zeros share blocks as f64 ones
//! do), and the sums are the dtype-aware `tensor::add`; an f32 leaf and a number add
//! the number unrounded (tensor/elementwise_f32.rs).

use std::rc::Rc;

use super::tensor_args::kr;
use super::value::Value;
use super::{fault, FResult};
use crate::diag::codes;
use crate::tensor::{self as k, DType, Tensor};

/// A value of the same structure with every number zero (gradients of parameter
/// trees): tensors → zeros, floats → 0.0, records/lists/tuples element-wise; other
/// leaves (ints, texts) → `nihil`.
pub(super) fn zeros_like(v: &Value) -> FResult<Value> {
    Ok(match v {
        Value::Tensor(t) => Value::tensor(kr(Tensor::zeros_of(t.dtype(), t.shape()))?),
        Value::Float(_) => Value::Float(0.0),
        Value::List(items) => Value::list(items.iter().map(zeros_like).collect::<FResult<_>>()?),
        Value::Tuple(items) => Value::Tuple(Rc::new(
            items.iter().map(zeros_like).collect::<FResult<_>>()?,
        )),
        Value::Record(r) => {
            let fields = r.fields.iter().map(zeros_like).collect::<FResult<_>>()?;
            Value::Record(Rc::new(super::value::Record {
                genus: r.genus,
                fields,
            }))
        }
        _ => Value::Nihil,
    })
}

/// Element-wise sum of two values of the same structure (gradient accumulation).
pub(super) fn deep_add(a: &Value, b: &Value) -> FResult<Value> {
    Ok(match (a, b) {
        // The first contribution to a zero accumulator: `0 + y` is y itself, bit for
        // bit, unless y holds a −0.0 that a +0.0 would turn into +0.0; then add (the
        // check and its size limit: tensor/accumulate.rs).
        (Value::Tensor(x), Value::Tensor(y)) if k::accumulation_is_addend(x, y) => b.clone(),
        (Value::Tensor(x), Value::Tensor(y)) => Value::tensor(kr(k::add(x, y))?),
        // An f32 tensor and a number: the number not rounded first (elementwise_f32.rs).
        (Value::Tensor(x), Value::Float(f)) | (Value::Float(f), Value::Tensor(x))
            if x.dtype() == DType::F32 =>
        {
            Value::tensor(kr(k::add_scalar(x, *f))?)
        }
        (Value::Tensor(x), Value::Float(f)) | (Value::Float(f), Value::Tensor(x)) => {
            Value::tensor(kr(k::add(x, &Tensor::scalar(*f)))?)
        }
        (Value::Float(x), Value::Float(y)) => Value::Float(x + y),
        (Value::Nihil, other) | (other, Value::Nihil) => other.clone(),
        (Value::List(x), Value::List(y)) if x.len() == y.len() => Value::list(
            x.iter()
                .zip(y.iter())
                .map(|(p, q)| deep_add(p, q))
                .collect::<FResult<_>>()?,
        ),
        (Value::Tuple(x), Value::Tuple(y)) if x.len() == y.len() => Value::Tuple(Rc::new(
            x.iter()
                .zip(y.iter())
                .map(|(p, q)| deep_add(p, q))
                .collect::<FResult<_>>()?,
        )),
        (Value::Record(x), Value::Record(y)) if x.genus == y.genus => {
            let fields = x
                .fields
                .iter()
                .zip(&y.fields)
                .map(|(p, q)| deep_add(p, q))
                .collect::<FResult<_>>()?;
            Value::Record(Rc::new(super::value::Record {
                genus: x.genus,
                fields,
            }))
        }
        (x, y) => {
            return fault(
                codes::RUN_TYPE,
                format!(
                    "cannot add gradients of {} and {}",
                    x.type_name(),
                    y.type_name()
                ),
            )
        }
    })
}

#[cfg(test)]
mod accumulate_tests {
    use super::*;
    use crate::ir::ops::Op;
    use crate::tensor::adds_nothing;

    fn t(v: &[f64]) -> Tensor {
        Tensor::from_slice(v, &[v.len()]).unwrap()
    }

    /// `0 + y` is skipped exactly when it gives y's bits (IEEE: +0 + −0 = +0).
    #[test]
    fn adds_nothing_only_when_the_sum_is_y() {
        let y = t(&[1.5, -2.0, 0.0, f64::NAN]);
        assert!(adds_nothing(&t(&[0.0; 4]), &y));
        assert!(adds_nothing(&t(&[-0.0; 4]), &t(&[-0.0, 1.0, 0.0, 2.0])));
        assert!(!adds_nothing(
            &t(&[0.0, -0.0, 0.0, 0.0]),
            &t(&[-0.0, 1.0, 0.0, 2.0])
        ));
        assert!(!adds_nothing(&t(&[0.0, 1e-300, 0.0, 0.0]), &y));
        // deep_add gives the bits an add would, both ways
        for (x, y) in [
            (t(&[0.0, 0.0]), t(&[-0.0, 3.0])),
            (t(&[-0.0, -0.0]), t(&[-0.0, 3.0])),
            (t(&[0.0, 0.0]), t(&[0.5, 3.0])),
            (t(&[0.25, 0.0]), t(&[0.5, 3.0])),
        ] {
            let want = k::add(&x, &y).unwrap();
            let got = deep_add(&Value::tensor(x), &Value::tensor(y)).unwrap();
            let Value::Tensor(got) = got else { panic!() };
            let bits = |t: &Tensor| t.data().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want));
        }
    }

    /// `addita` with a shared zero block as its receiver gives y itself (no pass) when y
    /// holds no −0.0, else the add's bits (−0.0 becomes +0.0); other receivers add.
    #[test]
    fn addita_of_shared_zeros() {
        let mut yv: Vec<f64> = (0..64 * 70).map(|i| i as f64 - 100.5).collect();
        let plain = t(&yv);
        yv[9] = -0.0;
        let neg_zero = t(&yv);
        let z = Tensor::zeros(&[64 * 70]).unwrap();
        assert!(z.is_shared_zeros());
        let small = Tensor::zeros(&[4]).unwrap();
        let bits = |t: &Tensor| t.data().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        for (y, shared) in [(&plain, true), (&neg_zero, false)] {
            let (zv, yv) = (Value::tensor(z.clone()), Value::tensor(y.clone()));
            let Value::Tensor(got) = super::super::tensors::apply(Op::Addita, &[&zv, &yv]).unwrap()
            else {
                panic!()
            };
            assert_eq!(bits(&got), bits(&k::add(&z, y).unwrap()));
            assert_eq!(got.shares_storage(y), shared);
        }
        // Shapes that do not match still go to the add (a broadcast, here).
        let (sv, yv) = (Value::tensor(small), Value::tensor(t(&[1.0])));
        let Value::Tensor(got) = super::super::tensors::apply(Op::Addita, &[&sv, &yv]).unwrap()
        else {
            panic!()
        };
        assert_eq!(got.data(), &[1.0; 4]);
    }

    /// Large zero tensors share one block; a write copies it first (the others stay
    /// zero); an accumulation into a shared zero block gives the add's bits.
    #[test]
    fn shared_zeros() {
        let a = Tensor::zeros(&[64, 70]).unwrap();
        let mut b = Tensor::zeros(&[70, 64]).unwrap();
        assert!(a.shares_storage(&b) && a.is_shared_zeros() && b.is_shared_zeros());
        b.data_mut()[5] = 1.0;
        assert!(!b.is_shared_zeros() && a.data().iter().all(|v| v.to_bits() == 0));
        assert!(!Tensor::zeros(&[3, 4]).unwrap().is_shared_zeros());
        let y: Vec<f64> = (0..64 * 70)
            .map(|i| if i == 7 { -0.0 } else { i as f64 })
            .collect();
        for y in [t(&y), t(&vec![0.5; 64 * 70])] {
            let x = Tensor::zeros(&[64 * 70]).unwrap();
            let want = k::add(&x, &y).unwrap();
            let Value::Tensor(got) = deep_add(&Value::tensor(x), &Value::tensor(y)).unwrap() else {
                panic!()
            };
            let bits = |t: &Tensor| t.data().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want));
        }
    }
}
