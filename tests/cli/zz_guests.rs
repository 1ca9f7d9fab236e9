//! The guest tests: each boots a real kernel under QEMU TCG, minutes of CPU per boot. The module is named to sort
//! last, because libtest hands tests to its threads in name order: [`crate::support_guest::warm_up`] starts every
//! boot in the background at the run's first test, the test threads meanwhile run the rest of the suite, and by
//! the time they reach these tests the boots are done. Sorted among the others, the threads reached a boot that
//! had not finished, and all of them waited on it while the CPU stood half idle.

pub mod guest_aws;
pub mod guest_dmcrypt;
pub mod guest_first_boot;
pub mod guest_harness;
pub mod guest_ignition;
pub mod guest_nova;
pub mod guest_tang;
pub mod guest_vault;
