//! `project` and `max-items`: how a tool's JSON output is shaped before its output schema
//! is checked (`results::project`). A program is compiled here, so that each problem
//! points at its place inside the manifest's string.

use std::ops::Range;

use toml::Spanned;

use super::Checker;
use super::wire::ToolWire;
use crate::results::project::{MAX_ITEMS_LIMIT, Program, Shape};

/// The tool's shape. `applies` is `Err(reason)` when the tool's output is never JSON
/// (a static tool, a command without `output = "json"`): then either key is an error.
pub(super) fn shape(wire: &ToolWire, applies: Result<(), &str>, checker: &mut Checker) -> Shape {
    if let Err(reason) = applies {
        for (key, span) in [
            ("project", wire.project.as_ref().map(Spanned::span)),
            ("max-items", wire.max_items.as_ref().map(Spanned::span)),
        ] {
            if let Some(span) = span {
                checker
                    .error(format!("`{key}` shapes JSON output, and {reason}"), span)
                    .hint("a command tool with `output = \"json\"` or an HTTP tool whose response is JSON can shape it");
            }
        }
        return Shape::default();
    }
    let project = wire.project.as_ref().and_then(|code| {
        Program::check(code.get_ref())
            .map_err(|errors| {
                for error in errors {
                    let span = inside(&checker.source, code, &error.span);
                    checker
                        .error(format!("in `project`: {}", error.message), span)
                        .hint("`project` is a jq program (jq's language and standard library, without modules or `input`)");
                }
            })
            .ok()
    });
    let max_items = wire.max_items.as_ref().and_then(|max| {
        usize::try_from(*max.get_ref())
            .ok()
            .filter(|max| (1..=MAX_ITEMS_LIMIT).contains(max))
            .or_else(|| {
                checker.error(
                    format!("`max-items` is a number of items from 1 to {MAX_ITEMS_LIMIT}"),
                    max.span(),
                );
                None
            })
    });
    Shape { project, max_items }
}

/// `max-items` against the output schema: a cap below a list's `minItems` would make every
/// longer answer fail the schema, with a message that blames the output.
pub(super) fn check_cap(
    wire: &ToolWire,
    shape: &Shape,
    schema: &serde_json::Value,
    checker: &mut Checker,
) {
    let (Some(max), Some(key)) = (shape.max_items, wire.max_items.as_ref()) else {
        return;
    };
    let lists: Vec<(String, &serde_json::Value)> = match schema.get("properties") {
        Some(serde_json::Value::Object(fields)) => fields
            .iter()
            .map(|(name, field)| (format!("`{name}`"), field))
            .collect(),
        _ => vec![("the output".to_owned(), schema)],
    };
    for (what, list) in lists {
        if let Some(least) = list.get("minItems").and_then(serde_json::Value::as_u64)
            && usize::try_from(least).is_ok_and(|least| least > max)
        {
            checker
                .error(
                    format!(
                        "`max-items = {max}` keeps fewer items than the output schema's `minItems` of {least} for {what}"
                    ),
                    key.span(),
                )
                .hint("raise `max-items`, or lower `minItems`");
        }
    }
}

/// The place in the manifest of `part`, a byte range of the string `value`: exact when the
/// string is written as it reads (no escapes), else the whole string.
fn inside(source: &str, value: &Spanned<String>, part: &Range<usize>) -> Range<usize> {
    let span = value.span();
    let text = value.get_ref();
    let Some(written) = source.get(span.clone()) else {
        return span;
    };
    let opening = ["'''", "\"\"\"", "'", "\""]
        .into_iter()
        .find(|quote| written.starts_with(quote))
        .map_or(0, str::len);
    let mut start = span.start + opening;
    if opening == 3 {
        // A newline right after the opening quotes is not part of the string.
        for newline in ["\r\n", "\n"] {
            if source[start..].starts_with(newline) {
                start += newline.len();
                break;
            }
        }
    }
    if source.get(start..start + text.len()) == Some(text.as_str()) {
        let end = part.end.max(part.start + 1).min(text.len());
        start + part.start.min(end)..start + end
    } else {
        span
    }
}

#[cfg(test)]
mod tests {
    use toml::Spanned;

    use super::inside;

    fn value(source: &str) -> Spanned<String> {
        #[derive(serde::Deserialize)]
        struct Doc {
            p: Spanned<String>,
        }
        toml::from_str::<Doc>(source).expect("a document").p
    }

    #[test]
    fn a_place_in_a_string_is_found_in_the_file_when_it_is_written_as_it_reads() {
        for source in [
            "p = \".a | nope\"\n",
            "p = '.a | nope'\n",
            "p = '''\n.a | nope'''\n",
            "p = \"\"\"\r\n.a | nope\"\"\"\n",
        ] {
            let value = value(source);
            let place = inside(source, &value, &(5..9));
            assert_eq!(&source[place], "nope", "{source:?}");
        }
        // An escape moves everything after it: the whole string is pointed at.
        let source = "p = \"\\u002ea | nope\"\n";
        let value = value(source);
        assert_eq!(inside(source, &value, &(5..9)), value.span());
    }
}
