//! Bytes as lowercase hexadecimal: digests (a bundle's SHA-256, a task owner's tag).

/// `bytes` as lowercase hex, two digits each.
pub fn lower(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut text, byte| {
            use std::fmt::Write as _;
            let _ = write!(text, "{byte:02x}");
            text
        })
}
