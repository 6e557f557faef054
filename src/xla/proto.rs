//! The serialized `xla.CompileOptionsProto` that `PJRT_Client_Compile` takes, encoded
//! by hand: faber sets a few integer fields and one small nested message, so some
//! forty lines of protobuf wire format replace a protobuf compiler at build time
//! (`cargo install` needs nothing beyond cargo; docs/xla.md).
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
//!   bool use_spmd_partitioning = 6;
//!   xla.DeviceAssignmentProto device_assignment = 9;
//!   …
//! }
//! ```
//!
//! and from `xla/xla_data.proto`:
//!
//! ```text
//! message DeviceAssignmentProto {
//!   int32 replica_count = 1;
//!   int32 computation_count = 2;
//!   message ComputationDevice { repeated int64 replica_device_ids = 1; }
//!   repeated ComputationDevice computation_devices = 3;
//! }
//! ```
//!
//! Wire format: each field is a key `(field_number << 3) | wire_type` as a varint,
//! then its value — wire type 0 (varint) for an `int64` (a negative one as its
//! 64-bit two's complement, ten bytes), wire type 2 (length-delimited: a varint
//! length, then the bytes) for a nested message. Fields are written in field-number
//! order, as protobuf's own serializers do.

/// What faber asks of a compilation: one replica, one partition, optionally a
/// device ordinal, and optionally the device (by its id) the one replica runs on —
/// a static device assignment; without one the plugin assigns its default device.
/// (The CPU plugin places a program by the assignment alone, not by the ordinal.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    pub device_ordinal: Option<i64>,
    pub num_replicas: i64,
    pub num_partitions: i64,
    /// `device_assignment`: replica 0 of computation 0 on the device of this id
    /// (`PJRT_DeviceDescription_Id`).
    pub device_id: Option<i64>,
}

/// The options of an SPMD compilation (issue 25): one replica, `device_ids.len()`
/// partitions, `use_spmd_partitioning` set, and a device assignment of one replica
/// of computation `i` on the device of id `device_ids[i]` — partition `i` runs
/// there and takes the `i`-th argument list of an execution.
///
/// With `propagate_to_output` XLA's sharding propagation chooses how each result
/// without an `mhlo.sharding` lies (`allow_spmd_sharding_propagation_to_output`,
/// one `true` for every result): a split parameter's update then stays split.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpmdOptions {
    pub device_ids: Vec<i64>,
    pub propagate_to_output: bool,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            device_ordinal: None,
            num_replicas: 1,
            num_partitions: 1,
            device_id: None,
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
/// `ExecutableBuildOptionsProto.use_spmd_partitioning`.
const USE_SPMD_PARTITIONING: u64 = 6;
/// `ExecutableBuildOptionsProto.device_assignment`.
const DEVICE_ASSIGNMENT: u64 = 9;
/// `ExecutableBuildOptionsProto.allow_spmd_sharding_propagation_to_output`
/// (`repeated bool`, packed).
const PROPAGATE_TO_OUTPUT: u64 = 12;
/// `DeviceAssignmentProto.replica_count`, `.computation_count`,
/// `.computation_devices`.
const REPLICA_COUNT: u64 = 1;
const COMPUTATION_COUNT: u64 = 2;
const COMPUTATION_DEVICES: u64 = 3;
/// `DeviceAssignmentProto.ComputationDevice.replica_device_ids`.
const REPLICA_DEVICE_IDS: u64 = 1;

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

/// A nested message or packed repeated field: key, length, bytes.
fn bytes_field(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
    key(out, field, LENGTH_DELIMITED);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A `DeviceAssignmentProto` of one replica of one computation on device `id`.
fn one_device_assignment(id: i64) -> Vec<u8> {
    assignment(&[id])
}

/// A `DeviceAssignmentProto` of one replica of `ids.len()` computations, computation
/// `i` on device `ids[i]`.
fn assignment(ids: &[i64]) -> Vec<u8> {
    let mut out = Vec::new();
    int64_field(&mut out, REPLICA_COUNT, 1);
    int64_field(&mut out, COMPUTATION_COUNT, ids.len() as i64);
    for &id in ids {
        let mut packed = Vec::new();
        varint(&mut packed, id as u64);
        let mut computation = Vec::new();
        bytes_field(&mut computation, REPLICA_DEVICE_IDS, &packed);
        bytes_field(&mut out, COMPUTATION_DEVICES, &computation);
    }
    out
}

impl SpmdOptions {
    /// The options as a serialized `CompileOptionsProto`.
    pub fn encode(&self) -> Vec<u8> {
        let mut build = Vec::new();
        int64_field(&mut build, NUM_REPLICAS, 1);
        int64_field(&mut build, NUM_PARTITIONS, self.device_ids.len() as i64);
        int64_field(&mut build, USE_SPMD_PARTITIONING, 1);
        bytes_field(&mut build, DEVICE_ASSIGNMENT, &assignment(&self.device_ids));
        if self.propagate_to_output {
            bytes_field(&mut build, PROPAGATE_TO_OUTPUT, &[1]);
        }
        let mut out = Vec::with_capacity(build.len() + 2);
        bytes_field(&mut out, EXECUTABLE_BUILD_OPTIONS, &build);
        out
    }
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
        if let Some(id) = self.device_id {
            bytes_field(&mut build, DEVICE_ASSIGNMENT, &one_device_assignment(id));
        }
        let mut out = Vec::with_capacity(build.len() + 2);
        bytes_field(&mut out, EXECUTABLE_BUILD_OPTIONS, &build);
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
            device_id: None,
        };
        assert_eq!(
            o.encode(),
            [0x1a, 0x07, 0x08, 0x02, 0x20, 0xac, 0x02, 0x28, 0x01]
        );
    }

    /// The assignment (field 9: key 0x4a) of device 3: replica_count 1 (0x08 0x01),
    /// computation_count 1 (0x10 0x01), one computation_devices entry (key 0x1a,
    /// length 3) holding the packed ids (key 0x0a, length 1, 3).
    #[test]
    fn a_device_assignment_of_one_device() {
        let o = CompileOptions {
            device_id: Some(3),
            ..CompileOptions::default()
        };
        let assignment = [0x08, 0x01, 0x10, 0x01, 0x1a, 0x03, 0x0a, 0x01, 0x03];
        let mut want = vec![0x1a, 4 + 2 + assignment.len() as u8];
        want.extend([0x20, 0x01, 0x28, 0x01, 0x4a, assignment.len() as u8]);
        want.extend(assignment);
        assert_eq!(o.encode(), want);
    }

    /// Two partitions on devices 0 and 1: num_replicas 1 (0x20 0x01),
    /// num_partitions 2 (0x28 0x02), use_spmd_partitioning true (key 6<<3|0 = 0x30,
    /// 0x01), then the assignment (0x4a): replica_count 1, computation_count 2, and
    /// two computation_devices entries, each key 0x1a, length 3, packed ids
    /// (0x0a, length 1, the id).
    #[test]
    fn spmd_options_of_two_partitions() {
        let o = SpmdOptions {
            device_ids: vec![0, 1],
            propagate_to_output: false,
        };
        let assignment = [
            0x08, 0x01, 0x10, 0x02, 0x1a, 0x03, 0x0a, 0x01, 0x00, 0x1a, 0x03, 0x0a, 0x01, 0x01,
        ];
        let mut want = vec![0x1a, 6 + 2 + assignment.len() as u8];
        want.extend([
            0x20,
            0x01,
            0x28,
            0x02,
            0x30,
            0x01,
            0x4a,
            assignment.len() as u8,
        ]);
        want.extend(assignment);
        assert_eq!(o.encode(), want);
        // Propagation to the outputs adds field 12 after the assignment: key
        // 12<<3|2 = 0x62, length 1, one packed `true`.
        let p = SpmdOptions {
            propagate_to_output: true,
            ..o
        };
        want[1] += 3;
        want.extend([0x62, 0x01, 0x01]);
        assert_eq!(p.encode(), want);
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
