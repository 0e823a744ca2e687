//! Toolsets: named groups of a manifest's tools, and the choice of which a server serves.
//!
//! A tool joins sets by naming them (`toolsets = ["issues"]`) or by a `[[toolsets]]` entry
//! naming it or a glob over names (`manifest::toolset` checks both). With `--toolsets a,b`
//! (or the manifest's `[server] toolsets`, when no choice is made; `--toolsets all` is
//! every tool) the registry is cut to the members of those sets before anything serves it
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

/// `--toolsets all`: every tool, whatever the manifest's `[server] toolsets` says; no set
/// may have this name.
pub const EVERY_TOOL: &str = "all";

/// The sets a server serves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Selection {
    /// No choice made: the manifest's `[server] toolsets`, else every tool.
    #[default]
    Default,
    /// Every tool, in a set or not.
    Every,
    /// The members of these sets.
    Sets(Vec<String>),
}

impl Selection {
    /// What `--toolsets` says: empty names are left out (an empty value is no choice, as
    /// an unset variable is), each name once, and `all` is every tool.
    pub fn of(names: &[String]) -> Self {
        let mut sets: Vec<String> = Vec::new();
        for name in names
            .iter()
            .map(|name| name.trim())
            .filter(|name| !name.is_empty())
        {
            if name == EVERY_TOOL {
                return Self::Every;
            }
            if !sets.iter().any(|known| known == name) {
                sets.push(name.to_owned());
            }
        }
        if sets.is_empty() {
            Self::Default
        } else {
            Self::Sets(sets)
        }
    }

    /// The chosen set names, with `default` standing for no choice; `None` for every tool.
    pub fn names<'a>(&'a self, default: Option<&'a [String]>) -> Option<&'a [String]> {
        match self {
            Self::Default => default,
            Self::Every => None,
            Self::Sets(names) => Some(names),
        }
    }

    /// The tool names to keep, or why the choice does not fit `toolsets`; `None` keeps all.
    pub fn members<'a>(
        &self,
        toolsets: &'a [Toolset],
        default: Option<&[String]>,
    ) -> Result<Option<Vec<&'a str>>, ToolsetError> {
        let Some(names) = self.names(default) else {
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
        assert_eq!(Selection::Every.members(&sets, None), Ok(None));
        assert_eq!(Selection::of(&[]).members(&sets, None), Ok(None));
        let both = Selection::of(&["pulls".into(), "issues".into(), "pulls".into()]);
        assert_eq!(both.members(&sets, None), Ok(Some(vec!["c", "a", "b"])));
        // No choice is the manifest's default; `all` is every tool whatever it says.
        let default = ["pulls".to_owned()];
        assert_eq!(
            Selection::of(&[String::new(), " ".into()]).members(&sets, Some(&default)),
            Ok(Some(vec!["c"]))
        );
        let every = Selection::of(&["issues".into(), EVERY_TOOL.into()]);
        assert_eq!(every.members(&sets, Some(&default)), Ok(None));
        let typo = Selection::of(&["isues".into()]).members(&sets, None);
        let Err(error) = typo else {
            panic!("a typo is refused: {typo:?}")
        };
        assert_eq!(
            error.to_string(),
            "the manifest has no toolset `isues` (did you mean `issues`?); it has issues, pulls"
        );
        assert!(matches!(
            Selection::of(&["x".into()]).members(&[], None),
            Err(ToolsetError::NoneDeclared { .. })
        ));
    }
}
