//! Completions, man pages and the README's exit-code table are generated from the clap tree and committed.
//! This test fails when a committed copy is stale; `CRYPTADM_BLESS=1 cargo test --test cli generated`
//! rewrites them.

use clap_mangen::roff::{Roff, bold, roman};
use cryptadm::cmd::{self, env_vars};
use std::path::{Path, PathBuf};

const BLESS_COMMAND: &str = "CRYPTADM_BLESS=1 cargo test --test cli generated";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn completions() -> Vec<(PathBuf, Vec<u8>)> {
    use clap_complete::Shell;
    let shells = [
        (Shell::Bash, "cryptadm.bash"),
        (Shell::Zsh, "_cryptadm"),
        (Shell::Fish, "cryptadm.fish"),
        (Shell::Elvish, "cryptadm.elv"),
        (Shell::PowerShell, "_cryptadm.ps1"),
    ];
    shells
        .into_iter()
        .map(|(shell, name)| {
            let mut bytes = Vec::new();
            clap_complete::generate(shell, &mut cmd::command(), "cryptadm", &mut bytes);
            (PathBuf::from("completions").join(name), bytes)
        })
        .collect()
}

fn man_pages() -> Vec<(PathBuf, Vec<u8>)> {
    let mut root = cmd::command().disable_help_subcommand(true);
    root.build();
    let mut pages = Vec::new();
    collect_pages(&root, &mut pages);
    let names: Vec<String> = pages.iter().map(|c| c.get_display_name().unwrap_or(c.get_name()).to_owned()).collect();
    pages
        .iter()
        .map(|page| (PathBuf::from("man").join(format!("{}.1", display_name(page))), man_page(page, &names)))
        .collect()
}

fn collect_pages(command: &clap::Command, pages: &mut Vec<clap::Command>) {
    pages.push(command.clone());
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect_pages(sub, pages);
    }
}

fn display_name(command: &clap::Command) -> String {
    command.get_display_name().unwrap_or(command.get_name()).to_owned()
}

fn man_page(command: &clap::Command, all_pages: &[String]) -> Vec<u8> {
    let man = clap_mangen::Man::new(command.clone()).date("").manual("cryptadm manual");
    let mut out = Vec::new();
    man.render_title(&mut out).unwrap();
    man.render_name_section(&mut out).unwrap();
    man.render_synopsis_section(&mut out).unwrap();
    man.render_description_section(&mut out).unwrap();
    if command.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out).unwrap();
    }
    if command.has_subcommands() {
        man.render_subcommands_section(&mut out).unwrap();
    }
    let path = command.get_bin_name().unwrap_or(command.get_name());
    let mut roff = Roff::new();
    if let Some(examples) = cmd::examples(path) {
        roff.control("SH", ["EXAMPLES"]).control("nf", []);
        for line in examples.lines().skip_while(|l| l.starts_with("Examples:")) {
            roff.text([roman(line.strip_prefix("  ").unwrap_or(line))]);
        }
        roff.control("fi", []);
    }
    key_references(command, &mut roff);
    roff.control("SH", ["EXIT STATUS"]);
    for (status, meaning, example) in cryptadm::exit::TABLE {
        roff.control("TP", [])
            .text([bold(status.code().to_string())])
            .text([roman(format!("{meaning}; e.g. {example}"))]);
    }
    roff.control("SH", ["ENVIRONMENT"]);
    for (name, meaning) in env_vars::DOCUMENTED {
        roff.control("TP", []).text([bold(*name)]).text([roman(*meaning)]);
    }
    roff.control("SH", ["SEE ALSO"]);
    let own = display_name(command);
    let related: Vec<String> = all_pages.iter().filter(|p| **p != own).map(|p| format!("{p}(1)")).collect();
    roff.text([roman(related.join(", "))]);
    roff.to_writer(&mut out).unwrap();
    man.render_version_section(&mut out).unwrap();
    out
}

/// KEY REFERENCES: for each flag of the command that takes key references, every form the backend table of
/// src/kms/backends.rs accepts there.
fn key_references(command: &clap::Command, roff: &mut Roff) {
    use cryptadm::kms::backends::{self, Use};
    let uses: Vec<Use> = Use::ALL
        .into_iter()
        .filter(|usage| {
            let path = command.get_bin_name().unwrap_or(command.get_name());
            usage.commands().iter().any(|noun| path.starts_with(noun))
                && command
                    .get_arguments()
                    .any(|a| !a.is_hide_set() && a.get_long().is_some_and(|l| usage.longs().contains(&l)))
        })
        .collect();
    if uses.is_empty() {
        return;
    }
    roff.control("SH", ["KEY REFERENCES"]);
    for usage in uses {
        let flags: Vec<String> = usage.longs().iter().map(|l| format!("--{l}")).collect();
        roff.control("TP", []).text([bold(flags.join(", "))]);
        for backend in backends::BACKENDS.iter().filter(|b| b.can(usage)) {
            let forms: Vec<&str> = backend.syntaxes(usage).collect();
            roff.text([roman(format!("{}: {} ({})", backend.title, forms.join(", "), backend.help))]);
            roff.control("br", []);
        }
    }
}

const KEY_MANAGERS: &str = "docs/key-managers.md";
const BACKENDS_START: &str = "<!-- backends:start (generated from src/kms/backends.rs) -->\n";
const BACKENDS_END: &str = "<!-- backends:end -->";

/// docs/key-managers.md with the table of every reference form, generated from the backend table.
fn key_managers_with_table(text: &str) -> String {
    let table = format!(
        "{}\n**What each flag takes** (every backend that fits it):\n\n{}",
        cryptadm::kms::backends::markdown_table(),
        cryptadm::kms::backends::markdown_uses()
    );
    let start =
        text.find(BACKENDS_START).expect("docs/key-managers.md has the backends table markers") + BACKENDS_START.len();
    let end = text.find(BACKENDS_END).expect("docs/key-managers.md has the backends table end marker");
    format!("{}{table}{}", &text[..start], &text[end..])
}

const TABLE_START: &str = "<!-- exit-codes:start (generated from src/exit.rs) -->\n";
const TABLE_END: &str = "<!-- exit-codes:end -->";

fn readme_with_table(readme: &str) -> String {
    let mut table = String::from("| code | meaning | examples |\n| --- | --- | --- |\n");
    for (status, meaning, example) in cryptadm::exit::TABLE {
        table.push_str(&format!("| {} | {meaning} | {example} |\n", status.code()));
    }
    let start = readme.find(TABLE_START).expect("README.md has the exit-code table markers") + TABLE_START.len();
    let end = readme.find(TABLE_END).expect("README.md has the exit-code table end marker");
    format!("{}{table}{}", &readme[..start], &readme[end..])
}

fn expected_files() -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = completions();
    files.extend(man_pages());
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    files.push((PathBuf::from("README.md"), readme_with_table(&readme).into_bytes()));
    let key_managers = std::fs::read_to_string(repo().join(KEY_MANAGERS)).expect(KEY_MANAGERS);
    files.push((PathBuf::from(KEY_MANAGERS), key_managers_with_table(&key_managers).into_bytes()));
    files
}

/// Files in a generated directory that nothing generates any more.
fn stale_extras(expected: &[(PathBuf, Vec<u8>)]) -> Vec<PathBuf> {
    let mut extras = Vec::new();
    for dir in ["completions", "man"] {
        let Ok(entries) = std::fs::read_dir(repo().join(dir)) else { continue };
        for entry in entries {
            let relative = Path::new(dir).join(entry.unwrap().file_name());
            if !expected.iter().any(|(p, _)| *p == relative) {
                extras.push(relative);
            }
        }
    }
    extras
}

/// The backend table in docs/key-managers.md is the one src/kms/backends.rs generates (also in a test-vectors
/// build: the table does not depend on features).
#[test]
fn key_managers_table_is_current() {
    let text = std::fs::read_to_string(repo().join(KEY_MANAGERS)).expect(KEY_MANAGERS);
    if std::env::var_os("CRYPTADM_BLESS").is_some() {
        std::fs::write(repo().join(KEY_MANAGERS), key_managers_with_table(&text)).unwrap();
        return;
    }
    assert!(
        text == key_managers_with_table(&text),
        "docs/key-managers.md's backend table is stale; regenerate it with: {BLESS_COMMAND}"
    );
    for backend in cryptadm::kms::backends::BACKENDS {
        assert!(text.contains(&format!("[{}]({})", backend.title, backend.doc)), "{} missing", backend.name);
    }
}

#[test]
#[cfg_attr(
    feature = "test-vectors",
    ignore = "a test-vectors build completes its hidden fixed-nonce flags; .ci/run compares in its LGPL-free build"
)]
fn generated_files_are_current() {
    let expected = expected_files();
    let extras = stale_extras(&expected);
    if std::env::var_os("CRYPTADM_BLESS").is_some() {
        for (relative, bytes) in &expected {
            let path = repo().join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        for extra in extras {
            std::fs::remove_file(repo().join(extra)).unwrap();
        }
        return;
    }
    let stale: Vec<String> = expected
        .iter()
        .filter(|(relative, bytes)| std::fs::read(repo().join(relative)).ok().as_ref() != Some(bytes))
        .map(|(relative, _)| relative.display().to_string())
        .chain(extras.iter().map(|p| format!("{} (no longer generated)", p.display())))
        .collect();
    assert!(stale.is_empty(), "stale generated files: {}\nregenerate them with: {BLESS_COMMAND}", stale.join(", "));
}

#[test]
fn every_command_has_a_man_page_with_the_required_sections() {
    let pages = man_pages();
    let names: Vec<String> = pages.iter().map(|(p, _)| p.display().to_string()).collect();
    for name in
        ["man/cryptadm.1", "man/cryptadm-bootstrap.1", "man/cryptadm-bootstrap-seal.1", "man/cryptadm-bootstrap-open.1"]
    {
        assert!(names.contains(&name.to_owned()), "{name} missing from {names:?}");
    }
    for (path, bytes) in &pages {
        let text = String::from_utf8_lossy(bytes);
        for section in [".SH \"EXIT STATUS\"", ".SH ENVIRONMENT", ".SH \"SEE ALSO\""] {
            assert!(text.contains(section), "{} lacks {section}", path.display());
        }
        assert!(text.contains("CRYPTADM_PASSPHRASE_FILE"), "{} lacks the environment", path.display());
    }
    let seal = &pages.iter().find(|(p, _)| p.ends_with("cryptadm-bootstrap-seal.1")).unwrap().1;
    assert!(String::from_utf8_lossy(seal).contains(".SH EXAMPLES"));
}
