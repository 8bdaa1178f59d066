//! Compiles `retro.proto` into Rust with a pure-Rust protobuf compiler (protox), so that a
//! fresh machine needs no `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=retro.proto");
    let descriptors = protox::compile(["retro.proto"], ["."])?;
    tonic_prost_build::configure().compile_fds(descriptors)?;
    Ok(())
}
