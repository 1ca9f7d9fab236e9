//! Rules every command and argument of the clap tree must follow.

use clap::{ArgAction, Command};

fn all_commands() -> Vec<Command> {
    fn walk(command: &Command, out: &mut Vec<Command>) {
        out.push(command.clone());
        command.get_subcommands().filter(|sub| sub.get_name() != "help").for_each(|sub| walk(sub, out));
    }
    let mut root = cryptadm::cmd::command();
    root.build();
    let mut out = Vec::new();
    walk(&root, &mut out);
    out
}

#[test]
fn clap_tree_is_consistent() {
    cryptadm::cmd::command().debug_assert();
}

#[test]
fn every_command_and_argument_is_documented() {
    for command in all_commands() {
        let name = command.get_bin_name().unwrap_or(command.get_name()).to_owned();
        assert!(command.get_about().is_some(), "`{name}` has no about text");
        for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
            assert!(arg.get_help().is_some(), "`{name} --{}` has no help text", arg.get_id());
        }
    }
}

#[test]
fn leaf_commands_have_examples() {
    for command in all_commands().iter().filter(|c| !c.has_subcommands()) {
        let path = command.get_bin_name().unwrap_or(command.get_name());
        assert!(cryptadm::cmd::examples(path).is_some(), "`{path}` has no examples");
    }
}

/// A secret on argv is visible to every user through /proc: arguments about secrets may only say where the
/// secret is (a file, a directory, a URI), never carry it. Checked by what each flag accepts, not by its value
/// name: a flag whose parser yields a path names a location; one that takes text must be listed in
/// `TEXT_ABOUT_SECRETS` with the form of it that would carry a secret, and that form is run and must be refused.
#[test]
fn no_argument_takes_a_secret_value() {
    use std::any::TypeId;
    use std::path::PathBuf;
    const SECRET_WORDS: &[&str] = &["passphrase", "password", "secret", "key", "token", "creds"];
    // Names with a secret word that carry no secret: a key length, the key manager's id of a secret (where it
    // is, not what it is), what to do with it on image deletion; closed value lists (which key, what kind of
    // secret); a key store URI (a location, checked below like a path).
    const NOT_SECRETS: &[&str] =
        &["key_size", "key_id", "key_deletion_policy", "encryption_key", "secret_type", "source_secret_type"];
    // Text-valued flags about secrets: each with an argv whose value would carry a secret inline.
    const TEXT_ABOUT_SECRETS: &[(&str, &[&str])] = &[
        // ocicrypt's FILE:PASSWORD and FILE:pass=PASSWORD forms (FILE exists: Cargo.toml)
        ("keys", &["image", "decrypt", "--key", "Cargo.toml:hunter2", "oci:src", "oci:dst"]),
        ("keys", &["image", "decrypt", "--key", "Cargo.toml:pass=hunter2", "oci:src", "oci:dst"]),
        ("keys", &["image", "authorize", "--key", "Cargo.toml:hunter2", "oci:src"]),
        (
            "keys",
            &["image", "encrypt", "--recipient", "jwe:Cargo.toml", "--key", "Cargo.toml:hunter2", "oci:a", "oci:b"],
        ),
        // registry credentials: USER only, the password from a file
        (
            "src_creds",
            &["image", "decrypt", "--src-creds", "user:hunter2", "--key", "Cargo.toml", "docker://h/r", "oci:d"],
        ),
        (
            "dest_creds",
            &["image", "decrypt", "--dest-creds", "user:hunter2", "--key", "Cargo.toml", "oci:s", "docker://h/r"],
        ),
        ("creds", &["image", "authorize", "--creds", "user:hunter2", "--key", "Cargo.toml", "docker://h/r"]),
        ("creds", &["image", "inspect", "--creds", "user:hunter2", "docker://h/r"]),
        // where a provider finds the passphrase: a URI, which the file provider requires to be file://
        (
            "passphrase_uri",
            &[
                "bootstrap",
                "seal",
                "--in",
                "Cargo.toml",
                "--provider",
                "file",
                "--passphrase-uri",
                "hunter2",
                "--out",
                "/nonexistent/x",
            ],
        ),
        // a key store is a location: a passphrase typed in its place names no store
        (
            "key_store",
            &["volume", "rotate", "--volume-id", "v", "--volume-path", "Cargo.toml", "--key-store", "hunter2"],
        ),
        ("key_store", &["volume", "serve", "--key-store", "hunter2", "--endpoint", "unix:///nonexistent/x.sock"]),
        // a Barbican secret is named by UUID or href: an href with a password in it is refused unparsed
        (
            "secret",
            &[
                "disk",
                "luks-format",
                "--key-manager",
                "barbican",
                "--secret",
                "https://admin:hunter2@kms.example/v1/secrets/0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9",
                "--size",
                "1M",
                "/nonexistent/x",
            ],
        ),
        // the source image's Barbican secret, named as --secret is: an href with a password in it is refused unparsed
        (
            "source_secret",
            &[
                "disk",
                "convert",
                "--encryption-key",
                "new",
                "--key-manager",
                "barbican",
                "--source-secret",
                "https://admin:hunter2@kms.example/v1/secrets/0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9",
                "Cargo.toml",
                "/nonexistent/x",
            ],
        ),
        // the Transit key that wraps a vault-kv:// store's values: a reference, so a passphrase there is refused
        ("key_wrap", &["volume", "rotate", "--volume-id", "v", "--volume-path", "Cargo.toml", "--key-wrap", "hunter2"]),
        ("key_wrap", &["volume", "rewrap", "--key-store", "vault-kv://kv/x", "--key-wrap", "hunter2"]),
    ];
    for command in all_commands() {
        for arg in command.get_arguments() {
            let id = arg.get_id().as_str().to_lowercase();
            if !SECRET_WORDS.iter().any(|w| id.contains(w)) || NOT_SECRETS.contains(&id.as_str()) {
                continue;
            }
            if !matches!(arg.get_action(), ArgAction::Set | ArgAction::Append) {
                continue; // a switch carries no value
            }
            let parser = arg.get_value_parser();
            if parser.type_id() == TypeId::of::<PathBuf>() || parser.possible_values().is_some() {
                continue; // a path, or one of a closed list
            }
            assert!(
                TEXT_ABOUT_SECRETS.iter().any(|(listed, _)| *listed == id),
                "`{} --{}` takes text: list it in TEXT_ABOUT_SECRETS with the form that would carry a secret",
                command.get_bin_name().unwrap_or(command.get_name()),
                arg.get_long().unwrap_or(&id)
            );
        }
    }
    for (id, argv) in TEXT_ABOUT_SECRETS {
        let output = crate::support::cryptadm()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(*argv)
            .env_remove("CRYPTADM_PASSPHRASE")
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            matches!(output.status.code(), Some(2 | 3 | 5)),
            "--{id}: `{}` was not refused: {stderr}",
            argv.join(" ")
        );
        assert!(!stderr.contains("hunter2") || stderr.contains("`hunter2`"), "--{id} echoed a secret: {stderr}");
    }
}

/// clap wraps help at 100 columns: an example longer than that would be broken across lines, and pasting it into
/// a shell would run half a command. Every example line fits, and appears whole in the rendered help.
#[test]
fn examples_never_wrap() {
    const WIDTH: usize = 100;
    for command in all_commands() {
        let path = command.get_bin_name().unwrap_or(command.get_name()).to_owned();
        let Some(examples) = cryptadm::cmd::examples(&path) else { continue };
        let help = command.clone().term_width(WIDTH).render_long_help().to_string();
        if !help.contains(examples.lines().nth(1).unwrap_or_default()) {
            continue; // a group that shows its subcommands' examples only there
        }
        for line in examples.lines() {
            let width = line.chars().count();
            assert!(width <= WIDTH, "`{path}`: an example line of {width} columns wraps:\n{line}");
            assert!(help.contains(line), "`{path}`: the help does not show this example line whole:\n{line}");
        }
    }
}

/// Positional arguments are listed under "Arguments" (never under the heading of a flag group declared before
/// them), in the order they are typed: SRC before DST.
#[test]
fn positional_arguments_are_under_arguments_in_typing_order() {
    for command in all_commands() {
        let path = command.get_bin_name().unwrap_or(command.get_name()).to_owned();
        for arg in command.get_positionals() {
            assert_eq!(arg.get_help_heading(), None, "`{path}` lists {} under a flag heading", arg.get_id());
        }
        let names: Vec<String> =
            command.get_positionals().map(|a| a.get_value_names().unwrap_or_default()[0].to_string()).collect();
        if let (Some(src), Some(dst)) = (
            names.iter().position(|n| n == "SRC" || n == "SOURCE"),
            names.iter().position(|n| n == "DST" || n == "DESTINATION"),
        ) {
            assert!(src < dst, "`{path}`: {names:?}");
        }
        let help = command.clone().render_help().to_string();
        if let (Some(arguments), Some(options)) = (help.find("\nArguments:\n"), help.find("\nOptions:\n")) {
            assert!(arguments < options, "`{path}`: Arguments come after Options:\n{help}");
        }
    }
}

/// The image commands share flag groups (Selection, Keys, registry access): each group has the same place in
/// every command's help, so an operator finds a flag where they found it last time.
#[test]
fn image_commands_show_shared_headings_in_one_order() {
    let image =
        all_commands().into_iter().filter(|c| c.get_bin_name().is_some_and(|n| n.starts_with("cryptadm image ")));
    let mut orders: Vec<(String, Vec<String>)> = Vec::new();
    for command in image {
        let help = command.clone().render_help().to_string();
        let headings = help
            .lines()
            .filter(|l| !l.starts_with(' ') && l.ends_with(':') && !l.starts_with("Usage"))
            .map(str::to_owned)
            .collect();
        orders.push((command.get_bin_name().unwrap().to_owned(), headings));
    }
    for (a, a_order) in &orders {
        for (b, b_order) in &orders {
            let common_a: Vec<&String> = a_order.iter().filter(|h| b_order.contains(h)).collect();
            let common_b: Vec<&String> = b_order.iter().filter(|h| a_order.contains(h)).collect();
            assert_eq!(common_a, common_b, "`{a}` and `{b}` order their shared headings differently");
        }
    }
}
