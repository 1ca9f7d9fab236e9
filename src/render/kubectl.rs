//! Documents printed exactly as kubectl prints them (`-o yaml`, `-o json`), byte for byte.
//!
//! kubectl turns every object into JSON and then, for YAML, into YAML through sigs.k8s.io/yaml (a fork of
//! go-yaml v2 and its libyaml-derived emitter). Three of its habits decide bytes that a generic YAML writer
//! (serde-saphyr, which the rest of `render` uses) gets differently, so this module writes the YAML itself:
//! - map keys in go-yaml's "natural" order (`key2` before `key10`, non-letters before letters), not byte order;
//! - YAML 1.1 resolution decides quoting: `"0x1F"`, `"1_000"`, `"2001-12-14"` are quoted, but `2001-02-30`
//!   (no such day), `-inf` and `0b12` are plain; `'-'` and `'---a'` are single-quoted;
//! - keys longer than 128 characters are written as `? key` / `: value`.
//!
//! JSON is `encoding/json` with four-space indentation, keys in byte order and `<`, `>`, `&` escaped.
//!
//! Only what Kubernetes objects built by cryptadm contain is supported: printable ASCII scalars (and multi-line
//! strings without tabs or trailing blanks, written as literal blocks), maps, sequences of scalars or maps,
//! booleans and integers. Anything else is a [`RenderError`] rather than bytes kubectl would not print.

use super::RenderError;
use serde_json::{Map, Value};
use std::cmp::Ordering;

/// go-yaml's line width: plain and quoted scalars with spaces are folded beyond it.
const BEST_WIDTH: usize = 80;
/// libyaml writes a longer key as an explicit `? key` entry.
const MAX_SIMPLE_KEY_LEN: usize = 128;

/// Renders one object as `kubectl -o yaml` does.
pub fn yaml(value: &Value) -> Result<String, RenderError> {
    let Value::Object(map) = value else { return Err(unsupported("a document that is not a map")) };
    let mut out = String::new();
    mapping(&mut out, map, 0, false)?;
    Ok(out)
}

/// Renders one object as `kubectl -o json` does.
pub fn json(value: &Value) -> Result<String, RenderError> {
    let sorted = sorted_bytewise(value);
    let mut bytes = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
    serde::Serialize::serialize(&sorted, &mut serializer).map_err(|e| RenderError(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|e| RenderError(e.to_string()))?;
    // encoding/json's HTML-safe escaping; these characters only ever occur inside JSON strings.
    let escaped = text
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029");
    Ok(escaped + "\n")
}

fn sorted_bytewise(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k.clone(), sorted_bytewise(v))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted_bytewise).collect()),
        other => other.clone(),
    }
}

fn unsupported(what: &str) -> RenderError {
    RenderError(format!("cannot write {what} the way kubectl does"))
}

/// Writes a block mapping whose keys start at column `indent`; the first key is written where the output
/// currently stands when `first_inline` (after a sequence's `- `).
fn mapping(out: &mut String, map: &Map<String, Value>, indent: usize, first_inline: bool) -> Result<(), RenderError> {
    for (i, key) in go_yaml_key_order(map.keys()).into_iter().enumerate() {
        if i > 0 || !first_inline {
            pad(out, indent);
        }
        let value = &map[key];
        if key.len() > MAX_SIMPLE_KEY_LEN {
            // An explicit key: `? key`, then `: value` on the next line, both at the mapping's indentation.
            out.push_str("? ");
            out.push_str(&single_line(key, indent + 2, true)?);
            out.push('\n');
            pad(out, indent);
            out.push(':');
        } else {
            out.push_str(&single_line(key, indent, true)?);
            out.push(':');
        }
        node_after_indicator(out, value, indent)?;
    }
    Ok(())
}

/// Writes a block sequence whose `-` stand at column `indent` (kubectl does not indent a sequence under its key).
fn sequence(out: &mut String, items: &[Value], indent: usize) -> Result<(), RenderError> {
    for item in items {
        pad(out, indent);
        out.push('-');
        match item {
            Value::Object(map) if !map.is_empty() => {
                out.push(' ');
                mapping(out, map, indent + 2, true)?;
            }
            Value::Array(inner) if !inner.is_empty() => return Err(unsupported("a sequence inside a sequence")),
            other => node_after_indicator(out, other, indent)?,
        }
    }
    Ok(())
}

/// Writes the value that follows a `key:` or `-` indicator at column `indent`, ending with a newline.
fn node_after_indicator(out: &mut String, value: &Value, indent: usize) -> Result<(), RenderError> {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            mapping(out, map, indent + 2, false)
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            sequence(out, items, indent)
        }
        Value::Object(_) => {
            out.push_str(" {}\n");
            Ok(())
        }
        Value::Array(_) => {
            out.push_str(" []\n");
            Ok(())
        }
        Value::Null => {
            out.push_str(" null\n");
            Ok(())
        }
        Value::Bool(b) => {
            out.push_str(if *b { " true\n" } else { " false\n" });
            Ok(())
        }
        Value::Number(n) if n.is_i64() || n.is_u64() => {
            out.push(' ');
            out.push_str(&n.to_string());
            out.push('\n');
            Ok(())
        }
        Value::Number(_) => Err(unsupported("a floating-point number")),
        Value::String(s) if s.contains('\n') => literal(out, s, indent + 2),
        Value::String(s) => {
            out.push(' ');
            out.push_str(&single_line(s, indent, false)?);
            out.push('\n');
            Ok(())
        }
    }
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// A literal block scalar (`|` or `|-`), its lines at column `indent`.
fn literal(out: &mut String, text: &str, indent: usize) -> Result<(), RenderError> {
    let body = text.strip_suffix('\n');
    let lines = body.unwrap_or(text);
    let plain_lines =
        lines.split('\n').all(|line| line.bytes().all(|b| (0x20..0x7f).contains(&b)) && !line.ends_with(' '));
    // Leading blanks need an indentation indicator, trailing empty lines `|+`, blanks before a line break
    // make go-yaml fall back to a quoted scalar: none of that occurs in what cryptadm writes.
    if !plain_lines || lines.is_empty() || lines.ends_with('\n') || lines.starts_with(['\n', ' ']) {
        return Err(unsupported("this multi-line string"));
    }
    out.push_str(if body.is_some() { " |\n" } else { " |-\n" });
    for line in lines.split('\n') {
        if !line.is_empty() {
            pad(out, indent);
            out.push_str(line);
        }
        out.push('\n');
    }
    Ok(())
}

/// How go-yaml writes a one-line string: plain, `'single'` or `"double"` quoted.
fn single_line(s: &str, column: usize, is_key: bool) -> Result<String, RenderError> {
    if !s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Err(unsupported("a string with control or non-ASCII characters"));
    }
    // Past the line width go-yaml folds scalars at spaces; cryptadm's strings with spaces are short.
    if s.contains(' ') && column + s.len() + 4 > BEST_WIDTH {
        return Err(unsupported("a long string with spaces"));
    }
    if !resolves_to_string(s) || is_base60_float(s) {
        return Ok(double_quoted(s));
    }
    if s.is_empty() && is_key || !block_plain_allowed(s) {
        return Ok(format!("'{}'", s.replace('\'', "''")));
    }
    Ok(s.to_owned())
}

fn double_quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// libyaml's analysis of a one-line printable scalar: may it be written plain in block context?
fn block_plain_allowed(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() {
        return true;
    }
    if b.starts_with(b"---") || b.starts_with(b"...") || b[0] == b' ' || b[b.len() - 1] == b' ' {
        return false;
    }
    let followed_by_blank = |i: usize| i + 1 >= b.len() || b[i + 1] == b' ';
    for (i, &c) in b.iter().enumerate() {
        let indicator = if i == 0 {
            match c {
                b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>' | b'\'' | b'"' | b'%'
                | b'@' | b'`' => true,
                b'?' | b':' | b'-' => followed_by_blank(i),
                _ => false,
            }
        } else {
            match c {
                b':' => followed_by_blank(i),
                b'#' => b[i - 1] == b' ',
                _ => false,
            }
        };
        if indicator {
            return false;
        }
    }
    true
}

/// go-yaml v2's `resolve("", s)` returns `!!str`: written plain, the string would read back as a string.
fn resolves_to_string(s: &str) -> bool {
    const RESERVED: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "n", "N", "no", "No", "NO", "false",
        "False", "FALSE", "off", "Off", "OFF", "", "~", "null", "Null", "NULL", ".nan", ".NaN", ".NAN", ".inf", ".Inf",
        ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", "<<",
    ];
    let Some(&first) = s.as_bytes().first() else { return false };
    let hinted = matches!(first, b'+' | b'-' | b'0'..=b'9' | b'.') || b"yYnNtTfFoO~".contains(&first);
    if !hinted {
        return true;
    }
    if RESERVED.contains(&s) {
        return false;
    }
    match first {
        b'.' => !go_parse_float(s),
        b'+' | b'-' | b'0'..=b'9' => {
            if is_date(s) {
                return false;
            }
            let plain = s.replace('_', "");
            if go_parse_int(&plain) || (is_yaml_style_float(&plain) && go_parse_float(&plain)) {
                return false;
            }
            if let Some(bits) = plain.strip_prefix("0b") {
                return !go_parse_radix(bits, 2, u64::MAX as u128);
            }
            if let Some(bits) = plain.strip_prefix("-0b") {
                return !go_parse_radix(bits, 2, 1 << 63);
            }
            true
        }
        _ => true,
    }
}

/// `strconv.ParseInt(s, 0, 64)` or `strconv.ParseUint(s, 0, 64)` succeeds (no underscores left in `s`).
fn go_parse_int(s: &str) -> bool {
    let (limit, digits) = match s.as_bytes().first() {
        Some(b'-') => (1u128 << 63, &s[1..]),
        Some(b'+') => ((1u128 << 63) - 1, &s[1..]),
        _ => (u64::MAX as u128, s),
    };
    if digits.is_empty() {
        return false;
    }
    let lower = digits.to_ascii_lowercase();
    let (radix, rest) = if lower.len() >= 3 && lower.starts_with("0b") {
        (2, &digits[2..])
    } else if lower.len() >= 3 && lower.starts_with("0o") {
        (8, &digits[2..])
    } else if lower.len() >= 3 && lower.starts_with("0x") {
        (16, &digits[2..])
    } else if let Some(octal) = digits.strip_prefix('0') {
        // A lone "0" leaves no digits, which Go accepts as zero.
        return octal.is_empty() || go_parse_radix(octal, 8, limit);
    } else {
        (10, digits)
    };
    go_parse_radix(rest, radix, limit)
}

/// `rest` is a non-empty run of digits in `radix` whose value is at most `limit`.
fn go_parse_radix(rest: &str, radix: u32, limit: u128) -> bool {
    if rest.is_empty() {
        return false;
    }
    let mut value: u128 = 0;
    for c in rest.chars() {
        let Some(d) = c.to_digit(radix) else { return false };
        value = value * u128::from(radix) + u128::from(d);
        if value > limit {
            return false;
        }
    }
    true
}

/// go-yaml's `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// `strconv.ParseFloat(s, 64)` succeeds, for decimal spellings (go-yaml never reaches Go's hexadecimal or
/// `inf`/`nan` forms with the strings cryptadm writes; they are reported as not floats, i.e. quoted nowhere).
fn go_parse_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let (mut saw_dot, mut saw_digits, mut underscores) = (false, false, false);
    while i < b.len() {
        match b[i] {
            b'_' => underscores = true,
            b'.' if saw_dot => break,
            b'.' => saw_dot = true,
            b'0'..=b'9' => saw_digits = true,
            _ => break,
        }
        i += 1;
    }
    if !saw_digits {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return false;
        }
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            underscores |= b[i] == b'_';
            i += 1;
        }
    }
    if i != b.len() || underscores && !underscores_between_digits(s) {
        return false;
    }
    // Go reports overflow to infinity as an error; Rust rounds the same decimal to the same double.
    s.replace('_', "").parse::<f64>().is_ok_and(f64::is_finite)
}

/// Go's `underscoreOK` for a decimal number: each `_` follows a digit and precedes one.
fn underscores_between_digits(s: &str) -> bool {
    let mut saw = b'^';
    for &c in s.trim_start_matches(['+', '-']).as_bytes() {
        if c.is_ascii_digit() {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else if saw == b'_' {
            return false;
        } else {
            saw = b'!';
        }
    }
    saw != b'_'
}

/// go-yaml tries timestamps on strings that start with `YYYY-`; of its formats only the date `2006-1-2` can
/// match a string without `:` or spaces, and Go checks the date exists.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let mut parts = s[5..].splitn(2, '-');
    let (Some(month), Some(day)) = (parts.next(), parts.next()) else { return false };
    let number = |t: &str| -> Option<u32> {
        (1..=2).contains(&t.len()).then_some(())?;
        t.bytes().all(|c| c.is_ascii_digit()).then(|| t.parse().ok())?
    };
    let (Some(month), Some(day), Ok(year)) = (number(month), number(day), s[..4].parse::<u32>()) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// go-yaml's `isBase60Float`: `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`.
fn is_base60_float(s: &str) -> bool {
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    if unsigned.contains('.') && !fraction.bytes().all(|c| c.is_ascii_digit() || c == b'_') {
        return false;
    }
    let mut parts = whole.split(':');
    let head = parts.next().unwrap_or_default();
    let head_ok = head.as_bytes().first().is_some_and(u8::is_ascii_digit)
        && head.bytes().all(|c| c.is_ascii_digit() || c == b'_');
    let mut sexagesimal = parts.peekable();
    head_ok
        && sexagesimal.peek().is_some()
        && sexagesimal.all(|p| match p.as_bytes() {
            [d] => d.is_ascii_digit(),
            [t, d] => (b'0'..=b'5').contains(t) && d.is_ascii_digit(),
            _ => false,
        })
}

/// Keys in go-yaml's order ([`natural_order`]).
///
/// That order is not transitive on every set of keys (`007` < `0b1` < `1.0` < `007`: a letter, then digit runs
/// compared as numbers). go-yaml sorts the keys of a Go map, whose iteration order is random, so for such a set
/// kubectl prints a different order from run to run and no output can match it byte for byte. Wherever the order
/// is consistent, every sorting algorithm gives the same result; a binary insertion sort is used because it
/// gives a deterministic result on an inconsistent order too, where the standard library's sorts may panic.
pub fn go_yaml_key_order<'a>(keys: impl IntoIterator<Item = &'a String>) -> Vec<&'a String> {
    let mut sorted: Vec<&String> = Vec::new();
    for key in keys {
        let at = sorted.partition_point(|placed| natural_order(placed, key) != Ordering::Greater);
        sorted.insert(at, key);
    }
    sorted
}

/// go-yaml v2's map key order (`keyList.Less` for string keys): runs of digits compare as numbers, letters
/// compare by code point, and a letter sorts after anything that is not one.
pub fn natural_order(a: &str, b: &str) -> Ordering {
    if less(a, b) {
        Ordering::Less
    } else if less(b, a) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

fn less(a: &str, b: &str) -> bool {
    let (ar, br): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    for i in 0..ar.len().min(br.len()) {
        if ar[i] == br[i] {
            continue;
        }
        let (al, bl) = (ar[i].is_alphabetic(), br[i].is_alphabetic());
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return bl;
        }
        // Go accumulates in an int64 that may wrap; so does this.
        let (mut an, mut bn) = (0i64, 0i64);
        if ar[i] == '0' || br[i] == '0' {
            for j in (0..i).rev() {
                if !ar[j].is_ascii_digit() {
                    break;
                }
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an.wrapping_mul(10).wrapping_add(i64::from(ar[ai] as u8 - b'0'));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn.wrapping_mul(10).wrapping_add(i64::from(br[bi] as u8 - b'0'));
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quoting_follows_go_yaml() {
        // Observed with kubectl v1.32.4 (`kubectl create secret generic --from-file=KEY=… -o yaml`).
        let cases = [
            ("-", "'-'"),
            ("--", "--"),
            ("---", "'---'"),
            ("---a", "'---a'"),
            ("-a", "-a"),
            ("-1", "\"-1\""),
            ("-inf", "-inf"),
            ("-.5", "\"-.5\""),
            ("-0b_1", "\"-0b_1\""),
            (".5", "\".5\""),
            (".5_5", "\".5_5\""),
            (".5__5", ".5__5"),
            ("._5", "._5"),
            (".5e", ".5e"),
            (".5e400", ".5e400"),
            (".inf", "\".inf\""),
            (".Inf", "\".Inf\""),
            ("0", "\"0\""),
            ("08", "\"08\""),
            ("0b12", "0b12"),
            ("0b_1", "\"0b_1\""),
            ("0x", "0x"),
            ("0xg", "0xg"),
            ("0X1", "\"0X1\""),
            ("1_", "\"1_\""),
            ("1e", "1e"),
            ("1e5.5", "1e5.5"),
            ("1e_5", "\"1e_5\""),
            ("1..2", "1..2"),
            ("2001-12-14", "\"2001-12-14\""),
            ("2001-2-3", "\"2001-2-3\""),
            ("2001-02-30", "2001-02-30"),
            ("1900-02-29", "1900-02-29"),
            ("2000-02-29", "\"2000-02-29\""),
            ("2001-13-01", "2001-13-01"),
            ("99999999999999999999", "\"99999999999999999999\""),
            ("Off", "\"Off\""),
            ("Inf", "Inf"),
            ("NaN", "NaN"),
            ("y", "\"y\""),
            ("Tru1", "Tru1"),
            ("+123", "\"+123\""),
            ("/abc", "/abc"),
            ("", "\"\""),
        ];
        for (input, expected) in cases {
            assert_eq!(single_line(input, 2, false).unwrap(), expected, "{input:?}");
        }
    }

    #[test]
    fn keys_in_go_yaml_order() {
        let mut keys = vec!["key10", "key2", "Key1", "k2", "a01", "a1", "a0", "a00", "_a", "-a", "0", "00", "10", "9"];
        keys.sort_by(|a, b| natural_order(a, b));
        assert_eq!(keys, ["-a", "_a", "0", "00", "9", "10", "Key1", "a0", "a00", "a1", "a01", "k2", "key2", "key10"]);
    }

    #[test]
    fn block_layout() {
        let doc = json!({
            "kind": "X",
            "spec": {"list": [{"b": 1, "a": "x"}, "y"], "empty": {}, "none": [], "on": true,
                     "script": "set -eu\n\necho x\n", "tail": "a\nb"},
        });
        assert_eq!(
            yaml(&doc).unwrap(),
            "kind: X\nspec:\n  empty: {}\n  list:\n  - a: x\n    b: 1\n  - \"y\"\n  none: []\n  \"on\": true\n  \
             script: |\n    set -eu\n\n    echo x\n  tail: |-\n    a\n    b\n"
        );
        let long = "k".repeat(129);
        assert_eq!(yaml(&json!({ &long: "v" })).unwrap(), format!("? {long}\n: v\n"));
    }

    #[test]
    fn json_is_sorted_four_spaces_and_html_safe() {
        let doc = json!({"kind": "X", "apiVersion": "v1", "data": {"b": "<&>", "a": []}});
        assert_eq!(
            json(&doc).unwrap(),
            "{\n    \"apiVersion\": \"v1\",\n    \"data\": {\n        \"a\": [],\n        \"b\": \
             \"\\u003c\\u0026\\u003e\"\n    },\n    \"kind\": \"X\"\n}\n"
        );
    }

    #[test]
    fn inconsistent_key_sets_sort_deterministically() {
        // 007 < 0b1 < 1.0 < 007: no order satisfies go-yaml's comparison; any fixed answer will do, no panic.
        let keys: Vec<String> = ["1.0", "0b1", "007"].iter().map(|s| s.to_string()).collect();
        let first = go_yaml_key_order(&keys);
        assert_eq!(first.len(), 3);
        assert_eq!(go_yaml_key_order(&keys), first);
    }

    proptest::proptest! {
        /// Every name kubectl accepts as a data key, with any base64 value, is written (never an error) and reads
        /// back as the same string.
        #[test]
        fn every_valid_data_key_renders(key in "[-._a-zA-Z0-9]{1,253}", value in "[A-Za-z0-9+/]{0,12}={0,2}") {
            proptest::prop_assume!(key != "." && !key.starts_with(".."));
            let doc = json!({"data": {&key: &value}});
            let text = yaml(&doc).unwrap();
            let back: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>> =
                serde_saphyr::from_str(&text).unwrap();
            proptest::prop_assert_eq!(&back["data"][&key], &value);
        }
    }

    #[test]
    fn unsupported_strings_are_errors() {
        assert!(yaml(&json!({"a": "tab\there"})).is_err());
        assert!(yaml(&json!({"a": "trailing \nspace"})).is_err());
        assert!(yaml(&json!({"a": 1.5})).is_err());
    }
}
