//! The cookbook tests itself: `mcp-serve test` passes on every manifest under `examples/`
//! (`tools.example.toml` has its own test in `cli`), with nothing else started (HTTP examples run against their
//! stand-ins; the one secret a recipe needs is set here, as its comment tells a reader to).

use crate::harness::{BINARY, repo_root};

fn manifests(directory: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(directory)
        .expect("a folder")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            manifests(&path, found);
        } else if path
            .extension()
            .is_some_and(|extension| extension == "toml")
        {
            found.push(path);
        }
    }
}

#[test]
fn every_example_manifest_passes_its_own_examples() {
    let mut found = Vec::new();
    manifests(&repo_root().join("examples"), &mut found);
    let mut passed_total = 0;
    for manifest in &found {
        let output = std::process::Command::new(BINARY)
            .args(["test", "--config"])
            .arg(manifest)
            .env("WEATHER_API_TOKEN", "a-token-for-the-stand-in")
            .env("BOOKSHELF_TOKEN", "a-token-for-the-stand-in")
            // The git recipe reads this checkout, whoever owns it (a container's mount).
            .env("GIT_CONFIG_COUNT", "1")
            .env("GIT_CONFIG_KEY_0", "safe.directory")
            .env("GIT_CONFIG_VALUE_0", repo_root())
            .env_remove("MCP_SERVE_CONFIG")
            .current_dir("/")
            .output()
            .expect("run mcp-serve test");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{}:\n{stdout}{}",
            manifest.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        let last = stdout.lines().last().unwrap_or_default();
        let passed: usize = last
            .split_whitespace()
            .next()
            .and_then(|count| count.parse().ok())
            .unwrap_or(0);
        assert!(
            passed > 0 && last.ends_with(" passed, 0 failed"),
            "{}: {last}",
            manifest.display()
        );
        passed_total += passed;
    }
    eprintln!(
        "cookbook: {} manifests, {passed_total} examples pass",
        found.len()
    );
    assert!(found.len() >= 10, "the cookbook has at least 10 recipes");
}

/// The OpenAPI recipe is what the importer writes, plus the examples a person added: take
/// the `[[tools.examples]]` blocks out and the rest is today's import, byte for byte.
#[cfg(feature = "openapi")]
#[test]
fn the_openapi_recipe_is_what_the_importer_writes() {
    let folder = repo_root().join("examples/cookbook/openapi");
    let output = std::process::Command::new(BINARY)
        .args([
            "import",
            "openapi",
            "bookshelf.yaml",
            "--env-prefix",
            "BOOKSHELF_",
        ])
        .current_dir(&folder)
        .output()
        .expect("run mcp-serve import");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let imported = String::from_utf8_lossy(&output.stdout);
    let recipe = std::fs::read_to_string(folder.join("bookshelf.toml")).expect("the recipe");
    let mut without_examples = String::new();
    let mut in_example = false;
    for line in recipe.lines() {
        if line == "[[tools.examples]]" {
            in_example = true;
        } else if line.is_empty() {
            in_example = false;
        }
        if !in_example {
            without_examples.push_str(line);
            without_examples.push('\n');
        }
    }
    assert_eq!(without_examples, imported);
    assert!(recipe.matches("[[tools.examples]]").count() >= 7);
}
