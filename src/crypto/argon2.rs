//! Argon2i / Argon2id (RFC 9106, version 0x13) as LUKS2 keyslots use it: a raw hash of `out.len()` bytes, no
//! PHC string encoding, no secret or associated data (docs/formats.md#luks-and-qcow2).
//!
//! A thin layer over the `argon2` crate 0.6 with its `parallel` feature, which fills the lanes of each slice on
//! threads (rayon), as libargon2 does for cryptsetup; 0.5 computes the lanes one after another, which with idle
//! cores costs up to `parallel` times the wall-clock time. Its BLAKE2 comes from the digest 0.11 generation, unlike the
//! rest of `crypto`; nothing of it crosses this module's API (bytes in, bytes out). `scripts/bench/argon2.sh`
//! compares this module with cryptsetup.

use argon2::{Algorithm, Argon2, Block, Params, Version};
use zeroize::Zeroize;

/// The two Argon2 variants LUKS2 keyslots name (`"argon2i"`, `"argon2id"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Argon2Variant {
    /// Data-independent addressing.
    Argon2i,
    /// Data-independent first half pass, data-dependent after (the LUKS2 default).
    Argon2id,
}

/// Why an Argon2 derivation could not run.
#[derive(Debug, thiserror::Error)]
pub enum Argon2Error {
    /// A cost, salt or output length outside what Argon2 allows.
    #[error("invalid Argon2 parameters: {0}")]
    InvalidParameters(argon2::Error),
    /// The memory cost could not be allocated.
    #[error("cannot allocate {0} KiB for Argon2")]
    OutOfMemory(u32),
}

impl crate::exit::Classify for Argon2Error {
    fn status(&self) -> crate::exit::ExitStatus {
        match self {
            Argon2Error::InvalidParameters(_) => crate::exit::ExitStatus::InvalidInput,
            Argon2Error::OutOfMemory(_) => crate::exit::ExitStatus::Failure,
        }
    }
}

/// Argon2 version 0x13 raw hash (no encoding), as LUKS2 keyslots use it: `out.len()` bytes.
pub fn derive(
    variant: Argon2Variant,
    passphrase: &[u8],
    salt: &[u8],
    time: u32,
    memory_kib: u32,
    parallel: u32,
    out: &mut [u8],
) -> Result<(), Argon2Error> {
    derive_keyed(variant, passphrase, salt, &[], &[], Costs { time, memory_kib, parallel }, out)
}

/// Argon2's three costs.
#[derive(Clone, Copy, Debug)]
struct Costs {
    time: u32,
    memory_kib: u32,
    parallel: u32,
}

/// [`derive`] with Argon2's optional secret and associated data, which LUKS never uses; they exist here so the
/// RFC 9106 test vectors (which set both) run through the same code.
fn derive_keyed(
    variant: Argon2Variant,
    passphrase: &[u8],
    salt: &[u8],
    secret: &[u8],
    associated_data: &[u8],
    costs: Costs,
    out: &mut [u8],
) -> Result<(), Argon2Error> {
    let algorithm = match variant {
        Argon2Variant::Argon2i => Algorithm::Argon2i,
        Argon2Variant::Argon2id => Algorithm::Argon2id,
    };
    let mut builder = argon2::ParamsBuilder::new();
    builder.m_cost(costs.memory_kib).t_cost(costs.time).p_cost(costs.parallel).output_len(out.len());
    if !associated_data.is_empty() {
        builder.data(argon2::AssociatedData::new(associated_data).map_err(Argon2Error::InvalidParameters)?);
    }
    let params: Params = builder.build().map_err(Argon2Error::InvalidParameters)?;
    let context = if secret.is_empty() {
        Argon2::new(algorithm, Version::V0x13, params.clone())
    } else {
        Argon2::new_with_secret(secret, algorithm, Version::V0x13, params.clone())
            .map_err(Argon2Error::InvalidParameters)?
    };
    // Allocated here rather than by the crate so that a memory cost the machine cannot give is an error, not an
    // abort.
    let mut memory: Vec<Block> = Vec::new();
    memory.try_reserve_exact(params.block_count()).map_err(|_| Argon2Error::OutOfMemory(costs.memory_kib))?;
    memory.resize(params.block_count(), Block::new());
    let result = context.hash_password_into_with_memory(passphrase, salt, out, &mut memory[..]);
    // The memory holds values derived from the passphrase: wipe it, as libargon2 does.
    memory.zeroize();
    result.map_err(Argon2Error::InvalidParameters)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9106 §5.2 and §5.3: 32 KiB, 3 passes, 4 lanes, 32-byte tag, password 32×0x01, salt 16×0x02, secret
    /// 8×0x03, associated data 12×0x04.
    fn rfc9106(variant: Argon2Variant) -> String {
        let mut out = [0u8; 32];
        let costs = Costs { time: 3, memory_kib: 32, parallel: 4 };
        derive_keyed(variant, &[1; 32], &[2; 16], &[3; 8], &[4; 12], costs, &mut out).unwrap();
        hex::encode(out)
    }

    #[test]
    fn rfc9106_argon2i() {
        assert_eq!(rfc9106(Argon2Variant::Argon2i), "c814d9d1dc7f37aa13f0d77f2494bda1c8de6b016dd388d29952a4c4672b6ce8");
    }

    #[test]
    fn rfc9106_argon2id() {
        assert_eq!(
            rfc9106(Argon2Variant::Argon2id),
            "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659"
        );
    }

    /// The reference implementation's own known answers without secret or associated data (phc-winner-argon2
    /// `test.c`, version 0x13: t = 2, m = 64 MiB, p = 1, "password", "somesalt") through the public API.
    #[test]
    fn reference_test_c_vectors() {
        for (variant, expected) in [
            (Argon2Variant::Argon2i, "c1628832147d9720c5bd1cfd61367078729f6dfb6f8fea9ff98158e0d7816ed0"),
            (Argon2Variant::Argon2id, "09316115d5cf24ed5a15a31a3ba326e5cf32edc24702987c02b6566f61913cf7"),
        ] {
            let mut out = [0u8; 32];
            derive(variant, b"password", b"somesalt", 2, 1 << 16, 1, &mut out).unwrap();
            assert_eq!(hex::encode(out), expected, "{variant:?}");
        }
    }

    #[test]
    fn invalid_parameters_are_errors() {
        let mut out = [0u8; 32];
        let derive_with = |time, memory_kib, parallel, salt: &[u8], out: &mut [u8]| {
            derive(Argon2Variant::Argon2id, b"pw", salt, time, memory_kib, parallel, out)
        };
        assert!(matches!(derive_with(0, 64, 1, &[0; 32], &mut out), Err(Argon2Error::InvalidParameters(_))));
        assert!(matches!(derive_with(1, 7, 1, &[0; 32], &mut out), Err(Argon2Error::InvalidParameters(_))));
        assert!(matches!(derive_with(1, 64, 0, &[0; 32], &mut out), Err(Argon2Error::InvalidParameters(_))));
        assert!(matches!(derive_with(1, 64, 1, &[0; 4], &mut out), Err(Argon2Error::InvalidParameters(_))));
        assert!(matches!(derive_with(1, 64, 1, &[0; 32], &mut out[..3]), Err(Argon2Error::InvalidParameters(_))));
    }
}
