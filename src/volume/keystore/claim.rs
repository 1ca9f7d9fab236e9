//! A rotation's claim on a volume, recorded in the key store before the header is touched: one run per volume
//! across every node that shares the store (the node-local locks cannot see other nodes). A claim names its run
//! (host, pid, a random run id, the kernel boot and pid namespace it runs in) and expires; a successor may take
//! over a claim that has expired, one whose process is gone (same boot and pid namespace, no such pid), or, when
//! told to (`--take-over-claim`), any claim.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a claim holds when its run neither releases it nor is seen to be dead.
pub const CLAIM_LIFETIME: Duration = Duration::from_secs(600);

/// One run's claim, stored as JSON.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Claim {
    /// A random id of the run (16 bytes, hex).
    pub run: String,
    /// The host name of the node.
    pub host: String,
    /// The process id.
    pub pid: u32,
    /// `/proc/sys/kernel/random/boot_id` of the node.
    pub boot: String,
    /// The pid namespace (`/proc/self/ns/pid`): a pid means something only inside it.
    pub pidns: String,
    /// Unix seconds after which any run may take the claim over.
    pub expires: u64,
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn proc_text(path: &str) -> String {
    std::fs::read_to_string(path).map(|t| t.trim().to_owned()).unwrap_or_default()
}

impl Claim {
    /// A claim for this process, valid for `lifetime`.
    pub fn new(lifetime: Duration) -> Self {
        Self {
            run: hex::encode(crate::crypto::random::bytes::<16>()),
            host: proc_text("/proc/sys/kernel/hostname"),
            pid: std::process::id(),
            boot: proc_text("/proc/sys/kernel/random/boot_id"),
            pidns: std::fs::read_link("/proc/self/ns/pid").map(|p| p.display().to_string()).unwrap_or_default(),
            expires: now().saturating_add(lifetime.as_secs()),
        }
    }

    /// The stored form.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("JSON of strings and numbers")
    }

    /// A stored claim; `None` for anything else (which any run may replace: it protects nobody).
    pub fn parse(stored: &[u8]) -> Option<Self> {
        serde_json::from_slice(stored).ok()
    }

    /// For messages: who holds it and until when.
    pub fn describe(&self) -> String {
        let left = self.expires.saturating_sub(now());
        format!(
            "run {} of pid {} on `{}`, {}",
            crate::redact::server_message(self.run.as_bytes()),
            self.pid,
            crate::redact::server_message(self.host.as_bytes()),
            if left == 0 { "expired".to_owned() } else { format!("expiring in {left} s") }
        )
    }

    /// Whether this process may replace `held`: it is this run's own or an earlier run's of this same process
    /// (the caller holds the volume's lock), it has expired, its process is gone (same boot and pid namespace, no
    /// such pid), or `force`.
    pub fn may_replace(&self, held: &Claim, force: bool) -> bool {
        let same_pid_space = !held.boot.is_empty() && held.boot == self.boot && held.pidns == self.pidns;
        let holder_gone = same_pid_space && !std::path::Path::new(&format!("/proc/{}", held.pid)).exists();
        // This very process (a `volume serve` whose earlier release was cut): its caller holds the volume's lock,
        // so that run is over.
        let this_process = same_pid_space && held.pid == self.pid;
        force || held.run == self.run || held.expires <= now() || holder_gone || this_process
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_claims_stand_expired_dead_and_forced_ones_fall() {
        let mine = Claim::new(CLAIM_LIFETIME);
        let live_elsewhere = Claim { run: "other".into(), boot: "another boot".into(), ..mine.clone() };
        assert!(!mine.may_replace(&live_elsewhere, false));
        assert!(mine.may_replace(&live_elsewhere, true));
        assert!(mine.may_replace(&mine, false));
        assert!(mine.may_replace(&Claim { expires: now() - 1, ..live_elsewhere.clone() }, false));
        // This boot and pid namespace: a live pid (ours) stands, a pid that does not exist falls.
        // pid 1 lives in every pid namespace.
        let here = Claim { run: "other".into(), pid: 1, ..mine.clone() };
        assert!(!mine.may_replace(&here, false));
        assert!(mine.may_replace(&Claim { run: "earlier".into(), ..mine.clone() }, false), "this process's own");
        assert!(mine.may_replace(&Claim { pid: u32::MAX - 1, ..here }, false));
        assert_eq!(Claim::parse(mine.to_json().as_bytes()), Some(mine));
        assert_eq!(Claim::parse(b"junk"), None);
    }
}
