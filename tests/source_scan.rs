//! Reading `src/` as the door tests do: every line of the program's own code, without its
//! unit tests (a `mod tests` after `#[cfg(test)]`, or a `tests.rs`) and without comment lines.

use std::path::Path;

/// One line of code.
pub(crate) struct Line {
    /// Relative to the repository, e.g. `src/commands/install.rs`.
    pub(crate) file: String,
    pub(crate) number: usize,
    /// The line; empty for a comment line.
    pub(crate) code: String,
}

impl std::fmt::Display for Line {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            formatter,
            "{}:{}: {}",
            self.file,
            self.number,
            self.code.trim()
        )
    }
}

/// Every line of code under `src`, sorted by file and line.
pub(crate) fn lines(src: &Path) -> Vec<Line> {
    let mut found = Vec::new();
    let mut folders = vec![src.to_owned()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            if path.extension().is_none_or(|extension| extension != "rs") {
                continue;
            }
            let file = path
                .strip_prefix(src.parent().expect("src's parent"))
                .expect("beneath")
                .display()
                .to_string();
            if path.file_stem().is_some_and(|stem| stem == "tests") || file.contains("/tests/") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("source");
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
            for (index, line) in code.lines().enumerate() {
                found.push(Line {
                    file: file.clone(),
                    number: index + 1,
                    // A comment line says nothing; a trailing comment is kept with its code
                    // (cutting at `//` would cut `"http://…"` too).
                    code: if line.trim_start().starts_with("//") {
                        String::new()
                    } else {
                        line.to_owned()
                    },
                });
            }
        }
    }
    found.sort_by(|a, b| (&a.file, a.number).cmp(&(&b.file, b.number)));
    found
}
