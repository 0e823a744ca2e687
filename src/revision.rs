//! Protocol revisions, and the lifecycle each belongs to: what a request's version lets us
//! send, and how its client is known.
//!
//! The wire differs in four steps: 2024-11-05 knows neither audio nor resource links;
//! 2025-03-26 adds audio; 2025-06-18 adds resource links and structured output, which must
//! be an object until 2025-11-25; 2026-07-28 accepts any JSON value and any JSON Schema root.
//! The lifecycle differs in two: every revision up to 2025-11-25 begins with `initialize`
//! (a session over stdio or with `--sessions`, where the server may ask the client on its
//! connection); 2026-07-28 is stateless, each request carrying its version and capabilities.

/// The revision of one request, named for its date (2025-06-18 and 2025-11-25 share one
/// wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Revision {
    /// 2024-11-05: text, image and embedded resources only; no structured output.
    V2024_11,
    /// 2025-03-26: adds audio; still no structured output or resource links.
    V2025_03,
    /// 2025-06-18 and 2025-11-25: resource links; structured output must be an object.
    V2025_06,
    /// 2026-07-28 and later: any structured value; stateless.
    V2026_07,
}

/// How a client is known to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifecycle {
    /// `initialize` first: the connection (stdio, or an HTTP session) is the client.
    Initialize,
    /// Every request stands alone, with its version and capabilities in `_meta`.
    Stateless,
}

impl Revision {
    pub const ALL: [Revision; 4] = [
        Revision::V2024_11,
        Revision::V2025_03,
        Revision::V2025_06,
        Revision::V2026_07,
    ];

    /// The revision of a protocol version string; ISO dates compare correctly as text.
    pub fn of_version(version: &str) -> Self {
        if version >= "2026-07-28" {
            Self::V2026_07
        } else if version >= "2025-06-18" {
            Self::V2025_06
        } else if version >= "2025-03-26" {
            Self::V2025_03
        } else {
            Self::V2024_11
        }
    }

    pub fn index(self) -> usize {
        match self {
            Self::V2024_11 => 0,
            Self::V2025_03 => 1,
            Self::V2025_06 => 2,
            Self::V2026_07 => 3,
        }
    }

    pub fn lifecycle(self) -> Lifecycle {
        if self >= Self::V2026_07 {
            Lifecycle::Stateless
        } else {
            Lifecycle::Initialize
        }
    }

    /// Whether requests of this revision stand alone (no session, no back channel).
    pub fn is_stateless(self) -> bool {
        self.lifecycle() == Lifecycle::Stateless
    }

    /// Whether `structuredContent` and `outputSchema` exist in this revision.
    pub fn has_structured_output(self) -> bool {
        self >= Self::V2025_06
    }

    /// Whether structured output may be any JSON value (else it must be an object).
    pub fn has_any_structured_value(self) -> bool {
        self >= Self::V2026_07
    }

    pub fn has_audio(self) -> bool {
        self >= Self::V2025_03
    }

    pub fn has_resource_links(self) -> bool {
        self >= Self::V2025_06
    }
}

#[cfg(test)]
mod tests {
    use super::{Lifecycle, Revision};

    #[test]
    fn versions_map_to_revisions_and_lifecycles() {
        assert_eq!(Revision::of_version("2024-11-05"), Revision::V2024_11);
        assert_eq!(Revision::of_version("2025-03-26"), Revision::V2025_03);
        assert_eq!(Revision::of_version("2025-06-18"), Revision::V2025_06);
        assert_eq!(Revision::of_version("2025-11-25"), Revision::V2025_06);
        assert_eq!(Revision::of_version("2026-07-28"), Revision::V2026_07);
        assert!(!Revision::V2024_11.has_audio() && Revision::V2025_03.has_audio());
        assert!(
            !Revision::V2025_03.has_resource_links() && Revision::V2025_06.has_resource_links()
        );
        assert_eq!(Revision::V2025_06.lifecycle(), Lifecycle::Initialize);
        assert!(Revision::V2026_07.is_stateless());
    }
}
