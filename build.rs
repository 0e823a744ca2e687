//! Link settings for the `mcp-serve` binary.

use std::path::Path;

/// The functions a server runs in its first minutes, in the order the release link lays
/// them out (`scripts/layout` writes it; docs/performance.md, "Memory").
const LAYOUT: &str = "benches/layout/hot-functions.txt";

fn main() {
    // Pack the binary's relative relocations (DT_RELR, glibc 2.36+, GNU ld 2.38+ or lld):
    // about 20,000 of them took 470 KB that the loader read at every start and kept resident.
    // Older linkers ignore the flag with a warning. A binary for older glibc (scripts/dist
    // builds for 2.17) sets MCP_SERVE_NO_RELR: a loader before 2.36 would skip the packed
    // relocations and the binary would crash.
    let linux_gnu = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    if linux_gnu && std::env::var_os("MCP_SERVE_NO_RELR").is_none() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    // Lay the hot functions out together. Only lld (rustc's default linker on x86_64 Linux)
    // takes a symbol ordering file; a build that names another linker, or sets
    // MCP_SERVE_NO_LAYOUT, links in the compiler's order. The linker skips names the file
    // does not match (they carry hashes that change with Cargo.lock and the compiler), so
    // `warn_if_stale` says when it was made for another build. The order only moves code,
    // never changes it.
    let x86_64 = std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64");
    let release = std::env::var("PROFILE").as_deref() == Ok("release");
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let other_linker = ["linker", "fuse-ld"]
        .iter()
        .any(|setting| flags.contains(setting))
        || std::env::var_os("RUSTC_LINKER").is_some();
    let opted_out = std::env::var_os("MCP_SERVE_NO_LAYOUT").is_some();
    let layout = Path::new(env!("CARGO_MANIFEST_DIR")).join(LAYOUT);
    let usable_path = !layout.to_string_lossy().contains(',');
    if linux_gnu
        && x86_64
        && release
        && !other_linker
        && !opted_out
        && usable_path
        && layout.is_file()
        && links_with_rust_lld()
    {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            layout.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
        warn_if_stale();
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={LAYOUT}");
    println!("cargo:rerun-if-changed={MADE_FOR}");
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-env-changed=MCP_SERVE_NO_LAYOUT");
    println!("cargo:rerun-if-env-changed=MCP_SERVE_NO_RELR");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
}

/// What the ordering file's symbol names were made for (`scripts/layout` writes it): the
/// hashes in them change with `Cargo.lock` and the compiler.
const MADE_FOR: &str = "benches/layout/made-for.txt";

/// Says so when the ordering file's names were made for another `Cargo.lock` or compiler:
/// the linker skips names it does not find, so a stale file silently orders almost nothing
/// (an idle server then takes about 3 MiB more).
fn warn_if_stale() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let recorded = std::fs::read_to_string(root.join(MADE_FOR)).unwrap_or_default();
    let lock = std::fs::read(root.join("Cargo.lock")).unwrap_or_default();
    let current = format!(
        "Cargo.lock {:016x}\nrustc {}\n",
        fnv1a(&lock),
        rustc_version()
    );
    if recorded != current {
        println!(
            "cargo:warning=benches/layout/hot-functions.txt was made for another Cargo.lock or \
             compiler: `scripts/layout` makes it anew (about 25 minutes); `scripts/layout \
             --rehash` (one release link) recovers part of the gain"
        );
    }
}

/// FNV-1a, 64 bits: a fingerprint `scripts/layout` can compute the same way.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// rustc's release and commit, e.g. `1.95.0 59807616e`…: nightlies share a release.
fn rustc_version() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(output) = std::process::Command::new(rustc).arg("-vV").output() else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let field = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name))
            .unwrap_or_default()
            .to_owned()
    };
    format!("{} {}", field("release: "), field("commit-hash: "))
}

/// Whether rustc links with its own lld: the default on `x86_64` Linux since Rust 1.90, when
/// the toolchain ships it (rustup's does; a distribution's rustc may use the system linker).
fn links_with_rust_lld() -> bool {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let output = |args: &[&str]| {
        std::process::Command::new(&rustc)
            .args(args)
            .output()
            .ok()
            .filter(|output| output.status.success())
            .map(|output| String::from_utf8_lossy(&output.stdout).into_owned())
    };
    let minor = output(&["-vV"]).and_then(|version| {
        let release = version
            .lines()
            .find_map(|line| line.strip_prefix("release: "))?;
        release.split('.').nth(1)?.parse::<u32>().ok()
    });
    let Some(sysroot) = output(&["--print", "sysroot"]) else {
        return false;
    };
    let lld =
        Path::new(sysroot.trim()).join("lib/rustlib/x86_64-unknown-linux-gnu/bin/gcc-ld/ld.lld");
    minor.is_some_and(|minor| minor >= 90) && lld.is_file()
}
