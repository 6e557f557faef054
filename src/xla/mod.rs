//! XLA through PJRT, its stable C API (issue 24). A PJRT plugin is a shared library
//! exporting `GetPjrtApi`, which returns a table of C function pointers; faber loads
//! one at run time, so the binary builds and runs without any plugin present.
//!
//! What exists now: [`plugin`] loads a plugin, checks its API version, creates a
//! client and lists its devices (`faber devices`); [`exec`] compiles StableHLO text,
//! moves arrays to and from a device and executes, with the compile options
//! [`proto`] serializes; [`stablehlo`] writes StableHLO text and lowers the Radix
//! IR's tensor ops and straight-line functions to it; [`device`] runs one op or one
//! function on a device through a compile cache; [`spmd`] compiles one program for
//! N devices with XLA's SPMD partitioner and runs the train step data-parallel
//! (issue 25), with the [`sharding`] annotations; [`resident`] keeps results on
//! the devices (one buffer, or one per device when replicated). Control flow on the device,
//! device-resident values and `faber run --backend xla` are the rest of the issue
//! (docs/xla.md).
//!
//! Why a hand-written binding ([`pjrt_api`]) rather than the `pjrt` / `pjrt-sys`
//! crates: those generate their bindings with bindgen (which needs libclang) and
//! build protobuf messages with protoc at build time, so `cargo install` would need
//! a C toolchain's clang and protoc beyond cargo. faber calls about thirty entry points,
//! and the header fixes their layout (field order and types, `struct_size` rules),
//! so a few `#[repr(C)]` structs written from it, with layout tests, cost less than
//! the build dependencies and keep `cargo install` needing nothing beyond cargo.
//! The library is opened with libc's `dlopen`, already a dependency on Unix.
//!
//! This module is the library's one exception to "no file I/O": loading a plugin
//! opens the file the command line found (src/cli/devices.rs does the search).

pub mod device;
pub mod distributed;
pub mod exec;
pub mod kv_callbacks;
pub mod kv_store;
pub mod offload;
pub mod pjrt_api;
pub mod plugin;
pub mod proto;
pub mod resident;
pub mod sharding;
pub mod spmd;
pub mod spmd_inputs;
pub mod stablehlo;

pub use device::{Arg, Cache, Device, FnArg, Key, XlaError};
pub use exec::{Buffer, ElementType, Executable, HostArray};
pub use plugin::{Client, DeviceInfo, Plugin, PluginError, Stage};
pub use proto::CompileOptions;
