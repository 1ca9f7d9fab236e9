//! The contract every key store keeps: [`KeyStore`] and the keys it hands out ([`StoredKeys`]). Stores import this
//! file and nothing else of the key-store module; the chooser (`keystore::open`) imports the stores.

pub use super::claim::Claim;
use super::wrap::KeyWrap;
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
    /// Records `claim` as the volume's rotation claim, before the header is touched, with a check-and-set
    /// against the claim it read: another run's claim that `claim` may not replace ([`Claim::may_replace`];
    /// `force` replaces any) fails with [`Error::Claimed`] and nothing written, and so does losing the race to
    /// record it. Returns the claim it replaced. [`Error::NoStoredKey`] when the store has no key for the volume.
    fn claim(&self, claim: &Claim, force: bool) -> Result<Option<Claim>, Error>;
    /// Removes `claim` if it is still the recorded one.
    fn release(&self, claim: &Claim) -> Result<(), Error>;
    /// `volume import`: records `key` as the volume's only key (`current`), all or nothing, after checking that a
    /// wrapped value unwraps to `key` again. An entry that already holds a current key fails with
    /// [`Error::AlreadyStored`] unless `replace`; one with a rotation under way (pending or previous key, or a
    /// live claim) is refused even then, with nothing written. Stores that cannot import refuse with exit 3.
    fn import(&self, key: &Passphrase, replace: bool) -> Result<(), Error> {
        let _ = (key, replace);
        Err(Error::Store {
            status: crate::exit::ExitStatus::InvalidInput,
            message: "this key store cannot import a volume (volume import takes file://, vault-kv:// and kmip:// \
                      stores)"
                .into(),
        })
    }
}

/// Wraps `key` with `wrap` (when given) as the bytes to store, and checks the round trip: the stored value must
/// unwrap to `key` again before a store writes it.
pub(crate) fn seal_checked(wrap: Option<&dyn KeyWrap>, key: &Passphrase) -> Result<crate::crypto::SecretBytes, Error> {
    let Some(wrap) = wrap else { return Ok(crate::crypto::SecretBytes::new(key.expose().to_vec())) };
    let sealed = wrap.wrap(key)?;
    if !wrap.is_wrapped(sealed.as_bytes()) || !same(&wrap.unwrap(&sealed)?, key) {
        return Err(Error::Store {
            status: crate::exit::ExitStatus::Failure,
            message: format!("the {} made for the key does not unwrap to it again; nothing was written", wrap.form()),
        });
    }
    Ok(crate::crypto::SecretBytes::new(sealed.into_bytes()))
}

/// Why an import must not replace an entry: a rotation under way (`pending`, `previous`, or a claim that stands).
pub(crate) fn import_blocked(volume_id: &str, under_way: bool, claim: Option<&Claim>) -> Result<(), Error> {
    let probe = Claim::new(std::time::Duration::ZERO);
    let claimed = claim.filter(|held| !probe.may_replace(held, false));
    if under_way || claimed.is_some() {
        return Err(Error::Store {
            status: crate::exit::ExitStatus::Aborted,
            message: format!(
                "volume `{volume_id}` has a rotation under way in the key store{}; nothing was imported (hint: let \
                 `volume rotate` finish it first)",
                claimed.map(|c| format!(" ({})", c.describe())).unwrap_or_default()
            ),
        });
    }
    Ok(())
}

/// Whether two keys are equal, in constant time.
pub(crate) fn same(a: &Passphrase, b: &Passphrase) -> bool {
    crate::crypto::secret::passphrases_match(a, b)
}

/// Maps a key-manager error to the volume error with its exit status and its hint (printed on its own line).
pub fn store_error(error: crate::kms::Error) -> Error {
    Error::KeyManager(Box::new(error))
}
