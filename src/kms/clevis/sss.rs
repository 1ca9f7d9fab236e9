//! clevis's `sss` pin: Shamir's secret sharing over GF(p), as clevis-encrypt-sss and clevis-decrypt-sss do it.
//!
//! Encrypting: a random 256-bit prime `p` and a random polynomial of degree `t - 1` over GF(p); its constant
//! term, 32 bytes big-endian, is the A256GCM key of the outer JWE (`"alg":"dir"`). Each child pin encrypts one
//! point of the polynomial: `x ‖ y`, each 32 bytes big-endian, x random and non-zero. The protected header is
//! `{"alg":"dir","clevis":{"pin":"sss","sss":{"jwe":[CHILD,…],"p":P,"t":T}},"enc":"A256GCM"}`, the children
//! compact JWEs in the order the configuration lists them. Decrypting recovers `t` points through the children
//! and interpolates the polynomial at 0 (Lagrange).
//!
//! clevis draws a *safe* prime (OpenSSL's `BN_generate_prime_ex(…, safe=1)`); any prime makes GF(p) a field and
//! both programs read whatever `p` the header carries, so cryptadm draws a plain random prime (num-bigint-dig's,
//! as for RSA keys), which is much cheaper.

use super::{Error, Jwe, Pin, Settings, b64_decode, b64_encode};
use crate::crypto::SecretBytes;
use num_bigint_dig::{BigUint, ModInverse, RandBigInt, RandPrime};
use p521::elliptic_curve::rand_core::OsRng;
use serde_json::{Value, json};
use zeroize::Zeroize;

/// Bytes of the key, of `p`, and of each coordinate of a point.
const KEY_BYTES: usize = 32;

/// Parses `{"t":N,"pins":{NAME: CONFIG | [CONFIG, …]}}` (`t` defaults to 1, as in clevis).
pub(super) fn config_from_json(config: &Value, depth: usize) -> Result<Pin, Error> {
    let bad = |problem: String| Error::Config(format!("sss: {problem}"));
    let threshold = match config.get("t") {
        None => 1,
        Some(t) => t.as_u64().ok_or_else(|| bad("`t` must be a positive integer".into()))?,
    };
    let pins = config.get("pins").and_then(Value::as_object).ok_or_else(|| bad("missing the `pins` object".into()))?;
    let mut children = Vec::new();
    for (name, configs) in pins {
        let list = match configs {
            Value::Object(_) => std::slice::from_ref(configs),
            Value::Array(list) => &list[..],
            _ => return Err(bad(format!("pin `{name}` must be a configuration object or a list of them"))),
        };
        for child in list {
            children.push(Pin::from_json(name, child, depth + 1)?);
        }
    }
    if threshold < 1 || threshold > children.len() as u64 {
        return Err(bad(format!("invalid threshold (required: 1 <= {threshold} <= {})", children.len())));
    }
    Ok(Pin::Sss { threshold: threshold as usize, pins: children })
}

/// Fixed-width big-endian bytes of `n` (which is below `p`, so it fits).
fn to_bytes(n: &BigUint) -> Vec<u8> {
    let mut raw = n.to_bytes_be();
    let mut out = vec![0u8; KEY_BYTES.saturating_sub(raw.len())];
    out.extend_from_slice(&raw);
    raw.zeroize();
    out
}

/// A random polynomial over GF(p): the coefficients, the constant term first.
struct Polynomial {
    p: BigUint,
    coefficients: Vec<BigUint>,
}

impl Drop for Polynomial {
    fn drop(&mut self) {
        self.coefficients.iter_mut().for_each(Zeroize::zeroize);
    }
}

impl Polynomial {
    fn random(threshold: usize) -> Self {
        let p = OsRng.gen_prime(KEY_BYTES * 8);
        let coefficients = (0..threshold).map(|_| OsRng.gen_biguint_below(&p)).collect();
        Self { p, coefficients }
    }

    /// A point `x ‖ y` at a random non-zero x (x = 0 would be the secret itself).
    fn point(&self) -> SecretBytes {
        let x = OsRng.gen_biguint_range(&BigUint::from(1u8), &self.p);
        let mut y = BigUint::from(0u8);
        let mut power = BigUint::from(1u8);
        for coefficient in &self.coefficients {
            y = (y + coefficient * &power) % &self.p;
            power = (power * &x) % &self.p;
        }
        let mut point = to_bytes(&x);
        point.extend_from_slice(&to_bytes(&y));
        y.zeroize();
        SecretBytes::new(point)
    }
}

/// `clevis encrypt sss`: shares to every child pin, the plaintext under the polynomial's constant term.
pub(super) fn encrypt(threshold: usize, pins: &[Pin], plaintext: &[u8], settings: &Settings) -> Result<String, Error> {
    let polynomial = Polynomial::random(threshold);
    let points: Vec<SecretBytes> = pins.iter().map(|_| polynomial.point()).collect();
    let children = encrypt_children(pins, &points, settings)?;
    let header = json!({
        "alg": "dir",
        "clevis": {"pin": "sss", "sss": {"jwe": children, "p": b64_encode(&to_bytes(&polynomial.p)), "t": threshold}},
        "enc": super::tang::ENC,
    });
    let key = SecretBytes::new(to_bytes(&polynomial.coefficients[0]));
    Ok(super::compact_encrypt(&header, &key, plaintext))
}

/// Each child pin's point encrypted to it, in pin order. Network pins all at once, each on a thread of its own:
/// Tang pins fetch their server's advertisement, extension pins (aws-kms, vault-transit, kmip) ask their key
/// manager to wrap (within the request bound and the overall deadline), so sealing to n servers takes as long as
/// the slowest, not the sum. Other pins (tpm2: one TPM device; nested sss, which does the same for its own
/// children) run on this thread meanwhile, in order. The first failure in pin order is returned; the
/// threads still running end with their own request's bound (the scope waits for them).
fn encrypt_children(pins: &[Pin], points: &[SecretBytes], settings: &Settings) -> Result<Vec<String>, Error> {
    std::thread::scope(|scope| {
        let asked: Vec<_> = pins
            .iter()
            .zip(points)
            .map(|(pin, point)| match pin {
                Pin::Tang(_) | Pin::Wrapped(_) => std::thread::Builder::new()
                    .name("cryptadm-sss-pin".into())
                    .spawn_scoped(scope, move || super::encrypt(pin, point, settings))
                    .ok(),
                _ => None,
            })
            .collect();
        pins.iter()
            .zip(points)
            .zip(asked)
            .map(|((pin, point), thread)| match thread {
                Some(thread) => thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                // Not a network pin, or no thread could be started for it: here.
                None => super::encrypt(pin, point, settings),
            })
            .collect()
    })
}

/// `t` and the child JWEs of an sss header.
pub(super) fn header_parts(header: &Value) -> Result<(usize, Vec<&str>), Error> {
    let bad = |problem: &str| Error::Malformed(format!("sss pin: {problem}"));
    if header.get("alg").and_then(Value::as_str) != Some("dir") {
        return Err(bad("expected `\"alg\":\"dir\"`"));
    }
    let sss = header.pointer("/clevis/sss").ok_or_else(|| bad("no `clevis.sss`"))?;
    let threshold = sss.get("t").and_then(Value::as_u64).ok_or_else(|| bad("no integer `t`"))?;
    let children = sss.get("jwe").and_then(Value::as_array).ok_or_else(|| bad("no `jwe` list"))?;
    let children: Option<Vec<&str>> = children.iter().map(Value::as_str).collect();
    let children = children.ok_or_else(|| bad("a `jwe` entry is not a string"))?;
    if threshold < 1 || threshold > children.len() as u64 {
        return Err(bad("`t` is not between 1 and the number of pins"));
    }
    Ok((threshold as usize, children))
}

/// `clevis decrypt` of an sss JWE's key: every child asked at once, each on a thread of its own, and the first
/// `t` shares that arrive interpolated. The others are abandoned, not waited for (their threads end with their
/// own request's bound, or with the process): one slow server of three must not hold a 2-of-3 first boot. When
/// the overall deadline passes first, the pins still asked are named as cut by it.
pub(super) fn recover_key(header: &Value, settings: &Settings, depth: usize) -> Result<SecretBytes, Error> {
    let (threshold, children) = header_parts(header)?;
    let p = header
        .pointer("/clevis/sss/p")
        .and_then(Value::as_str)
        .and_then(b64_decode)
        .filter(|p| !p.is_empty() && p.len() <= 2 * KEY_BYTES)
        .ok_or_else(|| Error::Malformed("sss pin: `p` is not base64url of a prime".into()))?;
    let width = p.len();
    let p = BigUint::from_bytes_be(&p);
    let deadline = crate::deadline::effective(settings.http.deadline);
    let (sender, answers) = std::sync::mpsc::channel::<(usize, Result<SecretBytes, Error>)>();
    let mut pending: Vec<bool> = vec![true; children.len()];
    let mut failures = Vec::new();
    for (index, child) in children.iter().enumerate() {
        let (sender, child, settings) = (sender.clone(), (*child).to_owned(), settings.clone());
        let asked = std::thread::Builder::new().name("cryptadm-sss-pin".into()).spawn(move || {
            let result = Jwe::parse(&child).and_then(|jwe| super::decrypt_at(&jwe, &settings, depth + 1));
            let _ = sender.send((index, result));
        });
        if let Err(e) = asked {
            pending[index] = false;
            failures.push(format!("{}: cannot start a thread to ask it: {e}", describe_child(children[index])));
        }
    }
    drop(sender);
    let mut points = Vec::new();
    let mut cut_by_deadline = false;
    // Stop as soon as `t` shares are in. When too few are left to make `t`, the others are still waited for
    // (within the deadline), so that the error names every pin that failed and none that works.
    while points.len() < threshold && pending.contains(&true) {
        let answer = match deadline {
            Some(deadline) => answers.recv_timeout(deadline.remaining()),
            None => answers.recv().map_err(|_| std::sync::mpsc::RecvTimeoutError::Disconnected),
        };
        match answer {
            Ok((index, result)) => {
                pending[index] = false;
                match result {
                    Ok(point) if point.len() == 2 * width => points.push(point),
                    Ok(_) => failures.push(format!("{}: its share is not a point", describe_child(children[index]))),
                    Err(error) => {
                        use crate::exit::Classify as _;
                        cut_by_deadline |= error.status() == crate::exit::ExitStatus::DeadlineExceeded;
                        failures.push(format!("{}: {error}", describe_child(children[index])));
                    }
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                let passed = crate::deadline::Passed(deadline.expect("only a deadline times out"));
                for (index, _) in pending.iter().enumerate().filter(|(_, p)| **p) {
                    failures.push(format!("{}: {passed} while waiting for it", describe_child(children[index])));
                }
                cut_by_deadline = true;
                break;
            }
            // Every thread ended while some were still pending: one that panicked sent nothing.
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                for (index, _) in pending.iter().enumerate().filter(|(_, p)| **p) {
                    failures
                        .push(format!("{}: its decryption ended without an answer", describe_child(children[index])));
                }
                break;
            }
        }
    }
    if points.len() < threshold {
        return Err(Error::Threshold { threshold, recovered: points.len(), failures, cut_by_deadline });
    }
    let points: Vec<(BigUint, BigUint)> = points
        .iter()
        .take(threshold)
        .map(|point| (BigUint::from_bytes_be(&point[..width]), BigUint::from_bytes_be(&point[width..])))
        .collect();
    let mut key = interpolate_at_zero(&p, &points).ok_or(Error::Integrity)?;
    let mut raw = key.to_bytes_be();
    key.zeroize();
    if raw.len() > width {
        raw.zeroize();
        return Err(Error::Integrity);
    }
    let mut bytes = vec![0u8; width - raw.len()];
    bytes.extend_from_slice(&raw);
    raw.zeroize();
    Ok(SecretBytes::new(bytes))
}

fn describe_child(child: &str) -> String {
    super::describe_at(
        &match Jwe::parse(child) {
            Ok(jwe) => jwe,
            Err(_) => return "a malformed pin".into(),
        },
        1,
    )
    .unwrap_or_else(|_| "an unsupported pin".into())
}

/// Σ yᵢ · Π_{j≠i} (0 - xⱼ)/(xᵢ - xⱼ) mod p; `None` when two x coincide (no inverse).
fn interpolate_at_zero(p: &BigUint, points: &[(BigUint, BigUint)]) -> Option<BigUint> {
    let mut secret = BigUint::from(0u8);
    for (i, (xi, yi)) in points.iter().enumerate() {
        let mut term = yi % p;
        for (j, (xj, _)) in points.iter().enumerate() {
            if i == j {
                continue;
            }
            let numerator = (p - (xj % p)) % p;
            let denominator = ((xi % p) + p - (xj % p)) % p;
            let inverse = (&denominator).mod_inverse(p)?.to_biguint()?;
            term = term * numerator % p * inverse % p;
        }
        secret = (secret + term) % p;
    }
    Some(secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Any t of the n points give the constant term; fewer give something else.
    #[test]
    fn shares_recover_the_secret() {
        let polynomial = Polynomial::random(3);
        let points: Vec<(BigUint, BigUint)> = (0..5)
            .map(|_| {
                let point = polynomial.point();
                (BigUint::from_bytes_be(&point[..32]), BigUint::from_bytes_be(&point[32..]))
            })
            .collect();
        let secret = &polynomial.coefficients[0];
        assert_eq!(interpolate_at_zero(&polynomial.p, &points[..3]).as_ref(), Some(secret));
        assert_eq!(interpolate_at_zero(&polynomial.p, &points[2..]).as_ref(), Some(secret));
        assert_ne!(interpolate_at_zero(&polynomial.p, &points[..2]).as_ref(), Some(secret));
        assert_eq!(polynomial.p.bits(), 256);
        let repeated = [points[0].clone(), points[0].clone()];
        assert_eq!(interpolate_at_zero(&polynomial.p, &repeated), None);
    }

    /// A loopback server that answers every request with a 404 after `delay`; counts the requests it saw.
    fn slow_server(delay: std::time::Duration) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut request = [0u8; 4096];
                let _ = stream.read(&mut request);
                std::thread::sleep(delay);
                let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            }
        });
        (url, seen)
    }

    /// Sealing to an sss of Tang pins fetches every advertisement at once: two servers that each take 1.5 s take
    /// about 1.5 s together (one after the other took 3 s), both are asked, and the failure named is the first
    /// pin's.
    #[test]
    fn sealing_fetches_the_tang_advertisements_in_parallel() {
        let delay = std::time::Duration::from_millis(1500);
        let (first, first_seen) = slow_server(delay);
        let (second, second_seen) = slow_server(delay);
        let config = format!(r#"{{"t":2,"pins":{{"tang":[{{"url":"{first}"}},{{"url":"{second}"}}]}}}}"#);
        let pin = Pin::parse("sss", &config).unwrap();
        let mut settings = Settings::default();
        settings.http.retries = 0;
        settings.http.timeout = std::time::Duration::from_secs(10);
        let started = std::time::Instant::now();
        let error = super::super::encrypt(&pin, b"secret", &settings).unwrap_err().to_string();
        let took = started.elapsed();
        assert!(took >= delay && took < 2 * delay - std::time::Duration::from_millis(300), "took {took:?}");
        assert_eq!(first_seen.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(second_seen.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(error.contains(first.trim_start_matches("http://")), "{error}");
        assert!(!error.contains("secret"), "{error}");
    }
}
