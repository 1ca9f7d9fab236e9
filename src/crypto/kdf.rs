//! Password-based key derivation.

use super::Passphrase;
use zeroize::Zeroizing;

/// A 256-bit symmetric key, wiped on drop.
pub type Key256 = Zeroizing<[u8; 32]>;

/// PBKDF2 with HMAC-SHA-512 as its PRF, producing a 32-byte key (machineadm's KDF).
pub fn pbkdf2_sha512(passphrase: &Passphrase, salt: &[u8], iterations: u32) -> Key256 {
    let mut key = Zeroizing::new([0u8; 32]);
    cryptadm_bulk::Hash::Sha512.pbkdf2(passphrase.expose(), salt, iterations, key.as_mut());
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The known-answer vector of docs/formats.md#machineadm-encryptedconfig (also what `openssl kdf … PBKDF2` prints).
    #[test]
    fn machineadm_known_answer() {
        let salt: Vec<u8> = (0u8..16).collect();
        let key = pbkdf2_sha512(&Passphrase::new(b"correct horse battery staple".to_vec()), &salt, 50_000);
        assert_eq!(hex::encode(&key[..]), "15a38b9a70c7ad37b6133f4ecfdf941f311e2a1ac525549ebbd5c56c6c39770a");
    }
}
