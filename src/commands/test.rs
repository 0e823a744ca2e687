//! `mcp-serve test`: runs the examples a manifest declares per tool, like a test runner, so
//! people can gate their own manifests in CI.

use crate::failure::Failure;
use std::fmt::Write as _;

use std::process::ExitCode;
use std::time::Duration;

use serde_json::Value;

use std::sync::Arc;

use crate::backend::http::HttpClients;
use crate::backend::processes::Processes;
use crate::call::{Call, Loaded, Services, Tasking};
use crate::caller::Caller;
use crate::registry::Registry;
use crate::results::{Content, ToolResult};
use crate::tool::Example;

mod stand_in;

/// Runs every example (of `only`, when given); returns the report and whether all passed.
pub async fn run(
    registry: &Arc<Registry>,
    only: Option<&str>,
    audit: crate::audit::Audit,
) -> (String, bool) {
    let mut report = String::new();
    let (mut passed, mut failed) = (0, 0);
    let processes = Arc::new(Processes::supervising().0);
    let terminal = |clients| Services {
        audit,
        ..Services::terminal(Arc::clone(&processes), clients)
    };
    let shared = Arc::new(terminal(HttpClients::default()));
    let served = Loaded::alone(Arc::clone(registry));
    for tool in registry
        .tools()
        .filter(|tool| only.is_none_or(|name| tool.name == name))
    {
        for example in &tool.examples {
            // An example with an upstream talks to its own stand-in.
            let stand_in = match &example.upstream {
                Some(upstream) => match stand_in::StandIn::start(upstream).await {
                    Ok(stand_in) => Some(stand_in),
                    Err(error) => {
                        failed += 1;
                        let _ = writeln!(report, "FAIL {} :: {}", tool.name, example.name);
                        let _ = writeln!(
                            report,
                            "     could not start the stand-in upstream: {error}"
                        );
                        continue;
                    }
                },
                None => None,
            };
            let services = stand_in.as_ref().map_or_else(
                || Arc::clone(&shared),
                |stand_in| Arc::new(terminal(HttpClients::standing_in(stand_in.address))),
            );
            // An example answers a tool's confirmation, never its questions.
            let call = Call {
                tool: tool.name.clone(),
                arguments: Some(example.arguments.clone()),
                caller: Caller::only(),
                events: None,
                revision: None,
                tasking: Tasking::Never,
                gatherer: super::answer::Answers {
                    yes: true,
                    given: Vec::new(),
                    interactive: false,
                },
            };
            let result = super::call::call(&served, &services, call).await;
            let mut problems = check(example, &result);
            if let (Some(stand_in), Some(upstream)) = (&stand_in, &example.upstream) {
                problems.extend(check_request(upstream, &stand_in.seen()));
            }
            if problems.is_empty() {
                passed += 1;
                let _ = writeln!(report, "PASS {} :: {}", tool.name, example.name);
            } else {
                failed += 1;
                let _ = writeln!(report, "FAIL {} :: {}", tool.name, example.name);
                for problem in problems {
                    let _ = writeln!(report, "     {}", problem.replace('\n', "\n     "));
                }
            }
        }
    }
    let _ = writeln!(report, "\n{passed} passed, {failed} failed");
    (registry.redactor().redact(&report), failed == 0)
}

/// What the stand-in was asked, against what the example expects.
fn check_request(upstream: &crate::tool::ExampleUpstream, seen: &[stand_in::Seen]) -> Vec<String> {
    let Some(first) = seen.first() else {
        return vec!["the tool never called its upstream".into()];
    };
    let mut problems = Vec::new();
    if let Some(method) = &upstream.method
        && &first.method != method
    {
        problems.push(format!(
            "the upstream was called with {}, expected {method}",
            first.method
        ));
    }
    if let Some(path) = &upstream.path {
        let target = if path.contains('?') {
            first.target.as_str()
        } else {
            first.target.split('?').next().unwrap_or_default()
        };
        if target != path {
            problems.push(format!(
                "the upstream was asked for {target}, expected {path}"
            ));
        }
    }
    problems
}

/// Runs `mcp-serve test`: exit 1 when an example fails.
pub fn command(
    registry: Registry,
    only: Option<&str>,
    audit: crate::audit::Audit,
) -> Result<ExitCode, Failure> {
    // Naming a tool that is not served would pass with nothing run: a green CI for a typo.
    if let Some(tool) = only {
        registry
            .get(tool)
            .map_err(|unknown| Failure::new(unknown.to_string()))?;
    }
    let registry = Arc::new(registry);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| Failure::new(format!("could not start the async runtime: {error}")))?;
    let (report, all_passed) = runtime.block_on(run(&registry, only, audit));
    runtime.shutdown_timeout(Duration::from_secs(1));
    super::print(&report);
    Ok(if all_passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::EXIT_FAILURE)
    })
}

/// What is wrong with `result` for `example`; empty when it passes.
fn check(example: &Example, result: &ToolResult) -> Vec<String> {
    let mut problems = Vec::new();
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(|block| match block {
            Content::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let text = text.join("\n");
    let expected_error = example.is_error.unwrap_or(false);
    if result.is_error != expected_error {
        problems.push(format!(
            "expected {}, got {}: {text}",
            if expected_error {
                "an error"
            } else {
                "success"
            },
            if result.is_error {
                "an error"
            } else {
                "success"
            }
        ));
    }
    if let Some(expected) = &example.text
        && &text != expected
    {
        problems.push(format!("expected the text {expected:?}, got {text:?}"));
    }
    if let Some(needle) = &example.text_contains
        && !text.contains(needle.as_str())
    {
        problems.push(format!(
            "expected the text to contain {needle:?}, got {text:?}"
        ));
    }
    if let Some(expected) = &example.structured {
        match &result.structured {
            Some(actual) if contains(actual, expected) => {}
            actual => problems.push(format!(
                "expected structured content containing {expected}, got {}",
                actual
                    .as_ref()
                    .map_or_else(|| "none".to_owned(), Value::to_string)
            )),
        }
    }
    if let Some(schema) = &example.schema {
        let actual = result.structured.clone().unwrap_or(Value::Null);
        let violations = schema.violations(&actual, "structured content");
        if !violations.is_empty() {
            problems.push(format!(
                "the structured content does not match the example's schema:\n{}",
                violations.join("\n")
            ));
        }
    }
    problems
}

/// Whether `actual` has every field of `expected` (recursively for objects).
fn contains(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Object(actual), Value::Object(expected)) => expected
            .iter()
            .all(|(key, value)| actual.get(key).is_some_and(|found| contains(found, value))),
        _ => actual == expected,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::contains;

    #[test]
    fn structured_expectations_are_subsets() {
        assert!(contains(
            &json!({"a": 1, "b": {"c": 2, "d": 3}}),
            &json!({"b": {"c": 2}})
        ));
        assert!(!contains(&json!({"a": 1}), &json!({"a": 2})));
        assert!(contains(&json!([1, 2]), &json!([1, 2])));
    }
}
