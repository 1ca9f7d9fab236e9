//! A TPM 2.0 client in the static binary: the dozen commands that seal a small secret to a TPM and unseal it
//! (CreatePrimary, Create, Load, StartAuthSession, PolicyPCR, PolicyGetDigest, Unseal, PCR_Read, FlushContext,
//! GetRandom, GetCapability, Startup), marshalled here. tpm2-tss ships no static library, and the `tpm2-protocol`
//! crate (every command of the specification) needs Rust 1.95 where this crate builds with 1.89; these commands
//! and their few structures are a few hundred lines.
//!
//! clevis's `tpm2` pin ([`super::clevis`]) and systemd's `systemd-tpm2` token are formats on top of [`seal`] and
//! [`unseal`]. The TPM is reached through [`transport`]: `/dev/tpmrm0`, a device path, or a simulator's port.
//! Every response is untrusted input: bounded by [`transport::MAX_RESPONSE`], read with checked lengths, and any
//! text from it is quoted through [`crate::redact::server_text`].

pub mod systemd;
pub mod transport;
mod wire;

pub use transport::Device;

use crate::crypto::SecretBytes;
use crate::exit::{Classify, ExitStatus};
use std::borrow::Cow;
use wire::{Reader, Truncated, Writer};
use zeroize::Zeroizing;

/// What failed talking to a TPM. Messages hold no secret.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The device or TCTI string is not one cryptadm speaks.
    #[error("TPM device: {0}")]
    Device(String),
    /// The device cannot be opened or the simulator reached.
    #[error("cannot reach the TPM at {device}: {cause}")]
    Unreachable {
        /// The device or TCTI.
        device: String,
        /// What the system said.
        cause: String,
    },
    /// Reading or writing the device failed mid-command.
    #[error("talking to the TPM: {0}")]
    Io(String),
    /// The response does not parse.
    #[error("the TPM's response is malformed: {0}")]
    Malformed(String),
    /// The TPM refused a command.
    #[error("TPM2_{command}: the TPM answered {}", rc_text(*rc))]
    Tpm {
        /// The command's name.
        command: &'static str,
        /// The response code.
        rc: u32,
    },
    /// The PCRs the secret is sealed to no longer hold the values it was sealed with.
    #[error(
        "the TPM's PCR {pcrs} ({bank} bank) no longer hold the values the secret was sealed to (the boot chain \
         or firmware changed, or this is another machine)"
    )]
    PcrMismatch {
        /// The PCR indexes, comma-separated.
        pcrs: String,
        /// The bank's name.
        bank: &'static str,
    },
    /// The sealed object does not load under this TPM's primary key.
    #[error("the sealed object does not belong to this TPM (TPM2_Load answered {})", rc_text(*rc))]
    OtherTpm {
        /// The response code.
        rc: u32,
    },
    /// A parameter (hash or key algorithm, PCR list, PCR values) is not usable.
    #[error("{0}")]
    Config(String),
}

impl Classify for Error {
    fn status(&self) -> ExitStatus {
        match self {
            Self::Device(_) | Self::Config(_) => ExitStatus::InvalidInput,
            Self::Unreachable { .. } | Self::Io(_) | Self::Malformed(_) => ExitStatus::Failure,
            Self::PcrMismatch { .. } | Self::OtherTpm { .. } => ExitStatus::Unauthenticated,
            Self::Tpm { rc, .. } => match base_rc(*rc) {
                RC_AUTH_FAIL | RC_BAD_AUTH | RC_POLICY_FAIL | RC_LOCKOUT => ExitStatus::Unauthenticated,
                _ => ExitStatus::Failure,
            },
        }
    }

    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            Self::Unreachable { .. } => Some(
                "name the TPM with --tpm2-device (a path such as /dev/tpmrm0, or a TCTI such as \
                 swtpm:host=127.0.0.1,port=2321), or CRYPTADM_TPM2_DEVICE / TPM2TOOLS_TCTI"
                    .into(),
            ),
            Self::PcrMismatch { .. } => Some(
                "boot the machine into the state it was sealed in, or open the secret another way (a passphrase, \
                 another pin of an sss binding) and seal it again"
                    .into(),
            ),
            Self::OtherTpm { .. } => {
                Some("a TPM binding opens only on the machine (and TPM state) it was made on".into())
            }
            Self::Tpm { rc, .. } if base_rc(*rc) == RC_LOCKOUT => Some(
                "the TPM's dictionary-attack lockout is active: wait, or reset it with tpm2_dictionarylockout".into(),
            ),
            _ => None,
        }
    }
}

// Response codes (TPM 2.0 Part 2, table 16), as `base_rc` reduces them.
const RC_INITIALIZE: u32 = 0x100;
const RC_AUTH_FAIL: u32 = 0x08E;
const RC_POLICY_FAIL: u32 = 0x09D;
const RC_INTEGRITY: u32 = 0x09F;
const RC_BAD_AUTH: u32 = 0x0A2;
const RC_LOCKOUT: u32 = 0x921;
const RC_YIELDED: u32 = 0x908;
const RC_TESTING: u32 = 0x90A;
const RC_RETRY: u32 = 0x922;

/// The response code without its handle, session or parameter number.
fn base_rc(rc: u32) -> u32 {
    if rc & 0x080 != 0 { 0x080 | (rc & 0x03F) } else { rc & 0x97F }
}

/// `TPM_RC_NAME (0x…)`, naming the handle, session or parameter a format-one code points at.
fn rc_text(rc: u32) -> String {
    let base = base_rc(rc);
    let name = match base {
        0x100 => "TPM_RC_INITIALIZE",
        0x101 => "TPM_RC_FAILURE",
        0x120 => "TPM_RC_DISABLED",
        0x124 => "TPM_RC_AUTH_TYPE",
        0x125 => "TPM_RC_AUTH_MISSING",
        0x126 => "TPM_RC_POLICY",
        0x127 => "TPM_RC_PCR",
        0x128 => "TPM_RC_PCR_CHANGED",
        0x12E => "TPM_RC_TOO_MANY_CONTEXTS",
        0x143 => "TPM_RC_COMMAND_CODE",
        0x081 => "TPM_RC_ASYMMETRIC",
        0x082 => "TPM_RC_ATTRIBUTES",
        0x083 => "TPM_RC_HASH",
        0x084 => "TPM_RC_VALUE",
        0x085 => "TPM_RC_HIERARCHY",
        0x087 => "TPM_RC_KEY_SIZE",
        0x08A => "TPM_RC_TYPE",
        0x08B => "TPM_RC_HANDLE",
        0x08E => "TPM_RC_AUTH_FAIL",
        0x095 => "TPM_RC_SIZE",
        0x096 => "TPM_RC_SYMMETRIC",
        0x098 => "TPM_RC_SELECTOR",
        0x09C => "TPM_RC_KEY",
        0x09D => "TPM_RC_POLICY_FAIL",
        0x09F => "TPM_RC_INTEGRITY",
        0x0A2 => "TPM_RC_BAD_AUTH",
        0x0A6 => "TPM_RC_CURVE",
        0x902 => "TPM_RC_OBJECT_MEMORY",
        0x903 => "TPM_RC_SESSION_MEMORY",
        0x905 => "TPM_RC_SESSION_HANDLES",
        0x906 => "TPM_RC_OBJECT_HANDLES",
        0x921 => "TPM_RC_LOCKOUT",
        0x922 => "TPM_RC_RETRY",
        _ => "",
    };
    let name = if name.is_empty() { "response code".to_owned() } else { name.to_owned() };
    if rc & 0x080 != 0 {
        let n = (rc >> 8) & 0xF;
        if rc & 0x040 != 0 {
            return format!("{name} (0x{rc:03x}, parameter {n})");
        } else if n & 0x8 != 0 {
            return format!("{name} (0x{rc:03x}, session {})", n & 0x7);
        } else if n != 0 {
            return format!("{name} (0x{rc:03x}, handle {n})");
        }
    }
    format!("{name} (0x{rc:03x})")
}

impl From<Truncated> for Error {
    fn from(_: Truncated) -> Self {
        Self::Malformed("shorter than its structures".into())
    }
}

/// A hash algorithm of PCR banks and object names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hash {
    /// TPM_ALG_SHA1.
    Sha1,
    /// TPM_ALG_SHA256.
    Sha256,
    /// TPM_ALG_SHA384.
    Sha384,
    /// TPM_ALG_SHA512.
    Sha512,
}

impl Hash {
    /// By the name tpm2-tools use (`sha1`, `sha256`, `sha384`, `sha512`).
    pub fn from_name(name: &str) -> Result<Self, Error> {
        match name {
            "sha1" => Ok(Self::Sha1),
            "sha256" => Ok(Self::Sha256),
            "sha384" => Ok(Self::Sha384),
            "sha512" => Ok(Self::Sha512),
            other => Err(Error::Config(format!(
                "hash algorithm `{}` is not one cryptadm speaks (sha1, sha256, sha384, sha512)",
                crate::redact::server_text(other.as_bytes(), 32)
            ))),
        }
    }
    /// The tpm2-tools name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sha1 => "sha1",
            Self::Sha256 => "sha256",
            Self::Sha384 => "sha384",
            Self::Sha512 => "sha512",
        }
    }
    /// TPM_ALG_ID.
    pub fn id(self) -> u16 {
        match self {
            Self::Sha1 => 0x0004,
            Self::Sha256 => 0x000B,
            Self::Sha384 => 0x000C,
            Self::Sha512 => 0x000D,
        }
    }
    fn from_id(id: u16) -> Option<Self> {
        [Self::Sha1, Self::Sha256, Self::Sha384, Self::Sha512].into_iter().find(|h| h.id() == id)
    }
    /// Digest size in bytes.
    pub fn size(self) -> usize {
        match self {
            Self::Sha1 => 20,
            Self::Sha256 => 32,
            Self::Sha384 => 48,
            Self::Sha512 => 64,
        }
    }
    /// The digest of `parts` concatenated.
    pub fn digest(self, parts: &[&[u8]]) -> Vec<u8> {
        fn run<D: sha2::Digest>(parts: &[&[u8]]) -> Vec<u8> {
            let mut d = D::new();
            for part in parts {
                d.update(part);
            }
            d.finalize().to_vec()
        }
        match self {
            Self::Sha1 => run::<sha1::Sha1>(parts),
            Self::Sha256 => run::<sha2::Sha256>(parts),
            Self::Sha384 => run::<sha2::Sha384>(parts),
            Self::Sha512 => run::<sha2::Sha512>(parts),
        }
    }
}

/// The asymmetric algorithm of the storage primary key (tpm2-tools' `-G`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyAlg {
    /// ECC NIST P-256 (`ecc`, `ecc256`).
    Ecc,
    /// RSA 2048 (`rsa`, `rsa2048`).
    Rsa,
}

impl KeyAlg {
    /// By the name tpm2-tools take.
    pub fn from_name(name: &str) -> Result<Self, Error> {
        match name {
            "ecc" | "ecc256" => Ok(Self::Ecc),
            "rsa" | "rsa2048" => Ok(Self::Rsa),
            other => Err(Error::Config(format!(
                "key algorithm `{}` is not one cryptadm speaks (ecc, rsa)",
                crate::redact::server_text(other.as_bytes(), 32)
            ))),
        }
    }
}

/// Highest PCR index (PC client TPMs have 24).
pub const MAX_PCR: u8 = 23;

/// One bank and some of its PCRs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcrSelection {
    /// The bank.
    pub bank: Hash,
    /// PCR indexes, ascending, without repeats.
    pub pcrs: Vec<u8>,
}

impl PcrSelection {
    /// Parses a comma list (`"0,7"`) of PCR indexes in `bank`.
    pub fn parse(bank: Hash, list: &str) -> Result<Self, Error> {
        let mut pcrs = Vec::new();
        for item in list.split(',').map(str::trim) {
            let pcr = item.parse::<u8>().ok().filter(|pcr| *pcr <= MAX_PCR).ok_or_else(|| {
                Error::Config(format!(
                    "PCR `{}` is not a number from 0 to {MAX_PCR}",
                    crate::redact::server_text(item.as_bytes(), 16)
                ))
            })?;
            pcrs.push(pcr);
        }
        pcrs.sort_unstable();
        pcrs.dedup();
        Ok(Self { bank, pcrs })
    }

    /// The indexes as a comma list.
    pub fn list(&self) -> String {
        self.pcrs.iter().map(u8::to_string).collect::<Vec<_>>().join(",")
    }

    fn bitmap(&self) -> [u8; 3] {
        let mut map = [0u8; 3];
        for pcr in &self.pcrs {
            map[usize::from(*pcr / 8)] |= 1 << (pcr % 8);
        }
        map
    }

    /// TPML_PCR_SELECTION with this one bank.
    fn marshal(&self, w: &mut Writer) {
        w.u32(1).u16(self.bank.id()).u8(3).raw(&self.bitmap());
    }
}

/// TPM_ALG_NULL.
const ALG_NULL: u16 = 0x0010;
const TPM_RH_OWNER: u32 = 0x4000_0001;
const TPM_RH_NULL: u32 = 0x4000_0007;
const TPM_RS_PW: u32 = 0x4000_0009;
const TPM_ST_NO_SESSIONS: u16 = 0x8001;
const TPM_ST_SESSIONS: u16 = 0x8002;

// Command codes.
const CC_CREATE_PRIMARY: u32 = 0x131;
const CC_STARTUP: u32 = 0x144;
const CC_CREATE: u32 = 0x153;
const CC_LOAD: u32 = 0x157;
const CC_UNSEAL: u32 = 0x15E;
const CC_FLUSH_CONTEXT: u32 = 0x165;
const CC_START_AUTH_SESSION: u32 = 0x176;
const CC_GET_CAPABILITY: u32 = 0x17A;
const CC_GET_RANDOM: u32 = 0x17B;
const CC_PCR_READ: u32 = 0x17E;
const CC_POLICY_PCR: u32 = 0x17F;
const CC_POLICY_GET_DIGEST: u32 = 0x189;
const CC_POLICY_PASSWORD: u32 = 0x18C;
const CC_POLICY_AUTH_VALUE: u32 = 0x16B;

// Object attributes (TPMA_OBJECT).
const FIXED_TPM: u32 = 0x0002;
const FIXED_PARENT: u32 = 0x0010;
const SENSITIVE_DATA_ORIGIN: u32 = 0x0020;
const USER_WITH_AUTH: u32 = 0x0040;
const ADMIN_WITH_POLICY: u32 = 0x0080;
const NO_DA: u32 = 0x0400;
const RESTRICTED: u32 = 0x1_0000;
const DECRYPT: u32 = 0x2_0000;

/// How a command's one authorised handle is authorised.
#[derive(Clone, Copy)]
enum Auth<'a> {
    /// A password session with the empty password.
    EmptyPassword,
    /// A policy session (no HMAC: the policy asserts no auth value).
    Policy(u32),
    /// A policy session whose policy ran PolicyPassword: the object's auth value in the clear (PolicyPassword
    /// extends the policy as PolicyAuthValue does, so objects sealed with PolicyAuthValue take it too).
    PolicyPassword(u32, &'a [u8]),
}

/// A connection to a TPM.
pub struct Tpm {
    connection: transport::Connection,
    started: bool,
}

impl std::fmt::Debug for Tpm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tpm")
    }
}

/// A parsed response: its handles and its parameter area.
struct Response {
    handles: Vec<u32>,
    params: Zeroizing<Vec<u8>>,
}

impl Tpm {
    /// Opens the device or connects to the simulator.
    pub fn open(device: &Device) -> Result<Self, Error> {
        Ok(Self { connection: device.open()?, started: false })
    }

    fn command(
        &mut self,
        name: &'static str,
        code: u32,
        handles: &[u32],
        auth: Option<Auth<'_>>,
        params: &[u8],
        response_handles: usize,
    ) -> Result<Response, Error> {
        let mut w = Writer::default();
        w.u16(if auth.is_some() { TPM_ST_SESSIONS } else { TPM_ST_NO_SESSIONS }).u32(0).u32(code);
        for handle in handles {
            w.u32(*handle);
        }
        if let Some(auth) = auth {
            let mut area = Writer::default();
            match auth {
                // handle, nonce, attributes (continueSession), hmac/password
                Auth::EmptyPassword => area.u32(TPM_RS_PW).tpm2b(&[]).u8(0).tpm2b(&[]),
                Auth::Policy(session) => area.u32(session).tpm2b(&[]).u8(0).tpm2b(&[]),
                Auth::PolicyPassword(session, value) => area.u32(session).tpm2b(&[]).u8(0).tpm2b(value),
            };
            w.u32(area.bytes.len() as u32).raw(&area.bytes);
        }
        w.raw(params);
        let mut bytes = Zeroizing::new(w.into_bytes());
        let len = (bytes.len() as u32).to_be_bytes();
        bytes[2..6].copy_from_slice(&len);
        let mut retries = 0;
        loop {
            let response = Zeroizing::new(self.connection.transact(&bytes)?);
            match parse_response(&response, auth.is_some(), response_handles) {
                Err(Error::Tpm { rc, .. }) if base_rc(rc) == RC_INITIALIZE && !self.started => {
                    self.started = true;
                    self.startup()?;
                }
                Err(Error::Tpm { rc, .. })
                    if matches!(base_rc(rc), RC_YIELDED | RC_TESTING | RC_RETRY) && retries < 20 =>
                {
                    retries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                Err(Error::Tpm { rc, .. }) => return Err(Error::Tpm { command: name, rc }),
                other => return other,
            }
        }
    }

    /// TPM2_Startup(CLEAR), for a simulator powered on without it.
    fn startup(&mut self) -> Result<(), Error> {
        let mut w = Writer::default();
        w.u16(TPM_ST_NO_SESSIONS).u32(12).u32(CC_STARTUP).u16(0);
        let response = self.connection.transact(&w.into_bytes())?;
        match parse_response(&response, false, 0) {
            Ok(_) => Ok(()),
            Err(Error::Tpm { rc, .. }) => Err(Error::Tpm { command: "Startup", rc }),
            Err(other) => Err(other),
        }
    }

    /// TPM2_GetRandom: `len` bytes (at most one digest's worth per call; looped).
    pub fn get_random(&mut self, len: usize) -> Result<Vec<u8>, Error> {
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            let want = (len - out.len()).min(32) as u16;
            let mut w = Writer::default();
            w.u16(want);
            let response = self.command("GetRandom", CC_GET_RANDOM, &[], None, &w.bytes, 0)?;
            let got = Reader::new(&response.params).tpm2b()?;
            if got.is_empty() || got.len() > usize::from(want) {
                return Err(Error::Malformed(format!("GetRandom returned {} bytes for {want}", got.len())));
            }
            out.extend_from_slice(got);
        }
        Ok(out)
    }

    /// The PCR banks the TPM has allocated (TPM2_GetCapability(TPM_CAP_PCRS)), those cryptadm knows.
    pub fn pcr_banks(&mut self) -> Result<Vec<Hash>, Error> {
        let mut w = Writer::default();
        w.u32(5).u32(0).u32(16); // TPM_CAP_PCRS
        let response = self.command("GetCapability", CC_GET_CAPABILITY, &[], None, &w.bytes, 0)?;
        let mut r = Reader::new(&response.params);
        let _more = r.u8()?;
        if r.u32()? != 5 {
            return Err(Error::Malformed("GetCapability answered another capability".into()));
        }
        let count = r.u32()?;
        if count > 16 {
            return Err(Error::Malformed(format!("{count} PCR banks")));
        }
        let mut banks = Vec::new();
        for _ in 0..count {
            let alg = r.u16()?;
            let size = r.u8()?;
            let map = r.take(usize::from(size))?;
            if map.iter().any(|b| *b != 0)
                && let Some(hash) = Hash::from_id(alg)
            {
                banks.push(hash);
            }
        }
        Ok(banks)
    }

    /// TPM2_PCR_Read of every PCR in `selection` (several commands: a TPM returns at most 8 per call); the
    /// values in ascending PCR order.
    pub fn pcr_read(&mut self, selection: &PcrSelection) -> Result<Vec<Vec<u8>>, Error> {
        let mut values: Vec<Option<Vec<u8>>> = vec![None; selection.pcrs.len()];
        let mut pending = selection.clone();
        while !pending.pcrs.is_empty() {
            let mut w = Writer::default();
            pending.marshal(&mut w);
            let response = self.command("PCR_Read", CC_PCR_READ, &[], None, &w.bytes, 0)?;
            let mut r = Reader::new(&response.params);
            let _update_counter = r.u32()?;
            let count = r.u32()?;
            if count > 16 {
                return Err(Error::Malformed(format!("PCR_Read selected {count} banks")));
            }
            let mut read = Vec::new();
            for _ in 0..count {
                let alg = r.u16()?;
                let size = r.u8()?;
                let map = r.take(usize::from(size))?;
                if alg != selection.bank.id() {
                    if map.iter().any(|b| *b != 0) {
                        return Err(Error::Malformed("PCR_Read answered another bank".into()));
                    }
                    continue;
                }
                for (byte, bits) in map.iter().enumerate() {
                    for bit in 0..8 {
                        if bits & (1 << bit) != 0 {
                            read.push(byte * 8 + bit);
                        }
                    }
                }
            }
            let digests = r.u32()?;
            if digests as usize != read.len() {
                return Err(Error::Malformed("PCR_Read's digests do not match its selection".into()));
            }
            if read.is_empty() {
                return Err(Error::Config(format!(
                    "the TPM has no PCR {} in a {} bank (is the bank allocated? tpm2_getcap pcrs)",
                    pending.list(),
                    selection.bank.name()
                )));
            }
            for pcr in read {
                let digest = r.tpm2b()?;
                if digest.len() != selection.bank.size() {
                    return Err(Error::Malformed("a PCR value of the wrong size".into()));
                }
                let Some(at) = pending.pcrs.iter().position(|p| usize::from(*p) == pcr) else {
                    return Err(Error::Malformed(format!("PCR_Read returned PCR {pcr}, which was not asked")));
                };
                pending.pcrs.remove(at);
                let slot = selection.pcrs.iter().position(|p| usize::from(*p) == pcr).unwrap_or(0);
                values[slot] = Some(digest.to_vec());
            }
        }
        values.into_iter().map(|v| v.ok_or_else(|| Error::Malformed("a PCR was not read".into()))).collect()
    }

    /// TPM2_CreatePrimary in the owner hierarchy (empty owner password); the handle and the TPM2B_PUBLIC.
    fn create_primary(&mut self, template: &[u8]) -> Result<(u32, Vec<u8>), Error> {
        let mut w = Writer::default();
        w.sized(|s| {
            s.tpm2b(&[]).tpm2b(&[]);
        });
        w.raw(template).tpm2b(&[]).u32(0);
        let response =
            self.command("CreatePrimary", CC_CREATE_PRIMARY, &[TPM_RH_OWNER], Some(Auth::EmptyPassword), &w.bytes, 1)?;
        let handle = response.handles[0];
        let public = Reader::new(&response.params).tpm2b_whole().map(<[u8]>::to_vec);
        match public {
            Ok(public) => Ok((handle, public)),
            Err(e) => {
                self.flush(handle);
                Err(e.into())
            }
        }
    }

    /// TPM2_Create of a sealed data object under `parent`; its TPM2B_PRIVATE and TPM2B_PUBLIC.
    fn create_sealed(
        &mut self,
        parent: u32,
        template: &[u8],
        data: &[u8],
        user_auth: &[u8],
    ) -> Result<(Vec<u8>, Vec<u8>), Error> {
        let mut w = Writer::default();
        w.sized(|s| {
            s.tpm2b(user_auth).tpm2b(data);
        });
        w.raw(template).tpm2b(&[]).u32(0);
        let params = Zeroizing::new(w.into_bytes());
        let response = self.command("Create", CC_CREATE, &[parent], Some(Auth::EmptyPassword), &params, 0)?;
        let mut r = Reader::new(&response.params);
        let private = r.tpm2b_whole()?.to_vec();
        let public = r.tpm2b_whole()?.to_vec();
        Ok((private, public))
    }

    /// TPM2_Load; the object's handle.
    fn load(&mut self, parent: u32, private: &[u8], public: &[u8]) -> Result<u32, Error> {
        let mut w = Writer::default();
        w.raw(private).raw(public);
        match self.command("Load", CC_LOAD, &[parent], Some(Auth::EmptyPassword), &w.bytes, 1) {
            Ok(response) => Ok(response.handles[0]),
            Err(Error::Tpm { rc, .. }) if base_rc(rc) == RC_INTEGRITY => Err(Error::OtherTpm { rc }),
            Err(e) => Err(e),
        }
    }

    /// TPM2_StartAuthSession: an unbound, unsalted policy (or trial) session hashing with `hash`.
    fn start_policy_session(&mut self, hash: Hash, trial: bool) -> Result<u32, Error> {
        let nonce = crate::crypto::random::bytes::<32>();
        let mut w = Writer::default();
        w.tpm2b(&nonce[..hash.size().clamp(16, 32)]).tpm2b(&[]).u8(if trial { 3 } else { 1 }).u16(ALG_NULL);
        w.u16(hash.id());
        let response =
            self.command("StartAuthSession", CC_START_AUTH_SESSION, &[TPM_RH_NULL, TPM_RH_NULL], None, &w.bytes, 1)?;
        Ok(response.handles[0])
    }

    /// TPM2_PolicyPCR: `digest` empty means "the PCRs' current values".
    fn policy_pcr(&mut self, session: u32, digest: &[u8], selection: &PcrSelection) -> Result<(), Error> {
        let mut w = Writer::default();
        w.tpm2b(digest);
        selection.marshal(&mut w);
        self.command("PolicyPCR", CC_POLICY_PCR, &[session], None, &w.bytes, 0).map(drop)
    }

    /// TPM2_PolicyPassword: the object's auth value is then sent in the clear with the command it authorises.
    fn policy_password(&mut self, session: u32) -> Result<(), Error> {
        self.command("PolicyPassword", CC_POLICY_PASSWORD, &[session], None, &[], 0).map(drop)
    }

    /// TPM2_PolicyGetDigest.
    fn policy_get_digest(&mut self, session: u32) -> Result<Vec<u8>, Error> {
        let response = self.command("PolicyGetDigest", CC_POLICY_GET_DIGEST, &[session], None, &[], 0)?;
        Ok(Reader::new(&response.params).tpm2b()?.to_vec())
    }

    /// TPM2_Unseal.
    fn unseal_object(&mut self, item: u32, auth: Auth<'_>) -> Result<SecretBytes, Error> {
        let response = self.command("Unseal", CC_UNSEAL, &[item], Some(auth), &[], 0)?;
        Ok(SecretBytes::new(Reader::new(&response.params).tpm2b()?.to_vec()))
    }

    /// TPM2_FlushContext, best effort (a handle the TPM already dropped is no error worth reporting).
    fn flush(&mut self, handle: u32) {
        let mut w = Writer::default();
        w.u32(handle);
        let _ = self.command("FlushContext", CC_FLUSH_CONTEXT, &[], None, &w.bytes, 0);
    }

    /// The policy digest of PolicyPCR over `selection` with the PCR values `values` (concatenated), computed by the
    /// TPM in a trial session (the oracle of [`policy_pcr_digest`]).
    pub fn trial_policy_pcr(&mut self, hash: Hash, selection: &PcrSelection, values: &[u8]) -> Result<Vec<u8>, Error> {
        let session = self.start_policy_session(hash, true)?;
        let result =
            self.policy_pcr(session, &hash.digest(&[values]), selection).and_then(|()| self.policy_get_digest(session));
        self.flush(session);
        result
    }
}

fn parse_response(bytes: &[u8], sessions: bool, handles: usize) -> Result<Response, Error> {
    let mut r = Reader::new(bytes);
    let tag = r.u16()?;
    let size = r.u32()?;
    let rc = r.u32()?;
    if size as usize != bytes.len() {
        return Err(Error::Malformed(format!("it declares {size} bytes and has {}", bytes.len())));
    }
    if rc != 0 {
        return Err(Error::Tpm { command: "", rc });
    }
    let mut out = Vec::with_capacity(handles);
    for _ in 0..handles {
        out.push(r.u32()?);
    }
    let params = match (tag, sessions) {
        (TPM_ST_SESSIONS, true) => {
            let len = r.u32()?;
            r.take(len as usize)?
        }
        (TPM_ST_NO_SESSIONS, false) => r.rest(),
        _ => return Err(Error::Malformed(format!("unexpected tag 0x{tag:04x}"))),
    };
    Ok(Response { handles: out, params: Zeroizing::new(params.to_vec()) })
}

/// PolicyPCR's policy digest from the empty policy: `H(0…0 ‖ TPM_CC_PolicyPCR ‖ selection ‖ H(values))`, where
/// `values` are the selected PCRs' values concatenated in ascending order.
pub fn policy_pcr_digest(hash: Hash, selection: &PcrSelection, values: &[u8]) -> Vec<u8> {
    let mut w = Writer::default();
    selection.marshal(&mut w);
    let zero = vec![0u8; hash.size()];
    hash.digest(&[&zero, &CC_POLICY_PCR.to_be_bytes(), &w.bytes, &hash.digest(&[values])])
}

/// The storage primary key's template, as tpm2-tools' `tpm2_createprimary -g HASH -G ecc|rsa` makes it
/// (restricted decryption key, AES-128-CFB, no unique data), so that the same TPM derives the same key.
pub fn primary_template(hash: Hash, key: KeyAlg) -> Vec<u8> {
    let mut w = Writer::default();
    w.sized(|p| {
        let attributes = RESTRICTED | DECRYPT | FIXED_TPM | FIXED_PARENT | SENSITIVE_DATA_ORIGIN | USER_WITH_AUTH;
        match key {
            KeyAlg::Ecc => {
                p.u16(0x0023).u16(hash.id()).u32(attributes).tpm2b(&[]);
                p.u16(0x0006).u16(128).u16(0x0043); // AES-128-CFB
                p.u16(ALG_NULL).u16(0x0003).u16(ALG_NULL); // scheme, NIST P-256, kdf
                p.tpm2b(&[]).tpm2b(&[]);
            }
            KeyAlg::Rsa => {
                p.u16(0x0001).u16(hash.id()).u32(attributes).tpm2b(&[]);
                p.u16(0x0006).u16(128).u16(0x0043);
                p.u16(ALG_NULL).u16(2048).u32(0); // scheme, bits, exponent
                p.tpm2b(&[]);
            }
        }
    });
    w.into_bytes()
}

/// A sealed data object's template, with clevis's attributes: `fixedtpm|fixedparent|noda|adminwithpolicy`, and
/// `userwithauth` when no policy guards it.
fn sealed_template(hash: Hash, policy: &[u8], dictionary_protected: bool) -> Vec<u8> {
    let mut attributes = FIXED_TPM | FIXED_PARENT | ADMIN_WITH_POLICY;
    if !dictionary_protected {
        attributes |= NO_DA;
    }
    if policy.is_empty() {
        attributes |= USER_WITH_AUTH;
    }
    let mut w = Writer::default();
    w.sized(|p| {
        p.u16(0x0008).u16(hash.id()).u32(attributes).tpm2b(policy);
        p.u16(ALG_NULL).tpm2b(&[]);
    });
    w.into_bytes()
}

/// What a sealed object is bound to.
#[derive(Clone, Debug)]
pub struct SealSpec {
    /// The name algorithm of the primary key and the sealed object, and the policy's hash.
    pub hash: Hash,
    /// The primary key's algorithm.
    pub key: KeyAlg,
    /// The PCRs the policy asserts, if any.
    pub pcrs: Option<PcrSelection>,
}

/// A sealed object: its TPM2B_PUBLIC and TPM2B_PRIVATE as TPM2_Create returned them (size prefixes included,
/// as tpm2-tools write them to files).
#[derive(Clone, Debug)]
pub struct Sealed {
    /// TPM2B_PUBLIC.
    pub public: Vec<u8>,
    /// TPM2B_PRIVATE.
    pub private: Vec<u8>,
}

/// Largest secret a sealed data object holds (MAX_SYM_DATA).
pub const MAX_SEALED: usize = 128;

/// Seals `data` under the owner hierarchy's primary key; with PCRs, to their values `pcr_values` (concatenated,
/// ascending) or, when `None`, their current values.
pub fn seal(tpm: &mut Tpm, spec: &SealSpec, pcr_values: Option<&[u8]>, data: &[u8]) -> Result<Sealed, Error> {
    seal_with_auth(tpm, spec, pcr_values, data, None).map(|(sealed, _)| sealed)
}

/// Drops trailing zero bytes, as the TPM does from an auth value.
fn trim_auth(value: &[u8]) -> &[u8] {
    let end = value.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
    &value[..end]
}

/// [`seal`], and with `auth_value` an object whose policy also asserts that auth value (PolicyPCR, if any, then
/// PolicyAuthValue, as systemd-cryptenroll --tpm2-with-pin seals; the object is then protected by the TPM's
/// dictionary-attack lockout). Returns the sealed object and its policy digest (empty without a policy).
pub fn seal_with_auth(
    tpm: &mut Tpm,
    spec: &SealSpec,
    pcr_values: Option<&[u8]>,
    data: &[u8],
    auth_value: Option<&[u8]>,
) -> Result<(Sealed, Vec<u8>), Error> {
    if data.len() > MAX_SEALED {
        return Err(Error::Config(format!("a TPM seals at most {MAX_SEALED} bytes, not {}", data.len())));
    }
    let policy = match &spec.pcrs {
        None => Vec::new(),
        Some(selection) => {
            let values = match pcr_values {
                Some(values) => {
                    if values.len() != selection.pcrs.len() * selection.bank.size() {
                        return Err(Error::Config(format!(
                            "the PCR values are {} bytes; {} {} PCRs take {}",
                            values.len(),
                            selection.pcrs.len(),
                            selection.bank.name(),
                            selection.pcrs.len() * selection.bank.size()
                        )));
                    }
                    values.to_vec()
                }
                None => tpm.pcr_read(selection)?.concat(),
            };
            policy_pcr_digest(spec.hash, selection, &values)
        }
    };
    let policy = match auth_value {
        None => policy,
        Some(_) => {
            let from = if policy.is_empty() { vec![0u8; spec.hash.size()] } else { policy };
            spec.hash.digest(&[&from, &CC_POLICY_AUTH_VALUE.to_be_bytes()])
        }
    };
    let user_auth = auth_value.map(trim_auth).unwrap_or_default();
    let (primary, _) = tpm.create_primary(&primary_template(spec.hash, spec.key))?;
    let result =
        tpm.create_sealed(primary, &sealed_template(spec.hash, &policy, auth_value.is_some()), data, user_auth);
    tpm.flush(primary);
    let (private, public) = result?;
    Ok((Sealed { public, private }, policy))
}

/// Unseals what [`seal`] (or `tpm2_create` under `tpm2_createprimary`'s default key) sealed.
pub fn unseal(tpm: &mut Tpm, spec: &SealSpec, sealed: &Sealed) -> Result<SecretBytes, Error> {
    unseal_with_auth(tpm, spec, sealed, None)
}

/// [`unseal`] of an object whose policy also asserts its auth value (PolicyPCR, if any, then PolicyAuthValue, as
/// systemd-cryptenroll --tpm2-with-pin seals): `auth_value` is that value (trailing zero bytes are dropped, as the
/// TPM drops them from the object's). A wrong value is TPM_RC_AUTH_FAIL (exit 16), and counts towards the TPM's
/// dictionary-attack lockout.
pub fn unseal_with_auth(
    tpm: &mut Tpm,
    spec: &SealSpec,
    sealed: &Sealed,
    auth_value: Option<&[u8]>,
) -> Result<SecretBytes, Error> {
    let check = |bytes: &[u8], what: &str| {
        let mut r = Reader::new(bytes);
        match r.tpm2b() {
            Ok(_) if r.is_empty() => Ok(()),
            _ => Err(Error::Config(format!("the sealed object's {what} is not one TPM2B structure"))),
        }
    };
    check(&sealed.public, "public part")?;
    check(&sealed.private, "private part")?;
    let (primary, _) = tpm.create_primary(&primary_template(spec.hash, spec.key))?;
    let loaded = tpm.load(primary, &sealed.private, &sealed.public);
    tpm.flush(primary);
    let object = loaded?;
    let auth_value = auth_value.map(trim_auth);
    let result = match (&spec.pcrs, auth_value) {
        (None, None) => tpm.unseal_object(object, Auth::EmptyPassword),
        (pcrs, auth_value) => match tpm.start_policy_session(spec.hash, false) {
            Err(e) => Err(e),
            Ok(session) => {
                let asserted = match pcrs {
                    Some(selection) => tpm.policy_pcr(session, &[], selection),
                    None => Ok(()),
                };
                let asserted = match auth_value {
                    Some(_) => asserted.and_then(|()| tpm.policy_password(session)),
                    None => asserted,
                };
                let auth = match auth_value {
                    Some(value) => Auth::PolicyPassword(session, value),
                    None => Auth::Policy(session),
                };
                let result = asserted.and_then(|()| match tpm.unseal_object(object, auth) {
                    Err(Error::Tpm { rc, .. }) if base_rc(rc) == RC_POLICY_FAIL && pcrs.is_some() => {
                        let selection = pcrs.as_ref().expect("checked");
                        Err(Error::PcrMismatch { pcrs: selection.list(), bank: selection.bank.name() })
                    }
                    other => other,
                });
                tpm.flush(session);
                result
            }
        },
    };
    tpm.flush(object);
    result
}

/// Fuzz entry: every operation of the client against a TPM that answers `responses` in turn (each one, and
/// every response after the queue runs out, untrusted). Returns how many operations succeeded.
#[doc(hidden)]
pub fn fuzz_client(responses: Vec<Vec<u8>>) -> usize {
    let mut tpm = Tpm { connection: transport::Connection::Scripted(responses.into()), started: false };
    let selection = PcrSelection { bank: Hash::Sha256, pcrs: (0..=MAX_PCR).collect() };
    let spec = SealSpec { hash: Hash::Sha256, key: KeyAlg::Ecc, pcrs: Some(selection.clone()) };
    let sealed = Sealed { public: vec![0, 1, 0], private: vec![0, 1, 0] };
    let mut ok = 0;
    ok += usize::from(tpm.pcr_banks().is_ok());
    ok += usize::from(tpm.pcr_read(&selection).is_ok_and(|values| values.len() == selection.pcrs.len()));
    ok += usize::from(tpm.get_random(40).is_ok_and(|bytes| bytes.len() == 40));
    ok += usize::from(seal(&mut tpm, &spec, None, b"secret").is_ok());
    ok += usize::from(unseal(&mut tpm, &spec, &sealed).is_ok());
    ok += usize::from(tpm.trial_policy_pcr(Hash::Sha1, &selection, &[]).is_ok());
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcr_selection_and_policy_digest() {
        let selection = PcrSelection::parse(Hash::Sha256, "7, 0,7").unwrap();
        assert_eq!(selection.pcrs, [0, 7]);
        assert_eq!(selection.list(), "0,7");
        let mut w = Writer::default();
        selection.marshal(&mut w);
        assert_eq!(w.bytes, [0, 0, 0, 1, 0, 0x0B, 3, 0x81, 0, 0]);
        for bad in ["24", "x", "", "-1"] {
            assert!(matches!(PcrSelection::parse(Hash::Sha1, bad), Err(Error::Config(_))), "{bad}");
        }
        // PolicyPCR over sha256 PCR 7 at its reset value (all zeros): the digest tpm2_createpolicy prints.
        let sel7 = PcrSelection::parse(Hash::Sha256, "7").unwrap();
        let digest = policy_pcr_digest(Hash::Sha256, &sel7, &[0u8; 32]);
        assert_eq!(hex::encode(digest), EMPTY_PCR7_SHA256_POLICY);
    }

    /// `tpm2_createpolicy --policy-pcr -l sha256:7 -f <32 zero bytes>` (tpm2-tools 5.4).
    const EMPTY_PCR7_SHA256_POLICY: &str = "8b5682d81b29435d08d79278150611dc7e5923b2fefcce684a09577b40130a8b";

    #[test]
    fn fuzz_seeds_reach_every_operation() {
        fn responses(data: &[u8]) -> Vec<Vec<u8>> {
            let mut out = Vec::new();
            let mut rest = data;
            while rest.len() >= 2 {
                let len = usize::from(u16::from_be_bytes([rest[0], rest[1]])).min(rest.len() - 2);
                out.push(rest[2..2 + len].to_vec());
                rest = &rest[2 + len..];
            }
            out
        }
        let happy = include_bytes!("../../fuzz/corpus/tpm2_response/swtpm-shaped-answers");
        assert_eq!(fuzz_client(responses(happy)), 6, "every operation succeeds on the happy seed");
        let refusals = include_bytes!("../../fuzz/corpus/tpm2_response/refusals");
        assert!(fuzz_client(responses(refusals)) < 6);
    }

    #[test]
    fn response_codes_read_and_classified() {
        assert_eq!(base_rc(0x99D), RC_POLICY_FAIL);
        assert_eq!(rc_text(0x99D), "TPM_RC_POLICY_FAIL (0x99d, session 1)");
        assert_eq!(rc_text(0x1DF), "TPM_RC_INTEGRITY (0x1df, parameter 1)");
        assert_eq!(rc_text(0x18B), "TPM_RC_HANDLE (0x18b, handle 1)");
        assert_eq!(rc_text(0x921), "TPM_RC_LOCKOUT (0x921)");
        assert_eq!(Error::Tpm { command: "Unseal", rc: 0x98E }.status(), ExitStatus::Unauthenticated);
        assert_eq!(Error::Tpm { command: "Create", rc: 0x902 }.status(), ExitStatus::Failure);
    }

    #[test]
    fn responses_are_bounded() {
        // a size that lies, a truncated handle, a session area longer than the response
        for bad in [
            &[0x80, 0x01, 0, 0, 0, 11, 0, 0, 0, 0][..],
            &[0x80, 0x01, 0, 0, 0, 10, 0, 0, 0, 0],
            &[0x80, 0x02, 0, 0, 0, 14, 0, 0, 0, 0, 0, 0, 0, 9],
        ] {
            assert!(parse_response(bad, true, 1).is_err());
        }
        let ok = [0x80, 0x01, 0, 0, 0, 12, 0, 0, 0, 0, 0, 1];
        assert_eq!(&parse_response(&ok, false, 0).unwrap().params[..], &[0, 1]);
        assert!(matches!(
            parse_response(&[0x80, 1, 0, 0, 0, 10, 0, 0, 1, 0], false, 0),
            Err(Error::Tpm { rc: 0x100, .. })
        ));
    }
}
