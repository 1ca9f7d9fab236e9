//! The loops of cryptadm that run over bulk data or thousands of rounds: the LUKS sector ciphers (AES-XTS-plain64,
//! AES-CBC-ESSIV), the anti-forensic splitter, PBKDF2 and the hashes LUKS names, the OCI layer cipher's
//! AES-256-CTR keystream, and the wipe of the chunk buffers they fill.
//!
//! Why a crate of their own: a generic function is compiled in the crate that instantiates it, at that crate's
//! optimisation level. cryptadm's development build (every test run) compiles its own crate at opt-level 0 and its
//! dependencies at 2, so `pbkdf2_hmac::<Sha512>` or an XTS loop over `aes`'s block backend, instantiated in
//! cryptadm, ran 10–50 times slower than the same code in a release build, while cryptadm at opt-level 1 takes
//! minutes longer to compile (docs/ci.md). Here every entry point is a plain (non-generic) function or method, so
//! the loops are instantiated and optimised in this crate, whichever profile builds cryptadm; the release
//! binary (fat LTO) is the same code either way.
//!
//! Like cryptadm, this crate never prints, never exits and has no unsafe code.

pub mod af;
pub mod cbc_essiv;
pub mod ctr;
pub mod hash;
pub mod secret_buf;
pub mod xts;

pub use hash::{Hash, UnknownHash};
pub use secret_buf::SecretBuf;
