//! Protocol eras: what a client's negotiated version lets us send.
//!
//! The wire differs in three steps: versions before 2025-06-18 know no structured output,
//! 2025-06-18 and 2025-11-25 accept only object-shaped structured output, and 2026-07-28
//! (the stateless era) accepts any JSON value and any JSON Schema root.

/// The era of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// 2024-11-05 and 2025-03-26: no `structuredContent` or `outputSchema`.
    Early,
    /// 2025-06-18 and 2025-11-25: structured output must be an object.
    Legacy,
    /// 2026-07-28 and later: any structured value.
    Modern,
}

impl Era {
    pub const ALL: [Era; 3] = [Era::Early, Era::Legacy, Era::Modern];

    /// The era of a protocol version string; ISO dates compare correctly as text.
    pub fn of_version(version: &str) -> Self {
        if version >= "2026-07-28" {
            Self::Modern
        } else if version >= "2025-06-18" {
            Self::Legacy
        } else {
            Self::Early
        }
    }

    pub fn index(self) -> usize {
        match self {
            Self::Early => 0,
            Self::Legacy => 1,
            Self::Modern => 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Era;

    #[test]
    fn versions_map_to_eras() {
        assert_eq!(Era::of_version("2024-11-05"), Era::Early);
        assert_eq!(Era::of_version("2025-03-26"), Era::Early);
        assert_eq!(Era::of_version("2025-06-18"), Era::Legacy);
        assert_eq!(Era::of_version("2025-11-25"), Era::Legacy);
        assert_eq!(Era::of_version("2026-07-28"), Era::Modern);
    }
}
