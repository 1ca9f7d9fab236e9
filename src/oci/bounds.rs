//! Bounds on walking an image's manifests and indexes, which come from whoever pushed the image: an index may
//! list indexes, each listing the next (a chain 30,000 deep overflows any recursive walk), or list one child many
//! times (30 levels that each list the next twice are 2^30 paths). Every store counts the manifests and indexes
//! it is asked for and knows how deep each one sits below the root, so every walk (encrypt, decrypt, authorize,
//! inspect, copy) stops with exit 3 at the same limits, whichever command walks.

use super::Error;
use std::collections::HashMap;
use std::sync::Mutex;

/// Most levels of indexes below the root (the root is level 0; real images use one or two).
pub const MAX_INDEX_DEPTH: usize = 8;
/// Most manifest and index reads while processing one image (the same one read twice counts twice).
pub const MAX_MANIFEST_READS: usize = 4096;

/// What a store has seen of an image's tree.
#[derive(Debug, Default)]
pub struct ManifestBounds {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The level of each manifest or index an index read so far lists (the least, if listed at several).
    depth: HashMap<String, usize>,
    reads: usize,
}

impl ManifestBounds {
    /// Counts a read of the manifest or index `digest`; refused past [`MAX_MANIFEST_READS`] reads or when it sits
    /// deeper than [`MAX_INDEX_DEPTH`].
    pub fn admit(&self, digest: &str) -> Result<(), Error> {
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        state.reads += 1;
        if state.reads > MAX_MANIFEST_READS {
            return Err(Error::Malformed(format!(
                "the image has more than {MAX_MANIFEST_READS} manifests and indexes to read (an index lists too \
                 many, or the same ones over and over)"
            )));
        }
        let depth = state.depth.get(digest).copied().unwrap_or(0);
        if depth > MAX_INDEX_DEPTH {
            return Err(Error::Malformed(format!(
                "manifest {digest} is nested more than {MAX_INDEX_DEPTH} indexes deep"
            )));
        }
        Ok(())
    }

    /// Records the children an index (already admitted) lists, one level below it.
    pub fn index_read(&self, digest: &str, bytes: &[u8]) {
        let Ok(index) = serde_json::from_slice::<serde_json::Value>(bytes) else { return };
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let level = state.depth.get(digest).copied().unwrap_or(0) + 1;
        for entry in index.get("manifests").and_then(serde_json::Value::as_array).into_iter().flatten() {
            if let Some(child) = entry.get("digest").and_then(serde_json::Value::as_str) {
                let known = state.depth.entry(child.to_owned()).or_insert(level);
                *known = (*known).min(level);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(children: &[&str]) -> Vec<u8> {
        let manifests: Vec<serde_json::Value> =
            children.iter().map(|d| serde_json::json!({"mediaType": super::super::OCI_INDEX, "digest": d})).collect();
        serde_json::to_vec(&serde_json::json!({"schemaVersion": 2, "manifests": manifests})).unwrap()
    }

    #[test]
    fn deep_chains_and_endless_repeats_are_refused() {
        let bounds = ManifestBounds::default();
        let names: Vec<String> = (0..=MAX_INDEX_DEPTH + 1).map(|i| format!("sha256:{i}")).collect();
        for level in 0..=MAX_INDEX_DEPTH {
            bounds.admit(&names[level]).unwrap();
            bounds.index_read(&names[level], &index(&[&names[level + 1]]));
        }
        let err = bounds.admit(&names[MAX_INDEX_DEPTH + 1]).unwrap_err();
        assert!(err.to_string().contains("nested more than 8 indexes deep"), "{err}");

        let bounds = ManifestBounds::default();
        for _ in 0..MAX_MANIFEST_READS {
            bounds.admit("sha256:same").unwrap();
        }
        assert!(bounds.admit("sha256:same").unwrap_err().to_string().contains("more than 4096"));
    }
}
