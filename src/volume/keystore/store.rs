//! The contract every key store keeps: [`KeyStore`] and the keys it hands out ([`StoredKeys`]). Stores import this
//! file and nothing else of the key-store module; the chooser (`keystore::open`) imports the stores.

use crate::crypto::Passphrase;
use crate::volume::Error;

/// The keys a store holds for one volume.
#[derive(Debug)]
pub struct StoredKeys {
    /// The key that opens the volume.
    pub current: Passphrase,
    /// The key a rotation is adding, recorded before the header changed.
    pub pending: Option<Passphrase>,
    /// The key `current` replaced, kept until its keyslots are removed.
    pub previous: Option<Passphrase>,
}

impl StoredKeys {
    /// The key that will be current when the interrupted rotation (if any) is finished.
    pub fn pending_or_current(&self) -> Passphrase {
        self.pending.as_ref().unwrap_or(&self.current).clone()
    }
}

/// One volume's entry in a key store. Every method is idempotent.
///
/// A store keeps, per volume id, the `current` key (it opens the volume), while a rotation is under way the
/// `pending` key (recorded before the header changes), and after a commit the `previous` key until its keyslots
/// are gone. See [`crate::volume::rotate`] for how the engine uses them.
pub trait KeyStore {
    /// Reads the stored keys; [`Error::NoStoredKey`] when the store has no current key for the volume.
    fn get(&self) -> Result<StoredKeys, Error>;
    /// Records `new` as the pending key (replacing any pending one).
    fn put_pending(&self, new: &Passphrase) -> Result<(), Error>;
    /// Makes the pending key `new` current and keeps the replaced key as previous.
    fn commit(&self, new: &Passphrase) -> Result<(), Error>;
    /// Drops the previous key.
    fn forget_previous(&self) -> Result<(), Error>;
}

/// Whether two keys are equal, in constant time.
pub(crate) fn same(a: &Passphrase, b: &Passphrase) -> bool {
    crate::crypto::secret::passphrases_match(a, b)
}

/// Maps a key-manager error to the volume error of the same exit status.
pub fn store_error(error: crate::kms::Error) -> Error {
    use crate::exit::Classify;
    let status = error.status();
    let hint = error.hint().map(|h| format!(" (hint: {h})")).unwrap_or_default();
    Error::Store { status, message: format!("{error}{hint}") }
}
