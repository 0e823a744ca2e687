//! Protocol eras: what a client's negotiated version lets us send.
//!
//! The wire differs in four steps: 2024-11-05 knows neither audio nor resource links;
//! 2025-03-26 adds audio; 2025-06-18 adds resource links and structured output, which must
//! be an object until 2025-11-25; 2026-07-28 (the stateless era) accepts any JSON value and
//! any JSON Schema root.

/// The era of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Era {
    /// 2024-11-05: text, image and embedded resources only; no structured output.
    Initial,
    /// 2025-03-26: adds audio; still no structured output or resource links.
    Early,
    /// 2025-06-18 and 2025-11-25: resource links; structured output must be an object.
    Legacy,
    /// 2026-07-28 and later: any structured value.
    Modern,
}

impl Era {
    pub const ALL: [Era; 4] = [Era::Initial, Era::Early, Era::Legacy, Era::Modern];

    /// The era of a protocol version string; ISO dates compare correctly as text.
    pub fn of_version(version: &str) -> Self {
        if version >= "2026-07-28" {
            Self::Modern
        } else if version >= "2025-06-18" {
            Self::Legacy
        } else if version >= "2025-03-26" {
            Self::Early
        } else {
            Self::Initial
        }
    }

    pub fn index(self) -> usize {
        match self {
            Self::Initial => 0,
            Self::Early => 1,
            Self::Legacy => 2,
            Self::Modern => 3,
        }
    }

    /// Whether `structuredContent` and `outputSchema` exist in this era.
    pub fn has_structured_output(self) -> bool {
        self >= Self::Legacy
    }

    pub fn has_audio(self) -> bool {
        self >= Self::Early
    }

    pub fn has_resource_links(self) -> bool {
        self >= Self::Legacy
    }
}

#[cfg(test)]
mod tests {
    use super::Era;

    #[test]
    fn versions_map_to_eras() {
        assert_eq!(Era::of_version("2024-11-05"), Era::Initial);
        assert_eq!(Era::of_version("2025-03-26"), Era::Early);
        assert_eq!(Era::of_version("2025-06-18"), Era::Legacy);
        assert_eq!(Era::of_version("2025-11-25"), Era::Legacy);
        assert_eq!(Era::of_version("2026-07-28"), Era::Modern);
        assert!(!Era::Initial.has_audio() && Era::Early.has_audio());
        assert!(!Era::Early.has_resource_links() && Era::Legacy.has_resource_links());
    }
}
