//! Names: tools as SEP-986 has them (1–128 of `A-Z a-z 0-9 _ - .`, unique), arguments as
//! templates can name them (`A-Z a-z 0-9 _ -`, unique within a tool).

use std::collections::{HashMap, HashSet};

const MAX_TOOL_NAME: usize = 128;

/// The tool names given so far.
#[derive(Debug, Default)]
pub struct ToolNames {
    taken: HashSet<String>,
    next: HashMap<String, usize>,
}

impl ToolNames {
    /// `wanted` made valid, and unique by a numbered suffix.
    pub fn claim(&mut self, wanted: &str) -> String {
        let base = clean(wanted, |c| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
        });
        let base = if base.is_empty() {
            "operation".to_owned()
        } else {
            base
        };
        unique(&mut self.taken, &mut self.next, &base, MAX_TOOL_NAME)
    }
}

/// A tag as a toolset name: lower case, `-` for every run of other characters than
/// letters, digits and `_`, at most 64 bytes; `None` when nothing is left.
pub fn toolset(tag: &str) -> Option<String> {
    let mut name = String::new();
    for c in tag.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            name.push(c.to_ascii_lowercase());
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
    }
    name.truncate(64);
    let name = name.trim_end_matches('-');
    (!name.is_empty()).then(|| name.to_owned())
}

/// The argument names of one tool.
#[derive(Debug, Default)]
pub struct ArgumentNames {
    taken: HashSet<String>,
    next: HashMap<String, usize>,
}

impl ArgumentNames {
    /// `wanted` made valid; when taken (a query parameter and a body field of one name),
    /// `prefix_wanted`, then a numbered suffix.
    pub fn claim(&mut self, wanted: &str, prefix: &str) -> String {
        let base = clean(wanted, |c| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '-')
        });
        let base = if base.is_empty() {
            "value".to_owned()
        } else {
            base
        };
        if !self.taken.contains(&base) {
            self.taken.insert(base.clone());
            return base;
        }
        unique(
            &mut self.taken,
            &mut self.next,
            &format!("{prefix}_{base}"),
            usize::MAX,
        )
    }
}

pub(crate) use crate::manifest::is_header_name;

/// A header the importer may set from a description: a valid name that neither frames the
/// message nor carries credentials (those come only from security schemes).
pub fn is_settable_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    is_header_name(name)
        && !crate::manifest::FORBIDDEN_HEADERS.contains(&lower.as_str())
        && !crate::manifest::CREDENTIAL_HEADERS.contains(&lower.as_str())
        && !matches!(lower.as_str(), "host" | "accept" | "content-type")
}

/// `get /pets/{petId}/photos` → `get_pets_petId_photos`.
pub fn from_method_and_path(method: &str, path: &str) -> String {
    let mut name = method.to_ascii_lowercase();
    for segment in path.split('/').filter(|segment| !segment.is_empty()) {
        name.push('_');
        name.push_str(segment.trim_start_matches('{').trim_end_matches('}'));
    }
    clean(&name, |c| {
        c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
    })
}

/// Every character `allowed` refuses becomes `_`; runs of `_` shrink to one, and none is
/// left at either end.
fn clean(text: &str, allowed: impl Fn(char) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let c = if allowed(c) { c } else { '_' };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push(c);
    }
    out.trim_end_matches('_').to_owned()
}

/// `base`, else `base_2`, `base_3`…; the next number to try is kept per base, so many
/// clashes cost no more than one each.
fn unique(
    taken: &mut HashSet<String>,
    next: &mut HashMap<String, usize>,
    base: &str,
    max: usize,
) -> String {
    let mut candidate = truncate(base, max).to_owned();
    let counter = next.entry(base.to_owned()).or_insert(2);
    while taken.contains(&candidate) {
        let suffix = format!("_{counter}");
        candidate = format!(
            "{}{suffix}",
            truncate(base, max.saturating_sub(suffix.len()))
        );
        *counter += 1;
    }
    taken.insert(candidate.clone());
    candidate
}

/// The text is ASCII by construction.
fn truncate(text: &str, max: usize) -> &str {
    &text[..text.len().min(max)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_valid_unique_and_short_enough() {
        let mut names = ToolNames::default();
        assert_eq!(names.claim("repos/get-content"), "repos_get-content");
        assert_eq!(names.claim("repos/get-content"), "repos_get-content_2");
        assert_eq!(names.claim("  weird  name!! "), "weird_name");
        assert_eq!(names.claim("!!!"), "operation");
        let long = "a".repeat(300);
        let first = names.claim(&long);
        let second = names.claim(&long);
        assert_eq!(first.len(), 128);
        assert_eq!(second.len(), 128);
        assert!(second.ends_with("_2"));
        assert_eq!(
            from_method_and_path("GET", "/pets/{petId}/photos"),
            "get_pets_petId_photos"
        );
        assert_eq!(from_method_and_path("DELETE", "/"), "delete");
    }

    #[test]
    fn argument_names_fit_templates_and_clashes_get_a_prefix() {
        let mut names = ArgumentNames::default();
        assert_eq!(names.claim("owner", "body"), "owner");
        assert_eq!(names.claim("owner", "body"), "body_owner");
        assert_eq!(names.claim("owner", "body"), "body_owner_2");
        assert_eq!(names.claim("page[size]", "query"), "page_size");
        assert_eq!(names.claim("X-Rate.Limit", "header"), "X-Rate_Limit");
        assert_eq!(names.claim("$filter", "query"), "filter");
    }
}
