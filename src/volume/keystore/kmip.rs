//! The built-in `kmip://PREFIX` key store: volume `ID`'s keys are KMIP Secret Data objects (type Password) named
//! `PREFIX/ID/current`, `PREFIX/ID/pending` and `PREFIX/ID/previous` (the Name attribute), as any KMIP client can
//! register them (an operator seeds a volume by registering `PREFIX/ID/current`).
//!
//! **Atomicity without check-and-set.** KMIP has no compare-and-swap and renaming (Modify Attribute on Name) is
//! not offered everywhere, so every transition registers new objects first and destroys old ones after, in an order
//! where every crash point leaves a `current` object that opens the volume:
//!
//! - put-pending: Register `pending`; Locate `pending`; a pending object this run did not see at its first read
//!   is another run's (see below); then Destroy the pending objects it replaces.
//! - commit: (1) Register a copy of the pending value as `current` (two `current` objects now); (2) Register the
//!   old current value as `previous`; (3) Destroy the old `current`; (4) Destroy `pending`.
//! - forget-previous: Destroy `previous` (and a `pending` left equal to `current` by a crash after step 3).
//!
//! Reading resolves what a crash left: two `current` objects of which one equals `pending` are a commit under way
//! (the other is the current key; both open the volume at that point, the engine commits again); a `pending` equal
//! to the one `current` is a commit finished but for its clean-up (no pending). Any other ambiguity (several
//! `current` objects an operator registered) is refused with exit 3 rather than guessed.
//!
//! **Concurrent runs** (two nodes rotating one volume, each with its own lock directory): the pending object is the
//! claim. After registering its own, a run that finds another pending object it had not seen at its first read
//! destroys its own and backs off a random 100–400 ms; if the other is still there it fails with ABORTED (exit
//! 10) before touching the header; if both backed off, the first to retry wins. At commit, a `current` object the
//! run had not seen also aborts it.
//!
//! **The rotation claim** ([`KeyStore::claim`]) is a Secret Data object named `PREFIX/ID/claim` holding the claim's
//! JSON. A live claim another run recorded fails the run with ABORTED (exit 10) before anything is written.
//! Without check-and-set, runs claiming at the same moment agree on one winner: each registers its claim and
//! Locates again; a run that sees a claim with a lower run id that it had not seen withdraws (destroys its own) and
//! exits 10; the lowest waits until the higher ones are withdrawn, and one that stays longer than a few of its
//! round trips was there first (it won): the waiting run withdraws. So exactly one of the racing runs wins, and no
//! loser leaves its claim behind. Claims this run may replace (expired, of a dead process on this node, of this
//! process, or forced) are destroyed once it has won. An object named `PREFIX/ID/claim` that is not a claim
//! cryptadm wrote is refused by its unique id, never destroyed.
//!
//! **Destroying Active objects.** KMIP servers refuse to destroy an Active object; an operator may activate the
//! `current` object (and some servers create objects Active). A refused Destroy is followed by Revoke (reason:
//! Superseded) and Destroy again.
//!
//! **Wrapped values** (`--key-wrap`): every object holds the wrap's text form instead of the passphrase; a commit
//! copies the stored (wrapped) bytes, never unwrapping them.

use super::store::{Claim, KeyStore, StoredKeys, same, store_error};
use super::wrap::KeyWrap;
use crate::crypto::{Passphrase, SecretBytes};
use crate::exit::ExitStatus;
use crate::kms::kmip::Kmip;
use crate::volume::Error;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The scheme of KMIP key stores.
pub const SCHEME: &str = "kmip://";

/// One stored object: its unique id, stored bytes and the key they hold (unwrapped).
struct Stored {
    uid: String,
    bytes: SecretBytes,
    key: Passphrase,
}

/// What one name holds.
type Slot = Vec<Stored>;

/// One volume's entry in a `kmip://` store.
pub struct KmipStore {
    client: Arc<Kmip>,
    wrap: Option<Arc<dyn KeyWrap>>,
    /// `PREFIX/ID`.
    base: String,
    volume_id: String,
    /// The unique ids of the pending objects this run saw at its first read (a crashed run's, replaceable).
    seen_pending: Mutex<Option<Vec<String>>>,
    /// The unique ids of the current objects this run saw at its first read.
    seen_current: Mutex<Option<Vec<String>>>,
}

/// Whether a volume id can be a name segment as it is.
fn valid_volume_id(id: &str) -> bool {
    !id.is_empty()
        && id != "."
        && id != ".."
        && id.len() <= 253
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl KmipStore {
    /// The entry of `volume_id` in the store `uri` (`kmip://PREFIX`) on `client`.
    pub fn from_uri(
        uri: &str,
        volume_id: &str,
        client: Arc<Kmip>,
        wrap: Option<Arc<dyn KeyWrap>>,
    ) -> Result<Self, Error> {
        let prefix = uri
            .strip_prefix(SCHEME)
            .map(|p| p.trim_matches('/'))
            .filter(|p| !p.is_empty() && p.split('/').all(|s| !s.is_empty() && s != "." && s != ".."))
            .filter(|p| p.bytes().all(|b| b.is_ascii_graphic()))
            .ok_or_else(|| {
                Error::BadRequest(format!("key store `{uri}`: expected kmip://PREFIX, e.g. kmip://volumes"))
            })?;
        if !valid_volume_id(volume_id) {
            return Err(Error::BadRequest(format!(
                "volume id `{}` cannot be a KMIP name segment (letters, digits and -_. only)",
                crate::redact::server_message(volume_id.as_bytes())
            )));
        }
        Ok(Self {
            client,
            wrap,
            base: format!("{prefix}/{volume_id}"),
            volume_id: volume_id.to_owned(),
            seen_pending: Mutex::new(None),
            seen_current: Mutex::new(None),
        })
    }

    fn name(&self, slot: &str) -> String {
        format!("{}/{slot}", self.base)
    }

    /// The objects named `slot`, with their stored bytes (objects destroyed meanwhile are skipped).
    fn read(&self, slot: &str) -> Result<Slot, Error> {
        let mut objects = Vec::new();
        for uid in self.client.locate(&self.name(slot)).map_err(store_error)? {
            match self.client.get(&uid) {
                Ok(object) if object.is_secret_data() => {
                    let key = self.open_value(&uid, &object.material)?;
                    objects.push(Stored { uid, bytes: object.material, key });
                }
                Ok(_) => {
                    return Err(Error::Store {
                        status: ExitStatus::InvalidInput,
                        message: format!("KMIP object `{uid}` named `{}` is not Secret Data", self.name(slot)),
                    });
                }
                Err(e) if crate::exit::Classify::status(&e) == ExitStatus::NotFound => {}
                Err(e) => return Err(store_error(e)),
            }
        }
        Ok(objects)
    }

    fn open_value(&self, uid: &str, bytes: &[u8]) -> Result<Passphrase, Error> {
        let Some(wrap) = &self.wrap else { return Ok(Passphrase::new(bytes.to_vec())) };
        let text = std::str::from_utf8(bytes).ok().filter(|_| wrap.is_wrapped(bytes)).ok_or_else(|| Error::Store {
            status: ExitStatus::InvalidInput,
            message: format!("KMIP object `{uid}` is not a {}, and --key-wrap stores only wrapped keys", wrap.form()),
        })?;
        wrap.unwrap(text)
    }

    fn seal_value(&self, key: &Passphrase) -> Result<SecretBytes, Error> {
        match &self.wrap {
            Some(wrap) => Ok(SecretBytes::new(wrap.wrap(key)?.into_bytes())),
            None => Ok(SecretBytes::new(key.expose().to_vec())),
        }
    }

    fn register(&self, slot: &str, bytes: &[u8]) -> Result<String, Error> {
        self.client.register_password(&self.name(slot), bytes).map_err(store_error)
    }

    /// Destroys `uid` (gone already is success). KMIP servers refuse to destroy an Active object (KMIP 1.x
    /// §3.22, and PyKMIP: "Object is active and cannot be destroyed"); an operator may have activated `current`,
    /// and some servers create objects Active. A refused Destroy is followed by Revoke (reason: Superseded) and a
    /// second Destroy; when the Revoke is refused too, the Destroy's refusal is what is reported.
    fn destroy(&self, uid: &str) -> Result<(), Error> {
        let refused = match self.client.destroy(uid) {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        if self.client.revoke(uid, crate::kms::kmip::RevocationReason::Superseded).is_err() {
            return Err(store_error(refused));
        }
        self.client.destroy(uid).map_err(store_error)
    }

    fn conflict(&self, what: &str) -> Error {
        Error::Store {
            status: ExitStatus::Aborted,
            message: format!(
                "KMIP key store `{}` of volume `{}`: {what} (hint: another rotation of this volume is under way; \
                 retry later)",
                self.base, self.volume_id
            ),
        }
    }

    /// No `current` object this client can see. A KMIP server's Locate lists only the objects the client may use
    /// (PyKMIP: the ones its certificate's CN owns; it answers another client's Locate with an empty list, never
    /// Permission Denied), so an unseeded volume and a volume seeded by another client look the same: exit 5,
    /// with a hint naming both.
    fn nothing_visible(&self) -> Error {
        Error::Store {
            status: ExitStatus::NotFound,
            message: format!(
                "KMIP key store `{}` of volume `{}`: no object named `{}` that this client may use (hint: seed the \
                 volume with `cryptadm volume import`; if it is seeded, the objects may belong to another client: a \
                 KMIP server lists only the objects this client may use (PyKMIP: those its client certificate owns), \
                 so give the --kmip-client-cert that seeded the volume, or have the key manager grant this one)",
                self.base,
                self.volume_id,
                self.name("current")
            ),
        }
    }

    /// Every slot, opened, and the resolved keys.
    fn state(&self) -> Result<(Slot, Slot, Slot, StoredKeys), Error> {
        let (currents, pendings, previous) = (self.read("current")?, self.read("pending")?, self.read("previous")?);
        let keys = |slot: &Slot| slot.iter().map(|s| s.key.clone()).collect::<Vec<Passphrase>>();
        let (current_keys, pending_keys) = (keys(&currents), keys(&pendings));
        if pending_keys.len() > 1 {
            return Err(self.conflict("there are several pending keys"));
        }
        let pending = pending_keys.into_iter().next();
        let current = match current_keys.len() {
            0 => return Err(self.nothing_visible()),
            1 => current_keys.into_iter().next().expect("one"),
            2 if pending.as_ref().is_some_and(|p| current_keys.iter().filter(|c| same(c, p)).count() == 1) => {
                let p = pending.as_ref().expect("checked");
                current_keys.into_iter().find(|c| !same(c, p)).expect("one differs")
            }
            n => {
                return Err(Error::Store {
                    status: ExitStatus::InvalidInput,
                    message: format!(
                        "KMIP key store: {n} objects are named `{}` (hint: destroy the stale ones with the key \
                         manager's tools; the one that opens the volume stays)",
                        self.name("current")
                    ),
                });
            }
        };
        let pending = pending.filter(|p| !same(p, &current) || currents.len() > 1);
        let previous_key = previous.first().map(|s| s.key.clone());
        Ok((currents, pendings, previous, StoredKeys { current, pending, previous: previous_key }))
    }

    fn remember(&self, currents: &Slot, pendings: &Slot) {
        let ids = |slot: &Slot| slot.iter().map(|s| s.uid.clone()).collect::<Vec<_>>();
        lock(&self.seen_current).get_or_insert_with(|| ids(currents));
        lock(&self.seen_pending).get_or_insert_with(|| ids(pendings));
    }

    /// Registers `bytes` as pending, and keeps it only when no other run's pending object is there.
    fn claim_pending(&self, bytes: &[u8], seen: &[String]) -> Result<String, Error> {
        for attempt in 0..3 {
            let mine = self.register("pending", bytes)?;
            let others: Vec<String> = self
                .client
                .locate(&self.name("pending"))
                .map_err(store_error)?
                .into_iter()
                .filter(|uid| *uid != mine && !seen.contains(uid))
                .collect();
            if others.is_empty() {
                return Ok(mine);
            }
            self.destroy(&mine)?;
            if attempt == 2 {
                break;
            }
            std::thread::sleep(backoff());
            let still = self.client.locate(&self.name("pending")).map_err(store_error)?;
            if still.iter().any(|uid| !seen.contains(uid)) {
                break;
            }
        }
        Err(self.conflict("another run registered a pending key"))
    }
}

impl KmipStore {
    /// The claim objects: unique id and the claim each holds. An object named `PREFIX/ID/claim` that is not a
    /// claim cryptadm wrote (not Secret Data, or not a claim's JSON) is refused with its name and unique id: it is
    /// someone else's, and cryptadm never destroys what it did not write.
    fn claims(&self) -> Result<Vec<(String, Claim)>, Error> {
        let mut claims = Vec::new();
        for uid in self.client.locate(&self.name("claim")).map_err(store_error)? {
            match self.client.get(&uid) {
                Ok(object) => {
                    let parsed = object.is_secret_data().then(|| Claim::parse(&object.material)).flatten();
                    let claim = parsed.ok_or_else(|| self.foreign_claim(&uid))?;
                    claims.push((uid, claim));
                }
                Err(e) if crate::exit::Classify::status(&e) == ExitStatus::NotFound => {}
                Err(e) => return Err(store_error(e)),
            }
        }
        Ok(claims)
    }

    fn foreign_claim(&self, uid: &str) -> Error {
        Error::Store {
            status: ExitStatus::InvalidInput,
            message: format!(
                "KMIP object `{}` named `{}` is not a rotation claim cryptadm wrote; it was left as it is and \
                 nothing was rotated (hint: the name is cryptadm's: rename or destroy that object with the key \
                 manager's tools if it is not needed)",
                crate::redact::server_message(uid.as_bytes()),
                self.name("claim")
            ),
        }
    }

    fn claimed_by(&self, holder: String) -> Error {
        Error::Claimed { volume_id: self.volume_id.clone(), holder }
    }

    /// After registering `mine` (unique id `mine_uid`), decides the race without check-and-set: this run wins
    /// when a Locate shows no claim but its own (and those it saw before registering, which it may replace). A
    /// claim with a lower run id that this run had not seen makes it lose at once (that run wins, or loses to an
    /// even lower one). Claims with higher run ids withdraw as soon as they see this one, so this run waits for
    /// them to go; one still there after `patience` was there first and won: this run loses. Exactly one of the
    /// runs racing wins, and every loser has destroyed its claim before it returns.
    fn decide(&self, mine: &Claim, mine_uid: &str, before: &[String], patience: Duration) -> Result<(), Error> {
        let started = std::time::Instant::now();
        let mut runs: std::collections::HashMap<String, Option<String>> = std::collections::HashMap::new();
        loop {
            let others: Vec<String> = self
                .client
                .locate(&self.name("claim"))
                .map_err(store_error)?
                .into_iter()
                .filter(|uid| uid != mine_uid && !before.contains(uid))
                .collect();
            if others.is_empty() {
                return Ok(());
            }
            let mut lower = None;
            for uid in &others {
                if !runs.contains_key(uid) {
                    let run = match self.client.get(uid) {
                        Ok(object) if object.is_secret_data() => match Claim::parse(&object.material) {
                            Some(claim) => Some(claim.run),
                            None => return self.withdraw(mine_uid, self.foreign_claim(uid)),
                        },
                        Ok(_) => return self.withdraw(mine_uid, self.foreign_claim(uid)),
                        Err(e) if crate::exit::Classify::status(&e) == ExitStatus::NotFound => None,
                        Err(e) => return self.withdraw(mine_uid, store_error(e)),
                    };
                    runs.insert(uid.clone(), run);
                }
                if runs[uid].as_deref().is_some_and(|run| run < mine.run.as_str()) {
                    lower = Some(uid.clone());
                }
            }
            if lower.is_some() || started.elapsed() > patience {
                let held = format!("a run that claimed `{}` at the same time", self.name("claim"));
                return self.withdraw(mine_uid, self.claimed_by(held));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Destroys this run's claim `mine_uid` and fails with `error`.
    fn withdraw(&self, mine_uid: &str, error: Error) -> Result<(), Error> {
        self.destroy(mine_uid)?;
        Err(error)
    }
}

/// 100–400 ms, random.
fn backoff() -> Duration {
    let mut byte = [0u8; 2];
    let _ = getrandom::fill(&mut byte);
    Duration::from_millis(100 + u64::from(u16::from_le_bytes(byte)) % 300)
}

impl KeyStore for KmipStore {
    fn get(&self) -> Result<StoredKeys, Error> {
        let (currents, pendings, _, keys) = self.state()?;
        self.remember(&currents, &pendings);
        Ok(keys)
    }

    fn put_pending(&self, new: &Passphrase) -> Result<(), Error> {
        let (currents, pendings, _, _) = self.state()?;
        self.remember(&currents, &pendings);
        let seen = lock(&self.seen_pending).clone().unwrap_or_default();
        let mine = self.claim_pending(&self.seal_value(new)?, &seen)?;
        for old in pendings.iter().filter(|p| p.uid != mine) {
            self.destroy(&old.uid)?;
        }
        *lock(&self.seen_pending) = Some(vec![mine]);
        Ok(())
    }

    fn commit(&self, new: &Passphrase) -> Result<(), Error> {
        let (currents, pendings, previous, keys) = self.state()?;
        let seen_current = lock(&self.seen_current).clone().unwrap_or_default();
        if currents.iter().any(|c| !seen_current.contains(&c.uid) && !same(&c.key, new)) {
            return Err(self.conflict("the current key changed since this run read it"));
        }
        let pending = pendings.iter().find(|p| same(&p.key, new));
        let Some(pending) = pending else {
            if same(&keys.current, new) {
                return Ok(());
            }
            return Err(Error::Store {
                status: ExitStatus::Failure,
                message: format!("KMIP key store `{}`: `pending` does not hold the key being committed", self.base),
            });
        };
        let mut new_current = None;
        let mut old_currents = Vec::new();
        for c in &currents {
            if same(&c.key, new) { new_current = Some(c) } else { old_currents.push(c) }
        }
        // (1) the new key as current, beside the old one
        if new_current.is_none() {
            self.register("current", &pending.bytes)?;
        }
        // (2) the old key as previous
        for old in &old_currents {
            let kept = previous.iter().any(|p| same(&p.key, &old.key));
            if !kept {
                self.register("previous", &old.bytes)?;
            }
        }
        // (3) the old current gone, (4) pending gone
        for old in old_currents {
            self.destroy(&old.uid)?;
        }
        self.destroy(&pending.uid)?;
        Ok(())
    }

    fn claim(&self, claim: &Claim, force: bool) -> Result<Option<Claim>, Error> {
        if self.client.locate(&self.name("current")).map_err(store_error)?.is_empty() {
            return Err(self.nothing_visible());
        }
        let held = self.claims()?;
        if let Some((_, other)) = held.iter().find(|(_, other)| !claim.may_replace(other, force)) {
            return Err(self.claimed_by(other.describe()));
        }
        let started = std::time::Instant::now();
        let mine = self.register("claim", claim.to_json().as_bytes())?;
        // How long the others may take to see this claim and withdraw theirs: a few of this run's own round
        // trips (a Register and a Locate, measured), at least two seconds.
        let patience = Duration::from_secs(2).max(started.elapsed() * 10);
        let before: Vec<String> = held.iter().map(|(uid, _)| uid.clone()).collect();
        self.decide(claim, &mine, &before, patience)?;
        let mut replaced = None;
        for (uid, held_claim) in held {
            self.destroy(&uid)?;
            if replaced.is_none() && held_claim.run != claim.run {
                replaced = Some(held_claim);
            }
        }
        Ok(replaced)
    }

    /// Registers `current` (Secret Data, Password) when none is named so; with `replace`, registers the new one
    /// first and then destroys the others (revoked first when Active): a crash in between leaves two `current`
    /// objects, which a rerun of the import resolves the same way. Objects named `current` that are not Secret
    /// Data are refused, never destroyed.
    fn import(&self, key: &Passphrase, replace: bool) -> Result<(), Error> {
        let existing = self.client.locate(&self.name("current")).map_err(store_error)?;
        if !existing.is_empty() {
            if !replace {
                return Err(Error::AlreadyStored { volume_id: self.volume_id.clone() });
            }
            for uid in &existing {
                match self.client.get(uid) {
                    Ok(object) if object.is_secret_data() => {}
                    Ok(_) => {
                        return Err(Error::Store {
                            status: ExitStatus::InvalidInput,
                            message: format!(
                                "KMIP object `{}` named `{}` is not Secret Data; nothing was imported",
                                crate::redact::server_message(uid.as_bytes()),
                                self.name("current")
                            ),
                        });
                    }
                    Err(e) if crate::exit::Classify::status(&e) == ExitStatus::NotFound => {}
                    Err(e) => return Err(store_error(e)),
                }
            }
            let under_way = [self.name("pending"), self.name("previous")]
                .iter()
                .map(|name| self.client.locate(name).map(|uids| !uids.is_empty()))
                .collect::<Result<Vec<bool>, _>>()
                .map_err(store_error)?
                .contains(&true);
            let claims = self.claims()?;
            let probe = Claim::new(Duration::ZERO);
            let live = claims.iter().map(|(_, c)| c).find(|held| !probe.may_replace(held, false));
            super::store::import_blocked(&self.volume_id, under_way, live)?;
        }
        let sealed = super::store::seal_checked(self.wrap.as_deref(), key)?;
        let mine = self.register("current", &sealed)?;
        for uid in existing.iter().filter(|uid| **uid != mine) {
            self.destroy(uid)?;
        }
        Ok(())
    }

    fn release(&self, claim: &Claim) -> Result<(), Error> {
        for (uid, held) in self.claims()? {
            if held == *claim {
                self.destroy(&uid)?;
            }
        }
        Ok(())
    }

    fn forget_previous(&self) -> Result<(), Error> {
        for object in self.read("previous")? {
            self.destroy(&object.uid)?;
        }
        let (_, pendings, _, keys) = self.state()?;
        for object in pendings {
            if same(&object.key, &keys.current) {
                self.destroy(&object.uid)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volume_ids_and_prefixes() {
        assert!(valid_volume_id("pvc-0a1b_c.d"));
        for bad in ["", ".", "..", "a/b", "a b"] {
            assert!(!valid_volume_id(bad), "{bad}");
        }
    }
}
