//! TPM 2.0 marshalling: big-endian integers and size-prefixed buffers (TPM2B), written into a command and read,
//! bounded, out of a response. A response is untrusted input: every read checks the bytes left and never panics.

/// Builds a command's bytes.
#[derive(Default)]
pub struct Writer {
    pub(super) bytes: Vec<u8>,
}

impl Writer {
    pub fn u8(&mut self, value: u8) -> &mut Self {
        self.bytes.push(value);
        self
    }
    pub fn u16(&mut self, value: u16) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_be_bytes());
        self
    }
    pub fn u32(&mut self, value: u32) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_be_bytes());
        self
    }
    pub fn raw(&mut self, bytes: &[u8]) -> &mut Self {
        self.bytes.extend_from_slice(bytes);
        self
    }
    /// A TPM2B: a 16-bit size, then the bytes (callers keep them under 64 KiB: the TPM's limits are far lower).
    pub fn tpm2b(&mut self, bytes: &[u8]) -> &mut Self {
        let len = u16::try_from(bytes.len()).expect("TPM2B payloads are built small");
        self.u16(len).raw(bytes)
    }
    /// A TPM2B around what `build` writes.
    pub fn sized(&mut self, build: impl FnOnce(&mut Writer)) -> &mut Self {
        let mut inner = Writer::default();
        build(&mut inner);
        self.tpm2b(&inner.bytes)
    }
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

/// What a malformed response lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncated;

/// Reads a response's bytes.
pub struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }
    pub fn take(&mut self, len: usize) -> Result<&'a [u8], Truncated> {
        if self.bytes.len() < len {
            return Err(Truncated);
        }
        let (head, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Ok(head)
    }
    pub fn u8(&mut self) -> Result<u8, Truncated> {
        Ok(self.take(1)?[0])
    }
    pub fn u16(&mut self) -> Result<u16, Truncated> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    pub fn u32(&mut self) -> Result<u32, Truncated> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// A TPM2B's payload.
    pub fn tpm2b(&mut self) -> Result<&'a [u8], Truncated> {
        let len = self.u16()?;
        self.take(usize::from(len))
    }
    /// A TPM2B with its size prefix (as the tools write TPM2B_PUBLIC and TPM2B_PRIVATE to files).
    pub fn tpm2b_whole(&mut self) -> Result<&'a [u8], Truncated> {
        let start = self.bytes;
        let len = usize::from(self.u16()?);
        self.take(len)?;
        Ok(&start[..2 + len])
    }
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.bytes)
    }
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_reads() {
        let mut w = Writer::default();
        w.u16(0x8001).u32(7).tpm2b(b"abc").u8(9);
        let bytes = w.into_bytes();
        let mut r = Reader::new(&bytes);
        assert_eq!(r.u16(), Ok(0x8001));
        assert_eq!(r.u32(), Ok(7));
        assert_eq!(r.tpm2b(), Ok(&b"abc"[..]));
        assert_eq!(r.u8(), Ok(9));
        assert!(r.is_empty());
        assert_eq!(r.u8(), Err(Truncated));
        let mut r = Reader::new(&[0x00, 0x05, 1, 2]);
        assert_eq!(r.tpm2b(), Err(Truncated));
        let mut r = Reader::new(&[0x00, 0x02, 1, 2, 3]);
        assert_eq!(r.tpm2b_whole(), Ok(&[0u8, 2, 1, 2][..]));
    }
}
