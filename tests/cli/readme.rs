//! The README's examples run as written, and the documentation stays inside the repository (issue 36).
//!
//! Every ```` ```sh ```` block of README.md is marked: ```` ```sh runnable ```` blocks run, in order, with
//! `bash -euo pipefail` in one scratch directory (the repository's `examples/`, `man/` and `completions/`
//! copied in, the OCI layout `app` with tag `v1` made first, the built binary first on PATH); a block that fails
//! fails the test, naming its line. ```` ```sh checked ```` blocks need what a test cannot have (a cloud, a
//! cluster, a node's /etc, a registry on the Internet): they must parse (`bash -n`), and every `cryptadm`
//! command in them must name real subcommands and flags (its `--help` lists them). An unmarked `sh` block fails.
//! The `sh` blocks of docs/*.md are checked the same way (unmarked there: none of them runs).
//!
//! Links and paths: every Markdown link of README.md and docs/*.md must stay in the repository and name a file
//! (and a heading) that exists; every backquoted path under a top-level directory must exist; no text in the
//! documentation or the source may point at the notes outside the repository.

use crate::support::{Scratch, cryptadm};
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[derive(Debug, PartialEq)]
enum Kind {
    Runnable,
    Checked,
}

struct Block {
    line: usize,
    kind: Kind,
    text: String,
}

/// The README's `sh` blocks; panics on one that is marked neither way.
fn shell_blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, Option<Kind>, String)> = None;
    for (index, line) in markdown.lines().enumerate() {
        match open.take() {
            None => {
                let Some(info) = line.strip_prefix("```") else { continue };
                let mut words = info.split_whitespace();
                let language = words.next().unwrap_or_default();
                let kind = match (language, words.next()) {
                    ("sh" | "bash", Some("runnable")) => Some(Kind::Runnable),
                    ("sh" | "bash", Some("checked")) => Some(Kind::Checked),
                    ("sh" | "bash", other) => {
                        panic!("README.md:{}: a shell block marked {other:?}: mark it runnable or checked", index + 1)
                    }
                    _ => None,
                };
                open = Some((index + 1, kind, String::new()));
            }
            Some((start, kind, text)) if line.starts_with("```") => {
                if let Some(kind) = kind {
                    blocks.push(Block { line: start, kind, text });
                }
            }
            Some((start, kind, mut text)) => {
                text.push_str(line);
                text.push('\n');
                open = Some((start, kind, text));
            }
        }
    }
    assert!(open.is_none(), "README.md: a code block is never closed");
    blocks
}

fn readme() -> String {
    std::fs::read_to_string(repo().join("README.md")).expect("README.md")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn readme_runnable_examples_run_as_written() {
    let work = Scratch::new();
    let dir = work.dir.path();
    for tree in ["examples", "man", "completions"] {
        copy_tree(&repo().join(tree), &dir.join(tree));
    }
    crate::image::fixture(&dir.join("app"), crate::image::TWO_LAYERS);
    let binary = assert_cmd::cargo::cargo_bin("cryptadm");
    let path = format!("{}:{}", binary.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let blocks: Vec<Block> = shell_blocks(&readme()).into_iter().filter(|b| b.kind == Kind::Runnable).collect();
    assert!(blocks.len() >= 8, "the README's runnable examples went missing: {}", blocks.len());
    let mut transcript = String::new();
    for block in &blocks {
        let output = Command::new("bash")
            .args(["-euo", "pipefail", "-c", &block.text])
            .current_dir(dir)
            .env("PATH", &path)
            .env("prefix", dir.join("prefix"))
            .env("NO_COLOR", "1")
            .env_remove("CRYPTADM_PASSPHRASE")
            .env_remove("CRYPTADM_PASSPHRASE_FILE")
            .env_remove("VAULT_ADDR")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "README.md:{}: the example failed ({}):\n{}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
            block.line,
            output.status,
            block.text
        );
        transcript.push_str(&stdout);
        transcript.push_str(&stderr);
    }
    // What the examples say they do, checked with other tools than cryptadm where one exists.
    assert!(dir.join("prefix/share/man/man1/cryptadm-image-encrypt.1").is_file());
    assert!(dir.join("prefix/share/bash-completion/completions/cryptadm").is_file());
    assert!(transcript.contains("sealed and opened in /"), "{transcript}");
    assert!(transcript.contains("loses access: pkcs7 issuer \"CN=bob\""), "{transcript}");
    assert!(transcript.contains("the new key opens it"), "{transcript}");
    let userdata = std::fs::read_to_string(dir.join("userdata")).unwrap();
    assert!(userdata.starts_with("#cloud-config"), "{userdata}");
    let skopeo = Command::new("skopeo")
        .args(["--insecure-policy", "copy", "--decryption-key"])
        .arg(dir.join("carol.pem"))
        .arg("oci:app-enc:v3")
        .arg("oci:carol:v1")
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(skopeo.status.success(), "Carol, kept, decrypts with skopeo: {}", String::from_utf8_lossy(&skopeo.stderr));
    let qemu = Command::new("qemu-img").args(["info", "snap-plain.raw"]).current_dir(dir).output().unwrap();
    assert!(String::from_utf8_lossy(&qemu.stdout).contains("file format: raw"));
}

/// `cryptadm` commands of a block: the subcommand path and the long flags given to it.
fn cryptadm_commands(text: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let joined = text.replace("\\\n", " ");
    let mut commands = Vec::new();
    for line in joined.lines() {
        let line = line.split(" # ").next().unwrap_or_default();
        if line.trim_start().starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        for (start, word) in words.iter().enumerate() {
            if !matches!(*word, "cryptadm" | "(cryptadm" | "$(cryptadm") {
                continue;
            }
            // In command position only (not `bao kv list cryptadm`): first, after an operator, or after
            // environment assignments.
            let before = words[..start].iter().rev().find(|w| !w.contains('=') || w.starts_with('-'));
            if !matches!(before, None | Some(&("|" | "&&" | "||" | ";" | "(" | "then" | "do" | "time" | "!"))) {
                continue;
            }
            let rest = words[start + 1..]
                .iter()
                .take_while(|w| !matches!(**w, "|" | "&&" | "||" | ";" | ")") && !w.starts_with('>'))
                .map(|w| w.trim_end_matches([';', ')']).to_owned());
            let (mut path, mut flags) = (Vec::new(), Vec::new());
            for word in rest {
                if let Some(flag) = word.strip_prefix("--") {
                    flags.push(format!("--{}", flag.split('=').next().unwrap_or_default()));
                } else if flags.is_empty() && path.len() < 2 && !word.starts_with('-') {
                    path.push(word);
                }
            }
            commands.push((path, flags));
        }
    }
    commands
}

/// The `sh` blocks of docs/*.md, unmarked there: they are checked, not run.
fn docs_blocks() -> Vec<(PathBuf, Block)> {
    let mut blocks = Vec::new();
    for file in documentation_files().into_iter().filter(|f| f.starts_with("docs")) {
        let text = std::fs::read_to_string(repo().join(&file)).unwrap();
        let marked = text.replace("```sh\n", "```sh checked\n").replace("```bash\n", "```bash checked\n");
        blocks.extend(shell_blocks(&marked).into_iter().map(|b| (file.clone(), b)));
    }
    blocks
}

#[test]
fn readme_and_docs_examples_parse_and_use_real_flags() {
    let readme_blocks = shell_blocks(&readme());
    assert!(readme_blocks.iter().any(|b| b.kind == Kind::Checked));
    let blocks: Vec<(PathBuf, Block)> =
        readme_blocks.into_iter().map(|b| (PathBuf::from("README.md"), b)).chain(docs_blocks()).collect();
    let mut helps: BTreeMap<Vec<String>, String> = BTreeMap::new();
    let mut checked = 0;
    for (file, block) in &blocks {
        let file = file.display();
        let syntax = Command::new("bash").args(["-n", "-c", &block.text]).output().unwrap();
        assert!(syntax.status.success(), "{file}:{}: {}", block.line, String::from_utf8_lossy(&syntax.stderr));
        for (path, flags) in cryptadm_commands(&block.text) {
            assert_eq!(path.len(), 2, "{file}:{}: `cryptadm {}` names no subcommand", block.line, path.join(" "));
            let help = helps.entry(path.clone()).or_insert_with(|| {
                let output = cryptadm().args(&path).arg("--help").output().unwrap();
                assert!(output.status.success(), "{file}:{}: `cryptadm {}` does not exist", block.line, path.join(" "));
                String::from_utf8(output.stdout).unwrap()
            });
            for flag in flags {
                let listed = help.match_indices(&flag).any(|(at, _)| {
                    let next = help[at + flag.len()..].chars().next();
                    !matches!(next, Some(c) if c.is_ascii_alphanumeric() || c == '-')
                });
                assert!(listed, "{file}:{}: `cryptadm {}` has no flag {flag}", block.line, path.join(" "));
                checked += 1;
            }
        }
    }
    assert!(checked > 20, "only {checked} flags checked: the parser lost the examples");
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(markdown: &str) -> Vec<String> {
    let mut in_code = false;
    let mut out = Vec::new();
    for line in markdown.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with('#') {
            out.push(slug(line.trim_start_matches('#')));
        }
    }
    out
}

/// `a/./b/../c` → `a/c`, without touching the file system; `None` when it climbs above the start.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            Component::Normal(part) => out.push(part),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

fn documentation_files() -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("README.md")];
    for entry in std::fs::read_dir(repo().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            files.push(Path::new("docs").join(name));
        }
    }
    files.sort();
    files
}

/// The notes beside the repository, spelled so that this file does not name them itself.
fn outside_markers() -> Vec<String> {
    let shared = ["sha", "red"].concat();
    vec![format!("../{shared}"), format!("/work/{shared}"), format!("{shared}/spec"), format!("{shared}/design")]
}

#[test]
fn documentation_links_and_paths_stay_in_the_repository() {
    let root = repo();
    let top_dirs = [
        "src/",
        "tests/",
        "scripts/",
        "deploy/",
        "docs/",
        "examples/",
        "fuzz/",
        ".ci/",
        "man/",
        "completions/",
        "proto/",
    ];
    let mut problems = Vec::new();
    let mut links = 0;
    for file in documentation_files() {
        let text = std::fs::read_to_string(root.join(&file)).unwrap();
        let base = file.parent().unwrap().to_path_buf();
        for marker in outside_markers() {
            if text.contains(&marker) {
                problems.push(format!("{}: names `{marker}`, outside the repository", file.display()));
            }
        }
        // Markdown links: [text](target)
        for (at, _) in text.match_indices("](") {
            let target: String = text[at + 2..].chars().take_while(|c| *c != ')' && !c.is_whitespace()).collect();
            if target.starts_with("http://") || target.starts_with("https://") || target.starts_with("mailto:") {
                continue;
            }
            links += 1;
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let resolved = if path.is_empty() { Some(file.clone()) } else { normalize(&base.join(path)) };
            let Some(resolved) = resolved else {
                problems.push(format!("{}: link `{target}` leaves the repository", file.display()));
                continue;
            };
            let name = resolved.to_string_lossy().into_owned();
            if !root.join(&resolved).exists() {
                problems.push(format!("{}: link `{target}`: no such file", file.display()));
                continue;
            }
            if !anchor.is_empty() && name.ends_with(".md") {
                let target_text = std::fs::read_to_string(root.join(&resolved)).unwrap();
                if !anchors(&target_text).iter().any(|a| a == anchor) {
                    problems.push(format!("{}: link `{target}`: no such heading", file.display()));
                }
            }
        }
        // Backquoted paths under a top-level directory of the repository.
        for (index, chunk) in text.split('`').enumerate() {
            if index % 2 == 0 || chunk.contains(char::is_whitespace) {
                continue;
            }
            if chunk.starts_with("../") {
                problems.push(format!("{}: path `{chunk}` leaves the repository", file.display()));
                continue;
            }
            if !top_dirs.iter().any(|d| chunk.starts_with(d)) || chunk.contains(['*', '{', '<', '$', '…']) {
                continue;
            }
            let path = chunk.split(['#', ':']).next().unwrap().trim_end_matches([',', '.']);
            if !root.join(path).exists() {
                problems.push(format!("{}: path `{chunk}` does not exist", file.display()));
            }
        }
    }
    // Source comments and scripts that users read point into docs/ too.
    let mut stack =
        vec![root.join("src"), root.join("tests"), root.join("scripts"), root.join("fuzz"), root.join("deploy")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with("target") && !path.ends_with("corpus") {
                    stack.push(path);
                }
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            for marker in outside_markers() {
                if text.contains(&marker) {
                    problems.push(format!("{}: names `{marker}`, outside the repository", path.display()));
                }
            }
        }
    }
    assert!(links > 50, "only {links} links found: the parser lost them");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
