//! The anti-forensic splitter of LUKS (cryptsetup's lib/luks1/af.c, the same for LUKS1 and LUKS2).
//!
//! Hand-written: no crate implements it. A key of `n` bytes is stored as `stripes` blocks of `n` bytes such that
//! every block is needed to recover it, so wiping any part of the keyslot area destroys the key.

use crate::Hash;
use zeroize::{Zeroize, Zeroizing};

/// `diffuse`: each hash-sized chunk `i` of `block` becomes `H(be32(i) || chunk)`, truncated to the chunk length.
fn diffuse(hash: Hash, block: &mut [u8]) {
    let mut digest = [0u8; 64];
    let digest = &mut digest[..hash.output_len()];
    for (i, chunk) in block.chunks_mut(hash.output_len()).enumerate() {
        hash.digest_into(&[&(i as u32).to_be_bytes(), chunk], digest);
        let len = chunk.len();
        chunk.copy_from_slice(&digest[..len]);
    }
    digest.zeroize();
}

fn xor_into(acc: &mut [u8], other: &[u8]) {
    for (a, b) in acc.iter_mut().zip(other) {
        *a ^= b;
    }
}

/// Splits `key` into `stripes` blocks (`key.len() × stripes` bytes); `fill_random` fills the first `stripes − 1`
/// of them (the caller's CSPRNG).
///
/// # Panics
/// When `stripes` is 0.
pub fn split(key: &[u8], stripes: u32, hash: Hash, fill_random: fn(&mut [u8])) -> Zeroizing<Vec<u8>> {
    let n = key.len();
    let stripes = stripes as usize;
    assert!(stripes > 0, "at least one stripe");
    let mut out = Zeroizing::new(vec![0u8; n * stripes]);
    fill_random(&mut out[..n * (stripes - 1)]);
    let mut d = Zeroizing::new(vec![0u8; n]);
    for block in out[..n * (stripes - 1)].chunks(n) {
        xor_into(&mut d, block);
        diffuse(hash, &mut d);
    }
    let last = &mut out[n * (stripes - 1)..];
    last.copy_from_slice(key);
    xor_into(last, &d);
    out
}

/// Recovers a key of `key_len` bytes from `material` (at least `key_len × stripes` bytes).
///
/// # Panics
/// When `stripes` is 0 or `material` is shorter than `key_len × stripes`.
pub fn merge(material: &[u8], key_len: usize, stripes: u32, hash: Hash) -> Zeroizing<Vec<u8>> {
    let stripes = stripes as usize;
    assert!(stripes > 0, "at least one stripe");
    let mut d = Zeroizing::new(vec![0u8; key_len]);
    for block in material[..key_len * (stripes - 1)].chunks(key_len) {
        xor_into(&mut d, block);
        diffuse(hash, &mut d);
    }
    xor_into(&mut d, &material[key_len * (stripes - 1)..key_len * stripes]);
    d
}
