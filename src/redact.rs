//! Text from outside made safe to show: URLs without their credentials, and server-provided text without the
//! means to forge lines in a log.
//!
//! Every URL a command prints (errors, progress, `--verbose`, logs) goes through [`url`]; every piece of text a
//! server or a plugin wrote that reaches the operator goes through [`server_text`]. Both are pure functions over
//! strings so that every module (registries, key managers, RemoteConfig fetches) can use them without a cycle.
//!
//! Escaping is not enough for a server that quotes the request (an echo service at a wrong address, a gateway
//! error page, S3's SignatureDoesNotMatch): [`Secrets`] holds what one request carried (its token, login
//! secret, plaintext, the query values of its URL), and [`Secrets::scrub`] removes every form of them (raw,
//! base64, URL-encoded, JSON-escaped) from the server's text before anything else sees it.

/// What replaces a redacted password or query value.
pub const REDACTED: &str = "REDACTED";

/// Most characters of server-provided text that [`server_text`] keeps by default.
pub const SERVER_TEXT_MAX: usize = 300;

/// `url` with the password of its userinfo and the value of every query parameter replaced by [`REDACTED`]
/// (`https://user:pw@host/p?X-Amz-Signature=abc&x=1` → `https://user:REDACTED@host/p?X-Amz-Signature=REDACTED&x=REDACTED`),
/// and the fragment dropped. A user name alone is kept: it says which account was used and is no secret by
/// itself, but a userinfo without a colon may be a token (`https://TOKEN@host`), so it is redacted too unless it
/// looks like a plain user name. Text that is not a URL is returned as [`server_text`] would show it.
pub fn url(text: &str) -> String {
    let Some(scheme_end) = text.find("://") else {
        return server_text(text.as_bytes(), usize::MAX);
    };
    let (scheme, rest) = text.split_at(scheme_end + 3);
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:{REDACTED}@{host}"),
            None if looks_like_user_name(userinfo) => format!("{userinfo}@{host}"),
            None => format!("{REDACTED}@{host}"),
        },
        None => authority.to_owned(),
    };
    let tail = tail.split('#').next().unwrap_or_default();
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let redacted: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((name, _)) => format!("{name}={REDACTED}"),
                    None if pair.is_empty() => String::new(),
                    None => REDACTED.to_owned(),
                })
                .collect();
            format!("{path}?{}", redacted.join("&"))
        }
        None => tail.to_owned(),
    };
    server_text(format!("{scheme}{authority}{tail}").as_bytes(), usize::MAX)
}

/// `text` (an error message of a library, which may quote a URL: reqwest's "error sending request for url
/// (https://user:pw@host/…)") with every URL in it shown as [`url`] shows it, and the rest as [`server_text`]
/// without a bound. A URL ends at whitespace, a quote, a parenthesis, an angle bracket or a backtick.
pub fn urls_in(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(found) = rest.find("://") {
        let start = rest[..found]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || "+.-".contains(*c))
            .last()
            .map_or(found, |(i, _)| i);
        let end =
            rest[found..].find(|c: char| c.is_whitespace() || "()<>\"'`".contains(c)).map_or(rest.len(), |i| found + i);
        out.push_str(&server_text(&rest.as_bytes()[..start], usize::MAX));
        out.push_str(&url(&rest[start..end]));
        rest = &rest[end..];
    }
    out.push_str(&server_text(rest.as_bytes(), usize::MAX));
    out
}

/// Most characters of an error chain that [`error_chain`] keeps.
pub const ERROR_CHAIN_MAX: usize = 600;

/// An error and its causes on one line, `error: cause: cause`, each message once (HTTP and TLS libraries repeat
/// their causes in their own messages), with every URL in it shown as [`url`] shows it and the rest escaped as
/// [`server_text`] escapes it, at most [`ERROR_CHAIN_MAX`] characters: library messages quote request URLs (with
/// their credentials) and what a peer said. What every error of an HTTP client goes through before it is shown.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(cause) = next {
        let text = cause.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = cause.source();
    }
    server_text(urls_in(&parts.join(": ")).as_bytes(), ERROR_CHAIN_MAX)
}

/// A user name rather than a token: short, and made of the characters account names use.
fn looks_like_user_name(userinfo: &str) -> bool {
    userinfo.len() <= 32 && userinfo.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// Server-provided bytes as one line of text: invalid UTF-8 replaced, control characters (C0, DEL, C1, line and
/// paragraph separators) and bidirectional overrides and isolates written as `\u{…}` escapes (`\n`, `\r`, `\t`
/// as themselves), so that a server can neither break the one-line error contract nor forge an `error:` line or
/// reorder what a terminal shows; at most `max` characters are kept, the rest counted.
pub fn server_text(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    let mut chars = text.chars();
    for (kept, c) in chars.by_ref().enumerate() {
        if kept == max {
            let rest_bytes = c.len_utf8() + chars.map(char::len_utf8).sum::<usize>();
            out.push_str(&format!("… ({rest_bytes} more bytes)"));
            return out;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Server text with the default bound, [`SERVER_TEXT_MAX`].
pub fn server_message(bytes: &[u8]) -> String {
    server_text(bytes.trim_ascii(), SERVER_TEXT_MAX)
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// Shortest secret [`Secrets`] registers: a shorter value would redact ordinary words of every message and has
/// too little entropy to be a credential worth hiding.
pub const MIN_SECRET: usize = 4;

/// The secrets one request carried, in every form a server might quote them in, to be removed from what it
/// answers. Wiped on drop; its `Debug` shows only how many forms it holds.
#[derive(Clone, Default)]
pub struct Secrets {
    /// Longest first, so that a form containing another is replaced whole.
    forms: Vec<zeroize::Zeroizing<String>>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets([REDACTED; {} forms])", self.forms.len())
    }
}

impl Secrets {
    /// No secrets.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }

    /// Registers `secret` (bytes of at least [`MIN_SECRET`]): as text when it is UTF-8, in standard and
    /// URL-safe base64 (padded or not), percent-encoded and JSON-escaped.
    pub fn add(&mut self, secret: &[u8]) {
        use base64::Engine as _;
        use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
        if secret.len() < MIN_SECRET {
            return;
        }
        if let Ok(text) = std::str::from_utf8(secret) {
            self.push(text.to_owned());
            self.push(percent_encode(text.as_bytes(), false));
            self.push(percent_encode(text.as_bytes(), true));
            let json = serde_json::Value::String(text.to_owned()).to_string();
            self.push(json[1..json.len() - 1].to_owned());
        }
        for engine in [&STANDARD, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD] {
            let encoded = engine.encode(secret);
            self.push(percent_encode(encoded.as_bytes(), false));
            self.push(encoded);
        }
    }

    /// Registers a text value and, when it is base64 of at least [`MIN_SECRET`] bytes (Transit's and KMS's
    /// `plaintext`), what it decodes to.
    pub fn add_text(&mut self, value: &str) {
        use base64::Engine as _;
        self.add(value.as_bytes());
        for engine in [&base64::engine::general_purpose::STANDARD, &base64::engine::general_purpose::URL_SAFE] {
            if let Ok(decoded) = engine.decode(value) {
                let decoded = zeroize::Zeroizing::new(decoded);
                self.add(&decoded);
            }
        }
    }

    /// Registers every string of a JSON request body (see [`Secrets::add_text`]): a login's secret id or JWT, a
    /// plaintext, a KV value. Over-redacting a role or key name in an echoed error costs little; leaving a
    /// secret in it does not.
    pub fn add_json(&mut self, value: &serde_json::Value) {
        match value {
            serde_json::Value::String(text) => self.add_text(text),
            serde_json::Value::Array(items) => items.iter().for_each(|item| self.add_json(item)),
            serde_json::Value::Object(map) => map.values().for_each(|item| self.add_json(item)),
            _ => {}
        }
    }

    /// Registers the password of `url`'s userinfo and every query value (a presigned URL's signature and
    /// credential), as written and as decoded.
    pub fn add_url(&mut self, url: &str) {
        let without_fragment = url.split('#').next().unwrap_or_default();
        if let Some((_, query)) = without_fragment.split_once('?') {
            for pair in query.split('&') {
                let value = pair.split_once('=').map_or(pair, |(_, value)| value);
                self.add(value.as_bytes());
                let decoded = percent_decode(value);
                self.add(&decoded);
            }
        }
        if let Some(rest) = url.split_once("://").map(|(_, rest)| rest) {
            let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
            if let Some((userinfo, _)) = authority.rsplit_once('@') {
                let password = userinfo.split_once(':').map_or(userinfo, |(_, password)| password);
                self.add(password.as_bytes());
                self.add(&percent_decode(password));
            }
        }
    }

    /// Registers everything `other` holds.
    pub fn extend(&mut self, other: &Secrets) {
        for form in &other.forms {
            self.push(form.to_string());
        }
    }

    /// `text` with every registered form replaced by [`REDACTED`].
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for form in &self.forms {
            if out.contains(form.as_str()) {
                out = out.replace(form.as_str(), REDACTED);
            }
        }
        out
    }

    /// [`Secrets::scrub`] over bytes that may not be UTF-8 (invalid sequences replaced, as [`server_text`] would).
    pub fn scrub_bytes(&self, bytes: &[u8]) -> Vec<u8> {
        if self.forms.is_empty() {
            return bytes.to_vec();
        }
        self.scrub(&String::from_utf8_lossy(bytes)).into_bytes()
    }

    fn push(&mut self, form: String) {
        if form.len() < MIN_SECRET || self.forms.iter().any(|known| known.as_str() == form) {
            return;
        }
        let at = self.forms.partition_point(|known| known.len() >= form.len());
        self.forms.insert(at, zeroize::Zeroizing::new(form));
    }
}

/// Percent-encoding of `bytes` as URLs and forms write it: unreserved characters kept, the rest `%XX`
/// (upper-case hex), spaces as `+` when `form`.
fn percent_encode(bytes: &[u8], form: bool) -> String {
    let mut out = String::with_capacity(bytes.len() * 3);
    for &b in bytes {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => out.push(b as char),
            b' ' if form => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// `%XX` sequences (and `+`) decoded; anything malformed kept as written.
fn percent_decode(text: &str) -> zeroize::Zeroizing<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = zeroize::Zeroizing::new(Vec::with_capacity(bytes.len()));
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(high), Some(low)) => {
                    out.push((high * 16 + low) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every form of a registered secret leaves a server's echo; the rest of the text stays.
    #[test]
    fn every_form_of_a_secret_is_scrubbed() {
        use base64::Engine as _;
        let mut secrets = Secrets::new();
        secrets.add(b"hvs.token/+=& x\"y");
        let raw = "hvs.token/+=& x\"y";
        let forms = [
            raw.to_owned(),
            base64::engine::general_purpose::STANDARD.encode(raw),
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw),
            "hvs.token%2F%2B%3D%26%20x%22y".to_owned(),
            "hvs.token%2F%2B%3D%26+x%22y".to_owned(),
            r#"hvs.token/+=& x\"y"#.to_owned(),
        ];
        for form in forms {
            let shown = secrets.scrub(&format!("permission denied for token {form} (sorry)"));
            assert_eq!(shown, "permission denied for token REDACTED (sorry)", "{form}");
        }
        let mut short = Secrets::new();
        short.add(b"abc");
        assert!(short.is_empty());
        assert_eq!(short.scrub("abc"), "abc");
    }

    /// A base64 plaintext (Transit's `{"plaintext": …}`) is scrubbed as sent and as the passphrase it encodes.
    #[test]
    fn a_json_body_registers_its_strings_and_what_they_decode_to() {
        let mut secrets = Secrets::new();
        secrets
            .add_json(&serde_json::json!({"plaintext": "cGFzc3BocmFzZS0xMjM=", "n": [1, {"secret_id": "sid-42-x"}]}));
        let shown = secrets.scrub("got cGFzc3BocmFzZS0xMjM= i.e. passphrase-123, and sid-42-x, sid-42-x");
        assert_eq!(shown, "got REDACTED i.e. REDACTED, and REDACTED, REDACTED");
    }

    /// A presigned URL's query values, as written and decoded, and a password.
    #[test]
    fn a_urls_query_values_and_password_are_registered() {
        let mut secrets = Secrets::new();
        secrets.add_url("https://u:pa%24s@s3:9000/b/k?X-Amz-Signature=abcd1234&X-Amz-Credential=AKIA%2F2026#frag");
        let body = "<Error><SignatureProvided>abcd1234</SignatureProvided><Cred>AKIA/2026</Cred>\
                    <Query>X-Amz-Credential=AKIA%2F2026</Query> pa$s</Error>";
        let shown = secrets.scrub(body);
        for gone in ["abcd1234", "AKIA/2026", "AKIA%2F2026", "pa$s"] {
            assert!(!shown.contains(gone), "{gone} in {shown}");
        }
        assert!(shown.contains("<Error>"), "{shown}");
    }

    #[test]
    fn passwords_and_query_values_are_redacted() {
        assert_eq!(
            url("https://user:s3cret@host:443/a/b?x=1&y"),
            "https://user:REDACTED@host:443/a/b?x=REDACTED&REDACTED"
        );
        assert_eq!(
            url("https://bucket.s3/k?X-Amz-Signature=abc&X-Amz-Credential=def#frag"),
            "https://bucket.s3/k?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED"
        );
        assert_eq!(url("docker://ci@registry.example/app:v1"), "docker://ci@registry.example/app:v1");
        assert_eq!(url("https://ghp_0123456789abcdef0123456789abcdef01234567@host/x"), "https://REDACTED@host/x");
        assert_eq!(url("https://host/plain"), "https://host/plain");
        assert!(!url("https://u:pw@h/?token=tok").contains("pw"));
        assert!(!url("https://u:pw@h/?token=tok").contains("=tok"));
    }

    /// A library error quoting a URL with credentials, a peer's line breaks and a bidi override, and repeating
    /// its cause: one line, redacted, escaped, each message once, bounded.
    #[test]
    fn an_error_chain_is_one_redacted_escaped_bounded_line() {
        #[derive(Debug)]
        struct Layer(String, Option<Box<Layer>>);
        impl std::fmt::Display for Layer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
        impl std::error::Error for Layer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                self.1.as_deref().map(|l| l as &(dyn std::error::Error + 'static))
            }
        }
        let inner = Layer("peer said: ok\r\nerror: forged \u{202e}txt".into(), None);
        let middle = Layer("connection closed".into(), Some(Box::new(inner)));
        let top = Layer(
            "error sending request for url (https://u:pw@host/v1/x?token=tok): connection closed".into(),
            Some(Box::new(middle)),
        );
        let line = error_chain(&top);
        assert_eq!(
            line,
            "error sending request for url (https://u:REDACTED@host/v1/x?token=REDACTED): connection closed: \
             peer said: ok\\r\\nerror: forged \\u{202e}txt"
        );
        let long = Layer("x".repeat(5000), None);
        let line = error_chain(&long);
        assert!(line.starts_with(&"x".repeat(ERROR_CHAIN_MAX)) && line.ends_with("… (4400 more bytes)"), "{line}");
    }

    #[test]
    fn urls_inside_text_are_redacted() {
        assert_eq!(
            urls_in("error sending request for url (https://u:pw@h/x?X-Amz-Signature=abc): refused"),
            "error sending request for url (https://u:REDACTED@h/x?X-Amz-Signature=REDACTED): refused"
        );
        assert_eq!(urls_in("no url here\n"), "no url here\\n");
        assert_eq!(urls_in("a `https://h/p?t=1` b"), "a `https://h/p?t=REDACTED` b");
    }

    #[test]
    fn a_password_containing_at_signs_is_redacted_whole() {
        assert_eq!(url("https://u:p@ss@host/x"), "https://u:REDACTED@host/x");
    }

    #[test]
    fn server_text_is_one_line_without_controls_or_bidi() {
        let shown = server_text(b"ok\r\nerror: forged\x1b[31m\xc2\x9b \xe2\x80\xae evil", 1000);
        assert_eq!(shown, "ok\\r\\nerror: forged\\u{1b}[31m\\u{9b} \\u{202e} evil");
        assert!(!shown.contains('\n'));
    }

    #[test]
    fn server_text_is_truncated_with_a_count() {
        let long = vec![b'a'; 10_000];
        let shown = server_message(&long);
        assert!(shown.starts_with(&"a".repeat(SERVER_TEXT_MAX)));
        assert!(shown.ends_with("… (9700 more bytes)"), "{shown}");
        assert_eq!(server_text(b"abc", 3), "abc");
    }
}
