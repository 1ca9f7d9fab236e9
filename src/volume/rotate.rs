//! The rotation engine: `docs/key-rotation.md` in an order where every crash leaves a volume that the key
//! store's current key opens, and where a rerun converges.
//!
//! The engine talks to the volume through [`Keyslots`] (implemented for [`crate::luks::Volume`] and, in the unit
//! tests, for an in-memory fake) and to the key store through [`KeyStore`]. The store keeps up to three keys per
//! volume: `current` (opens the volume), `pending` (the key being rotated in, recorded before the header changes)
//! and `previous` (the key `current` replaced, kept until its keyslots are gone). From any combination the engine
//! finds the unfinished step:
//!
//! | store holds | header | what the run does |
//! | --- | --- | --- |
//! | current, pending; pending opens no slot | old slot | add pending to a free slot, verify, commit, kill old |
//! | current, pending; pending opens a slot | old + new slot | commit, kill old |
//! | current, previous | old + new slot, or new only | kill old (if still there), forget previous |
//! | current only | any | a new rotation |
//!
//! An interrupted rotation is finished rather than followed by a second one, so a retried RPC rotates once.

use super::Error;
use super::keystore::{KeyStore, StoredKeys};
use crate::crypto::Passphrase;
use std::fmt;
use std::ops::ControlFlow;

/// The keyslot operations rotation needs: the LUKS library's `Volume`, or a fake in tests.
pub trait Keyslots {
    /// The volume key (zeroized by the implementation).
    type VolumeKey;
    /// A keyslot's key-derivation settings, copied from the old slot to the new one.
    type Kdf: Clone;

    /// Re-reads the header from the device.
    fn reload(&mut self) -> Result<(), Error>;
    /// Active keyslots, ascending id, with their KDF settings.
    fn keyslots(&self) -> Vec<(u32, Self::Kdf)>;
    /// The first keyslot `passphrase` opens and the volume key, or `None` when none opens.
    fn unlock(&self, passphrase: &[u8]) -> Result<Option<(u32, Self::VolumeKey)>, Error>;
    /// Whether keyslot `id` opens with `passphrase`, reading its material from the device again.
    fn unlock_keyslot(&self, id: u32, passphrase: &[u8]) -> Result<Option<Self::VolumeKey>, Error>;
    /// Adds a keyslot for `passphrase` with `kdf` in the lowest free id; durable when it returns.
    fn add_keyslot(&mut self, key: &Self::VolumeKey, passphrase: &[u8], kdf: &Self::Kdf) -> Result<u32, Error>;
    /// Destroys keyslot `id`'s material so that nothing opens it, leaving the slot recognisable as wiped
    /// ([`Keyslots::keyslot_wiped`]) until it is removed; durable when it returns.
    fn wipe_keyslot(&mut self, id: u32) -> Result<(), Error>;
    /// Whether keyslot `id`'s material was destroyed by [`Keyslots::wipe_keyslot`] (a removal that a crash
    /// interrupted): no key opens it.
    fn keyslot_wiped(&self, id: u32) -> Result<bool, Error>;
    /// Wipes and removes keyslot `id` (finishing [`Keyslots::wipe_keyslot`]); durable when it returns.
    fn remove_keyslot(&mut self, id: u32) -> Result<(), Error>;
}

/// The points between the durable steps of a rotation: where a crash can happen, and where the fault-injection
/// build aborts the process on request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Step {
    /// Locks held and the header re-read; nothing changed yet.
    Locked,
    /// The new key is recorded as pending in the key store.
    PendingStored,
    /// The new keyslot is written (material and headers).
    KeyslotAdded,
    /// The new keyslot unlocked from disk.
    Verified,
    /// The key store's current key is the new one; the old one is kept as previous.
    Committed,
    /// One keyslot of the previous key has its material destroyed, and is still in the header (once per slot).
    OldKeyslotWiped,
    /// One keyslot of the previous key is wiped and removed (once per such slot).
    OldKeyslotRemoved,
    /// The key store forgot the previous key: the rotation is complete.
    PreviousForgotten,
}

impl Step {
    /// Every step, in the order a rotation passes them.
    pub const ALL: &'static [Step] = &[
        Step::Locked,
        Step::PendingStored,
        Step::KeyslotAdded,
        Step::Verified,
        Step::Committed,
        Step::OldKeyslotWiped,
        Step::OldKeyslotRemoved,
        Step::PreviousForgotten,
    ];

    /// The step's name (for `CRYPTADM_FAULT_POINT` and log lines).
    pub fn name(self) -> &'static str {
        match self {
            Step::Locked => "locked",
            Step::PendingStored => "pending-stored",
            Step::KeyslotAdded => "keyslot-added",
            Step::Verified => "verified",
            Step::Committed => "committed",
            Step::OldKeyslotWiped => "old-keyslot-wiped",
            Step::OldKeyslotRemoved => "old-keyslot-removed",
            Step::PreviousForgotten => "previous-forgotten",
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a rotation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Whether an interrupted rotation was found and finished (instead of starting a new one).
    pub resumed: bool,
    /// Whether the requested key was already current, so nothing changed.
    pub unchanged: bool,
    /// The keyslot the key store's current key opens now.
    pub keyslot: u32,
    /// Keyslots of the replaced key that were wiped and removed.
    pub removed: Vec<u32>,
    /// The rotation claim of another run this one took over (expired, dead or forced), described.
    pub took_over: Option<String>,
    /// Why the run's rotation claim could not be released (the rotation itself is done): the claim stays until
    /// it expires, or until the next run on this node replaces it.
    pub release_failed: Option<String>,
}

/// Called after each durable step; `Break` stops the rotation there (as a crash would).
pub type Observer<'a> = &'a mut dyn FnMut(Step) -> ControlFlow<()>;

/// Rotates the key of `volume` (already locked and re-read by the caller). `requested` is the new key the caller
/// chose; `None` generates one. `generate` makes a new text passphrase.
pub fn rotate<V: Keyslots>(
    volume: &mut V,
    store: &dyn KeyStore,
    requested: Option<&Passphrase>,
    generate: &dyn Fn() -> Passphrase,
    observe: Observer<'_>,
) -> Result<Outcome, Error> {
    let mut run = Run { volume, store, observe };
    run.step(Step::Locked)?;
    let keys = store.get()?;
    let finished = run.finish_interrupted(&keys)?;
    if let Some(outcome) = &finished {
        let requested_holds = requested.is_none_or(|r| same(r, &keys.pending_or_current()));
        if requested_holds {
            return Ok(outcome.clone());
        }
    }
    // After finishing an interrupted rotation, the key it committed is the current one.
    let current = if finished.is_some() { keys.pending_or_current() } else { keys.current };
    if requested.is_some_and(|r| same(r, &current)) {
        let (keyslot, _) = run.volume.unlock(current.expose())?.ok_or(Error::NoKeyslotOpens)?;
        return Ok(Outcome {
            resumed: false,
            unchanged: true,
            keyslot,
            removed: Vec::new(),
            took_over: None,
            release_failed: None,
        });
    }
    let new = match requested {
        Some(key) => key.clone(),
        None => generate(),
    };
    run.fresh(&current, &new)
}

struct Run<'a, V: Keyslots> {
    volume: &'a mut V,
    store: &'a dyn KeyStore,
    observe: Observer<'a>,
}

impl<V: Keyslots> Run<'_, V> {
    fn step(&mut self, step: Step) -> Result<(), Error> {
        match (self.observe)(step) {
            ControlFlow::Continue(()) => Ok(()),
            ControlFlow::Break(()) => Err(Error::Interrupted(step)),
        }
    }

    /// Recovery (docs/key-rotation.md): finishes a rotation that a crash interrupted, if the store shows one.
    fn finish_interrupted(&mut self, keys: &StoredKeys) -> Result<Option<Outcome>, Error> {
        if let Some(pending) = &keys.pending {
            let keyslot = match self.volume.unlock(pending.expose())? {
                Some((slot, _)) => slot,
                None => {
                    // Crashed before the new keyslot was durable: add the recorded pending key now.
                    let (old_slot, volume_key) =
                        self.volume.unlock(keys.current.expose())?.ok_or(Error::NoKeyslotOpens)?;
                    self.add_and_verify(old_slot, &volume_key, pending)?
                }
            };
            let removed = self.commit_and_retire(pending, &keys.current, keyslot)?;
            return Ok(Some(Outcome {
                resumed: true,
                unchanged: false,
                keyslot,
                removed,
                took_over: None,
                release_failed: None,
            }));
        }
        let Some(previous) = &keys.previous else { return Ok(None) };
        let (keyslot, _) = self.volume.unlock(keys.current.expose())?.ok_or(Error::NoKeyslotOpens)?;
        // Crashed after the commit: the previous key's keyslots (maybe already gone) are all that is left.
        let removed = self.retire(previous, &keys.current, keyslot)?;
        self.store.forget_previous()?;
        self.step(Step::PreviousForgotten)?;
        Ok(Some(Outcome { resumed: true, unchanged: false, keyslot, removed, took_over: None, release_failed: None }))
    }

    /// Steps 2–6 from a volume that only the current key opens.
    fn fresh(&mut self, current: &Passphrase, new: &Passphrase) -> Result<Outcome, Error> {
        let (old_slot, volume_key) = self.volume.unlock(current.expose())?.ok_or(Error::NoKeyslotOpens)?;
        self.store.put_pending(new)?;
        self.step(Step::PendingStored)?;
        let keyslot = self.add_and_verify(old_slot, &volume_key, new)?;
        let removed = self.commit_and_retire(new, current, keyslot)?;
        Ok(Outcome { resumed: false, unchanged: false, keyslot, removed, took_over: None, release_failed: None })
    }

    /// Step 4: the new key in a free keyslot with the old slot's KDF, then unlocked from disk.
    fn add_and_verify(&mut self, old_slot: u32, key: &V::VolumeKey, new: &Passphrase) -> Result<u32, Error> {
        let kdf = self
            .volume
            .keyslots()
            .into_iter()
            .find_map(|(id, kdf)| (id == old_slot).then_some(kdf))
            .ok_or_else(|| Error::BadRequest(format!("keyslot {old_slot} vanished from the header")))?;
        let keyslot = self.volume.add_keyslot(key, new.expose(), &kdf)?;
        self.step(Step::KeyslotAdded)?;
        self.volume.reload()?;
        if self.volume.unlock_keyslot(keyslot, new.expose())?.is_none() {
            return Err(Error::Header {
                status: crate::exit::ExitStatus::Failure,
                source: format!("the new keyslot {keyslot} does not unlock after it was written").into(),
            });
        }
        self.step(Step::Verified)?;
        Ok(keyslot)
    }

    /// Steps 5 and 6: commit the new key, then remove the keyslots of the old one.
    fn commit_and_retire(&mut self, new: &Passphrase, old: &Passphrase, new_slot: u32) -> Result<Vec<u32>, Error> {
        self.store.commit(new)?;
        self.step(Step::Committed)?;
        let removed = self.retire(old, new, new_slot)?;
        self.store.forget_previous()?;
        self.step(Step::PreviousForgotten)?;
        Ok(removed)
    }

    /// Removes every keyslot `old` opens, and every keyslot an interrupted removal left wiped (its material
    /// destroyed, so no key opens it: the interrupted rotation's own). `keep_slot` opens with `keep` (the store's
    /// current key) and is never tried; no other slot can open with both keys, since they differ. Slots someone
    /// else owns (recovery keys, clevis bindings) open with neither, have intact material, and stay. One KDF run
    /// per other active slot.
    fn retire(&mut self, old: &Passphrase, keep: &Passphrase, keep_slot: u32) -> Result<Vec<u32>, Error> {
        let mut removed = Vec::new();
        let ids: Vec<u32> =
            self.volume.keyslots().into_iter().map(|(id, _)| id).filter(|id| *id != keep_slot).collect();
        for id in ids {
            let wiped = self.volume.keyslot_wiped(id)?;
            if !wiped {
                if same(old, keep) || self.volume.unlock_keyslot(id, old.expose())?.is_none() {
                    continue;
                }
                self.volume.wipe_keyslot(id)?;
                self.step(Step::OldKeyslotWiped)?;
            }
            self.volume.remove_keyslot(id)?;
            removed.push(id);
            self.step(Step::OldKeyslotRemoved)?;
        }
        Ok(removed)
    }
}

fn same(a: &Passphrase, b: &Passphrase) -> bool {
    crate::crypto::secret::passphrases_match(a, b)
}

/// A new passphrase as text: standard base64 of 32 random bytes (QEMU, OpenStack and cryptsetup key files all
/// take it as it is).
pub fn generate_passphrase() -> Passphrase {
    let random = zeroize::Zeroizing::new(crate::crypto::random::bytes::<32>());
    Passphrase::new(crate::crypto::encoding::b64_encode(&random[..]).into_bytes())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::volume::keystore::MemoryStore;
    use std::collections::BTreeMap;

    /// An in-memory LUKS header: slot id → passphrase; "KDF" is a label copied to new slots. A wiped slot's
    /// passphrase is empty.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct FakeVolume {
        pub slots: BTreeMap<u32, (Vec<u8>, &'static str)>,
    }

    const WIPED: &[u8] = b"";

    impl FakeVolume {
        pub fn with(slots: &[(u32, &[u8], &'static str)]) -> Self {
            Self { slots: slots.iter().map(|(id, key, kdf)| (*id, (key.to_vec(), *kdf))).collect() }
        }
        pub fn opens(&self, key: &[u8]) -> bool {
            self.slots.values().any(|(k, _)| k == key)
        }
    }

    impl Keyslots for FakeVolume {
        type VolumeKey = ();
        type Kdf = &'static str;
        fn reload(&mut self) -> Result<(), Error> {
            Ok(())
        }
        fn keyslots(&self) -> Vec<(u32, &'static str)> {
            self.slots.iter().map(|(id, (_, kdf))| (*id, *kdf)).collect()
        }
        fn unlock(&self, passphrase: &[u8]) -> Result<Option<(u32, ())>, Error> {
            Ok(self.slots.iter().find(|(_, (k, _))| k == passphrase).map(|(id, _)| (*id, ())))
        }
        fn unlock_keyslot(&self, id: u32, passphrase: &[u8]) -> Result<Option<()>, Error> {
            Ok(self.slots.get(&id).filter(|(k, _)| k == passphrase).map(|_| ()))
        }
        fn add_keyslot(&mut self, _: &(), passphrase: &[u8], kdf: &&'static str) -> Result<u32, Error> {
            let id = (0..32).find(|id| !self.slots.contains_key(id)).expect("a free slot");
            self.slots.insert(id, (passphrase.to_vec(), kdf));
            Ok(id)
        }
        fn wipe_keyslot(&mut self, id: u32) -> Result<(), Error> {
            assert!(self.slots.len() > 1, "the engine never wipes the last keyslot");
            self.slots.get_mut(&id).expect("an active slot").0 = WIPED.to_vec();
            Ok(())
        }
        fn keyslot_wiped(&self, id: u32) -> Result<bool, Error> {
            Ok(self.slots.get(&id).is_some_and(|(k, _)| k == WIPED))
        }
        fn remove_keyslot(&mut self, id: u32) -> Result<(), Error> {
            assert!(self.slots.len() > 1, "the engine never removes the last keyslot");
            self.slots.remove(&id);
            Ok(())
        }
    }

    fn key(text: &str) -> Passphrase {
        Passphrase::new(text.as_bytes().to_vec())
    }

    fn counter() -> impl Fn() -> Passphrase {
        let next = std::cell::Cell::new(0);
        move || {
            next.set(next.get() + 1);
            key(&format!("generated-{}", next.get()))
        }
    }

    fn run_all(volume: &mut FakeVolume, store: &MemoryStore, requested: Option<&Passphrase>) -> Outcome {
        rotate(volume, store, requested, &counter(), &mut |_| ControlFlow::Continue(())).unwrap()
    }

    #[test]
    fn rotation_replaces_the_old_slot_keeps_others_and_copies_the_kdf() {
        let mut volume = FakeVolume::with(&[(3, b"old", "argon2id-4"), (5, b"recovery", "pbkdf2")]);
        let store = MemoryStore::with_current(b"old");
        let outcome = run_all(&mut volume, &store, None);
        assert_eq!(
            outcome,
            Outcome {
                resumed: false,
                unchanged: false,
                keyslot: 0,
                removed: vec![3],
                took_over: None,
                release_failed: None
            }
        );
        assert_eq!(volume, FakeVolume::with(&[(0, b"generated-1", "argon2id-4"), (5, b"recovery", "pbkdf2")]));
        assert_eq!(store.snapshot(), (Some(b"generated-1".to_vec()), None, None));
    }

    #[test]
    fn a_requested_key_that_is_already_current_changes_nothing() {
        let mut volume = FakeVolume::with(&[(1, b"k", "p")]);
        let store = MemoryStore::with_current(b"k");
        let outcome = run_all(&mut volume, &store, Some(&key("k")));
        assert!(outcome.unchanged);
        assert_eq!(volume, FakeVolume::with(&[(1, b"k", "p")]));
    }

    #[test]
    fn a_wrong_stored_key_changes_nothing() {
        let mut volume = FakeVolume::with(&[(0, b"real", "p")]);
        let store = MemoryStore::with_current(b"wrong");
        let err = rotate(&mut volume, &store, None, &counter(), &mut |_| ControlFlow::Continue(())).unwrap_err();
        assert!(matches!(err, Error::NoKeyslotOpens));
        assert_eq!(volume, FakeVolume::with(&[(0, b"real", "p")]));
        assert_eq!(store.snapshot(), (Some(b"wrong".to_vec()), None, None));
    }

    /// Every crash point of every occurrence: the store's current key opens the volume, and one rerun completes
    /// the rotation that was interrupted (not a second one).
    #[test]
    fn every_crash_point_keeps_the_current_key_working_and_a_rerun_completes() {
        for requested in [None, Some(key("chosen"))] {
            let mut stops = 0;
            for crash_at in 1.. {
                let mut volume = FakeVolume::with(&[(2, b"old", "kdf"), (7, b"recovery", "kdf")]);
                let store = MemoryStore::with_current(b"old");
                let generate = counter();
                let mut seen = 0;
                let result = rotate(&mut volume, &store, requested.as_ref(), &generate, &mut |_| {
                    seen += 1;
                    if seen == crash_at { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
                });
                let Err(Error::Interrupted(step)) = result else { break };
                stops += 1;
                let current = store.snapshot().0.unwrap();
                assert!(volume.opens(&current), "after {step}: the current key opens no slot");
                assert!(volume.opens(b"recovery"), "after {step}: someone else's slot was removed");
                if step != Step::PreviousForgotten {
                    let outcome =
                        rotate(&mut volume, &store, requested.as_ref(), &generate, &mut |_| ControlFlow::Continue(()))
                            .unwrap();
                    let resumed_or_fresh = if step == Step::Locked { !outcome.resumed } else { outcome.resumed };
                    assert!(resumed_or_fresh, "after {step}: {outcome:?}");
                }
                let (current, pending, previous) = store.snapshot();
                let current = current.unwrap();
                assert!(pending.is_none() && previous.is_none(), "after {step}: the store is not settled");
                assert!(volume.opens(&current) && !volume.opens(b"old"), "after {step}: not complete");
                assert_eq!(volume.slots.len(), 2, "after {step}: {volume:?}");
                let expected = requested.as_ref().map_or(&b"generated-1"[..], |k| k.expose());
                assert_eq!(current, expected, "after {step}: rotated twice or to the wrong key");
            }
            assert_eq!(stops, Step::ALL.len(), "one stop per step (one old keyslot)");
        }
    }

    /// A slot an interrupted removal left wiped is reclaimed by the next run; intact slots no stored key opens
    /// (someone else's) stay.
    #[test]
    fn a_wiped_slot_left_by_a_crash_is_removed_and_only_it() {
        let mut volume = FakeVolume::with(&[(0, b"cur", "p"), (3, WIPED, "p"), (5, b"clevis", "p")]);
        let store = MemoryStore::with_current(b"cur");
        store.set_previous(b"old");
        let outcome = run_all(&mut volume, &store, None);
        assert_eq!(
            outcome,
            Outcome {
                resumed: true,
                unchanged: false,
                keyslot: 0,
                removed: vec![3],
                took_over: None,
                release_failed: None
            }
        );
        assert_eq!(volume, FakeVolume::with(&[(0, b"cur", "p"), (5, b"clevis", "p")]));
        assert_eq!(store.snapshot(), (Some(b"cur".to_vec()), None, None));
    }

    #[test]
    fn a_previous_key_whose_slots_are_gone_is_forgotten_as_the_last_step() {
        let mut volume = FakeVolume::with(&[(0, b"cur", "p")]);
        let store = MemoryStore::with_current(b"cur");
        store.set_previous(b"long-gone");
        let outcome = run_all(&mut volume, &store, None);
        assert_eq!(
            outcome,
            Outcome {
                resumed: true,
                unchanged: false,
                keyslot: 0,
                removed: vec![],
                took_over: None,
                release_failed: None
            }
        );
        assert_eq!(volume, FakeVolume::with(&[(0, b"cur", "p")]));
        assert_eq!(store.snapshot(), (Some(b"cur".to_vec()), None, None));
        assert!(!run_all(&mut volume, &store, None).resumed, "the next run rotates");
    }

    #[test]
    fn generated_passphrases_are_text_of_32_random_bytes() {
        let a = generate_passphrase();
        assert_eq!(a.len(), 44);
        assert!(a.expose().iter().all(|b| b.is_ascii_graphic()));
        assert!(!same(&a, &generate_passphrase()));
    }
}
