//! The seam between the layer cipher and the key-wrapping schemes (JWE, PKCS#7, OpenPGP, key providers).
//!
//! Each scheme wraps a layer's private options for all of its recipients into one blob, stored base64-encoded
//! in the annotation `org.opencontainers.image.enc.keys.<scheme>`; recipients added later append `,<blob>`.

use super::Error;
use crate::crypto::SecretBytes;

/// Wraps private options for the recipients of one scheme.
pub trait KeyWrapper {
    /// The annotation suffix: `jwe`, `pkcs7`, `pgp`, `provider.NAME`.
    fn scheme(&self) -> String;
    /// One blob protecting `private_options` for every recipient of this scheme.
    fn wrap(&self, private_options: &[u8]) -> Result<Vec<u8>, Error>;
}

/// Unwraps private options with the keys of one scheme.
pub trait KeyUnwrapper {
    /// The annotation suffix this unwrapper reads.
    fn scheme(&self) -> String;
    /// `Ok(None)`: the blob is well-formed but none of this unwrapper's keys opens it.
    fn unwrap(&self, wrapped: &[u8]) -> Result<Option<SecretBytes>, Error>;
}
