//! The architecture of `docs/architecture.md`, checked on the source: which top-level module uses which, with no
//! cycle between them and the layers pointing down, and every error type known to the exit-status mapping.
//!
//! These read the source as text (paths after `crate::`, derives of `thiserror::Error`), which is what a reviewer
//! would do by eye; a module that hid a dependency behind a macro would escape, and none does.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The top-level module a file belongs to (`src/oci/registry/mod.rs` → `oci`); `None` for the crate root and
/// the binary.
fn top_module(file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src_dir()).unwrap();
    let first = relative.components().next()?.as_os_str().to_str()?.to_owned();
    match first.as_str() {
        "lib.rs" | "bin" => None,
        _ => Some(first.trim_end_matches(".rs").to_owned()),
    }
}

/// The code of a file without comments (so prose naming `crate::x` does not count) and string literals.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// The top-level modules named after `crate::` in `code`, including inside `use crate::{a::x, b}` groups.
fn crate_references(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut end = 0;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 {
                    end = j;
                    break;
                }
            }
            let mut level = 0;
            let mut item = String::new();
            for c in group[..end].chars().chain([',']) {
                match c {
                    '{' => level += 1,
                    '}' => level -= 1,
                    ',' if level == 0 => {
                        let name: String =
                            item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                        if !name.is_empty() {
                            found.insert(name);
                        }
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                if level == 0 {
                    item.push(c);
                }
            }
        } else {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

/// module → the other top-level modules it uses.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in rust_files(&src_dir()) {
        let Some(module) = top_module(&file) else { continue };
        let code = code_only(&std::fs::read_to_string(&file).unwrap());
        let edges = graph.entry(module.clone()).or_default();
        edges.extend(crate_references(&code).into_iter().filter(|m| *m != module));
    }
    graph
}

/// A cycle through `start`, if the graph has one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

fn render(graph: &BTreeMap<String, BTreeSet<String>>) -> String {
    graph
        .iter()
        .map(|(module, uses)| format!("{module} -> {}", uses.iter().cloned().collect::<Vec<_>>().join(" ")))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_reference_scanner_reads_use_groups() {
    let code = "use crate::{exit::{Classify, ExitStatus}, oci};\nlet x = crate::luks::Volume::open();";
    let found: Vec<_> = crate_references(code).into_iter().collect();
    assert_eq!(found, ["exit", "luks", "oci"]);
    let mut graph = BTreeMap::new();
    graph.insert("a".to_owned(), BTreeSet::from(["b".to_owned()]));
    graph.insert("b".to_owned(), BTreeSet::from(["a".to_owned()]));
    assert_eq!(find_cycle(&graph), Some(vec!["a".to_owned(), "b".to_owned(), "a".to_owned()]));
}

#[test]
fn no_cycle_between_top_level_modules() {
    let graph = module_graph();
    if let Some(cycle) = find_cycle(&graph) {
        panic!("module cycle {}\n\nthe graph:\n{}", cycle.join(" -> "), render(&graph));
    }
}

#[test]
fn layers_point_down() {
    let graph = module_graph();
    // `exit` is the table every module shares; it imports nothing of the crate.
    assert_eq!(graph["exit"], BTreeSet::new(), "exit.rs must import nothing but std");
    // Nothing below the command line reaches up into it.
    for (module, uses) in &graph {
        assert!(module == "cmd" || !uses.contains("cmd"), "{module} uses cmd:\n{}", render(&graph));
    }
    // The primitives depend on nothing that uses them.
    let crypto_uses: BTreeSet<&str> = graph["crypto"].iter().map(String::as_str).collect();
    assert!(crypto_uses.is_subset(&BTreeSet::from(["exit"])), "crypto uses {crypto_uses:?}");
}

/// Every error type the crate defines: (module path of its file, type name).
/// Error types that never leave their module, and why: what converts them on the way out.
const INTERNAL_ERRORS: &[(&str, &str)] = &[(
    "crate::oci::registry::protocol::OciDistributionError",
    "private to oci::registry: every path out converts it into oci::Error (`registry_error`, `Failure::into_error`)",
)];

fn error_types() -> Vec<(String, String)> {
    let mut found = Vec::new();
    for file in rust_files(&src_dir()) {
        let text = std::fs::read_to_string(&file).unwrap();
        let relative = file.strip_prefix(src_dir()).unwrap().with_extension("");
        let mut module: Vec<String> =
            relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        if module.last().is_some_and(|m| m == "mod") {
            module.pop();
        }
        let module = format!("crate::{}", module.join("::"));
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            // A file's unit tests (its last item, by the project's convention) may define errors of their own.
            if line.trim_start() == "#[cfg(test)]" && lines.get(i + 1).is_some_and(|l| l.trim_start() == "mod tests {")
            {
                break;
            }
            let derives_error = line.trim_start().starts_with("#[derive(") && line.contains("thiserror::Error");
            if derives_error {
                let name = lines[i + 1..].iter().find_map(|l| {
                    let l = l.trim_start();
                    let rest = l.strip_prefix("pub enum ").or(l.strip_prefix("pub struct "))?;
                    Some(rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>())
                });
                found.push((module.clone(), name.expect("a type after the derive")));
            }
            if let Some(rest) = line.trim_start().strip_prefix("impl std::error::Error for ") {
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                found.push((module.clone(), name));
            }
        }
    }
    found
}

#[test]
fn every_error_type_is_classified() {
    let classified: Vec<String> = cryptadm::cmd::error::CLASSIFIED_ERRORS.iter().map(|e| e.replace(' ', "")).collect();
    let types = error_types();
    assert!(types.len() >= 10, "the scan found too few error types: {types:?}");
    let mut missing = Vec::new();
    for (module, name) in &types {
        if INTERNAL_ERRORS.iter().any(|(internal, _)| *internal == format!("{module}::{name}")) {
            continue;
        }
        // `Failure` is written without a path inside cmd/error.rs; everything else as `crate::module::Type`.
        let known = classified.iter().any(|entry| match entry.rsplit_once("::") {
            Some((path, last)) => last == name && module.starts_with(path),
            None => entry == name && module == "crate::cmd::error",
        });
        if !known {
            missing.push(format!("{module}::{name}"));
        }
    }
    assert!(
        missing.is_empty(),
        "error types that `cmd::error::classify` would not recognise (they would exit 1 with no hint): {missing:?}\n\
         add each to `classified_errors!` in src/cmd/error.rs, with an `exit::Classify` impl"
    );
}
