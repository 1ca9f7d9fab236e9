//! OpenStack services other than the key manager: `clouds.yaml`, Glance images, and publishing an encrypted image
//! (secret, image, consumer) as one undoable step. Keystone sessions are `kms::keystone` and Barbican is
//! `kms::barbican` (the key-manager layer needs them, and this module uses that layer, never the other way).
//! Errors are [`crate::kms::Error`]s: the same failures (denied, not found, unavailable, misconfigured) with the
//! same exit codes.

pub mod clouds;
pub mod glance;
pub mod publish;
