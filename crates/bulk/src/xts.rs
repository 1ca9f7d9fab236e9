//! AES-XTS with the `plain64` tweak (IEEE 1619 / NIST SP 800-38E), over whole data units: the payload and
//! keyslot cipher of LUKS (`aes-xts-plain64`, docs/formats.md#luks-and-qcow2).
//!
//! Hand-written on the AES block cipher because no crate does it fast enough: `xts-mode` encrypts one block at a
//! time (about a fifth of OpenSSL's speed), while LUKS volumes are gigabytes. Here the blocks go through the AES
//! backend's block-parallel call (8 blocks at once with AES-NI), the tweaks are computed by doubling in
//! GF(2^128) while the previous batch is in the AES rounds, and `*_parallel` splits the units over scoped
//! threads. Units are always whole multiples of the AES block, so XTS ciphertext stealing never applies.
//!
//! The `aes` crate is 0.8 (cipher 0.4), the generation the rest of `crypto` uses: its 0.9 successor, with a
//! VAES backend, measured no faster on the project's builder (AES-256 ECB, 6.26 GB/s per CPU second for both),
//! so a second generation would only add code. `scripts/bench/xts.sh` compares this module with OpenSSL.

use aes::cipher::{
    BlockBackend, BlockClosure, BlockDecrypt, BlockEncrypt, BlockSizeUser, KeyInit, ParBlocks, consts::U16,
    generic_array::GenericArray, typenum::Unsigned,
};
use aes::{Aes128, Aes256};
use zeroize::Zeroize;

/// One AES block.
type Block = GenericArray<u8, U16>;

/// Why a key cannot be used for XTS.
#[derive(Debug, thiserror::Error)]
pub enum XtsKeyError {
    /// Not 32 (AES-128-XTS) or 64 (AES-256-XTS) bytes.
    #[error("an AES-XTS key is 32 or 64 bytes, not {0}")]
    WrongLength(usize),
    /// The data key equals the tweak key, which IEEE 1619 forbids (and OpenSSL refuses).
    #[error("the two halves of the AES-XTS key are equal")]
    EqualHalves,
}

/// The two key schedules (data key K1, tweak key K2) of one AES size; the `aes` crate wipes them on drop.
// One value per open volume, never moved in a hot loop: the size difference costs nothing.
#[allow(clippy::large_enum_variant)]
enum Keys {
    Aes128 { data: Aes128, tweak: Aes128 },
    Aes256 { data: Aes256, tweak: Aes256 },
}

/// AES-XTS with the plain64 tweak, over data units ("sectors").
pub struct XtsPlain64 {
    keys: Keys,
}

/// The smallest unit: IVs are counted in 512-byte sectors whatever the unit size (docs/formats.md#luks-and-qcow2).
const SECTOR: usize = 512;
const BLOCK: usize = 16;

impl XtsPlain64 {
    /// 32 bytes (AES-128-XTS) or 64 bytes (AES-256-XTS); refuses a key whose two halves are equal.
    pub fn new(key: &[u8]) -> Result<Self, XtsKeyError> {
        if key.len() != 32 && key.len() != 64 {
            return Err(XtsKeyError::WrongLength(key.len()));
        }
        let (data, tweak) = key.split_at(key.len() / 2);
        // Not secret-dependent timing in a way that matters: the comparison result is the only output.
        if bool::from(subtle::ConstantTimeEq::ct_eq(data, tweak)) {
            return Err(XtsKeyError::EqualHalves);
        }
        let keys = if key.len() == 32 {
            Keys::Aes128 {
                data: Aes128::new(GenericArray::from_slice(data)),
                tweak: Aes128::new(GenericArray::from_slice(tweak)),
            }
        } else {
            Keys::Aes256 {
                data: Aes256::new(GenericArray::from_slice(data)),
                tweak: Aes256::new(GenericArray::from_slice(tweak)),
            }
        };
        Ok(Self { keys })
    }

    /// Encrypts whole units in place. data.len() is a multiple of unit_size (a power of two, 512..=4096);
    /// unit i uses tweak iv = first_iv + i * (unit_size / 512). Panics on a length that is not a multiple.
    pub fn encrypt_units(&self, data: &mut [u8], unit_size: usize, first_iv: u64) {
        self.process_units(data, unit_size, first_iv, Direction::Encrypt);
    }

    /// Decrypts whole units in place; the inverse of [`Self::encrypt_units`], with the same rules.
    pub fn decrypt_units(&self, data: &mut [u8], unit_size: usize, first_iv: u64) {
        self.process_units(data, unit_size, first_iv, Direction::Decrypt);
    }

    /// The same as [`Self::encrypt_units`], split over `threads` scoped threads (1 = the calling thread only).
    pub fn encrypt_units_parallel(&self, data: &mut [u8], unit_size: usize, first_iv: u64, threads: usize) {
        self.process_parallel(data, unit_size, first_iv, threads, Direction::Encrypt);
    }

    /// The same as [`Self::decrypt_units`], split over `threads` scoped threads (1 = the calling thread only).
    pub fn decrypt_units_parallel(&self, data: &mut [u8], unit_size: usize, first_iv: u64, threads: usize) {
        self.process_parallel(data, unit_size, first_iv, threads, Direction::Decrypt);
    }

    fn process_parallel(&self, data: &mut [u8], unit_size: usize, first_iv: u64, threads: usize, dir: Direction) {
        check_layout(data.len(), unit_size);
        let units = data.len() / unit_size;
        let threads = threads.clamp(1, units.max(1));
        if threads == 1 {
            return self.process_units(data, unit_size, first_iv, dir);
        }
        let units_per_thread = units.div_ceil(threads);
        let sectors_per_unit = (unit_size / SECTOR) as u64;
        let mut chunks = data.chunks_mut(units_per_thread * unit_size);
        let own = chunks.next().expect("at least one unit");
        std::thread::scope(|scope| {
            for (n, chunk) in chunks.enumerate() {
                let iv = first_iv.wrapping_add(((n + 1) * units_per_thread) as u64 * sectors_per_unit);
                scope.spawn(move || self.process_units(chunk, unit_size, iv, dir));
            }
            // The calling thread takes the first share rather than only waiting.
            self.process_units(own, unit_size, first_iv, dir);
        });
    }

    fn process_units(&self, data: &mut [u8], unit_size: usize, first_iv: u64, dir: Direction) {
        check_layout(data.len(), unit_size);
        match &self.keys {
            Keys::Aes128 { data: data_key, tweak } => process_span(data_key, tweak, data, unit_size, first_iv, dir),
            Keys::Aes256 { data: data_key, tweak } => process_span(data_key, tweak, data, unit_size, first_iv, dir),
        }
    }
}

#[derive(Clone, Copy)]
enum Direction {
    Encrypt,
    Decrypt,
}

fn check_layout(len: usize, unit_size: usize) {
    assert!(
        unit_size.is_power_of_two() && (SECTOR..=MAX_UNIT).contains(&unit_size),
        "XTS unit size {unit_size} is not a power of two in 512..=4096"
    );
    assert!(len.is_multiple_of(unit_size), "XTS data of {len} bytes is not a whole number of {unit_size}-byte units");
}

/// Encrypts or decrypts consecutive units in place, the first with tweak IV `first_iv`.
///
/// The work runs inside the cipher's backend closure (`encrypt_with_backend`), and the blocks go through the
/// backend's block-parallel call (`proc_par_blocks`: 8 blocks at once with AES-NI) instead of one at a time.
fn process_span<C>(data_key: &C, tweak_key: &C, data: &mut [u8], unit_size: usize, first_iv: u64, dir: Direction)
where
    C: BlockEncrypt + BlockDecrypt + BlockSizeUser<BlockSize = U16>,
{
    let units = data.len() / unit_size;
    let closure = XtsClosure { data, unit_size, unit_tweaks: UnitTweaks::new(tweak_key, unit_size, first_iv, units) };
    match dir {
        Direction::Encrypt => data_key.encrypt_with_backend(closure),
        Direction::Decrypt => data_key.decrypt_with_backend(closure),
    }
}

/// The XTS mode around one run of the data-key cipher: `C = E(P ⊕ T) ⊕ T` (or `D`), block by block.
struct XtsClosure<'a, K> {
    data: &'a mut [u8],
    unit_size: usize,
    unit_tweaks: UnitTweaks<'a, K>,
}

impl<K> BlockSizeUser for XtsClosure<'_, K> {
    type BlockSize = U16;
}

impl<K: BlockEncrypt + BlockSizeUser<BlockSize = U16>> BlockClosure for XtsClosure<'_, K> {
    fn call<B: BlockBackend<BlockSize = U16>>(self, backend: &mut B) {
        let par = B::ParBlocksSize::USIZE;
        assert!(par <= MAX_PAR_BLOCKS, "AES backend processes more than {MAX_PAR_BLOCKS} blocks at once");
        let mut batch = ParBlocks::<B>::default();
        let mut tweaks =
            TweakStream { unit_tweaks: self.unit_tweaks, blocks_per_unit: self.unit_size / BLOCK, next: 0, left: 0 };
        // Three tweak buffers in rotation: the tweaks of the batch after next are computed (on 64-bit registers)
        // right after this batch enters the AES rounds, so that work overlaps the rounds instead of waiting for
        // them, and is long in memory when the 16-byte XORs load it (loading 16 bytes still in the store buffer
        // as two 8-byte halves stalls; computing only one batch ahead cost 13 % of the speed).
        let mut bufs = [[[0u8; BLOCK]; MAX_PAR_BLOCKS]; 3];
        let [buf_a, buf_b, buf_c] = &mut bufs;
        let (mut current, mut next, mut after) = (&mut buf_a[..par], &mut buf_b[..par], &mut buf_c[..par]);
        tweaks.fill(current);
        tweaks.fill(next);
        // Batches run across unit boundaries: the tweak stream restarts at each unit.
        let mut chunks = self.data.chunks_exact_mut(par * BLOCK);
        for chunk in &mut chunks {
            for ((block, bytes), t) in batch.iter_mut().zip(chunk.chunks_exact(BLOCK)).zip(current.iter()) {
                xor_block(block, bytes, t);
            }
            backend.proc_par_blocks_inplace(&mut batch);
            tweaks.fill(after);
            for ((bytes, block), t) in chunk.chunks_exact_mut(BLOCK).zip(batch.iter()).zip(current.iter()) {
                xor_block(bytes, block, t);
            }
            std::mem::swap(&mut current, &mut next);
            std::mem::swap(&mut next, &mut after);
        }
        // Fewer than `par` blocks at the end (never with AES-NI's 8; the software backend).
        for (bytes, t) in chunks.into_remainder().chunks_exact_mut(BLOCK).zip(current.iter()) {
            let mut block = Block::default();
            xor_block(&mut block, bytes, t);
            backend.proc_block_inplace(&mut block);
            xor_block(bytes, &block, t);
            block.as_mut_slice().zeroize();
        }
        // The buffers held data and tweaks derived from the key: leave nothing on the stack.
        bufs.zeroize();
        batch.iter_mut().for_each(|block| block.as_mut_slice().zeroize());
        tweaks.unit_tweaks.ahead.iter_mut().for_each(|block| block.as_mut_slice().zeroize());
    }
}

/// The tweak of every block of consecutive units, in order: each unit starts at its encrypted IV, and every
/// next block's tweak is the previous one times α.
struct TweakStream<'a, K> {
    unit_tweaks: UnitTweaks<'a, K>,
    blocks_per_unit: usize,
    next: u128,
    /// Blocks of the current unit whose tweaks are still to come.
    left: usize,
}

impl<K: BlockEncrypt + BlockSizeUser<BlockSize = U16>> TweakStream<'_, K> {
    /// Writes the next `out.len()` tweaks (past the last unit it writes garbage, which nothing uses).
    #[inline(always)]
    fn fill(&mut self, out: &mut [[u8; BLOCK]]) {
        let (mut tweak, mut left) = (self.next, self.left);
        for t in out {
            if left == 0 {
                tweak = self.unit_tweaks.next();
                left = self.blocks_per_unit;
            }
            *t = tweak.to_le_bytes();
            tweak = double(tweak);
            left -= 1;
        }
        (self.next, self.left) = (tweak, left);
    }
}

/// `out = a ^ b` on one block, written so that it compiles to one 16-byte vector XOR.
#[inline(always)]
fn xor_block(out: &mut [u8], a: &[u8], b: &[u8; BLOCK]) {
    let a: [u8; BLOCK] = a[..BLOCK].try_into().expect("a whole block");
    let x: [u8; BLOCK] = std::array::from_fn(|i| a[i] ^ b[i]);
    out[..BLOCK].copy_from_slice(&x);
}

/// The most blocks an AES backend processes at once (8 with AES-NI; the software backend uses fewer).
const MAX_PAR_BLOCKS: usize = 32;

/// The largest unit: 4096 bytes (LUKS2 sector sizes are 512..=4096).
const MAX_UNIT: usize = 4096;

/// How many units' initial tweaks are encrypted in one call (so the tweak key also uses the parallel path).
const UNIT_TWEAK_BATCH: usize = 16;

/// The initial tweak of each of consecutive units, `E_K2(le64(iv) || 0^8)`, encrypted ahead in batches.
struct UnitTweaks<'a, K> {
    tweak_key: &'a K,
    next_iv: u64,
    iv_step: u64,
    units_left: usize,
    ahead: [Block; UNIT_TWEAK_BATCH],
    used: usize,
}

impl<'a, K: BlockEncrypt + BlockSizeUser<BlockSize = U16>> UnitTweaks<'a, K> {
    fn new(tweak_key: &'a K, unit_size: usize, first_iv: u64, units: usize) -> Self {
        let iv_step = (unit_size / SECTOR) as u64;
        Self {
            tweak_key,
            next_iv: first_iv,
            iv_step,
            units_left: units,
            ahead: Default::default(),
            used: UNIT_TWEAK_BATCH,
        }
    }

    fn next(&mut self) -> u128 {
        if self.used == UNIT_TWEAK_BATCH {
            let batch = self.units_left.clamp(1, UNIT_TWEAK_BATCH);
            for block in &mut self.ahead[..batch] {
                block[..8].copy_from_slice(&self.next_iv.to_le_bytes());
                block[8..].fill(0);
                self.next_iv = self.next_iv.wrapping_add(self.iv_step);
            }
            self.tweak_key.encrypt_blocks(&mut self.ahead[..batch]);
            self.units_left = self.units_left.saturating_sub(batch);
            self.used = 0;
        }
        self.used += 1;
        load(&self.ahead[self.used - 1])
    }
}

/// Multiplication by α in GF(2^128) with the XTS (little-endian) bit order, without a secret-dependent branch:
/// the bit shifted out is reduced with x^128 = x^7 + x^2 + x + 1 (0x87).
#[inline(always)]
fn double(t: u128) -> u128 {
    (t << 1) ^ (0u128.wrapping_sub(t >> 127) & 0x87)
}

/// A 16-byte block as the little-endian 128-bit number XTS computes with.
#[inline(always)]
fn load(bytes: &[u8]) -> u128 {
    let mut le = [0u8; BLOCK];
    le.copy_from_slice(&bytes[..BLOCK]);
    u128::from_le_bytes(le)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        hex::decode(s).expect("test hex")
    }

    fn random(len: usize) -> Vec<u8> {
        let mut buf = vec![0u8; len];
        getrandom::fill(&mut buf).expect("random bytes");
        buf
    }

    /// A random XTS key whose halves differ (equal halves have probability 2^-256; checked anyway).
    fn random_key(len: usize) -> Vec<u8> {
        loop {
            let key = random(len);
            if key[..len / 2] != key[len / 2..] {
                return key;
            }
        }
    }

    /// The plaintext of IEEE 1619 vectors 4 and 10: bytes 0x00..=0xff, twice.
    fn counting_512() -> Vec<u8> {
        (0..512).map(|i| i as u8).collect()
    }

    const V4_KEY: &str = "27182818284590452353602874713526 31415926535897932384626433832795";
    /// IEEE 1619-2007 vector 4: XTS-AES-128, data unit 0, plaintext [`counting_512`].
    const V4_CTX: &str = "
        27a7479befa1d476489f308cd4cfa6e2a96e4bbe3208ff25287dd3819616e89c c78cf7f5e543445f8333d8fa7f56000005279fa5d8b5e4ad40e736ddb4d35412
        328063fd2aab53e5ea1e0a9f332500a5df9487d07a5c92cc512c8866c7e860ce 93fdf166a24912b422976146ae20ce846bb7dc9ba94a767aaef20c0d61ad0265
        5ea92dc4c4e41a8952c651d33174be51a10c421110e6d81588ede82103a252d8 a750e8768defffed9122810aaeb99f9172af82b604dc4b8e51bcb08235a6f434
        1332e4ca60482a4ba1a03b3e65008fc5da76b70bf1690db4eae29c5f1badd03c 5ccf2a55d705ddcd86d449511ceb7ec30bf12b1fa35b913f9f747a8afd1b130e
        94bff94effd01a91735ca1726acd0b197c4e5b03393697e126826fb6bbde8ecc 1e08298516e2c9ed03ff3c1b7860f6de76d4cecd94c8119855ef5297ca67e9f3
        e7ff72b1e99785ca0a7e7720c5b36dc6d72cac9574c8cbbc2f801e23e56fd344 b07f22154beba0f08ce8891e643ed995c94d9a69c9f1b5f499027a78572aeebd
        74d20cc39881c213ee770b1010e4bea718846977ae119f7a023ab58cca0ad752 afe656bb3c17256a9f6e9bf19fdd5a38fc82bbe872c5539edb609ef4f79c203e
        bb140f2e583cb2ad15b4aa5b655016a8449277dbd477ef2c8d6c017db738b18d eb4a427d1923ce3ff262735779a418f20a282df920147beabe421ee5319d0568";
    /// IEEE 1619-2007 vector 5: the same key, data unit 1, plaintext = vector 4's ciphertext.
    const V5_CTX: &str = "
        264d3ca8512194fec312c8c9891f279fefdd608d0c027b60483a3fa811d65ee5 9d52d9e40ec5672d81532b38b6b089ce951f0f9c35590b8b978d175213f329bb
        1c2fd30f2f7f30492a61a532a79f51d36f5e31a7c9a12c286082ff7d2394d18f 783e1a8e72c722caaaa52d8f065657d2631fd25bfd8e5baad6e527d763517501
        c68c5edc3cdd55435c532d7125c8614deed9adaa3acade5888b87bef641c4c99 4c8091b5bcd387f3963fb5bc37aa922fbfe3df4e5b915e6eb514717bdd2a7407
        9a5073f5c4bfd46adf7d282e7a393a52579d11a028da4d9cd9c77124f9648ee3 83b1ac763930e7162a8d37f350b2f74b8472cf09902063c6b32e8c2d9290cefb
        d7346d1c779a0df50edcde4531da07b099c638e83a755944df2aef1aa31752fd 323dcb710fb4bfbb9d22b925bc3577e1b8949e729a90bbafeacf7f7879e7b114
        7e28ba0bae940db795a61b15ecf4df8db07b824bb062802cc98a9545bb2aaeed 77cb3fc6db15dcd7d80d7d5bc406c4970a3478ada8899b329198eb61c193fb62
        75aa8ca340344a75a862aebe92eee1ce032fd950b47d7704a3876923b4ad6284 4bf4a09c4dbe8b4397184b7471360c9564880aedddb9baa4af2e75394b08cd32
        ff479c57a07d3eab5d54de5f9738b8d27f27a9f0ab11799d7b7ffefb2704c95c 6ad12c39f1e867a4b7b1d7818a4b753dfd2a89ccb45e001a03a867b187f225dd";

    /// IEEE 1619-2007 vectors 2 and 3: XTS-AES-128, data unit 0x3333333333, 32 bytes of 0x44. The API's units
    /// are at least 512 bytes; without ciphertext stealing every 16-byte block depends only on its position, so
    /// the 32-byte vectors are the first two blocks of a 512-byte unit.
    #[test]
    fn ieee1619_vectors_2_and_3_aes128() {
        for (key, ctx) in [
            (
                "11111111111111111111111111111111 22222222222222222222222222222222",
                "c454185e6a16936e39334038acef838bfb186fff7480adc4289382ecd6d394f0",
            ),
            (
                "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0 22222222222222222222222222222222",
                "af85336b597afc1a900b2eb21ec949d292df4c047e0b21532186a5971a227a89",
            ),
        ] {
            let xts = XtsPlain64::new(&unhex(key)).unwrap();
            let mut unit = vec![0x44u8; 512];
            xts.encrypt_units(&mut unit, 512, 0x33_3333_3333);
            assert_eq!(hex::encode(&unit[..32]), ctx);
            xts.decrypt_units(&mut unit, 512, 0x33_3333_3333);
            assert_eq!(unit, vec![0x44u8; 512]);
        }
    }

    /// Vectors 4 and 5 as one two-unit call: the IV steps from unit to unit.
    #[test]
    fn ieee1619_vectors_4_and_5_as_two_units() {
        let xts = XtsPlain64::new(&unhex(V4_KEY)).unwrap();
        let (ctx4, ctx5) = (unhex(V4_CTX), unhex(V5_CTX));
        let plain = [counting_512(), ctx4.clone()].concat();
        let cipher = [ctx4, ctx5].concat();
        let mut data = plain.clone();
        xts.encrypt_units(&mut data, 512, 0);
        assert_eq!(data, cipher);
        xts.decrypt_units(&mut data, 512, 0);
        assert_eq!(data, plain);
        // Unit 5 alone, starting at IV 1.
        let mut second = plain[512..].to_vec();
        xts.encrypt_units(&mut second, 512, 1);
        assert_eq!(second, cipher[512..]);
    }

    /// Vector 10: XTS-AES-256, data unit 0xff (first 256 bytes of the published 512-byte ciphertext).
    #[test]
    fn ieee1619_vector_10_aes256() {
        let key = unhex(
            "2718281828459045235360287471352662497757247093699959574966967627
             3141592653589793238462643383279502884197169399375105820974944592",
        );
        let head = unhex(
            "1c3b3a102f770386e4836c99e370cf9bea00803f5e482357a4ae12d414a3e63b 5d31e276f8fe4a8d66b317f9ac683f44680a86ac35adfc3345befecb4bb188fd
             5776926c49a3095eb108fd1098baec70aaa66999a72a82f27d848b21d4a741b0 c5cd4d5fff9dac89aeba122961d03a757123e9870f8acf1000020887891429ca
             2a3e7a7d7df7b10355165c8b9a6d0a7de8b062c4500dc4cd120c0f7418dae3d0 b5781c34803fa75421c790dfe1de1834f280d7667b327f6c8cd7557e12ac3a0f
             93ec05c52e0493ef31a12d3d9260f79a289d6a379bc70c50841473d1a8cc81ec 583e9645e07b8d9670655ba5bbcfecc6dc3966380ad8fecb17b6ba02469a020a",
        );
        let xts = XtsPlain64::new(&key).unwrap();
        let mut unit = counting_512();
        xts.encrypt_units(&mut unit, 512, 0xff);
        assert_eq!(unit[..256], head[..]);
        xts.decrypt_units(&mut unit, 512, 0xff);
        assert_eq!(unit, counting_512());
    }

    #[test]
    fn refuses_bad_keys() {
        // IEEE vector 1 uses an all-zero key: equal halves, refused as OpenSSL and the spec's note require.
        assert!(matches!(XtsPlain64::new(&[0u8; 32]), Err(XtsKeyError::EqualHalves)));
        assert!(matches!(XtsPlain64::new(&[7u8; 64]), Err(XtsKeyError::EqualHalves)));
        for len in [0, 16, 31, 33, 48, 63, 65, 128] {
            assert!(matches!(XtsPlain64::new(&vec![1u8; len]), Err(XtsKeyError::WrongLength(n)) if n == len));
        }
    }

    /// A compile-time check: the key schedules `XtsPlain64` holds wipe themselves (the `aes` crate's `zeroize`
    /// feature); this stops compiling if that feature is ever dropped from Cargo.toml.
    #[test]
    fn key_schedules_are_wiped_on_drop() {
        fn wiped_on_drop<T: zeroize::ZeroizeOnDrop>() {}
        wiped_on_drop::<Aes128>();
        wiped_on_drop::<Aes256>();
    }

    /// The GF(2^128) doubling against its definition: a shift, and 0x87 folded in when bit 127 falls out.
    #[test]
    fn doubling() {
        assert_eq!(double(1), 2);
        assert_eq!(double(1 << 126), 1 << 127);
        assert_eq!(double(1 << 127), 0x87);
        assert_eq!(double(u128::MAX), (u128::MAX << 1) ^ 0x87);
    }

    #[test]
    #[should_panic(expected = "not a whole number")]
    fn panics_on_partial_unit() {
        XtsPlain64::new(&random_key(64)).unwrap().encrypt_units(&mut [0u8; 4096 + 512], 4096, 0);
    }

    #[test]
    #[should_panic(expected = "unit size")]
    fn panics_on_bad_unit_size() {
        XtsPlain64::new(&random_key(64)).unwrap().encrypt_units(&mut [0u8; 1536], 768, 0);
    }

    /// Any split over threads gives the serial result, including more threads than units and one unit.
    #[test]
    fn parallel_equals_serial() {
        let xts = XtsPlain64::new(&random_key(64)).unwrap();
        for (unit_size, units) in [(4096, 37), (512, 9), (4096, 1), (2048, 3), (512, 0)] {
            let plain = random(unit_size * units);
            let mut serial = plain.clone();
            xts.encrypt_units(&mut serial, unit_size, 64);
            for threads in [1, 2, 3, 4, 8, 64] {
                let mut parallel = plain.clone();
                xts.encrypt_units_parallel(&mut parallel, unit_size, 64, threads);
                assert_eq!(parallel, serial, "encrypt {units}x{unit_size} on {threads} threads");
                xts.decrypt_units_parallel(&mut parallel, unit_size, 64, threads);
                assert_eq!(parallel, plain, "decrypt {units}x{unit_size} on {threads} threads");
            }
        }
    }
}
