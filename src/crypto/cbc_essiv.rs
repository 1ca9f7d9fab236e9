//! AES-CBC with the ESSIV IV generator (`aes-cbc-essiv:sha256`), the cipher of cryptsetup's CBC keyslots and of
//! old LUKS1 volumes: in the `cryptadm-bulk` crate (crates/bulk/src/cbc_essiv.rs), compiled optimised in every
//! profile.

pub use cryptadm_bulk::cbc_essiv::CbcEssiv;
