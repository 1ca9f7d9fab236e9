//! Every environment variable cryptadm reads, declared once with what it means.

/// Path of a file holding the passphrase (same as `--passphrase-file`).
pub const CRYPTADM_PASSPHRASE_FILE: &str = "CRYPTADM_PASSPHRASE_FILE";
/// The passphrase itself. For pipelines whose secret store exports variables; prefer a file.
pub const CRYPTADM_PASSPHRASE: &str = "CRYPTADM_PASSPHRASE";
/// Directories searched for provider plugins, before the system plugin directories.
pub const PATH: &str = "PATH";
/// ocicrypt's key-provider configuration file (JSON), read by the image commands.
pub const OCICRYPT_KEYPROVIDER_CONFIG: &str = "OCICRYPT_KEYPROVIDER_CONFIG";
/// Where gpg keeps its keyring (pgp: recipients).
pub const GNUPGHOME: &str = "GNUPGHOME";
/// Run-time directory of `volume rotate`/`volume serve`: lock files per volume id go to `<dir>/volume-locks`.
pub const CRYPTADM_RUN_DIR: &str = "CRYPTADM_RUN_DIR";
/// Test builds with the `fault-injection` feature only: the rotation step after which the process aborts.
pub const CRYPTADM_FAULT_POINT: &str = "CRYPTADM_FAULT_POINT";
/// Any non-empty value turns colour off (unless `--color always`).
pub const NO_COLOR: &str = "NO_COLOR";

/// (name, meaning) for the man pages' ENVIRONMENT section.
pub const DOCUMENTED: &[(&str, &str)] = &[
    (
        CRYPTADM_PASSPHRASE_FILE,
        "Path of a file holding the passphrase, byte for byte (`-`: standard input). Same as --passphrase-file, which wins over it.",
    ),
    (
        CRYPTADM_PASSPHRASE,
        "The passphrase itself, used when neither --passphrase-file nor CRYPTADM_PASSPHRASE_FILE is given. Its value is never printed; prefer a file, which does not show up in /proc/PID/environ.",
    ),
    (
        PATH,
        "Directories searched for provider plugins (machineadm-plugin-encryption-provider-NAME), before /usr/libexec/machineadm and /usr/local/libexec/machineadm, and for key-store plugins (cryptadm-plugin-kms-NAME).",
    ),
    (
        OCICRYPT_KEYPROVIDER_CONFIG,
        "Key-provider configuration of the image commands, in ocicrypt's JSON format ({\"key-providers\": {NAME: {\"cmd\": {\"path\": …, \"args\": […]}}}}); a missing file means no providers.",
    ),
    (GNUPGHOME, "GnuPG home directory where pgp: recipients are looked up, unless --gpg-homedir is given."),
    (
        CRYPTADM_RUN_DIR,
        "Run-time directory of the volume commands (default /run/cryptadm); the lock file of each volume id is <dir>/volume-locks/<volume-id>.lock.",
    ),
    (NO_COLOR, "When set and not empty, no colour is used unless --color always is given."),
];
