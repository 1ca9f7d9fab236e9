//! AES-XTS with the `plain64` tweak, the payload and keyslot cipher of LUKS (`aes-xts-plain64`): the loop lives
//! in the `cryptadm-bulk` crate (crates/bulk/src/xts.rs), compiled optimised in every profile.

pub use cryptadm_bulk::xts::{XtsKeyError, XtsPlain64};

impl crate::exit::Classify for XtsKeyError {
    fn status(&self) -> crate::exit::ExitStatus {
        crate::exit::ExitStatus::InvalidInput
    }
}
