//! Which operations become tools: `--include`/`--exclude` (globs over the `operationId`),
//! `--tag`, `--method`, `--path` (a glob over the path as written). A filter that matches
//! no operation of the description is an error, so a typo never silently keeps everything
//! or nothing.

use globset::GlobMatcher;

use super::document::ImportError;
use super::operation::Operation;
use crate::suggest::suggest;

/// The filters, as given; each kind may be repeated (any of them matches).
#[derive(Debug, Default, Clone)]
pub struct Filters {
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub tags: Vec<String>,
    pub methods: Vec<String>,
    pub paths: Vec<String>,
}

impl Filters {
    /// For each operation, kept (`Ok`) or dropped with the filter that dropped it.
    pub fn select(
        &self,
        operations: &[Operation<'_>],
    ) -> Result<Vec<Result<(), String>>, ImportError> {
        let include = compile("--include", &self.include)?;
        let exclude = compile("--exclude", &self.exclude)?;
        let paths = compile("--path", &self.paths)?;
        let keys: Vec<String> = operations.iter().map(Operation::key).collect();
        let all_tags: Vec<&str> = operations
            .iter()
            .flat_map(|operation| operation.tags.iter().copied())
            .collect();
        for (pattern, text) in include
            .iter()
            .chain(&exclude)
            .zip(self.include.iter().chain(&self.exclude))
        {
            if !keys.iter().any(|key| pattern.is_match(key)) {
                let flag = if self.include.contains(text) {
                    "--include"
                } else {
                    "--exclude"
                };
                return Err(nothing(
                    flag,
                    text,
                    suggest(text, keys.iter().map(String::as_str)),
                ));
            }
        }
        for tag in &self.tags {
            if !all_tags.contains(&tag.as_str()) {
                return Err(nothing(
                    "--tag",
                    tag,
                    suggest(tag, all_tags.iter().copied()),
                ));
            }
        }
        for method in &self.methods {
            if !operations
                .iter()
                .any(|operation| operation.method.eq_ignore_ascii_case(method))
            {
                return Err(nothing("--method", method, None));
            }
        }
        for (pattern, text) in paths.iter().zip(&self.paths) {
            if !operations
                .iter()
                .any(|operation| pattern.is_match(operation.path))
            {
                let suggestion = suggest(text, operations.iter().map(|operation| operation.path));
                return Err(nothing("--path", text, suggestion));
            }
        }
        Ok(operations
            .iter()
            .zip(&keys)
            .map(|(operation, key)| {
                if !include.is_empty() && !include.iter().any(|pattern| pattern.is_match(key)) {
                    return Err("matches no --include".to_owned());
                }
                if let Some((_, text)) = exclude
                    .iter()
                    .zip(&self.exclude)
                    .find(|(pattern, _)| pattern.is_match(key))
                {
                    return Err(format!("--exclude `{text}`"));
                }
                if !self.tags.is_empty()
                    && !operation
                        .tags
                        .iter()
                        .any(|tag| self.tags.iter().any(|wanted| wanted == tag))
                {
                    return Err(if operation.tags.is_empty() {
                        "has no tag (--tag)".to_owned()
                    } else {
                        format!("tagged {} (--tag)", operation.tags.join(", "))
                    });
                }
                if !self.methods.is_empty()
                    && !self
                        .methods
                        .iter()
                        .any(|method| method.eq_ignore_ascii_case(&operation.method))
                {
                    return Err("another method (--method)".to_owned());
                }
                if !paths.is_empty()
                    && !paths.iter().any(|pattern| pattern.is_match(operation.path))
                {
                    return Err("matches no --path".to_owned());
                }
                Ok(())
            })
            .collect())
    }
}

fn compile(flag: &'static str, patterns: &[String]) -> Result<Vec<GlobMatcher>, ImportError> {
    patterns
        .iter()
        .map(|pattern| {
            globset::Glob::new(pattern)
                .map(|glob| glob.compile_matcher())
                .map_err(|error| ImportError::Pattern {
                    flag,
                    pattern: pattern.clone(),
                    reason: error.kind().to_string(),
                })
        })
        .collect()
}

fn nothing(flag: &'static str, pattern: &str, suggestion: Option<&str>) -> ImportError {
    ImportError::FilterMatchesNothing {
        flag,
        pattern: pattern.to_owned(),
        hint: suggestion.map_or_else(String::new, |near| format!(" (did you mean `{near}`?)")),
    }
}
