//! The `cryptadm` executable: parse, run, and turn the result into an exit code.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(cryptadm::cmd::main(std::env::args_os()).code())
}
