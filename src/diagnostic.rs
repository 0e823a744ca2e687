//! Manifest diagnostics: a message, an optional span in the manifest, and hints, rendered
//! the way rustc and `just` render them (`file:line:col`, the source line and a caret).

use std::fmt::Write as _;
use std::ops::Range;

use unicode_width::UnicodeWidthChar;

/// One problem found in a manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// One sentence, lower-case, no trailing period.
    pub message: String,
    /// Byte range in the manifest text the message is about, when there is one.
    pub span: Option<Range<usize>>,
    /// Follow-up lines such as "did you mean `argv`?".
    pub hints: Vec<String>,
}

impl Diagnostic {
    pub fn new(message: impl Into<String>, span: Option<Range<usize>>) -> Self {
        Self {
            message: message.into(),
            span,
            hints: Vec::new(),
        }
    }

    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    /// Adds a hint in place.
    pub fn hint(&mut self, hint: impl Into<String>) -> &mut Self {
        self.hints.push(hint.into());
        self
    }

    /// Adds "did you mean `name`?" when there is a suggestion.
    pub fn suggest(&mut self, suggestion: Option<&str>) -> &mut Self {
        if let Some(name) = suggestion {
            self.hints.push(format!("did you mean `{name}`?"));
        }
        self
    }

    #[must_use]
    pub fn with_suggestion(self, suggestion: Option<&str>) -> Self {
        match suggestion {
            Some(name) => self.with_hint(format!("did you mean `{name}`?")),
            None => self,
        }
    }

    /// Renders the diagnostic against the text it points into; `path` is shown as given.
    pub fn render(&self, path: &str, source: &str) -> String {
        let mut out = format!("error: {}\n", self.message);
        if let Some(span) = &self.span {
            let location = Location::find(source, span.start);
            let line_number = location.line.to_string();
            let pad = " ".repeat(line_number.len());
            let line_text = source[location.line_start..]
                .split(['\n', '\r'])
                .next()
                .unwrap_or_default();
            let span_end = span.end.min(location.line_start + line_text.len());
            let (shown, caret_start, caret_width) = display_line(
                line_text,
                span.start - location.line_start,
                span_end - location.line_start,
            );
            let _ = writeln!(out, "{pad}--> {path}:{}:{}", location.line, location.column);
            let _ = writeln!(out, "{pad} |");
            let _ = writeln!(out, "{line_number} | {shown}");
            let _ = writeln!(
                out,
                "{pad} | {}{}",
                " ".repeat(caret_start),
                "^".repeat(caret_width.max(1))
            );
            for hint in &self.hints {
                let _ = writeln!(out, "{pad} = hint: {hint}");
            }
        } else {
            let _ = writeln!(out, " --> {path}");
            for hint in &self.hints {
                let _ = writeln!(out, "  = hint: {hint}");
            }
        }
        out
    }
}

/// 1-based line and column (in characters) of a byte offset, and where its line starts.
struct Location {
    line: usize,
    column: usize,
    line_start: usize,
}

impl Location {
    fn find(source: &str, offset: usize) -> Self {
        let offset = floor_char_boundary(source, offset.min(source.len()));
        let before = &source[..offset];
        let line_start = before.rfind('\n').map_or(0, |index| index + 1);
        Self {
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
            line_start,
        }
    }
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// Expands tabs to four spaces and measures display widths, so carets line up under wide
/// characters. Returns the line as shown, the caret's start column and its width.
fn display_line(line: &str, start: usize, end: usize) -> (String, usize, usize) {
    let mut shown = String::with_capacity(line.len());
    let (mut caret_start, mut caret_width, mut column) = (0, 0, 0);
    for (index, character) in line.char_indices() {
        let width = if character == '\t' {
            shown.push_str("    ");
            4
        } else {
            shown.push(character);
            character.width().unwrap_or(0)
        };
        if index < start {
            caret_start = column + width;
        } else if index < end {
            caret_width += width;
        }
        column += width;
    }
    if start == 0 {
        caret_start = 0;
    }
    (shown, caret_start, caret_width)
}

#[cfg(test)]
mod tests {
    use super::Diagnostic;

    #[test]
    fn renders_location_source_line_caret_and_hint() {
        let source = "[server]\nname = \"x\"\n\n[[tools]]\nnmae = \"search\"\n";
        let start = source.find("nmae").unwrap_or_default();
        let rendered = Diagnostic::new("unknown key `nmae` in `tools[0]`", Some(start..start + 4))
            .with_suggestion(Some("name"))
            .render("tools.toml", source);
        assert_eq!(
            rendered,
            "error: unknown key `nmae` in `tools[0]`\n\
             \x20--> tools.toml:5:1\n\
             \x20 |\n\
             5 | nmae = \"search\"\n\
             \x20 | ^^^^\n\
             \x20 = hint: did you mean `name`?\n"
        );
    }

    #[test]
    fn carets_line_up_after_tabs_and_wide_characters() {
        let source = "\tdescription = \"日本\" x\n";
        let start = source.find('x').unwrap_or_default();
        let rendered = Diagnostic::new("bad", Some(start..start + 1)).render("m.toml", source);
        let lines: Vec<&str> = rendered.lines().collect();
        assert_eq!(lines[3], "1 |     description = \"日本\" x");
        // 4 (tab) + 15 (`description = "`) + 4 (two wide chars) + 2 (`" `) = 25 columns.
        assert_eq!(lines[4], format!("  | {}^", " ".repeat(25)));
    }

    #[test]
    fn diagnostics_without_a_span_name_the_file() {
        let rendered = Diagnostic::new("the manifest declares no tools", None)
            .with_hint("add a `[[tools]]` table")
            .render("tools.toml", "");
        assert_eq!(
            rendered,
            "error: the manifest declares no tools\n --> tools.toml\n  = hint: add a `[[tools]]` table\n"
        );
    }
}
