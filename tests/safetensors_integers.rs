//! Exact integers through the safetensors writer and reader (`write_items` with
//! `Data::Integers`, `RawTensor::integers`): the checkpoint of a `numerus` field must not
//! round through f64, so values beyond 2⁵³ and the ends of each integer dtype's range
//! come back unchanged; what a dtype cannot hold is an error, not a truncation.

use faber::serialize::safetensors::{read_raw, write_items, Data, Dtype, Item};

fn one(dtype: Dtype, values: &[i64]) -> Result<Vec<i64>, String> {
    let shape = [values.len()];
    let item = Item {
        name: "x",
        dtype,
        shape: &shape,
        data: Data::Integers(values),
    };
    let bytes = write_items(&[item], &[]).map_err(|e| e.to_string())?;
    let file = read_raw(&bytes).map_err(|e| e.to_string())?;
    assert_eq!(file.tensors[0].dtype, dtype);
    file.tensors[0].integers().map_err(|e| e.to_string())
}

#[test]
fn integers_round_trip_exactly_at_the_ends_of_every_range() {
    let cases: &[(Dtype, &[i64])] = &[
        (Dtype::I64, &[i64::MIN, -1, 0, (1 << 53) + 1, i64::MAX]),
        (Dtype::I32, &[i32::MIN as i64, -7, i32::MAX as i64]),
        (Dtype::I16, &[i16::MIN as i64, i16::MAX as i64]),
        (Dtype::I8, &[-128, 127]),
        (Dtype::U64, &[0, i64::MAX]),
        (Dtype::U32, &[0, u32::MAX as i64]),
        (Dtype::U16, &[0, u16::MAX as i64]),
        (Dtype::U8, &[0, 255]),
        (Dtype::Bool, &[0, 1, 1]),
    ];
    for (dtype, values) in cases {
        assert_eq!(one(*dtype, values).as_deref(), Ok(*values), "{dtype}");
    }
    // The raw I64 bytes are the two's complement of the value, little-endian.
    let shape: [usize; 0] = [];
    let item = Item {
        name: "n",
        dtype: Dtype::I64,
        shape: &shape,
        data: Data::Integers(&[(1 << 53) + 1]),
    };
    let bytes = write_items(&[item], &[]).unwrap();
    assert_eq!(&bytes[bytes.len() - 8..], &((1i64 << 53) + 1).to_le_bytes());
}

#[test]
fn what_a_dtype_cannot_hold_is_an_error() {
    for (dtype, value) in [
        (Dtype::I8, 128),
        (Dtype::I8, -129),
        (Dtype::U8, -1),
        (Dtype::U8, 256),
        (Dtype::U32, 1 << 32),
        (Dtype::I32, 1 << 31),
        (Dtype::Bool, 2),
        (Dtype::U64, -1),
    ] {
        let e = one(dtype, &[value]).unwrap_err();
        assert!(e.contains("not representable"), "{dtype} {value}: {e}");
    }
    let e = one(Dtype::F64, &[1]).unwrap_err();
    assert!(e.contains("cannot be stored as F64"), "{e}");
    // Elements that do not fill the shape.
    let shape = [3usize];
    let item = Item {
        name: "x",
        dtype: Dtype::I64,
        shape: &shape,
        data: Data::Integers(&[1, 2]),
    };
    let e = write_items(&[item], &[]).unwrap_err().to_string();
    assert!(e.contains("2 elements given for shape [3]"), "{e}");
}

#[test]
fn integers_of_a_float_tensor_and_u64_beyond_i64_are_refused() {
    let shape = [1usize];
    let item = Item {
        name: "x",
        dtype: Dtype::F64,
        shape: &shape,
        data: Data::Floats(&[3.0]),
    };
    let bytes = write_items(&[item], &[]).unwrap();
    let e = read_raw(&bytes).unwrap().tensors[0].integers().unwrap_err();
    assert!(e.to_string().contains("not an integer dtype"), "{e}");
    // A U64 above i64::MAX, written by hand: 8-byte header length, JSON, data.
    let header = r#"{"x":{"dtype":"U64","shape":[1],"data_offsets":[0,8]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(&u64::MAX.to_le_bytes());
    let raw = read_raw(&bytes).unwrap();
    let e = raw.tensors[0].integers().unwrap_err();
    assert!(e.to_string().contains("exceeds i64"), "{e}");
    // The float view of the same entry still works, rounded as `read` rounds it.
    assert_eq!(
        raw.tensors[0].to_tensor().unwrap().data(),
        &[u64::MAX as f64]
    );
}
