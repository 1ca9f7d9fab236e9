//! HTTP proxies, as the environment names them (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY` and their lower-case
//! forms, which `cmd/` reads and hands down in [`Proxies`]): every HTTP client of the crate (the key managers'
//! shared client, AWS, the registry) is built through [`Proxies::apply`], so none of them reads the environment
//! itself or goes around the operator's proxy.
//!
//! A request to an `https://` URL goes through the `https` proxy with `CONNECT` (TLS stays end to end); one to an
//! `http://` URL goes to the `http` proxy in absolute form. `NO_PROXY` is the list curl, the AWS SDKs and Go
//! take: comma-separated domains (`example.com` and `.example.com` both match the domain and its subdomains), IP
//! addresses, CIDR blocks (`10.0.0.0/8`) and `*` (no proxy at all).
//!
//! A proxy URL may carry credentials (`http://user:password@proxy:3128`): they are sent to the proxy only
//! (`Proxy-Authorization`), never shown ([`Proxies`]'s `Debug` and [`Proxies::describe`] redact them), and
//! [`Proxies::secrets`] lists them so that error text is scrubbed of them.

/// The proxies of every request, resolved by `cmd/` from the environment. Empty: every request goes directly.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Proxies {
    /// The proxy of `https://` requests (`HTTPS_PROXY`, `https_proxy`), tunnelled with `CONNECT`.
    pub https: Option<String>,
    /// The proxy of `http://` requests (`HTTP_PROXY`, `http_proxy`), sent in absolute form.
    pub http: Option<String>,
    /// Hosts reached directly (`NO_PROXY`, `no_proxy`; see the module documentation).
    pub no_proxy: Option<String>,
}

impl std::fmt::Debug for Proxies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxies")
            .field("https", &self.https.as_deref().map(crate::redact::url))
            .field("http", &self.http.as_deref().map(crate::redact::url))
            .field("no_proxy", &self.no_proxy)
            .finish()
    }
}

/// A proxy URL that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("proxy `{url}` ({variable}): {problem}")]
pub struct BadProxy {
    /// The URL, redacted.
    pub url: String,
    /// Which setting named it (`HTTPS_PROXY`).
    pub variable: &'static str,
    /// What is wrong.
    pub problem: String,
}

impl crate::exit::Classify for BadProxy {
    fn status(&self) -> crate::exit::ExitStatus {
        crate::exit::ExitStatus::InvalidInput
    }
}

impl Proxies {
    /// Whether no request goes through a proxy.
    pub fn is_empty(&self) -> bool {
        self.https.is_none() && self.http.is_none()
    }

    /// `builder` with these proxies and nothing of reqwest's own (it would read the environment itself).
    pub fn apply(&self, builder: reqwest::ClientBuilder) -> Result<reqwest::ClientBuilder, BadProxy> {
        let mut builder = builder.no_proxy();
        if self.no_proxy.as_deref().is_some_and(|list| list.split(',').any(|entry| entry.trim() == "*")) {
            return Ok(builder);
        }
        let no_proxy = self.no_proxy.as_deref().and_then(reqwest::NoProxy::from_string);
        for (url, variable, https) in [(&self.https, "HTTPS_PROXY", true), (&self.http, "HTTP_PROXY", false)] {
            let Some(url) = url else { continue };
            let checked = check(url, variable)?;
            let proxy =
                if https { reqwest::Proxy::https(checked.as_str()) } else { reqwest::Proxy::http(checked.as_str()) }
                    .map_err(|e| BadProxy {
                        url: crate::redact::url(url),
                        variable,
                        problem: crate::redact::error_chain(&e),
                    })?;
            builder = builder.proxy(proxy.no_proxy(no_proxy.clone()));
        }
        Ok(builder)
    }

    /// The proxy a request to `url` goes through, redacted (for `-v`), or `None` when it goes directly.
    pub fn for_url(&self, url: &reqwest::Url) -> Option<String> {
        let proxy = match url.scheme() {
            "https" => self.https.as_ref(),
            "http" => self.http.as_ref(),
            _ => None,
        }?;
        let host = url.host_str()?;
        if self.bypassed(host) {
            return None;
        }
        Some(crate::redact::url(proxy))
    }

    /// Whether `NO_PROXY` sends requests to `host` directly (the same rules as reqwest's).
    fn bypassed(&self, host: &str) -> bool {
        let Some(list) = &self.no_proxy else { return false };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let ip: Option<std::net::IpAddr> = host.parse().ok();
        list.split(',').map(str::trim).filter(|e| !e.is_empty()).any(|entry| {
            if entry == "*" {
                return true;
            }
            match (ip, entry.parse::<std::net::IpAddr>(), cidr(entry)) {
                (Some(ip), Ok(other), _) => ip == other,
                (Some(ip), _, Some((net, bits))) => in_net(ip, net, bits),
                (Some(_), _, _) => false,
                (None, _, _) => {
                    let domain = entry.trim_start_matches('.');
                    host.eq_ignore_ascii_case(domain)
                        || (host.len() > domain.len()
                            && host[host.len() - domain.len()..].eq_ignore_ascii_case(domain)
                            && host.as_bytes()[host.len() - domain.len() - 1] == b'.')
                }
            }
        })
    }

    /// What a proxy URL carries that no text may show: its password (or a user-only token) and their
    /// percent-decoded forms.
    pub fn secrets(&self) -> Vec<String> {
        let mut out = Vec::new();
        for url in self.https.iter().chain(&self.http) {
            let Ok(parsed) = reqwest::Url::parse(url).or_else(|_| reqwest::Url::parse(&format!("http://{url}"))) else {
                continue;
            };
            // The password; without one, the user part (a token may be given as the user: `http://TOKEN@proxy`).
            let secret = parsed.password().unwrap_or(parsed.username());
            for part in [secret].into_iter().filter(|p| !p.is_empty()) {
                out.push(part.to_owned());
                if let Ok(decoded) = percent_decode(part) {
                    out.push(decoded);
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// A proxy URL as reqwest takes it: `http://` or `https://` (a bare `host:port` is `http://host:port`).
fn check(url: &str, variable: &'static str) -> Result<reqwest::Url, BadProxy> {
    let bad = |problem: &str| BadProxy { url: crate::redact::url(url), variable, problem: problem.into() };
    let text = if url.contains("://") { url.to_owned() } else { format!("http://{url}") };
    let parsed = reqwest::Url::parse(&text).map_err(|e| bad(&format!("not a URL ({e})")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(bad("expected http://HOST:PORT (or https://)"));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(bad("no host"));
    }
    Ok(parsed)
}

fn cidr(entry: &str) -> Option<(std::net::IpAddr, u8)> {
    let (net, bits) = entry.split_once('/')?;
    Some((net.parse().ok()?, bits.parse().ok()?))
}

fn in_net(ip: std::net::IpAddr, net: std::net::IpAddr, bits: u8) -> bool {
    use std::net::IpAddr;
    match (ip, net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) if bits <= 32 => {
            let mask = if bits == 0 { 0 } else { u32::MAX << (32 - bits) };
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) if bits <= 128 => {
            let mask = if bits == 0 { 0 } else { u128::MAX << (128 - bits) };
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}

fn percent_decode(text: &str) -> Result<String, ()> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).map_err(drop)?;
            out.push(u8::from_str_radix(hex, 16).map_err(drop)?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxies(no_proxy: &str) -> Proxies {
        Proxies {
            https: Some("http://user:p%40ss@proxy.corp:3128".into()),
            http: Some("proxy.corp:3129".into()),
            no_proxy: Some(no_proxy.into()),
        }
    }

    #[test]
    fn no_proxy_takes_domains_suffixes_ips_and_cidrs() {
        let p = proxies("internal.example, .corp.example,10.0.0.0/8, 192.168.1.7, ::1");
        let via = |url: &str| p.for_url(&reqwest::Url::parse(url).unwrap());
        assert_eq!(
            via("https://kms.eu-west-1.amazonaws.com/").as_deref(),
            Some("http://user:REDACTED@proxy.corp:3128")
        );
        assert_eq!(via("http://kms.eu-west-1.amazonaws.com/").as_deref(), Some("proxy.corp:3129"));
        for direct in [
            "https://internal.example/",
            "https://vault.internal.example/",
            "https://corp.example/",
            "https://a.b.corp.example:8200/",
            "https://10.2.3.4/",
            "http://192.168.1.7:80/",
            "http://[::1]:8080/",
        ] {
            assert_eq!(via(direct), None, "{direct}");
        }
        for proxied in ["https://notinternal.example/", "https://11.0.0.1/", "http://192.168.1.8/"] {
            assert!(via(proxied).is_some(), "{proxied}");
        }
        assert_eq!(proxies("*").for_url(&reqwest::Url::parse("https://x.y/").unwrap()), None);
    }

    #[test]
    fn proxy_credentials_are_secrets_and_bad_urls_are_refused() {
        let p = proxies("");
        assert_eq!(p.secrets(), vec!["p%40ss".to_owned(), "p@ss".to_owned()]);
        assert!(!format!("{p:?}").contains("p%40ss"), "{p:?}");
        assert!(p.apply(reqwest::Client::builder()).is_ok());
        let token = Proxies { https: Some("http://tok3n@proxy:1".into()), ..Proxies::default() };
        assert_eq!(token.secrets(), vec!["tok3n".to_owned()]);
        let bad = Proxies { https: Some("socks9://x:y@proxy:1".into()), ..Proxies::default() };
        let error = bad.apply(reqwest::Client::builder()).unwrap_err().to_string();
        assert!(error.starts_with("proxy `socks9://x:REDACTED@proxy:1` (HTTPS_PROXY): "), "{error}");
        assert!(Proxies::default().is_empty() && !p.is_empty());
    }
}
