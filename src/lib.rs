//! cryptadm: the encryption jobs that Kubernetes, CSI, Cluster API and OpenStack design documents describe
//! but leave to glue scripts, as one binary.
//!
//! The crate is a library with a thin binary on top. The *core* modules ([`crypto`], [`machineadm`], [`ocicrypt`],
//! [`render`], [`atomic`], [`bounded`], [`exit`], [`interact`], [`process`]) never print, prompt, exit or read the
//! environment: anything that needs the operator goes through the [`interact::Interaction`] trait. The [`cmd`] module is the command
//! line: it parses arguments, resolves them into settings (secrets read, paths checked), calls the core and
//! renders the result. Data flows one way: argv → settings → core → result → renderer.

pub mod atomic;
pub mod bounded;
pub mod cmd;
pub mod crypto;
pub mod deadline;
pub mod disk;
pub mod exit;
pub mod interact;
pub mod kms;
pub mod luks;
pub mod machineadm;
pub mod oci;
pub mod ocicrypt;
pub mod openstack;
pub mod process;
pub mod proxy;
pub mod qcow2;
pub mod redact;
pub mod render;
pub mod volume;
