//! Finding tools by what they do: every tool is a document of its name, title, description
//! and argument names, ranked against a query with BM25 (the `bm25` crate's embedder and
//! inverted index) over words the Snowball English stemmer reduced (`rust-stemmers`), so
//! that "create an issue" finds `issues_create` and "listing comments" `list-comments`.
//!
//! `mcp-serve search` asks it from the terminal; what the index holds is each tool's words,
//! never an argument value or a secret (a manifest's `${env:…}` is never in a tool's texts).
//!
//! With `[server] discovery = true`, `tools/list` holds tools of the server's own instead
//! of every tool ([`definitions`]): [`FIND`] answers with the best few tools and their
//! input schemas, among those the caller may call; [`CALL`] names one of them and its
//! arguments, and the MCP adapter hands the call on as that tool's own call, so every
//! stage of the pipeline (scopes, rate, confirmation, sandbox, audit, metrics) sees the
//! real tool, never `call_tool`. A client may also call a found tool by its name, and a
//! connection that lasts may [`ADD`] found tools to its own list ([`added`]).

use std::collections::HashMap;

use bm25::{Embedder, EmbedderBuilder, Scorer, Tokenizer};
use serde_json::Value;

use crate::registry::Registry;
use crate::tool::Tool;

mod meta;
pub use meta::{ADD, CALL, FIND, MAX_ADDED, META, Meta, added, answer, definitions, taken};

/// What a description's words count for beside the same words in a name or title: a
/// description says what a tool does, and much else.
const DESCRIPTION_WEIGHT: f32 = 0.5;

/// The most of a description that is indexed: its first paragraph, at most this many bytes
/// (what follows is notes on media types, pagination, permissions).
const DESCRIPTION_BYTES: usize = 400;

/// Words that say nothing about what a tool does.
const STOP_WORDS: [&str; 33] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "get", "given",
    "how", "i", "in", "is", "it", "me", "my", "of", "on", "or", "that", "the", "this", "to", "use",
    "using", "what", "which", "with",
];

/// One found tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub name: String,
    pub score: f32,
}

/// The tools of a registry, ready to be searched: two fields, ranked apart and added up.
pub struct Index {
    /// A tool's name and title.
    names: Field,
    /// The first paragraph of its description, and its arguments' names.
    descriptions: Field,
    tools: Vec<String>,
}

/// One field of every tool, with BM25's statistics over it.
struct Field {
    embedder: Embedder<u32, Words>,
    scorer: Scorer<usize, u32>,
}

impl Field {
    fn new(texts: &[String], words: Words) -> Self {
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let embedder =
            EmbedderBuilder::<u32, Words>::with_tokenizer_and_fit_to_corpus(words, &texts).build();
        let mut scorer = Scorer::new();
        for (index, text) in texts.iter().enumerate() {
            scorer.upsert(&index, embedder.embed(text));
        }
        Self { embedder, scorer }
    }

    /// Adds `weight` times each tool's score for `query` to `scores`.
    fn score(&self, query: &str, weight: f32, scores: &mut HashMap<usize, f32>) {
        for scored in self.scorer.matches(&self.embedder.embed(query)) {
            *scores.entry(scored.id).or_default() += weight * scored.score;
        }
    }
}

impl std::fmt::Debug for Index {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "Index({} tools)", self.tools.len())
    }
}

impl Index {
    /// Indexes every tool of `registry`, in its order.
    pub fn new(registry: &Registry) -> Self {
        let tools: Vec<&Tool> = registry.tools().map(AsRef::as_ref).collect();
        let names: Vec<String> = tools.iter().map(|tool| names(tool)).collect();
        let descriptions: Vec<String> = tools.iter().map(|tool| description(tool)).collect();
        Self {
            // A name restates its title (`pulls_list`, "List pull requests"): each word
            // counts once there, or the tool whose name repeats most words would win.
            names: Field::new(&names, Words::unique()),
            descriptions: Field::new(&descriptions, Words::new()),
            tools: tools.iter().map(|tool| tool.name.clone()).collect(),
        }
    }

    /// The `limit` tools that best match `query`, best first (ties in manifest order),
    /// among those `visible` lets through (the caller's toolsets and scopes); none when no
    /// word of the query is in any.
    pub fn search(&self, query: &str, limit: usize, visible: impl Fn(&str) -> bool) -> Vec<Found> {
        let mut scores = HashMap::new();
        self.names.score(query, 1.0, &mut scores);
        self.descriptions
            .score(query, DESCRIPTION_WEIGHT, &mut scores);
        let mut scores: Vec<(usize, f32)> = scores.into_iter().collect();
        scores.sort_by(|a, b| {
            b.1.partial_cmp(&a.1)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.0.cmp(&b.0))
        });
        scores
            .into_iter()
            .filter_map(|(index, score)| {
                let name = self.tools.get(index)?;
                visible(name).then(|| Found {
                    name: name.clone(),
                    score,
                })
            })
            .take(limit)
            .collect()
    }
}

/// A tool's name and title.
fn names(tool: &Tool) -> String {
    format!("{} {}", tool.name, field(tool, "title"))
}

/// The first paragraph of a tool's description, at most [`DESCRIPTION_BYTES`], and its
/// arguments' names.
fn description(tool: &Tool) -> String {
    let text = field(tool, "description");
    let first = text.split("\n\n").next().unwrap_or_default();
    let mut end = first.len().min(DESCRIPTION_BYTES);
    while !first.is_char_boundary(end) {
        end -= 1;
    }
    let mut text = first[..end].to_owned();
    if let Some(properties) = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object)
    {
        for name in properties.keys() {
            text.push(' ');
            text.push_str(name);
        }
    }
    text
}

fn field<'a>(tool: &'a Tool, key: &str) -> &'a str {
    tool.definition
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The tokenizer: words split at anything but letters and digits and where `camelCase`
/// changes case, lower-cased, stop words left out, stemmed.
struct Words {
    stemmer: rust_stemmers::Stemmer,
    /// Each word once.
    unique: bool,
}

impl Words {
    fn new() -> Self {
        Self {
            stemmer: rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English),
            unique: false,
        }
    }

    fn unique() -> Self {
        Self {
            unique: true,
            ..Self::new()
        }
    }
}

impl Default for Words {
    fn default() -> Self {
        Self::new()
    }
}

impl Tokenizer for Words {
    fn tokenize(&self, input_text: &str) -> Vec<String> {
        let mut words: Vec<String> = split(input_text)
            .into_iter()
            .filter(|word| !STOP_WORDS.contains(&word.as_str()))
            .map(|word| self.stemmer.stem(&word).into_owned())
            .collect();
        if self.unique {
            let mut seen = std::collections::HashSet::new();
            words.retain(|word| seen.insert(word.clone()));
        }
        words
    }
}

/// `listRepoIssues_v2` → `list`, `repo`, `issues`, `v2`.
fn split(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous: Option<char> = None;
    for character in text.chars() {
        if !character.is_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            previous = None;
            continue;
        }
        if character.is_uppercase() && previous.is_some_and(char::is_lowercase) {
            words.push(std::mem::take(&mut word));
        }
        word.extend(character.to_lowercase());
        previous = Some(character);
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::{Tokenizer as _, Words, split};

    #[test]
    fn words_split_at_case_changes_and_punctuation_and_are_stemmed() {
        assert_eq!(
            split("listRepoIssues_v2 for-the/REPO"),
            ["list", "repo", "issues", "v2", "for", "the", "repo"]
        );
        assert_eq!(
            Words::new().tokenize("Creates the comments of an Issue"),
            ["creat", "comment", "issu"]
        );
        assert_eq!(
            Words::new().tokenize("create_comment issues"),
            ["creat", "comment", "issu"]
        );
    }
}
