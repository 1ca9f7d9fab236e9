//! The `cryptadm` executable: parse, run, and turn the result into an exit code.

#[allow(clippy::disallowed_methods)] // the binary hands argv to `cmd`, which alone reads it
fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(cryptadm::cmd::main(std::env::args_os()).code())
}
