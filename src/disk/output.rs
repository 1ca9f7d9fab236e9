//! The one output guard of `disk luks-format`, `convert` and `decrypt`: what the destination is, whether writing
//! it would destroy an input or something already there, and how it is written (an image file through a partial
//! file renamed into place; a block device in place, never renamed over, unlinked or truncated).

use super::{Error, device};
use crate::luks::format::{self, Occupant};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// A checked destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// An image file (absent, empty, or replaced with `force`), built beside itself and renamed into place.
    File(PathBuf),
    /// A block device of `len` bytes, written in place.
    Device {
        /// The device node.
        path: PathBuf,
        /// Its size.
        len: u64,
    },
}

impl Output {
    /// The destination's path.
    pub fn path(&self) -> &Path {
        match self {
            Output::File(path) | Output::Device { path, .. } => path,
        }
    }

    /// Refuses a block device, for outputs that must be files (qcow2 images, `convert`'s outputs).
    pub fn require_file(&self, why: &'static str) -> Result<&Path, Error> {
        match self {
            Output::File(path) => Ok(path),
            Output::Device { path, .. } => Err(Error::Unwritable {
                path: path.display().to_string(),
                what: format!("a block device: {why}"),
                hint: "write an image file, then copy it onto the device (e.g. `disk decrypt --out DEVICE` or \
                       `disk luks-format --from IMAGE DEVICE`)",
            }),
        }
    }

    /// Refuses `needed` bytes on a device that cannot hold them.
    pub fn require_room(&self, needed: u64) -> Result<(), Error> {
        match self {
            Output::Device { path, len } if needed > *len => {
                Err(Error::TooSmall { path: path.display().to_string(), needed, len: *len })
            }
            _ => Ok(()),
        }
    }
}

/// Checks `dst` (named `dst_flag` in messages) against the `inputs` (path, name) and what it holds:
/// - the same storage as an input (one file, a loop device over it, a partition of the same disk, the device a
///   file's file system is on) is refused (exit 2);
/// - something that is neither a regular file nor a block device is refused (exit 3);
/// - a LUKS header, a non-empty file or a block device with data in its first MiB is refused (exit 3) unless
///   `force`.
pub fn check(dst: &Path, dst_flag: &str, inputs: &[(&Path, &str)], force: bool) -> Result<Output, Error> {
    for (input, input_flag) in inputs {
        let how = device::shared_storage(input, dst).map_err(Error::io(format!(
            "comparing `{}` with `{}`",
            input.display(),
            dst.display()
        )))?;
        if let Some(how) = how {
            return Err(Error::SameStorage {
                output: dst.display().to_string(),
                output_flag: dst_flag.to_owned(),
                input: input.display().to_string(),
                input_flag: (*input_flag).to_owned(),
                how: how.to_owned(),
            });
        }
    }
    let meta = match std::fs::metadata(dst) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Output::File(dst.to_path_buf())),
        Err(e) => return Err(Error::io(format!("checking `{}`", dst.display()))(e)),
    };
    let is_device = meta.file_type().is_block_device();
    if !is_device && !meta.is_file() {
        return Err(Error::Unwritable {
            path: dst.display().to_string(),
            what: "neither a regular file nor a block device".into(),
            hint: "give a path for a new image file, or a block device",
        });
    }
    // A device is opened exclusively (O_EXCL): the kernel refuses it while it is mounted or claimed (device-mapper,
    // md, swap, another exclusive opener), whatever `force` says.
    let file = if is_device { open_device(dst, false) } else { File::open(dst) }
        .map_err(|e| in_use(dst, e).unwrap_or_else(|e| Error::io(format!("opening `{}`", dst.display()))(e)))?;
    let len = device::len(&file).map_err(Error::io(format!("reading the size of `{}`", dst.display())))?;
    if !force {
        let occupant =
            format::occupant(&file, is_device, len).map_err(Error::io(format!("reading `{}`", dst.display())))?;
        let what = match occupant {
            Some(Occupant::LuksHeader) => Some("holds a LUKS header"),
            Some(Occupant::Data) if is_device => Some("is not empty"),
            Some(Occupant::Data) => Some("exists and is not empty"),
            None => None,
        };
        if let Some(what) = what {
            return Err(Error::Occupied { path: dst.display().to_string(), what });
        }
    }
    Ok(if is_device { Output::Device { path: dst.to_path_buf(), len } } else { Output::File(dst.to_path_buf()) })
}

/// Writes `output` through `fill`: an image file atomically (a 0600 partial file renamed into place when `fill`
/// succeeds, removed when it fails); a block device in place, flushed. `fill` gets the file and whether it is a
/// device (a device is never sparse: every byte must be written, zeros too).
pub fn write<T, E>(output: &Output, fill: impl FnOnce(&File, bool) -> Result<T, E>) -> Result<T, E>
where
    E: From<std::io::Error>,
{
    match output {
        Output::File(path) => crate::atomic::write_with(path, crate::atomic::MODE_PRIVATE, |file| fill(file, false)),
        Output::Device { path, .. } => {
            // Exclusively again: a device mounted since the check is refused, and nothing claims it while it is
            // written.
            let file = open_device(path, true)?;
            let value = fill(&file, true)?;
            file.sync_all()?;
            Ok(value)
        }
    }
}

/// Opens the block device `path` with `O_EXCL`, which for a block device means an exclusive claim: refused
/// (`EBUSY`) while it, a partition of it or the disk it is a partition of is mounted or otherwise claimed, and
/// keeping others from claiming it while open.
fn open_device(path: &Path, write: bool) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new().read(true).write(write).custom_flags(rustix::fs::OFlags::EXCL.bits() as i32).open(path)
}

/// The error for a device the kernel would not let us claim (`EBUSY`), or back the error it is not.
fn in_use(path: &Path, error: std::io::Error) -> Result<Error, std::io::Error> {
    if error.raw_os_error() == Some(rustix::io::Errno::BUSY.raw_os_error()) {
        Ok(Error::InUse { path: path.display().to_string() })
    } else {
        Err(error)
    }
}
