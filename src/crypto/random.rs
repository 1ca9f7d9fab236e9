//! Fresh randomness from the operating system.

/// Returns `N` bytes from the OS CSPRNG.
///
/// # Panics
/// When the OS has no randomness to give: there is no safe way to go on encrypting without it.
pub fn bytes<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    fill(&mut out);
    out
}

/// Fills `buf` from the OS CSPRNG (sizes known only at run time: AF stripes, keyslot padding, wipes).
///
/// # Panics
/// As [`bytes`].
pub fn fill(buf: &mut [u8]) {
    getrandom::fill(buf).expect("the operating system's random number generator failed");
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_draws_differ() {
        assert_ne!(super::bytes::<16>(), super::bytes::<16>());
    }
}
