//! The serialized `xla.CompileOptionsProto` that `PJRT_Client_Compile` takes, encoded
//! by hand: faber sets three integer fields, so a dozen lines of protobuf wire format
//! replace a protobuf compiler at build time (`cargo install` needs nothing beyond
//! cargo; docs/xla.md).
//!
//! The field numbers, from XLA's `xla/pjrt/proto/compile_options.proto`:
//!
//! ```text
//! message CompileOptionsProto {
//!   ExecutableBuildOptionsProto executable_build_options = 3;
//!   …
//! }
//! message ExecutableBuildOptionsProto {
//!   int64 device_ordinal = 1;   // -1: not set
//!   int64 num_replicas = 4;
//!   int64 num_partitions = 5;
//!   …
//! }
//! ```
//!
//! Wire format: each field is a key `(field_number << 3) | wire_type` as a varint,
//! then its value — wire type 0 (varint) for an `int64` (a negative one as its
//! 64-bit two's complement, ten bytes), wire type 2 (length-delimited: a varint
//! length, then the bytes) for a nested message. Fields are written in field-number
//! order, as protobuf's own serializers do.

/// What faber asks of a compilation: one replica, one partition, optionally a
/// device ordinal (else the plugin's default assignment, device 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    pub device_ordinal: Option<i64>,
    pub num_replicas: i64,
    pub num_partitions: i64,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            device_ordinal: None,
            num_replicas: 1,
            num_partitions: 1,
        }
    }
}

const VARINT: u64 = 0;
const LENGTH_DELIMITED: u64 = 2;

/// `CompileOptionsProto.executable_build_options`.
const EXECUTABLE_BUILD_OPTIONS: u64 = 3;
/// `ExecutableBuildOptionsProto.device_ordinal`.
const DEVICE_ORDINAL: u64 = 1;
/// `ExecutableBuildOptionsProto.num_replicas`.
const NUM_REPLICAS: u64 = 4;
/// `ExecutableBuildOptionsProto.num_partitions`.
const NUM_PARTITIONS: u64 = 5;

/// Appends `v` as a base-128 varint, least significant group first.
fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(out: &mut Vec<u8>, field: u64, wire_type: u64) {
    varint(out, (field << 3) | wire_type);
}

fn int64_field(out: &mut Vec<u8>, field: u64, v: i64) {
    key(out, field, VARINT);
    varint(out, v as u64);
}

impl CompileOptions {
    /// The options as a serialized `CompileOptionsProto`.
    pub fn encode(&self) -> Vec<u8> {
        let mut build = Vec::new();
        if let Some(d) = self.device_ordinal {
            int64_field(&mut build, DEVICE_ORDINAL, d);
        }
        int64_field(&mut build, NUM_REPLICAS, self.num_replicas);
        int64_field(&mut build, NUM_PARTITIONS, self.num_partitions);
        let mut out = Vec::with_capacity(build.len() + 2);
        key(&mut out, EXECUTABLE_BUILD_OPTIONS, LENGTH_DELIMITED);
        varint(&mut out, build.len() as u64);
        out.extend_from_slice(&build);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Derived by hand from the wire format: key 3<<3|2 = 0x1a, length 4, then
    /// key 4<<3|0 = 0x20, value 1, key 5<<3|0 = 0x28, value 1.
    #[test]
    fn the_default_options_are_six_bytes() {
        assert_eq!(
            CompileOptions::default().encode(),
            [0x1a, 0x04, 0x20, 0x01, 0x28, 0x01]
        );
    }

    /// device_ordinal 2 comes first (field 1: key 0x08); 300 replicas is the
    /// two-byte varint 0xac 0x02 (300 = 0b10_0101100: low seven bits 0x2c with the
    /// continuation bit, then 0b10).
    #[test]
    fn an_ordinal_and_a_multi_byte_varint() {
        let o = CompileOptions {
            device_ordinal: Some(2),
            num_replicas: 300,
            num_partitions: 1,
        };
        assert_eq!(
            o.encode(),
            [0x1a, 0x07, 0x08, 0x02, 0x20, 0xac, 0x02, 0x28, 0x01]
        );
    }

    /// -1 is 2⁶⁴ − 1: nine bytes 0xff and a final 0x01 (64 = 9·7 + 1 bits).
    #[test]
    fn a_negative_int64_is_ten_bytes() {
        let o = CompileOptions {
            device_ordinal: Some(-1),
            ..CompileOptions::default()
        };
        let mut want = vec![0x1a, 15, 0x08];
        want.extend([0xff; 9]);
        want.push(0x01);
        want.extend([0x20, 0x01, 0x28, 0x01]);
        assert_eq!(o.encode(), want);
    }
}
