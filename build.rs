//! Compiles the vendored CSI-Addons protos (`proto/`) for `cryptadm volume serve`.
//!
//! protox parses them in Rust, so building needs no system `protoc`; tonic-prost-build writes the message types
//! and the server and client stubs into OUT_DIR.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protos = ["proto/identity/identity.proto", "proto/encryptionkeyrotation/encryptionkeyrotation.proto"];
    println!("cargo:rerun-if-changed=proto");
    let descriptors = protox::compile(protos, ["proto"])?;
    tonic_prost_build::configure().build_server(true).build_client(true).compile_fds(descriptors)?;
    Ok(())
}
