//! `mcp-serve call`: one tool, run exactly as the server runs it (validation, defaults,
//! backend, output pipeline), from a terminal.

use crate::failure::Failure;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value};

use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::time::Duration;

use std::sync::Arc;

use crate::backend::Backend;
use crate::backend::http::HttpClients;
use crate::call::{Call, Conclusion, Loaded, Services, Tasking};
use crate::caller::Caller;
use crate::cli::CallArgs;
use crate::events::CallEvent;
use crate::registry::Registry;
use crate::results::content::EmbeddedResource;
use crate::results::{Content, ToolResult};
use crate::tool::Tool;

/// Turns `key=value` pairs into arguments, typed by the tool's schema: numbers, booleans,
/// lists (a repeated key, or a JSON array) and objects (JSON).
pub fn parse_pairs(tool: &Tool, pairs: &[String]) -> Result<Map<String, Value>, String> {
    let mut arguments = Map::new();
    for pair in pairs {
        let (key, text) = pair
            .split_once('=')
            .ok_or_else(|| format!("`{pair}` is not `key=value`"))?;
        let property = tool
            .input_schema
            .pointer(&format!("/properties/{key}"))
            .cloned()
            .unwrap_or(Value::Null);
        let kind = property
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("string");
        if kind == "array" {
            let items = property
                .pointer("/items/type")
                .and_then(Value::as_str)
                .unwrap_or("string");
            let values: Vec<Value> = if text.trim_start().starts_with('[') {
                serde_json::from_str(text)
                    .map_err(|error| format!("`{key}` is not a JSON list: {error}"))?
            } else {
                vec![typed(key, text, items)?]
            };
            let entry = arguments
                .entry(key.to_owned())
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(list) = entry {
                list.extend(values);
            }
        } else {
            arguments.insert(key.to_owned(), typed(key, text, kind)?);
        }
    }
    Ok(arguments)
}

pub(super) fn typed(key: &str, text: &str, kind: &str) -> Result<Value, String> {
    match kind {
        "integer" => text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("`{key}` takes a whole number, not `{text}`")),
        // A whole number stays whole (`3`, not `3.0`), as a client's JSON would send it.
        "number" => text
            .parse::<i64>()
            .map(Value::from)
            .ok()
            .or_else(|| {
                text.parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map(Value::Number)
            })
            .ok_or_else(|| format!("`{key}` takes a number, not `{text}`")),
        "boolean" => match text {
            "true" | "yes" | "1" => Ok(Value::Bool(true)),
            "false" | "no" | "0" => Ok(Value::Bool(false)),
            _ => Err(format!("`{key}` takes true or false, not `{text}`")),
        },
        "object" => serde_json::from_str(text)
            .map_err(|error| format!("`{key}` takes a JSON object: {error}")),
        _ => Ok(Value::String(text.to_owned())),
    }
}

/// What would run, without running it.
pub fn dry_run(tool: &Tool, arguments: Map<String, Value>) -> Result<String, String> {
    let arguments = tool
        .prepare(Some(arguments))
        .map_err(|invalid| invalid.to_string())?;
    match &tool.backend {
        Backend::Command(command) => command
            .describe(&arguments)
            .map_err(|error| error.to_string()),
        Backend::Http(http) => http.describe(&arguments),
        Backend::Static(_) => Ok("returns the result declared in the manifest\n".into()),
    }
}

/// Shows an event on stderr while the tool runs: on a terminal, progress is one bar redrawn
/// in place; otherwise every event is a line.
pub fn show_event(event: &CallEvent) {
    let terminal = std::io::stderr().is_terminal();
    match event {
        CallEvent::Progress {
            progress,
            total,
            message,
        } => {
            let message = message.as_deref().unwrap_or_default();
            match total.filter(|total| *total > 0.0) {
                Some(total) if terminal => {
                    let fraction = (progress / total).clamp(0.0, 1.0);
                    // Twenty cells: count how many the fraction fills, without a lossy cast.
                    let filled = (1..=20_u32)
                        .filter(|cell| f64::from(*cell) <= fraction * 20.0 + 0.5)
                        .count();
                    eprint!(
                        "\r\u{1b}[2K[{}{}] {:>3.0}% {message}",
                        "#".repeat(filled),
                        "-".repeat(20 - filled),
                        fraction * 100.0
                    );
                }
                Some(total) => eprintln!(
                    "{} {:>3.0}% {message}",
                    super::label("progress"),
                    progress / total * 100.0
                ),
                None => eprintln!("{} {progress} {message}", super::label("progress")),
            }
        }
        CallEvent::Log {
            level,
            message,
            data,
        } => {
            let data = data
                .as_ref()
                .map(|data| format!(" {data}"))
                .unwrap_or_default();
            let clear = if terminal { "\r\u{1b}[2K" } else { "" };
            eprintln!("{clear}{} {message}{data}", super::label(level.as_str()));
        }
    }
}

/// Ends a progress bar drawn in place, if any.
pub fn finish_progress() {
    if std::io::stderr().is_terminal() {
        eprint!("\r\u{1b}[2K");
    }
}

/// Runs a call from the terminal through the pipeline; a tool that asks first runs only
/// once the terminal has answered (`--yes`, `--answer`, or the person at it).
pub async fn call(
    served: &Loaded,
    services: &Arc<Services>,
    call: Call<super::answer::Answers>,
) -> ToolResult {
    match crate::call::run(served, services, call, std::future::pending()).await {
        Ok(Conclusion::Done(result)) => result,
        Ok(Conclusion::Pending(never)) => match never {},
        Ok(Conclusion::Task(record)) => {
            ToolResult::error(format!("the call became task {}", record.id))
        }
        Err(error) => ToolResult::error(error.to_string()),
    }
}

/// The call's arguments from the command line: `--json` (an object, or `-` to read one
/// from stdin) or `key=value` pairs typed by the tool's schema. `call` and `call --task`
/// both read them here.
pub fn arguments(tool: &Tool, args: &CallArgs) -> Result<Map<String, Value>, Failure> {
    let Some(json) = &args.json else {
        return parse_pairs(tool, &args.arguments).map_err(Failure::new);
    };
    let text = if json == "-" {
        std::io::read_to_string(std::io::stdin())
            .map_err(|error| Failure::new(format!("could not read stdin: {error}")))?
    } else {
        json.clone()
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Failure::new("--json takes a JSON object")),
        Err(error) => Err(Failure::new(format!("--json is not valid JSON: {error}"))),
    }
}

/// Writes the result: text to `out`, structured content as JSON with `json_out`, and
/// binary blocks into `out_dir`, printing their paths.
pub fn print_result(
    result: &ToolResult,
    tool: &str,
    json_out: bool,
    out_dir: &Path,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    if json_out && let Some(structured) = &result.structured {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(structured).unwrap_or_default()
        )?;
        return Ok(());
    }
    let mut saved = 0;
    for block in &result.content {
        match block {
            Content::Text { text, .. } => writeln!(out, "{text}")?,
            Content::Image {
                data, mime_type, ..
            }
            | Content::Audio {
                data, mime_type, ..
            } => {
                saved += 1;
                let path = save(
                    out_dir,
                    tool,
                    saved,
                    mime_type,
                    &BASE64.decode(data).unwrap_or_default(),
                )?;
                writeln!(out, "[{mime_type} saved to {}]", path.display())?;
            }
            Content::Resource {
                resource:
                    EmbeddedResource {
                        uri,
                        mime_type,
                        text,
                        blob,
                    },
                ..
            } => match (text, blob) {
                (Some(text), _) => writeln!(out, "[resource {uri}]\n{text}")?,
                (None, Some(blob)) => {
                    saved += 1;
                    let mime = mime_type.as_deref().unwrap_or("application/octet-stream");
                    let path = save(
                        out_dir,
                        tool,
                        saved,
                        mime,
                        &BASE64.decode(blob).unwrap_or_default(),
                    )?;
                    writeln!(out, "[resource {uri} ({mime}) saved to {}]", path.display())?;
                }
                (None, None) => {}
            },
            Content::ResourceLink(link) => {
                writeln!(out, "[resource link {} <{}>]", link.name, link.uri)?;
            }
        }
    }
    out.flush()
}

fn save(
    directory: &Path,
    tool: &str,
    index: usize,
    mime_type: &str,
    bytes: &[u8],
) -> std::io::Result<std::path::PathBuf> {
    let extension = mime_type
        .split('/')
        .nth(1)
        .and_then(|subtype| subtype.split(['+', ';']).next())
        .unwrap_or("bin");
    let extension = match extension {
        "jpeg" => "jpg",
        "mpeg" => "mp3",
        "plain" => "txt",
        other => other,
    };
    let path = directory.join(format!("{tool}-{index}.{extension}"));
    crate::userfile::write(&path, bytes).map_err(std::io::Error::other)?;
    Ok(path)
}

/// Runs `mcp-serve call`: exit 1 for a tool error; `Err` is a usage message (exit 2).
pub fn command(
    registry: Registry,
    args: &CallArgs,
    audit: crate::audit::Audit,
) -> Result<ExitCode, Failure> {
    let registry = Arc::new(registry);
    let tool = Arc::clone(
        registry
            .get(&args.tool)
            .map_err(|unknown| Failure::new(unknown.to_string()))?,
    );
    let arguments = arguments(&tool, args)?;
    if args.dry_run {
        let redacted = |text: String| registry.redactor().redact(&text);
        return Ok(
            match dry_run(&tool, arguments).map(redacted).map_err(redacted) {
                Ok(plan) => {
                    super::print(&plan);
                    ExitCode::SUCCESS
                }
                Err(message) => {
                    eprintln!("{} {message}", super::label("error"));
                    ExitCode::from(super::EXIT_FAILURE)
                }
            },
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| Failure::new(format!("could not start the async runtime: {error}")))?;
    let processes = Arc::new(crate::backend::processes::Processes::supervising().0);
    let services = Arc::new(Services {
        audit,
        ..Services::terminal(Arc::clone(&processes), HttpClients::default())
    });
    let served = Loaded::alone(Arc::clone(&registry));
    let result = runtime.block_on(async {
        let (sender, mut receiver) = tokio::sync::mpsc::channel(256);
        let printer = tokio::spawn(async move {
            while let Some(event) = receiver.recv().await {
                show_event(&event);
            }
        });
        let call = Call {
            tool: tool.name.clone(),
            arguments: Some(arguments),
            caller: Caller::only(),
            events: Some(sender),
            revision: None,
            tasking: Tasking::Never,
            gatherer: super::answer::Answers::from_flags(args.yes, args.answers.clone()),
        };
        // Run inside a traced script (`otel-cli exec -- mcp-serve call …`), the command joins
        // the script's trace.
        let result = match crate::traces::context::from_environment() {
            Some(trace) => {
                opentelemetry::context::FutureExt::with_context(
                    self::call(&served, &services, call),
                    trace,
                )
                .await
            }
            None => self::call(&served, &services, call).await,
        };
        let _ = printer.await;
        finish_progress();
        result
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    processes.stop_remaining();
    Ok(show_result(&result, &tool.name, args))
}

/// Prints a call's result to stdout (`--json`, `--out-dir`) and says how the command exits:
/// a tool error is [`super::EXIT_FAILURE`].
pub(super) fn show_result(result: &ToolResult, tool: &str, args: &CallArgs) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = print_result(result, tool, args.json_out, &args.out_dir, &mut stdout) {
        Failure::new(format!("could not write the result: {error}")).print();
        return ExitCode::FAILURE;
    }
    if result.is_error {
        ExitCode::from(super::EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::typed;

    #[test]
    fn values_are_typed_by_the_schema() {
        assert_eq!(typed("n", "5", "integer"), Ok(serde_json::json!(5)));
        assert!(typed("n", "five", "integer").is_err());
        assert_eq!(typed("x", "1.5", "number"), Ok(serde_json::json!(1.5)));
        assert_eq!(typed("x", "3", "number"), Ok(serde_json::json!(3)));
        assert!(typed("x", "NaN", "number").is_err());
        assert_eq!(typed("b", "yes", "boolean"), Ok(serde_json::json!(true)));
        assert_eq!(typed("s", "007", "string"), Ok(serde_json::json!("007")));
        assert_eq!(
            typed("o", r#"{"a":1}"#, "object"),
            Ok(serde_json::json!({"a": 1}))
        );
    }
}
