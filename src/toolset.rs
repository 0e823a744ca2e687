//! Toolsets: named groups of a manifest's tools, and the choice of which a server serves.
//!
//! A tool joins sets by naming them (`toolsets = ["issues"]`) or by a `[[toolsets]]` entry
//! naming it or a glob over names (`manifest::toolset` checks both). With `--toolsets a,b`
//! the registry is cut to the members of those sets before anything serves it
//! (`Registry::select`): `tools/list`, `list`, `check`, `call` and every
//! call's lookup see only the chosen tools, so a call to another is an unknown tool; each
//! reload applies the same choice.

use crate::suggest::suggest;

/// One named set of tools, its members in manifest order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolset {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub tools: Vec<String>,
}

/// `--toolsets` named a set the manifest does not declare.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolsetError {
    #[error("--toolsets names `{name}`, but the manifest declares no toolsets")]
    NoneDeclared { name: String },
    #[error("the manifest has no toolset `{name}`{}; it has {}", .suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default(), .known.join(", "))]
    Unknown {
        name: String,
        suggestion: Option<String>,
        known: Vec<String>,
    },
}

/// The sets a server serves: `None` serves every tool, in a set or not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection(Option<Vec<String>>);

impl Selection {
    /// Every tool.
    pub fn all() -> Self {
        Self(None)
    }

    /// The members of these sets (an empty list is every tool, as no flag is).
    pub fn of(names: &[String]) -> Self {
        if names.is_empty() {
            Self(None)
        } else {
            Self(Some(names.to_vec()))
        }
    }

    /// The chosen set names, `None` for every tool.
    pub fn names(&self) -> Option<&[String]> {
        self.0.as_deref()
    }

    /// The tool names to keep, or why the choice does not fit `toolsets`; `None` keeps all.
    pub fn members<'a>(
        &self,
        toolsets: &'a [Toolset],
    ) -> Result<Option<Vec<&'a str>>, ToolsetError> {
        let Some(names) = &self.0 else {
            return Ok(None);
        };
        let mut kept: Vec<&str> = Vec::new();
        for name in names {
            let Some(set) = toolsets.iter().find(|set| &set.name == name) else {
                return Err(unknown(name, toolsets));
            };
            kept.extend(set.tools.iter().map(String::as_str));
        }
        Ok(Some(kept))
    }
}

/// For a person: the error, and where the sets are shown.
impl From<ToolsetError> for crate::failure::Failure {
    fn from(error: ToolsetError) -> Self {
        let hint = match error {
            ToolsetError::NoneDeclared { .. } => {
                "declare toolsets with `toolsets = [\"…\"]` on tools or `[[toolsets]]` tables"
            }
            ToolsetError::Unknown { .. } => "`mcp-serve list` shows each toolset and its tools",
        };
        Self::new(error.to_string()).hint(hint)
    }
}

fn unknown(name: &str, toolsets: &[Toolset]) -> ToolsetError {
    if toolsets.is_empty() {
        return ToolsetError::NoneDeclared {
            name: name.to_owned(),
        };
    }
    let known: Vec<String> = toolsets.iter().map(|set| set.name.clone()).collect();
    ToolsetError::Unknown {
        name: name.to_owned(),
        suggestion: suggest(name, known.iter().map(String::as_str)).map(str::to_owned),
        known,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(name: &str, tools: &[&str]) -> Toolset {
        Toolset {
            name: name.into(),
            title: None,
            description: None,
            tools: tools.iter().map(|tool| (*tool).to_owned()).collect(),
        }
    }

    #[test]
    fn a_choice_keeps_the_members_of_its_sets_and_names_what_is_unknown() {
        let sets = [set("issues", &["a", "b"]), set("pulls", &["c"])];
        assert_eq!(Selection::all().members(&sets), Ok(None));
        assert_eq!(Selection::of(&[]).members(&sets), Ok(None));
        let both = Selection::of(&["pulls".into(), "issues".into()]);
        assert_eq!(both.members(&sets), Ok(Some(vec!["c", "a", "b"])));
        let typo = Selection::of(&["isues".into()]).members(&sets);
        let Err(error) = typo else {
            panic!("a typo is refused: {typo:?}")
        };
        assert_eq!(
            error.to_string(),
            "the manifest has no toolset `isues` (did you mean `issues`?); it has issues, pulls"
        );
        assert!(matches!(
            Selection::of(&["x".into()]).members(&[]),
            Err(ToolsetError::NoneDeclared { .. })
        ));
    }
}
