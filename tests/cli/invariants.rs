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

/// A secret on argv is visible to every user through /proc: arguments about secrets may only name where the
/// secret is (a file, a URI), never carry it.
#[test]
fn no_argument_takes_a_secret_value() {
    const SECRET_WORDS: &[&str] = &["passphrase", "password", "secret", "key", "token"];
    const LOCATIONS: &[&str] = &["FILE", "PATH", "URI", "DIR"];
    // cryptsetup's and Glance's names with "key" in them that carry no secret: a key length in bits, the
    // key manager's id of the secret (where it is, not what it is), and what to do with it on image deletion;
    // `disk convert`'s choices of which key and what kind of secret (closed value lists, never a secret).
    const NOT_SECRETS: &[&str] =
        &["key_size", "key_id", "key_deletion_policy", "encryption_key", "secret_type", "source_secret_type"];
    for command in all_commands() {
        for arg in command.get_arguments() {
            let id = arg.get_id().as_str().to_lowercase();
            if !SECRET_WORDS.iter().any(|w| id.contains(w)) || NOT_SECRETS.contains(&id.as_str()) {
                continue;
            }
            let takes_value = matches!(arg.get_action(), ArgAction::Set | ArgAction::Append);
            let names_location =
                arg.get_value_names().is_some_and(|names| names.iter().all(|n| LOCATIONS.contains(&n.as_str())));
            assert!(
                !takes_value || names_location,
                "`{}` --{id} looks like it takes a secret value",
                command.get_name()
            );
        }
    }
}
