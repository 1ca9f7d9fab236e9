//! How commands reach a TPM: a character device (`/dev/tpmrm0`, the kernel's resource manager) or a simulator's
//! TCP command port (swtpm's and Microsoft's simulator framing), named by a path or by the TCTI strings tpm2-tools
//! take (`device:PATH`, `swtpm:host=H,port=P`, `mssim:host=H,port=P`).

use super::Error;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::Duration;

/// The kernel's resource-managed TPM device, the default.
pub const DEFAULT_DEVICE: &str = "/dev/tpmrm0";
/// Largest response read: TPM responses are a few KiB (MAX_RESPONSE_SIZE is 4096 on common TPMs).
pub const MAX_RESPONSE: usize = 64 * 1024;
/// The simulator's default command port (tpm2-tools' `mssim`/`swtpm` default).
const DEFAULT_PORT: u16 = 2321;
/// How long one command may take (a TPM generating an RSA primary key takes seconds).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// Where the TPM is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Device {
    /// A character device.
    Path(PathBuf),
    /// A simulator's command port (`swtpm socket --server type=tcp`, or the Microsoft simulator).
    Simulator {
        /// Host name or address.
        host: String,
        /// Command port (the control port is the next one; not used).
        port: u16,
    },
}

impl Default for Device {
    fn default() -> Self {
        Self::Path(PathBuf::from(DEFAULT_DEVICE))
    }
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Path(path) => write!(f, "{}", path.display()),
            Self::Simulator { host, port } => write!(f, "swtpm:host={host},port={port}"),
        }
    }
}

impl Device {
    /// Parses a device path or a TCTI string: `/dev/tpmrm0`, `device:/dev/tpm0`, `swtpm:host=127.0.0.1,port=2321`,
    /// `mssim:port=2321` (host defaults to `localhost`, port to 2321).
    pub fn parse(text: &str) -> Result<Self, Error> {
        let bad = |problem: String| Error::Device(problem);
        let (name, config) = text.split_once(':').unwrap_or((text, ""));
        match name {
            "device" if config.is_empty() => Ok(Self::default()),
            "device" => Ok(Self::Path(PathBuf::from(config))),
            "swtpm" | "mssim" => {
                let (mut host, mut port) = ("localhost".to_owned(), DEFAULT_PORT);
                for item in config.split(',').filter(|item| !item.is_empty()) {
                    match item.split_once('=') {
                        Some(("host", value)) if !value.is_empty() => host = value.to_owned(),
                        Some(("port", value)) => {
                            port = value.parse().map_err(|_| bad(format!("`{value}` is not a port number")))?;
                        }
                        _ => return Err(bad(format!("`{item}` in the {name} TCTI: expected host=H or port=P"))),
                    }
                }
                Ok(Self::Simulator { host, port })
            }
            _ if text.starts_with('/') || text.starts_with('.') => Ok(Self::Path(PathBuf::from(text))),
            _ => Err(bad(format!(
                "`{text}` is neither a device path nor a TCTI cryptadm speaks (device:PATH, swtpm:host=H,port=P, \
                 mssim:host=H,port=P)"
            ))),
        }
    }

    /// Opens the device or connects to the simulator.
    pub(super) fn open(&self) -> Result<Connection, Error> {
        let unreachable = |e: std::io::Error| Error::Unreachable { device: self.to_string(), cause: e.to_string() };
        match self {
            Self::Path(path) => {
                let file = std::fs::OpenOptions::new().read(true).write(true).open(path).map_err(unreachable)?;
                Ok(Connection::File(file))
            }
            Self::Simulator { host, port } => {
                let stream = TcpStream::connect((host.as_str(), *port)).map_err(unreachable)?;
                stream.set_read_timeout(Some(COMMAND_TIMEOUT)).map_err(unreachable)?;
                stream.set_write_timeout(Some(COMMAND_TIMEOUT)).map_err(unreachable)?;
                let _ = stream.set_nodelay(true);
                Ok(Connection::Simulator(stream))
            }
        }
    }
}

/// An open channel to a TPM.
pub(super) enum Connection {
    File(std::fs::File),
    Simulator(TcpStream),
    /// Canned responses, in order (the fuzz target's TPM); an empty queue is an I/O error.
    Scripted(std::collections::VecDeque<Vec<u8>>),
}

/// The simulator's "send a command" code.
const TPM_SEND_COMMAND: u32 = 8;

impl Connection {
    /// Sends one command and returns its response, at most [`MAX_RESPONSE`] bytes.
    pub(super) fn transact(&mut self, command: &[u8]) -> Result<Vec<u8>, Error> {
        let io = |e: std::io::Error| Error::Io(e.to_string());
        match self {
            Self::File(file) => {
                file.write_all(command).map_err(io)?;
                let mut buffer = vec![0u8; MAX_RESPONSE];
                let mut len = 0;
                // One read returns the whole response on the kernel's devices; loop for short reads anyway.
                loop {
                    let n = file.read(&mut buffer[len..]).map_err(io)?;
                    len += n;
                    if n == 0 || (len >= 6 && declared_len(&buffer[..len]).is_some_and(|want| len >= want)) {
                        break;
                    }
                    if len == buffer.len() {
                        return Err(Error::Malformed("the response is longer than 64 KiB".into()));
                    }
                }
                buffer.truncate(len);
                Ok(buffer)
            }
            Self::Simulator(stream) => {
                let len = u32::try_from(command.len()).map_err(|_| Error::Malformed("command too long".into()))?;
                let mut framed = Vec::with_capacity(command.len() + 9);
                framed.extend_from_slice(&TPM_SEND_COMMAND.to_be_bytes());
                framed.push(0); // locality 0
                framed.extend_from_slice(&len.to_be_bytes());
                framed.extend_from_slice(command);
                stream.write_all(&framed).map_err(io)?;
                let mut word = [0u8; 4];
                stream.read_exact(&mut word).map_err(io)?;
                let len = u32::from_be_bytes(word) as usize;
                if len > MAX_RESPONSE {
                    return Err(Error::Malformed(format!("the simulator announces a {len}-byte response")));
                }
                let mut response = vec![0u8; len];
                stream.read_exact(&mut response).map_err(io)?;
                stream.read_exact(&mut word).map_err(io)?; // the simulator's acknowledgement (0)
                Ok(response)
            }
            Self::Scripted(responses) => {
                let response = responses.pop_front().ok_or_else(|| Error::Io("no more responses".into()))?;
                if response.len() > MAX_RESPONSE {
                    return Err(Error::Malformed("the response is longer than 64 KiB".into()));
                }
                Ok(response)
            }
        }
    }
}

/// The size a response header declares.
fn declared_len(bytes: &[u8]) -> Option<usize> {
    bytes.get(2..6).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcti_strings_as_tpm2_tools_take_them() {
        let sim = |host: &str, port| Device::Simulator { host: host.into(), port };
        for (text, want) in [
            ("/dev/tpmrm0", Device::default()),
            ("device:/dev/tpm0", Device::Path("/dev/tpm0".into())),
            ("device", Device::default()),
            ("swtpm:host=127.0.0.1,port=4000", sim("127.0.0.1", 4000)),
            ("mssim:port=4000", sim("localhost", 4000)),
            ("swtpm", sim("localhost", 2321)),
        ] {
            assert_eq!(Device::parse(text).unwrap(), want, "{text}");
        }
        for bad in ["tabrmd:", "swtpm:port=x", "swtpm:bus=1", "tpm0"] {
            assert!(matches!(Device::parse(bad), Err(Error::Device(_))), "{bad}");
        }
        assert_eq!(sim("h", 1).to_string(), "swtpm:host=h,port=1");
    }
}
