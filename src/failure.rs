//! How a command for people fails: a message and its hints, rendered in one place for the
//! terminal (`error:` and `hint:` bold and coloured when stderr is a terminal and `NO_COLOR`
//! is unset, as STYLE.md says), with the exit code it ends with. Manifest diagnostics use the
//! same labels ([`label`]).

use std::io::IsTerminal as _;

/// Exit code for a usage or manifest error (clap uses 2 for usage errors too).
pub const EXIT_USAGE: u8 = 2;

/// A command that could not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What went wrong: one sentence, lower-case, no `error:` (the renderer adds it).
    message: String,
    /// What to do about it, each one line after `hint:`.
    hints: Vec<String>,
    /// Already rendered, labels and all (manifest diagnostics, which point into the file).
    rendered: bool,
}

impl Failure {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hints: Vec::new(),
            rendered: false,
        }
    }

    /// Text rendered already (by [`crate::diagnostic::Diagnostic::render`]), printed as is.
    pub fn rendered(text: impl Into<String>) -> Self {
        Self {
            message: text.into(),
            hints: Vec::new(),
            rendered: true,
        }
    }

    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    /// The message alone, as a tool error or a log line carries it.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// `error: …`, a blank line and `hint: …` for each hint, ending in a newline; the labels
    /// coloured when `color`.
    pub fn render(&self, color: bool) -> String {
        if self.rendered {
            // Its labels start lines: `error:` and `warning:` of each diagnostic.
            let mut text = String::with_capacity(self.message.len() + 16);
            for line in self.message.lines() {
                let labelled = ["error", "warning"].into_iter().find_map(|kind| {
                    let rest = line.strip_prefix(kind)?.strip_prefix(':')?;
                    Some((kind, rest))
                });
                match labelled {
                    Some((kind, rest)) => text.push_str(&format!("{}{rest}", paint(kind, color))),
                    None => text.push_str(line),
                }
                text.push('\n');
            }
            return text;
        }
        let mut text = format!("{} {}\n", paint("error", color), self.message);
        for hint in &self.hints {
            text.push('\n');
            text.push_str(&format!("{} {hint}\n", paint("hint", color)));
        }
        text
    }

    /// Prints it on stderr (coloured where [`color`] says).
    pub fn print(&self) {
        use std::io::Write as _;
        let _ = std::io::stderr()
            .lock()
            .write_all(self.render(color()).as_bytes());
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.render(false).trim_end())
    }
}

/// Whether stderr may be coloured: a terminal, and `NO_COLOR` unset.
pub fn color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// `warning:` / `error:` / `hint:` prefixes, bold and coloured when stderr allows it.
pub fn label(kind: &str) -> String {
    paint(kind, color())
}

fn paint(kind: &str, color: bool) -> String {
    if !color {
        return format!("{kind}:");
    }
    let code = match kind {
        "error" => "1;31",
        "warning" => "1;33",
        _ => "1;36",
    };
    format!("\u{1b}[{code}m{kind}\u{1b}[0m:")
}

#[cfg(test)]
mod tests {
    use super::Failure;

    #[test]
    fn renders_labels_plain_or_coloured_and_hints_after_a_blank_line() {
        let failure = Failure::new("no manifest").hint("pass `--config`");
        assert_eq!(
            failure.render(false),
            "error: no manifest\n\nhint: pass `--config`\n"
        );
        assert_eq!(
            failure.render(true),
            "\u{1b}[1;31merror\u{1b}[0m: no manifest\n\n\u{1b}[1;36mhint\u{1b}[0m: pass `--config`\n"
        );
        assert_eq!(
            failure.to_string(),
            "error: no manifest\n\nhint: pass `--config`"
        );
        let rendered = Failure::rendered("error: as is\n --> m.toml:1:1\nwarning: too");
        assert_eq!(
            rendered.render(false),
            "error: as is\n --> m.toml:1:1\nwarning: too\n"
        );
        assert_eq!(
            rendered.render(true),
            "\u{1b}[1;31merror\u{1b}[0m: as is\n --> m.toml:1:1\n\u{1b}[1;33mwarning\u{1b}[0m: too\n"
        );
    }
}
