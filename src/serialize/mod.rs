//! Reading and writing tensors in file formats shared with other tools.
//!
//! * [`safetensors`]: the safetensors format (Hugging Face), named tensors plus
//!   string metadata; see that module for the dtype conversions and checks.
//!
//! Like the rest of the library this does no I/O: readers take the file's
//! bytes, writers return them. Malformed input is always an `Err`, never a
//! panic or an allocation larger than the input warrants.

pub mod safetensors;

pub use safetensors::{Dtype, SafetensorsError, SafetensorsErrorKind};
