//! Shaping a tool's JSON output before its output schema is checked: a jq program narrows
//! it (`project`), then its arrays are capped (`max-items`), with a note of what was left
//! out.
//!
//! A program is compiled here at load, so that `check` points into the manifest at what is
//! wrong with it; it runs in a worker process ([`worker`], driven by
//! `backend::projector`), never in the server's: a jq program can loop or allocate without
//! end, and only a process can be stopped from outside. The worker and the tests share
//! [`run`], the one evaluation.
//!
//! jq here is jaq (`jaq-core`, `jaq-std`, `jaq-json`): jq's language and standard library,
//! without modules (`import` and `include` read nothing) and without `input`.
//!
//! Why a program failed is text for a person, the model that reads the tool error: [`run`]
//! returns it as a `String`, as do the worker and `backend::projector` that carry it.

pub mod worker;

use std::ops::Range;
use std::sync::Arc;

use jaq_core::load::{self, Arena, File, Loader};
use jaq_core::{Compiler, Ctx, Vars, data};
use jaq_json::Val;
use serde_json::Value;

use super::{Content, ToolResult};
use crate::schema::CompiledSchema;

/// The data jaq's filters run over: JSON values, nothing global.
type Data = data::JustLut<Val>;

/// A compiled program.
pub type Filter = jaq_core::Filter<Data>;

/// The largest `max-items` a manifest may give.
pub const MAX_ITEMS_LIMIT: usize = 100_000;

/// A projection that compiled at load: its text, which the worker compiles again (once per
/// worker and program).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program(Arc<str>);

/// The longest program a manifest may give. jaq's parser recurses once per nesting level and
/// per operator of a chain; with this bound and [`STACK`], no program can overflow it.
pub const MAX_PROGRAM: usize = 16 * 1024;

/// The stack a program is compiled on (reserved, not used, until it is needed).
pub const STACK: usize = 256 << 20;

impl Program {
    /// Checks `code`: every problem with the byte range of `code` it is about. It is
    /// compiled on a thread of its own with a stack large enough for any program of at most
    /// [`MAX_PROGRAM`] bytes, so no text ends the process that loads it.
    pub fn check(code: &str) -> Result<Self, Vec<ProgramError>> {
        if code.len() > MAX_PROGRAM {
            return Err(vec![ProgramError {
                span: 0..0,
                message: format!(
                    "the program is {} bytes, more than the {MAX_PROGRAM} a projection may have",
                    code.len()
                ),
            }]);
        }
        let text: Arc<str> = Arc::from(code);
        let compiled = {
            let text = Arc::clone(&text);
            std::thread::Builder::new()
                .name("project-check".into())
                .stack_size(STACK)
                .spawn(move || compile(&text).map(|_| ()))
        };
        let failed = |why: &str| {
            vec![ProgramError {
                span: 0..0,
                message: format!("the program could not be compiled: {why}"),
            }]
        };
        match compiled {
            Ok(thread) => match thread.join() {
                Ok(checked) => checked.map(|()| Self(text)),
                Err(_panicked) => Err(failed("jaq failed on it")),
            },
            Err(error) => Err(failed(&error.to_string())),
        }
    }

    pub fn code(&self) -> &str {
        &self.0
    }
}

/// How a tool's JSON output is shaped: a program, a cap, or both.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shape {
    pub project: Option<Program>,
    /// The most items an array keeps: the output's own array, or each array that is a
    /// field of the output's object.
    pub max_items: Option<usize>,
}

impl Shape {
    pub fn is_empty(&self) -> bool {
        self.project.is_none() && self.max_items.is_none()
    }
}

/// A problem with a program, at a byte range of its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramError {
    pub span: Range<usize>,
    pub message: String,
}

/// Parses and compiles `code` with jaq's standard library.
pub fn compile(code: &str) -> Result<Filter, Vec<ProgramError>> {
    let arena = Arena::default();
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs());
    let loader = Loader::new(defs);
    let modules = loader
        .load(&arena, File { code, path: () })
        .map_err(|errors| {
            errors
                .into_iter()
                .flat_map(|(file, error)| load_errors(file.code, error))
                .collect::<Vec<_>>()
        })?;
    let funs = jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs());
    Compiler::default()
        .with_funs(funs)
        .compile(modules)
        .map_err(|errors| {
            errors
                .into_iter()
                .flat_map(|(file, undefined)| {
                    undefined.into_iter().map(move |(name, what)| ProgramError {
                        span: within(file.code, name),
                        message: match what {
                            jaq_core::compile::Undefined::Filter(arity) => {
                                format!("`{name}/{arity}` is not a jq filter that is defined here")
                            }
                            other => format!("`{name}` is not a defined {}", other.as_str()),
                        },
                    })
                })
                .collect()
        })
}

/// The errors of one file: lexing, parsing, or a module it could not read.
fn load_errors(code: &str, error: load::Error<&str>) -> Vec<ProgramError> {
    match error {
        load::Error::Io(errors) => errors
            .into_iter()
            .map(|(path, _)| ProgramError {
                span: within(code, path),
                message: "a projection cannot import or include modules".to_owned(),
            })
            .collect(),
        load::Error::Lex(errors) => errors
            .into_iter()
            .map(|(expected, found)| {
                use load::lex::Expect;
                let what = match expected {
                    Expect::Digit => "a digit",
                    Expect::Ident => "an identifier",
                    Expect::Delim("(") => "a closing parenthesis",
                    Expect::Delim("[") => "a closing bracket",
                    Expect::Delim("{") => "a closing brace",
                    Expect::Delim("\"") => "a closing quote",
                    Expect::Delim(_) => "a closing delimiter",
                    Expect::Escape => "a string escape sequence",
                    Expect::Unicode => "a 4-digit hexadecimal code point",
                    Expect::Token => "a token",
                    _ => "something else",
                };
                ProgramError {
                    span: within(code, found),
                    message: format!("expected {what}"),
                }
            })
            .collect(),
        load::Error::Parse(errors) => errors
            .into_iter()
            .map(|(expected, found)| ProgramError {
                span: within(code, found),
                message: if found.is_empty() {
                    format!("expected {} before the end", expected.as_str())
                } else {
                    format!("expected {}, found `{found}`", expected.as_str())
                },
            })
            .collect(),
    }
}

/// Where `part`, a slice of `whole`, lies in it; the end when it lies elsewhere (a
/// standard-library definition).
fn within(whole: &str, part: &str) -> Range<usize> {
    let (start, end) = (
        whole.as_ptr() as usize,
        whole.as_ptr() as usize + whole.len(),
    );
    let at = part.as_ptr() as usize;
    if (start..=end).contains(&at) && at + part.len() <= end {
        at - start..at - start + part.len()
    } else {
        whole.len()..whole.len()
    }
}

/// Runs `filter` on the JSON text `input`: the one value it gives, as JSON text.
pub fn run(filter: &Filter, input: &[u8]) -> Result<Vec<u8>, String> {
    let input = jaq_json::read::parse_single(input)
        .map_err(|error| format!("the output is not JSON jq reads: {error}"))?;
    let ctx = Ctx::<Data>::new(&filter.lut, Vars::new([]));
    let mut outputs = filter.id.run((ctx, input));
    let Some(first) = outputs.next() else {
        return Err("the projection gave no value".to_owned());
    };
    let value = first.map_err(|exception| match exception.get_err() {
        Ok(error) => format!("the projection failed: {error}"),
        Err(_) => "the projection called `halt`".to_owned(),
    })?;
    if outputs.next().is_some() {
        return Err(
            "the projection gave more than one value; wrap it in `[…]` to make them one array"
                .to_owned(),
        );
    }
    let mut out = Vec::new();
    jaq_json::write::write(&mut out, &jaq_json::write::Pp::default(), 0, &value)
        .map_err(|error| format!("the projection's value could not be written: {error}"))?;
    Ok(out)
}

/// Caps the output's arrays at `max` items: the output itself when it is an array, else
/// each array that is a field of its object. Returns how many items were left out.
pub fn cap_items(value: &mut Value, max: usize) -> usize {
    let cap = |items: &mut Vec<Value>| {
        let over = items.len().saturating_sub(max);
        items.truncate(max);
        over
    };
    match value {
        Value::Array(items) => cap(items),
        Value::Object(fields) => fields
            .values_mut()
            .map(|field| match field {
                Value::Array(items) => cap(items),
                _ => 0,
            })
            .sum(),
        _ => 0,
    }
}

/// `result`, whose JSON was shaped into `value`: `value` capped at `max_items` and checked
/// against the output schema, with the blocks after `result`'s JSON text (files, their
/// notes) kept, and a note at the end when items were left out.
pub fn reshape(
    result: ToolResult,
    mut value: Value,
    max_items: Option<usize>,
    output_schema: Option<&CompiledSchema>,
) -> ToolResult {
    let left_out = max_items.map_or(0, |max| cap_items(&mut value, max));
    let mut shaped = ToolResult::structured(value, output_schema);
    if shaped.is_error {
        return shaped;
    }
    shaped.content.extend(result.content.into_iter().skip(1));
    if let Some(max) = max_items.filter(|_| left_out > 0) {
        shaped
            .content
            .push(Content::text(capped_note(left_out, max)));
    }
    shaped
}

/// The note a capped result ends with.
pub fn capped_note(left_out: usize, max: usize) -> String {
    format!(
        "[… {left_out} more item{} left out: this tool returns at most {max} per list (`max-items`) …]",
        if left_out == 1 { "" } else { "s" }
    )
}

#[cfg(test)]
mod tests;
