//! The in-process half of `scripts/bench/xts.sh` and `scripts/bench/argon2.sh`: runs cryptadm's bulk
//! primitives on their own and prints one `key=value` line for the script to compare with OpenSSL and
//! cryptsetup.
//!
//! A cargo example rather than an `#[ignore]`d test: it builds in release mode as one small binary on top of
//! the library (no test harness, no output capture), so the benchmark measures exactly the code `disk` and
//! `volume` commands call, and the scripts can time it from outside like the reference tools.
//!
//! Usage:
//!   crypto_bench xts UNIT_SIZE THREADS SECONDS [BUFFER_MIB]
//!   crypto_bench argon2 argon2i|argon2id TIME MEMORY_KIB PARALLEL

// A benchmark's output is its result: it writes to stdout directly, without the CLI's Printer.
// It is a program of its own, not core code: it reads its argv (clippy.toml keeps the library from doing so).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)]

use cryptadm::crypto::argon2::{Argon2Variant, derive};
use cryptadm::crypto::xts::XtsPlain64;
use std::process::ExitCode;
use std::time::{Duration, Instant};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("xts") if args.len() >= 4 => bench_xts(&args[1..]),
        Some("argon2") if args.len() == 5 => bench_argon2(&args[1..]),
        _ => Err("usage: crypto_bench xts UNIT_SIZE THREADS SECONDS [BUFFER_MIB] | \
                  crypto_bench argon2 argon2i|argon2id TIME MEMORY_KIB PARALLEL"
            .to_owned()),
    };
    match result {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("crypto_bench: {message}");
            ExitCode::from(2)
        }
    }
}

fn number<T: std::str::FromStr>(text: &str, what: &str) -> Result<T, String> {
    text.parse().map_err(|_| format!("{what} must be a number, got '{text}'"))
}

/// Encrypts one buffer over and over for at least `seconds`, with a fresh IV range each pass (like writing a
/// volume), and reports bytes per wall-clock second and per CPU second of the whole process.
fn bench_xts(args: &[String]) -> Result<String, String> {
    let unit_size: usize = number(&args[0], "UNIT_SIZE")?;
    let threads: usize = number(&args[1], "THREADS")?;
    let seconds: f64 = number(&args[2], "SECONDS")?;
    let buffer_mib: usize = args.get(3).map_or(Ok(16), |m| number(m, "BUFFER_MIB"))?;
    if !unit_size.is_power_of_two() || !(512..=4096).contains(&unit_size) || threads == 0 || buffer_mib == 0 {
        return Err("UNIT_SIZE is a power of two in 512..=4096; THREADS and BUFFER_MIB are at least 1".to_owned());
    }
    // A fixed, valid AES-256-XTS key: the speed does not depend on the key.
    let key: Vec<u8> = (0u8..64).collect();
    let xts = XtsPlain64::new(&key).map_err(|e| e.to_string())?;
    let mut buffer = vec![0x5au8; buffer_mib << 20];
    let sectors_per_pass = (buffer.len() / 512) as u64;
    let limit = Duration::from_secs_f64(seconds);
    let (start, cpu_start) = (Instant::now(), process_cpu_seconds()?);
    let mut passes = 0u64;
    while passes == 0 || start.elapsed() < limit {
        xts.encrypt_units_parallel(&mut buffer, unit_size, passes * sectors_per_pass, threads);
        passes += 1;
    }
    let wall = start.elapsed().as_secs_f64();
    let cpu = process_cpu_seconds()? - cpu_start;
    let bytes = passes as f64 * buffer.len() as f64;
    std::hint::black_box(&buffer);
    Ok(format!(
        "xts unit={unit_size} threads={threads} bytes={bytes:.0} wall_s={wall:.3} cpu_s={cpu:.2} \
         wall_mb_s={:.0} cpu_mb_s={:.0}",
        bytes / wall / 1e6,
        bytes / cpu.max(0.01) / 1e6
    ))
}

/// One derivation with LUKS2's shape (32-byte salt, 64-byte key), timed in-process.
fn bench_argon2(args: &[String]) -> Result<String, String> {
    let variant = match args[0].as_str() {
        "argon2i" => Argon2Variant::Argon2i,
        "argon2id" => Argon2Variant::Argon2id,
        other => return Err(format!("unknown Argon2 variant '{other}'")),
    };
    let time: u32 = number(&args[1], "TIME")?;
    let memory_kib: u32 = number(&args[2], "MEMORY_KIB")?;
    let parallel: u32 = number(&args[3], "PARALLEL")?;
    let mut key = [0u8; 64];
    let start = Instant::now();
    derive(variant, b"benchmark passphrase", &[0x42; 32], time, memory_kib, parallel, &mut key)
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "argon2 variant={} time={time} memory_kib={memory_kib} parallel={parallel} derive_s={:.3}",
        args[0],
        start.elapsed().as_secs_f64()
    ))
}

/// User + system CPU time of this process, all threads (Linux `/proc/self/stat`, 10 ms resolution).
fn process_cpu_seconds() -> Result<f64, String> {
    let stat = std::fs::read_to_string("/proc/self/stat").map_err(|e| format!("/proc/self/stat: {e}"))?;
    // Fields after the command name (which may contain spaces) start at state (field 3); utime and stime are
    // fields 14 and 15, in clock ticks (100 per second on Linux).
    let after_name = stat.rsplit_once(')').map(|(_, rest)| rest).ok_or("unexpected /proc/self/stat")?;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).ok_or("unexpected /proc/self/stat");
    Ok((ticks(11)? + ticks(12)?) as f64 / 100.0)
}
