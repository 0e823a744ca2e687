//! Link settings for the `mcp-serve` binary.

fn main() {
    // Pack the binary's relative relocations (DT_RELR, glibc 2.36+, GNU ld 2.38+ or lld):
    // about 20,000 of them took 470 KB that the loader read at every start and kept resident.
    // Older linkers ignore the flag with a warning.
    let linux_gnu = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    if linux_gnu {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
