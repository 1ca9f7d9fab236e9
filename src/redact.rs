//! Text from outside made safe to show: URLs without their credentials, and server-provided text without the
//! means to forge lines in a log or to carry a secret out.
//!
//! Every URL a command prints (errors, progress, `--verbose`, logs) goes through [`url`]; every piece of text a
//! server or a plugin wrote that reaches the operator goes through [`server_text`] (or [`Secrets::quote`], which
//! is [`server_message`] after a request's own scrub). They are functions over strings so that every module
//! (registries, key managers, RemoteConfig fetches, plugins) can use them without a cycle.
//!
//! Escaping is not enough for a server that quotes the request (an echo service at a wrong address, a gateway
//! error page, S3's SignatureDoesNotMatch, STS quoting a form body): [`Secrets`] holds what one request carried
//! (its credential headers, the secret fields of its body, the query values of its URL), and the command
//! registers what it holds itself ([`hold`]: passphrases, keys, tokens read from files, credentials it sends).
//! [`Secrets::scrub`] decodes the server's text every way its sender may have encoded it (JSON escapes, `\xHH`,
//! percent and form encoding, HTML entities, base64 and base64url at any alignment) and removes every piece that
//! spells a run of [`RUN`] bytes of any of them; [`server_text`] then escapes what is left to one bounded line.

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
/// reorder what a terminal shows; at most `max` characters are shown (an escape counted as written), the rest
/// counted. Every secret the command holds ([`hold`]) is removed first, in any spelling ([`Secrets::scrub`]).
pub fn server_text(bytes: &[u8], max: usize) -> String {
    let scrubbed;
    let bytes = {
        let held = held();
        if held.is_empty() {
            bytes
        } else {
            scrubbed = scrub_with(&[&*held], bytes);
            scrubbed.as_slice()
        }
    };
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    let mut shown = 0usize;
    for (at, c) in text.char_indices() {
        let escaped = match c {
            '\n' => "\\n".to_owned(),
            '\r' => "\\r".to_owned(),
            '\t' => "\\t".to_owned(),
            c if needs_escape(c) => format!("\\u{{{:x}}}", c as u32),
            c => c.to_string(),
        };
        // The bound is on what is shown: a text of escapes is no longer than one of plain characters.
        let width = escaped.chars().count();
        if shown.saturating_add(width) > max {
            out.push_str(&format!("… ({} more bytes)", text.len() - at));
            return out;
        }
        shown += width;
        out.push_str(&escaped);
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

/// Length of the runs of a secret that no scrubbed text keeps: every run of this many bytes of a secret, in every
/// spelling the decoder undoes, is removed, so a server quoting part of a secret shows at most `RUN - 1` bytes of it.
pub const RUN: usize = 8;

/// How many times text is decoded over itself (a percent-encoded JSON escape, an HTML entity in a URL).
const DECODE_ROUNDS: usize = 4;

/// How deep base64 inside base64 is followed (a JWT's payload inside a quoted header inside a JSON envelope).
const BASE64_DEPTH: usize = 2;

/// The secrets one request carried (or a command holds, [`hold`]), to be removed from what a server answers,
/// whatever spelling the server quotes them in.
///
/// [`Secrets::scrub`] decodes the text the ways its sender may have encoded it — JSON string escapes (`\/`,
/// `\uXXXX`, surrogate pairs), `\xHH`, percent and form encoding (`+` is a space), HTML entities, each over the
/// result of the other, and base64/base64url (padded or not, at any alignment, nested) — and removes from the
/// original text every piece that decodes to a run of [`RUN`] bytes of a secret (a secret shorter than that,
/// whole). Values registered as names ([`Secrets::add_name`]: a key id, a role) are removed only whole. Every
/// form is folded before it is compared (`-` as `+`, `_` as `/`, space as `+`), so base64url, base64 and form
/// spellings meet. Wiped on drop; its `Debug` shows only how many forms it holds.
#[derive(Clone, Default)]
pub struct Secrets {
    /// Every [`RUN`]-byte run of every spelling of a secret, folded, as a little-endian `u64`; sorted.
    runs: Vec<u64>,
    /// Bit `h(run)` set for each run: most windows of a text are turned away without a search.
    filter: Vec<u64>,
    /// Values matched whole (folded): secrets shorter than [`RUN`] and names.
    wholes: Vec<zeroize::Zeroizing<Vec<u8>>>,
}

/// Bits of [`Secrets::filter`] (a power of two).
const FILTER_BITS: usize = 1 << 16;

impl Drop for Secrets {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.runs);
        zeroize::Zeroize::zeroize(&mut self.filter);
    }
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets([REDACTED; {} runs, {} whole])", self.runs.len(), self.wholes.len())
    }
}

/// The secrets the command holds (see [`hold`]).
static HELD: std::sync::RwLock<Secrets> =
    std::sync::RwLock::new(Secrets { runs: Vec::new(), filter: Vec::new(), wholes: Vec::new() });

/// Registers a secret the command holds (a passphrase, a key, a token read from a file, a credential it sends):
/// no server text shown by this process — [`server_text`], [`server_message`], [`Secrets::scrub`] of any request,
/// [`url`], [`error_chain`] — holds a run of [`RUN`] bytes of it, in any spelling [`Secrets::scrub`] decodes.
/// Text values are also registered as what their base64 decodes to (see [`Secrets::add_text`]).
pub fn hold(secret: &[u8]) {
    if secret.len() < MIN_SECRET {
        return;
    }
    let mut held = HELD.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    match std::str::from_utf8(secret) {
        Ok(text) => held.add_text(text),
        Err(_) => held.add(secret),
    }
}

/// [`hold`] for every secret of `secrets` (a request's, kept beyond it).
pub fn hold_all(secrets: &Secrets) {
    HELD.write().unwrap_or_else(std::sync::PoisonError::into_inner).extend(secrets);
}

fn held() -> std::sync::RwLockReadGuard<'static, Secrets> {
    HELD.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Field names whose values are secrets (a JSON body's keys, a form's or a query's names), compared
/// case-insensitively as parts of the name: `secret_id`, `WebIdentityToken`, `Plaintext`, `X-Amz-Signature`.
const SECRET_NAMES: &[&str] = &[
    "secret",
    "password",
    "passwd",
    "passphrase",
    "token",
    "plaintext",
    "payload",
    "signature",
    "jwt",
    "private",
    "material",
    "data",
    "value",
    "assertion",
];

/// Whether a field called `name` carries a secret (see [`SECRET_NAMES`]).
pub fn secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SECRET_NAMES.iter().any(|part| name.contains(part))
}

impl Secrets {
    /// No secrets.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty() && self.wholes.is_empty()
    }

    /// Registers `secret` (bytes of at least [`MIN_SECRET`]): no run of [`RUN`] bytes of it, of its base64 (at
    /// each alignment within longer data, either alphabet) or of its hex is shown; a shorter secret, whole.
    pub fn add(&mut self, secret: &[u8]) {
        if secret.len() < MIN_SECRET {
            return;
        }
        for spelling in spellings(secret) {
            if spelling.len() >= RUN {
                self.runs.extend(spelling.windows(RUN).map(run_key));
            } else if spelling.len() >= MIN_SECRET {
                self.push_whole(spelling.iter().map(|&b| fold(b)).collect());
            }
        }
        self.index();
    }

    /// Registers a value that is no secret by itself (a key id, a role name, a ciphertext) but is removed where
    /// a server quotes it whole, in any spelling; it is not cut into runs, so text that merely shares a part
    /// with it stays readable.
    pub fn add_name(&mut self, value: &[u8]) {
        if value.len() < MIN_SECRET {
            return;
        }
        self.push_whole(value.iter().map(|&b| fold(b)).collect());
    }

    /// Registers a text value (see [`Secrets::add`]) and, when it is base64 of at least [`MIN_SECRET`] bytes
    /// (Transit's and KMS's `plaintext`), what it decodes to.
    pub fn add_text(&mut self, value: &str) {
        use base64::Engine as _;
        self.add(value.as_bytes());
        for engine in [
            &base64::engine::general_purpose::STANDARD,
            &base64::engine::general_purpose::URL_SAFE,
            &base64::engine::general_purpose::STANDARD_NO_PAD,
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ] {
            if let Ok(decoded) = engine.decode(value) {
                let decoded = zeroize::Zeroizing::new(decoded);
                self.add(&decoded);
            }
        }
    }

    /// Registers every string of a JSON request body: under a key that names a secret ([`secret_name`]: a
    /// login's `secret_id`, `jwt` or `password`, a `plaintext`, a KV `data` map, a `payload`) as a secret
    /// ([`Secrets::add_text`]), every other string as a name ([`Secrets::add_name`]).
    pub fn add_json(&mut self, value: &serde_json::Value) {
        self.add_json_under(value, false);
    }

    fn add_json_under(&mut self, value: &serde_json::Value, secret: bool) {
        match value {
            serde_json::Value::String(text) if secret => self.add_text(text),
            serde_json::Value::String(text) => self.add_name(text.as_bytes()),
            serde_json::Value::Array(items) => items.iter().for_each(|item| self.add_json_under(item, secret)),
            serde_json::Value::Object(map) => {
                map.iter().for_each(|(key, item)| self.add_json_under(item, secret || secret_name(key)))
            }
            _ => {}
        }
    }

    /// Registers the values of a form-encoded body (`Action=AssumeRoleWithWebIdentity&WebIdentityToken=eyJ…`)
    /// or query string: under a name that names a secret as secrets, the others as names, each decoded.
    pub fn add_form(&mut self, form: &str) {
        for pair in form.split('&') {
            let (name, value) = pair.split_once('=').unwrap_or(("", pair));
            let decoded = percent_decode(value);
            if secret_name(&String::from_utf8_lossy(&percent_decode(name))) {
                match std::str::from_utf8(&decoded) {
                    Ok(text) => self.add_text(text),
                    Err(_) => self.add(&decoded),
                }
            } else {
                self.add_name(&decoded);
            }
        }
    }

    /// Registers the password of `url`'s userinfo (a secret) and every query value ([`Secrets::add_form`]: a
    /// presigned URL's signature and token as secrets, its other values as names).
    pub fn add_url(&mut self, url: &str) {
        let without_fragment = url.split('#').next().unwrap_or_default();
        if let Some((_, query)) = without_fragment.split_once('?') {
            self.add_form(query);
        }
        if let Some(rest) = url.split_once("://").map(|(_, rest)| rest) {
            let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
            if let Some((userinfo, _)) = authority.rsplit_once('@') {
                let password = userinfo.split_once(':').map_or(userinfo, |(_, password)| password);
                self.add(&percent_decode(password));
            }
        }
    }

    /// Registers everything `other` holds.
    pub fn extend(&mut self, other: &Secrets) {
        self.runs.extend_from_slice(&other.runs);
        for whole in &other.wholes {
            self.push_whole(whole.to_vec());
        }
        self.index();
    }

    /// `text` with every piece that spells a registered secret (or one the command holds, [`hold`]) replaced by
    /// [`REDACTED`]; the rest is kept as the server wrote it (a JSON body stays JSON).
    pub fn scrub(&self, text: &str) -> String {
        String::from_utf8_lossy(&self.scrub_bytes(text.as_bytes())).into_owned()
    }

    /// [`Secrets::scrub`] over bytes that may not be UTF-8 (kept as they are outside what is replaced).
    pub fn scrub_bytes(&self, bytes: &[u8]) -> Vec<u8> {
        let held = held();
        let sets: Vec<&Secrets> = [self, &*held].into_iter().filter(|s| !s.is_empty()).collect();
        scrub_with(&sets, bytes)
    }

    /// The one way server text reaches an operator: scrubbed of these secrets and the command's
    /// ([`Secrets::scrub_bytes`]), then one escaped line of at most [`SERVER_TEXT_MAX`] characters
    /// ([`server_message`]).
    pub fn quote(&self, bytes: &[u8]) -> String {
        server_message(&self.scrub_bytes(bytes))
    }

    /// Whether `bytes` spell any registered secret (in any way [`Secrets::scrub`] decodes): what a test asks of
    /// every output.
    pub fn found_in(&self, bytes: &[u8]) -> bool {
        let mut marks = Vec::new();
        find(&[self], bytes, BASE64_DEPTH, &mut marks);
        !marks.is_empty()
    }

    fn push_whole(&mut self, form: Vec<u8>) {
        if form.len() < MIN_SECRET || self.wholes.iter().any(|known| known.as_slice() == form) {
            zeroize::Zeroize::zeroize(&mut { form });
            return;
        }
        let at = self.wholes.partition_point(|known| known.len() >= form.len());
        self.wholes.insert(at, zeroize::Zeroizing::new(form));
    }

    /// Sorts and deduplicates the runs and rebuilds the filter.
    fn index(&mut self) {
        self.runs.sort_unstable();
        self.runs.dedup();
        zeroize::Zeroize::zeroize(&mut self.filter);
        if self.runs.is_empty() {
            self.filter = Vec::new();
            return;
        }
        self.filter = vec![0; FILTER_BITS / 64];
        for &run in &self.runs {
            let bit = filter_bit(run);
            self.filter[bit / 64] |= 1 << (bit % 64);
        }
    }

    fn has_run(&self, run: u64) -> bool {
        let bit = filter_bit(run);
        !self.filter.is_empty()
            && self.filter[bit / 64] & (1 << (bit % 64)) != 0
            && self.runs.binary_search(&run).is_ok()
    }
}

fn filter_bit(run: u64) -> usize {
    (run.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 48) as usize % FILTER_BITS
}

/// Spaces, `-` and `_` compared as `+`, `+` and `/`: base64url meets base64 and a form's `+` meets a space.
fn fold(b: u8) -> u8 {
    match b {
        b'-' | b' ' => b'+',
        b'_' => b'/',
        b => b,
    }
}

fn run_key(window: &[u8]) -> u64 {
    let mut key = [0u8; RUN];
    for (slot, &b) in key.iter_mut().zip(window) {
        *slot = fold(b);
    }
    u64::from_le_bytes(key)
}

/// The spellings of `secret` a server may quote that decoding cannot undo: the secret itself, the characters of
/// its base64 that depend on it alone at each of the three alignments it may have inside longer data, and its
/// hex in both cases.
fn spellings(secret: &[u8]) -> Vec<zeroize::Zeroizing<Vec<u8>>> {
    use base64::Engine as _;
    let mut out = vec![zeroize::Zeroizing::new(secret.to_vec())];
    for align in 0..3usize {
        let mut data = zeroize::Zeroizing::new(vec![0u8; align]);
        data.extend_from_slice(secret);
        let encoded = zeroize::Zeroizing::new(base64::engine::general_purpose::STANDARD_NO_PAD.encode(&*data));
        // Character j holds bits [6j, 6j + 6); the secret's bits are [8 align, 8 (align + len)).
        let first = (8 * align).div_ceil(6);
        let end = (8 * (align + secret.len())) / 6;
        if end > first {
            out.push(zeroize::Zeroizing::new(encoded.as_bytes()[first..end].to_vec()));
        }
    }
    let lower: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    out.push(zeroize::Zeroizing::new(lower.to_ascii_uppercase().into_bytes()));
    out.push(zeroize::Zeroizing::new(lower.into_bytes()));
    out
}

/// `bytes` scrubbed of every secret of `sets` (see [`Secrets::scrub`]); a second pass catches a secret that a
/// first replacement brought together.
fn scrub_with(sets: &[&Secrets], bytes: &[u8]) -> Vec<u8> {
    let mut current = bytes.to_vec();
    if sets.is_empty() {
        return current;
    }
    for _ in 0..2 {
        let mut marks = Vec::new();
        find(sets, &current, BASE64_DEPTH, &mut marks);
        if marks.is_empty() {
            break;
        }
        current = replace(&current, marks);
    }
    current
}

/// Text decoded some way, each byte with the range of the original text it came from.
struct View {
    bytes: Vec<u8>,
    from: Vec<(usize, usize)>,
}

impl Drop for View {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.bytes);
    }
}

impl View {
    fn of(bytes: &[u8]) -> Self {
        Self { bytes: bytes.to_vec(), from: (0..bytes.len()).map(|i| (i, i + 1)).collect() }
    }

    /// One round of decoding: every escape, percent sequence and entity undone once; `None` when there is none.
    fn decoded(&self) -> Option<View> {
        let bytes = &self.bytes;
        let mut out = View { bytes: Vec::with_capacity(bytes.len()), from: Vec::with_capacity(bytes.len()) };
        let mut changed = false;
        let mut i = 0;
        while i < bytes.len() {
            match escape_at(bytes, i) {
                Some((decoded, length)) => {
                    let span = (self.from[i].0, self.from[i + length - 1].1);
                    for &b in decoded.as_slice() {
                        out.bytes.push(b);
                        out.from.push(span);
                    }
                    changed = true;
                    i += length;
                }
                None => {
                    out.bytes.push(bytes[i]);
                    out.from.push(self.from[i]);
                    i += 1;
                }
            }
        }
        changed.then_some(out)
    }
}

/// Up to four decoded bytes.
struct Decoded([u8; 4], usize);

impl Decoded {
    fn byte(b: u8) -> Self {
        Self([b, 0, 0, 0], 1)
    }
    fn char(c: char) -> Self {
        let mut buffer = [0u8; 4];
        let length = c.encode_utf8(&mut buffer).len();
        Self(buffer, length)
    }
    fn as_slice(&self) -> &[u8] {
        &self.0[..self.1]
    }
}

fn hex_value(bytes: &[u8]) -> Option<u32> {
    if bytes.is_empty() || bytes.len() > 8 {
        return None;
    }
    bytes.iter().try_fold(0u32, |acc, &b| Some(acc * 16 + (b as char).to_digit(16)?))
}

/// The escape, percent sequence or entity at `bytes[i]`, decoded, and its length.
fn escape_at(bytes: &[u8], i: usize) -> Option<(Decoded, usize)> {
    let at = |from: usize, length: usize| bytes.get(i + from..i + from + length);
    match bytes[i] {
        b'\\' => match *bytes.get(i + 1)? {
            b'u' if bytes.get(i + 2) == Some(&b'{') => {
                let close = bytes[i + 3..].iter().take(7).position(|&b| b == b'}')?;
                let code = hex_value(&bytes[i + 3..i + 3 + close])?;
                Some((Decoded::char(char::from_u32(code).unwrap_or('\u{fffd}')), close + 4))
            }
            b'u' => {
                let unit = hex_value(at(2, 4)?)?;
                if (0xd800..0xdc00).contains(&unit)
                    && at(6, 2) == Some(&b"\\u"[..])
                    && let Some(low) = at(8, 4).and_then(hex_value).filter(|low| (0xdc00..0xe000).contains(low))
                {
                    let code = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
                    return Some((Decoded::char(char::from_u32(code).unwrap_or('\u{fffd}')), 12));
                }
                Some((Decoded::char(char::from_u32(unit).unwrap_or('\u{fffd}')), 6))
            }
            b'x' => Some((Decoded::byte(hex_value(at(2, 2)?)? as u8), 4)),
            b'"' | b'\\' | b'/' | b'\'' => Some((Decoded::byte(bytes[i + 1]), 2)),
            b'b' => Some((Decoded::byte(8), 2)),
            b'f' => Some((Decoded::byte(12), 2)),
            b'n' => Some((Decoded::byte(b'\n'), 2)),
            b'r' => Some((Decoded::byte(b'\r'), 2)),
            b't' => Some((Decoded::byte(b'\t'), 2)),
            _ => None,
        },
        b'%' => Some((Decoded::byte(hex_value(at(1, 2)?)? as u8), 3)),
        b'&' => entity_at(bytes, i),
        _ => None,
    }
}

/// HTML's named entities for the characters secrets and their encodings are made of.
const ENTITIES: &[(&str, char)] = &[
    ("amp", '&'),
    ("lt", '<'),
    ("gt", '>'),
    ("quot", '"'),
    ("apos", '\''),
    ("sol", '/'),
    ("bsol", '\\'),
    ("plus", '+'),
    ("equals", '='),
    ("percnt", '%'),
    ("num", '#'),
    ("colon", ':'),
    ("semi", ';'),
    ("comma", ','),
    ("period", '.'),
    ("excl", '!'),
    ("quest", '?'),
    ("commat", '@'),
    ("lowbar", '_'),
    ("dollar", '$'),
    ("ast", '*'),
    ("lsqb", '['),
    ("rsqb", ']'),
    ("lcub", '{'),
    ("rcub", '}'),
    ("lpar", '('),
    ("rpar", ')'),
    ("verbar", '|'),
    ("grave", '`'),
    ("Hat", '^'),
    ("nbsp", '\u{a0}'),
];

fn entity_at(bytes: &[u8], i: usize) -> Option<(Decoded, usize)> {
    let rest = &bytes[i + 1..];
    if rest.first() == Some(&b'#') {
        let (hex, digits_from) = match rest.get(1) {
            Some(b'x' | b'X') => (true, 2),
            _ => (false, 1),
        };
        let digits = rest[digits_from..]
            .iter()
            .take(8)
            .take_while(|b| if hex { b.is_ascii_hexdigit() } else { b.is_ascii_digit() })
            .count();
        if digits == 0 {
            return None;
        }
        let text = std::str::from_utf8(&rest[digits_from..digits_from + digits]).ok()?;
        let code = u32::from_str_radix(text, if hex { 16 } else { 10 }).ok()?;
        let semicolon = usize::from(rest.get(digits_from + digits) == Some(&b';'));
        let c = char::from_u32(code).unwrap_or('\u{fffd}');
        return Some((Decoded::char(c), 1 + digits_from + digits + semicolon));
    }
    let name_length = rest.iter().take(8).take_while(|b| b.is_ascii_alphabetic()).count();
    if rest.get(name_length) != Some(&b';') {
        return None;
    }
    let name = &rest[..name_length];
    let &(_, c) = ENTITIES.iter().find(|(known, _)| known.as_bytes() == name)?;
    Some((Decoded::char(c), name_length + 2))
}

/// Pushes to `marks` the ranges of `bytes` that spell a secret of `sets`: in the text as it is and after each
/// round of decoding, then inside each run of base64 characters (decoded at every alignment, `depth` deep).
fn find(sets: &[&Secrets], bytes: &[u8], depth: usize, marks: &mut Vec<(usize, usize)>) {
    let mut view = View::of(bytes);
    for round in 0..=DECODE_ROUNDS {
        scan(sets, &view, marks);
        match view.decoded() {
            Some(next) if round < DECODE_ROUNDS => view = next,
            _ => break,
        }
    }
    if depth == 0 {
        return;
    }
    for (start, end) in base64_runs(&view.bytes) {
        for offset in 0..4 {
            if end - start < offset + 6 {
                break;
            }
            let decoded = zeroize::Zeroizing::new(base64_lenient(&view.bytes[start + offset..end]));
            let mut inner = Vec::new();
            find(sets, &decoded, depth - 1, &mut inner);
            if !inner.is_empty() {
                marks.push((view.from[start].0, view.from[end - 1].1));
                break;
            }
        }
    }
}

/// Marks the windows and whole values of `sets` found in `view`.
fn scan(sets: &[&Secrets], view: &View, marks: &mut Vec<(usize, usize)>) {
    let folded = zeroize::Zeroizing::new(view.bytes.iter().map(|&b| fold(b)).collect::<Vec<u8>>());
    if folded.len() >= RUN {
        for (i, window) in folded.windows(RUN).enumerate() {
            let key = u64::from_le_bytes(window.try_into().expect("a window of RUN bytes"));
            if sets.iter().any(|set| set.has_run(key)) {
                marks.push((view.from[i].0, view.from[i + RUN - 1].1));
            }
        }
    }
    for set in sets {
        for whole in &set.wholes {
            if whole.len() > folded.len() {
                continue;
            }
            for (i, window) in folded.windows(whole.len()).enumerate() {
                if window == whole.as_slice() {
                    marks.push((view.from[i].0, view.from[i + whole.len() - 1].1));
                }
            }
        }
    }
}

fn is_base64_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_')
}

/// The runs of base64 (either alphabet) characters long enough to hold a secret, as `(start, end)`, each with
/// the padding that follows it.
fn base64_runs(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !is_base64_char(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_base64_char(bytes[i]) {
            i += 1;
        }
        let end = i;
        while i < bytes.len() && bytes[i] == b'=' {
            i += 1;
        }
        if (end - start) * 3 / 4 >= MIN_SECRET {
            runs.push((start, i));
        }
    }
    runs
}

/// Base64 of either alphabet decoded as far as it goes, padding and other characters skipped.
fn base64_lenient(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut bits, mut count) = (0u32, 0u32);
    for &c in text {
        let value = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => continue,
        };
        bits = (bits << 6) | u32::from(value);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    out
}

/// `bytes` with the ranges of `marks` (merged, widened to whole UTF-8 characters) replaced by [`REDACTED`].
fn replace(bytes: &[u8], mut marks: Vec<(usize, usize)>) -> Vec<u8> {
    let continuation = |b: u8| b & 0xc0 == 0x80;
    marks.sort_unstable();
    let mut out = Vec::with_capacity(bytes.len());
    let mut copied = 0;
    let mut i = 0;
    while i < marks.len() {
        let (mut start, mut end) = marks[i];
        i += 1;
        while i < marks.len() && marks[i].0 <= end {
            end = end.max(marks[i].1);
            i += 1;
        }
        start = start.max(copied);
        while start > copied && continuation(bytes[start]) {
            start -= 1;
        }
        while end < bytes.len() && continuation(bytes[end]) {
            end += 1;
        }
        if end <= start {
            continue;
        }
        out.extend_from_slice(&bytes[copied..start]);
        out.extend_from_slice(REDACTED.as_bytes());
        copied = end;
    }
    out.extend_from_slice(&bytes[copied..]);
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

    /// Every way a server may spell `secret` inside its text: raw, JSON (`\/`, every character `\uXXXX` with
    /// surrogate pairs), percent and form encoding, HTML entities, base64 and base64url (padded or not, alone
    /// and inside `user:secret`), JSON inside percent-encoding, base64 of a JSON document holding it.
    pub(crate) fn spelled(secret: &str) -> Vec<String> {
        use base64::Engine as _;
        use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
        let json = serde_json::Value::String(secret.to_owned()).to_string();
        let json = &json[1..json.len() - 1];
        let slashes = json.replace('/', "\\/");
        let units: String = secret.encode_utf16().map(|u| format!("\\u{u:04x}")).collect();
        let percent: String = secret.bytes().map(|b| format!("%{b:02X}")).collect();
        let form: String = secret
            .bytes()
            .map(|b| match b {
                b' ' => "+".to_owned(),
                b if b.is_ascii_alphanumeric() => (b as char).to_string(),
                b => format!("%{b:02x}"),
            })
            .collect();
        let decimal: String = secret.chars().map(|c| format!("&#{};", c as u32)).collect();
        let named: String = secret
            .chars()
            .map(|c| match c {
                '/' => "&sol;".to_owned(),
                '+' => "&plus;".to_owned(),
                '=' => "&equals;".to_owned(),
                '"' => "&quot;".to_owned(),
                '&' => "&amp;".to_owned(),
                c if c.is_ascii() => c.to_string(),
                c => format!("&#x{:X};", c as u32),
            })
            .collect();
        let json_in_percent: String = slashes.bytes().map(|b| format!("%{b:02x}")).collect();
        let document = format!("{{\"sub\":\"x\",\"tok\":\"{slashes}\"}}");
        let mut out = vec![
            secret.to_owned(),
            json.to_owned(),
            slashes.clone(),
            units,
            percent,
            form,
            decimal,
            named,
            json_in_percent,
            URL_SAFE_NO_PAD.encode(document.as_bytes()),
        ];
        for engine in [&STANDARD, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD] {
            out.push(engine.encode(secret));
            out.push(format!("Basic {}", engine.encode(format!("ci-user:{secret}"))));
        }
        out
    }

    /// No run of `RUN` characters of `secret` in `shown`, as written or in any spelling the scrubber decodes.
    pub(crate) fn assert_no_run(secret: &str, shown: &str) {
        let chars: Vec<char> = secret.chars().collect();
        for window in chars.windows(RUN) {
            let run: String = window.iter().collect();
            assert!(!shown.contains(&run), "`{run}` of the secret in {shown}");
        }
        let mut probe = Secrets::new();
        probe.add(secret.as_bytes());
        assert!(!probe.found_in(shown.as_bytes()), "a spelling of the secret in {shown}");
    }

    /// Each spelling of a secret with `/`, `+`, `=`, quotes, a backslash and non-ASCII is removed, with the
    /// text around it kept and the result one line.
    #[test]
    fn every_spelling_of_a_secret_is_removed() {
        let secret = "hvs.C/a+b=c\"d'e\\f é漢🔑 g/h";
        let mut secrets = Secrets::new();
        secrets.add_text(secret);
        for spelling in spelled(secret) {
            let text = format!("{{\"errors\":[\"denied: {spelling} (sorry)\"]}}");
            let shown = secrets.quote(text.as_bytes());
            assert_no_run(secret, &shown);
            assert!(shown.starts_with("{\"errors\":[\"denied: ") && shown.ends_with(" (sorry)\"]}"), "{shown}");
            assert!(shown.contains(REDACTED), "{spelling}: {shown}");
        }
    }

    /// A new volume key in a KV v2 write (`{"data": {…}}`, a key of base64 that holds `/` and `+`), echoed by a
    /// server that writes `/` as `\/` (PHP) or every character as `\uXXXX`: none of it is shown; the CAS option
    /// and the field name, which are no secrets, stay.
    #[test]
    fn a_kv_write_echoed_with_escapes_shows_no_key() {
        let key = "q8/Vx+3kP0/zA1b+C9d2E/f4G6h8J0k2L4m6N8p0Q2r=";
        let mut secrets = Secrets::new();
        secrets.add_json(&serde_json::json!({"options": {"cas": 3}, "data": {"passphrase": key}}));
        let slashes = key.replace('/', "\\/");
        let units: String = key.encode_utf16().map(|u| format!("\\u{u:04x}")).collect();
        for echoed in [slashes, units] {
            let text = format!(
                r#"{{"errors":["check-and-set mismatch: {{\"cas\":3,\"data\":{{\"passphrase\":\"{echoed}\"}}}}"]}}"#
            );
            let shown = secrets.quote(text.as_bytes());
            assert_no_run(key, &shown);
            assert!(shown.contains("check-and-set mismatch") && shown.contains("passphrase"), "{shown}");
        }
    }

    /// A server quoting only part of a secret shows fewer than `RUN` bytes of it; a name is removed only whole.
    #[test]
    fn a_part_of_a_secret_is_removed_and_a_name_only_whole() {
        let mut secrets = Secrets::new();
        secrets.add(b"0123456789abcdefghij");
        secrets.add_name(b"alias/production-key");
        let shown = secrets.scrub("got 456789abcdef and alias/production-key, not alias/production");
        assert_eq!(shown, "got REDACTED and REDACTED, not alias/production");
        assert_eq!(secrets.scrub("0123456 is fine"), "0123456 is fine");
    }

    /// A secret the command holds is removed from every server text, whoever quotes it.
    #[test]
    fn a_held_secret_leaves_every_server_text() {
        // Held for every test of this process: nothing else here spells it.
        hold(b"Hq7Zx9/Lp3+Wv.held");
        let shown = server_message(br#"{"echo":"Hq7Zx9\/Lp3+Wv.held"} SHE3Wng5L0xwMytXdi5oZWxk"#);
        assert_eq!(shown, r#"{"echo":"REDACTED"} REDACTED"#);
        assert_eq!(url("https://h/Hq7Zx9%2FLp3%2BWv.held/x"), "https://h/REDACTED/x");
    }

    /// A form body (STS's `AssumeRoleWithWebIdentity`) registers its token as a secret and its action as a name.
    #[test]
    fn a_form_body_registers_its_secret_fields() {
        let mut secrets = Secrets::new();
        secrets.add_form("Action=AssumeRoleWithWebIdentity&RoleArn=arn%3Aaws%3Aiam%3A%3A1%3Arole%2Fr&WebIdentityToken=eyJhbGciOi.eyJzdWIi.c2ln%2B%2F");
        let shown = secrets.scrub("refused: WebIdentityToken=eyJhbGciOi.eyJzdWIi.c2ln+/ for arn:aws:iam::1:role/r's");
        assert_eq!(shown, "refused: WebIdentityToken=REDACTED for REDACTED's");
    }

    /// Bytes that are not UTF-8 stay as they were outside what is replaced; a secret inside a multi-byte
    /// character's neighbourhood is cut at character boundaries.
    #[test]
    fn replacement_keeps_characters_whole() {
        let mut secrets = Secrets::new();
        secrets.add("é-secret-value".as_bytes());
        let shown = secrets.scrub_bytes("aé-secret-value\u{e9}b".as_bytes());
        assert_eq!(String::from_utf8(shown).unwrap(), "aREDACTED\u{e9}b");
        assert_eq!(secrets.scrub_bytes(b"\xff\xfe plain"), b"\xff\xfe plain");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// Random secrets made of the characters encoders change (`/`, `+`, `=`, quotes, `&`, `%`, `\\`, spaces,
        /// non-ASCII), each spelling of them echoed inside random text: no run of `RUN` characters survives.
        #[test]
        fn no_spelling_of_a_random_secret_survives(
            secret in "[a-zA-Z0-9/+=\"'&%\\\\ é漢🔑._-]{8,40}",
            before in "[ -~]{0,20}",
            after in "[ -~]{0,20}",
        ) {
            let mut secrets = Secrets::new();
            secrets.add_text(&secret);
            for spelling in spelled(&secret) {
                let shown = secrets.quote(format!("{before}{spelling}{after}").as_bytes());
                assert_no_run(&secret, &shown);
            }
        }

        /// The decoder never panics, and scrubbing without secrets changes nothing.
        #[test]
        fn scrubbing_any_bytes_is_total(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)) {
            let mut secrets = Secrets::new();
            secrets.add(b"never-in-random-input-XYZ");
            let _ = secrets.quote(&bytes);
            proptest::prop_assert_eq!(Secrets::new().scrub_bytes(&bytes), bytes);
        }
    }
}
