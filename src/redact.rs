//! Text from outside made safe to show: URLs without their credentials, and server-provided text without the
//! means to forge lines in a log.
//!
//! Every URL a command prints (errors, progress, `--verbose`, logs) goes through [`url`]; every piece of text a
//! server or a plugin wrote that reaches the operator goes through [`server_text`]. Both are pure functions over
//! strings so that every module (registries, key managers, RemoteConfig fetches) can use them without a cycle.

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

#[cfg(test)]
mod tests {
    use super::*;

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
