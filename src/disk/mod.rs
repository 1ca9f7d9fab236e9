//! Disk images and block devices as one pipeline (`disk luks-format`, `convert`, `decrypt`): the source container,
//! an optional re-key, the sink container, and the one guard that decides whether an output may be written.
//! The command line (`src/cmd/disk/`) only parses flags into these calls and renders what they return.

pub mod clevis;
pub mod device;
mod error;
pub mod output;
pub mod pipeline;
pub mod tpm2;

pub use error::Error;
pub use output::Output;
