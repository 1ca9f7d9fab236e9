//! The proxies of every HTTP client, read from the environment as curl, the AWS SDKs and Go read it:
//! `HTTPS_PROXY` (else `https_proxy`) for `https://` requests, `HTTP_PROXY` (else `http_proxy`) for `http://`
//! ones, `NO_PROXY` (else `no_proxy`) for the hosts reached directly. Handed to the core in
//! [`crate::proxy::Proxies`]; no core module reads these variables.

use super::env_vars::{self as env, var_os};

/// The first non-empty value of `names`.
fn first(names: [&str; 2]) -> Option<String> {
    names
        .iter()
        .find_map(|n| var_os(n))
        .and_then(|v| v.into_string().ok())
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// The proxies the environment names.
pub fn from_env() -> crate::proxy::Proxies {
    crate::proxy::Proxies {
        https: first([env::HTTPS_PROXY, "https_proxy"]),
        http: first([env::HTTP_PROXY, "http_proxy"]),
        no_proxy: first([env::NO_PROXY, "no_proxy"]),
    }
}
