//! OpenStack services other than the key manager (Barbican is `kms::barbican`): Keystone authentication and
//! catalog, `clouds.yaml`, and Glance images. Errors are [`crate::kms::Error`]s: the same failures (denied, not
//! found, unavailable, misconfigured) with the same exit codes.

pub mod clouds;
pub mod glance;
pub mod keystone;
pub mod publish;
