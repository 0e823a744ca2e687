//! The call pipeline's matrix: every way a call reaches the pipeline (`entries::ALL`) × every
//! policy it applies (rate per tool and caller, confirmation shown and honoured, the server's
//! `--max-calls` with no queue, one audit record per request, one metrics outcome per
//! call), each tool called plainly and through its question (`confirm`, answered the
//! entry's way). A command leaves a line in a runs file each time it really runs, so a cell
//! checks what ran, not only what was answered. Each cell prints `held` or why it does not
//! apply; the test fails on any cell that does not hold.

#[path = "pipeline/entries.rs"]
mod entries;

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::harness::Workspace;
use entries::{ALL, Answer, Call, Ended, Entry, Kind};

/// Every tool comes plain, `-asks` (a confirmation before it runs or becomes a task) and
/// `-inside` (the confirmation asked inside its task). Each run appends to `runs-<name>`.
fn manifest() -> String {
    let bases = [
        ("limited", "rate = \"2/m\"\n", "echo ok"),
        ("slow", "", "sleep 2; echo ok"),
        ("plain", "", "echo ok"),
        // Prints a file another tool names as a secret.
        ("leak", "", "cat token.txt"),
    ];
    // An HTTP tool that is never called: it makes `token.txt` a secret of the manifest.
    let mut text = String::from(
        "\n[[tools]]\nname = \"api\"\ndescription = \"never called\"\n[tools.http]\n\
         url = \"http://127.0.0.1:9/x\"\nheaders = { X-Key = \"${file:token.txt}\" }\n",
    );
    for (base, policy, body) in bases {
        for (suffix, asks) in [
            ("", ""),
            ("-asks", "confirm = \"Go on?\"\n"),
            ("-inside", "confirm = \"Go on?\"\nask-in-task = true\n"),
        ] {
            let name = format!("{base}{suffix}");
            let _ = write!(
                text,
                "\n[[tools]]\nname = \"{name}\"\ndescription = \"{base}\"\ntask = \"optional\"\n\
                 arguments.n = {{ type = \"integer\", optional = true }}\n{policy}{asks}\
                 [tools.command]\nscript = 'echo run >> runs-{name}; {body}'\n"
            );
        }
    }
    // Two toolsets, chosen by `MCP_SERVE_TOOLSETS` in the toolsets matrix only.
    text.push_str(
        "\n[[toolsets]]\nname = \"matrix\"\ntools = [\"limited*\", \"slow*\", \"plain*\", \"leak*\"]\n\
         \n[[toolsets]]\nname = \"other\"\ntools = [\"api\"]\n",
    );
    text
}

/// The secret `token.txt` holds.
const SECRET: &str = "tok-9f3Kq2-matrix-secret";

/// A workspace with the matrix's manifest and its secret file.
fn workspace() -> Workspace {
    let workspace = Workspace::new(&manifest());
    std::fs::write(workspace.path("token.txt"), SECRET).expect("write the secret");
    workspace
}

/// How many times `tool`'s command ran.
fn runs(workspace: &Workspace, tool: &str) -> usize {
    std::fs::read_to_string(workspace.path(&format!("runs-{tool}")))
        .map_or(0, |text| text.lines().count())
}

fn is_error(ended: &Ended) -> bool {
    ended
        .as_ref()
        .map_or(true, |result| result["isError"] == json!(true))
}

fn says(ended: &Ended) -> String {
    match ended {
        Ok(result) => result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        Err(error) => error.to_string(),
    }
}

/// One cell's verdict.
enum Cell {
    Held,
    /// Does not apply to this entry, and why.
    Apart(&'static str),
}

/// Runs `policy` on every entry, for the plain tool and its asking variant; prints each
/// cell and fails with every cell that did not hold.
fn matrix(policy: &str, cell: impl Fn(Kind, bool) -> Result<Cell, String>) {
    let (mut held, mut apart, mut broken) = (0, 0, Vec::new());
    for kind in ALL {
        for asking in [false, true] {
            let name = format!(
                "{policy} × {} × {}",
                kind.name(),
                if asking { "asking" } else { "plain" }
            );
            match cell(kind, asking) {
                Ok(Cell::Held) => {
                    held += 1;
                    eprintln!("held: {name}");
                }
                Ok(Cell::Apart(why)) => {
                    apart += 1;
                    eprintln!("apart: {name}: {why}");
                }
                Err(problem) => {
                    eprintln!("BROKEN: {name}: {problem}");
                    broken.push(format!("{name}: {problem}"));
                }
            }
        }
    }
    eprintln!(
        "{policy}: {} cells tried, {held} held, {apart} apart, {} broken",
        held + apart + broken.len(),
        broken.len()
    );
    assert!(broken.is_empty(), "{policy}: {broken:#?}");
}

fn check(condition: bool, problem: impl FnOnce() -> String) -> Result<(), String> {
    if condition { Ok(()) } else { Err(problem()) }
}

/// The tool an entry calls for `base`: plain, or the variant that asks its way.
fn tool(kind: Kind, base: &str, asking: bool) -> String {
    if asking {
        kind.asking(base)
    } else {
        base.to_owned()
    }
}

#[test]
fn every_entry_counts_a_call_against_its_rate_once() {
    matrix("rate", |kind, asking| {
        if kind.one_call_per_process() {
            return Ok(Cell::Apart(
                "one call per process: the limit is per process",
            ));
        }
        if asking && !kind.can_ask() {
            return Ok(Cell::Apart(
                "asks, and nothing can be asked here (refused: the confirm cell)",
            ));
        }
        let workspace = workspace();
        let name = tool(kind, "limited", asking);
        let mut entry = Entry::start(kind, &workspace);
        let calls: Vec<Call> = (0..5).map(|_| Call::new(&name, Answer::Accept)).collect();
        let ended = entry.run(&calls);
        let ran = ended.iter().filter(|ended| !is_error(ended)).count();
        let limited = ended
            .iter()
            .filter(|ended| says(ended).contains("rate limit: at most 2 calls a minute"))
            .count();
        check(ran == 2 && limited == 3, || {
            format!("{ran} ran and {limited} were limited of 5: {ended:?}")
        })?;
        check(runs(&workspace, &name) == 2, || {
            format!("the command ran {} times", runs(&workspace, &name))
        })?;
        Ok(Cell::Held)
    });
}

#[test]
fn every_entry_refuses_a_tool_outside_the_chosen_toolsets_before_it_runs() {
    matrix("toolsets", |kind, asking| {
        if asking && !kind.can_ask() {
            return Ok(Cell::Apart(
                "asks, and nothing can be asked here (refused: the confirm cell)",
            ));
        }
        if kind == Kind::Test {
            return Ok(Cell::Apart(
                "runs examples, not calls: toolsets::test_runs_only_the_examples_of_the_chosen_tools",
            ));
        }
        let workspace = workspace();
        let name = tool(kind, "plain", asking);
        let call = Call::new(&name, Answer::Accept);
        // The control: the same call, its toolset chosen, runs.
        let mut chosen =
            Entry::start_with_env(kind, &workspace, &[("MCP_SERVE_TOOLSETS", "matrix")]);
        let ended = chosen.run(std::slice::from_ref(&call));
        check(runs(&workspace, &name) == 1, || {
            format!(
                "with its toolset chosen it ran {} times: {ended:?}",
                runs(&workspace, &name)
            )
        })?;
        drop(chosen);
        let mut other = Entry::start_with_env(kind, &workspace, &[("MCP_SERVE_TOOLSETS", "other")]);
        let ended = other.run(std::slice::from_ref(&call));
        check(runs(&workspace, &name) == 1, || {
            format!("outside the chosen toolsets it ran: {ended:?}")
        })?;
        let said = ended.first().map(says).unwrap_or_default();
        check(said.contains(&format!("unknown tool `{name}`")), || {
            format!("not refused as an unknown tool: {ended:?}")
        })?;
        Ok(Cell::Held)
    });
}

#[test]
fn every_entry_shows_a_confirmation_and_runs_only_on_acceptance() {
    matrix("confirm", |kind, asking| {
        if !asking {
            return Ok(Cell::Apart("asks nothing"));
        }
        let workspace = workspace();
        let name = kind.asking("plain");
        let mut entry = Entry::start(kind, &workspace);
        // An example always answers yes: `test` has no way to decline.
        if kind != Kind::Test {
            let declined = entry.run(&[Call::new(&name, Answer::Decline)]);
            check(
                is_error(&declined[0]) && runs(&workspace, &name) == 0,
                || {
                    format!(
                        "declined, yet {:?} and {} runs",
                        declined[0],
                        runs(&workspace, &name)
                    )
                },
            )?;
        }
        let accepted = entry.run(&[Call::new(&name, Answer::Accept)]);
        if kind.can_ask() {
            check(
                !is_error(&accepted[0]) && runs(&workspace, &name) == 1,
                || {
                    format!(
                        "accepted, yet {:?} and {} runs",
                        accepted[0],
                        runs(&workspace, &name)
                    )
                },
            )?;
        } else {
            check(
                is_error(&accepted[0])
                    && says(&accepted[0]).contains("so it did not run")
                    && runs(&workspace, &name) == 0,
                || format!("nothing to ask on, yet {:?}", accepted[0]),
            )?;
        }
        Ok(Cell::Held)
    });
}

#[test]
fn every_entry_takes_a_slot_of_max_calls_before_it_runs() {
    matrix("max-calls", |kind, asking| {
        if matches!(kind, Kind::Cli | Kind::CliTask | Kind::Test) {
            return Ok(Cell::Apart("one call at a time: nothing runs beside it"));
        }
        if asking && !kind.can_ask() {
            return Ok(Cell::Apart("asks, and nothing can be asked here"));
        }
        if asking && kind == Kind::HttpSessions {
            return Ok(Cell::Apart("one question stream per session at a time"));
        }
        let workspace = workspace();
        let slow = tool(kind, "slow", asking);
        let plain = tool(kind, "plain", asking);
        let mut entry = Entry::start(kind, &workspace);
        let (first, second) = entry
            .overlapping(
                &Call::new(&slow, Answer::Accept),
                &Call::new(&plain, Answer::Accept),
            )
            .ok_or("no overlap")?;
        let busy = "the server is busy: 1 tool calls are already running";
        // The slow call holds the one slot: the second is refused, its command never runs.
        let refused = is_error(&second) && says(&second).contains(busy) && !is_error(&first);
        let held = runs(&workspace, &plain) == 0 && runs(&workspace, &slow) == 1;
        check(refused && held, || {
            format!(
                "first {first:?}, second {second:?}, runs {} and {}",
                runs(&workspace, &slow),
                runs(&workspace, &plain)
            )
        })?;
        Ok(Cell::Held)
    });
}

/// The audit records on `log` for `tool`.
fn audit_records(log: &str, tool: &str) -> Vec<Value> {
    log.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| line["target"] == "mcp_serve::audit")
        .filter(|line| line["fields"]["tool"] == tool || line["tool"] == tool)
        .collect()
}

fn field<'a>(record: &'a Value, name: &str) -> &'a Value {
    record
        .get("fields")
        .and_then(|fields| fields.get(name))
        .unwrap_or(&record[name])
}

#[test]
fn every_entry_writes_one_audit_record_per_request() {
    matrix("audit", |kind, asking| {
        if asking && !kind.can_ask() {
            return Ok(Cell::Apart("asks, and nothing can be asked here"));
        }
        let workspace = workspace();
        let name = tool(kind, "plain", asking);
        let mut entry = Entry::start(kind, &workspace);
        let ended = entry.run(&[Call::new(&name, Answer::Accept)]);
        check(!is_error(&ended[0]), || format!("{:?}", ended[0]))?;
        // Records are written as the answer goes out: wait for the last one.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let rounds = usize::from(
            asking
                && matches!(
                    kind,
                    Kind::Stdio2026 | Kind::Http2026 | Kind::Http2026Discovery | Kind::Task
                ),
        );
        let expected = 1 + rounds;
        let mut records = audit_records(&entry.log(), &name);
        while records.len() < expected && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
            records = audit_records(&entry.log(), &name);
        }
        let last = records
            .last()
            .map(|record| field(record, "outcome").clone());
        let final_outcome = if matches!(kind, Kind::Task | Kind::TaskInside | Kind::CliTask) {
            "task"
        } else {
            "ok"
        };
        check(
            records.len() == expected && last == Some(json!(final_outcome)),
            || {
                format!(
                    "{} records (expected {expected}), last {last:?}: {records:?}",
                    records.len()
                )
            },
        )?;
        Ok(Cell::Held)
    });
}

/// The calls of `tool` counted with `outcome` (any outcome: `None`), in the metrics text.
fn calls(text: &str, tool: &str, outcome: Option<&str>) -> u64 {
    let tool = format!("tool=\"{tool}\"");
    let outcome = outcome.map(|outcome| format!("outcome=\"{outcome}\""));
    text.lines()
        .filter(|line| line.starts_with("mcp_serve_tool_calls_total{") && line.contains(&tool))
        .filter(|line| {
            outcome
                .as_ref()
                .is_none_or(|outcome| line.contains(outcome.as_str()))
        })
        .filter_map(|line| line.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

#[test]
fn every_entry_counts_one_metrics_outcome_per_call() {
    matrix("metrics", |kind, asking| {
        if matches!(kind, Kind::Cli | Kind::CliTask | Kind::Test) {
            return Ok(Cell::Apart("no metrics at a terminal"));
        }
        if asking && !kind.can_ask() {
            return Ok(Cell::Apart("asks, and nothing can be asked here"));
        }
        let workspace = workspace();
        let name = tool(kind, "plain", asking);
        let mut entry = Entry::start(kind, &workspace);
        let mut bad = Call::new(&name, Answer::Accept);
        bad.arguments = json!({"n": "not a number"});
        // A declined question ends a call too: it is counted as refused.
        let declines = asking && kind != Kind::Test;
        let mut batch = vec![Call::new(&name, Answer::Accept), bad];
        if declines {
            batch.push(Call::new(&name, Answer::Decline));
        }
        let ended = entry.run(&batch);
        check(!is_error(&ended[0]) && is_error(&ended[1]), || {
            format!("{ended:?}")
        })?;
        let text = entry.metrics().ok_or("no metrics")?;
        let ok = calls(&text, &name, Some("ok"));
        let invalid = calls(&text, &name, Some("invalid_arguments"));
        let refused = calls(&text, &name, Some("refused"));
        let all = calls(&text, &name, None);
        let expected_refusals = u64::from(declines);
        check(
            ok == 1 && invalid == 1 && refused == expected_refusals && all == 2 + expected_refusals,
            || format!("ok {ok}, invalid {invalid}, refused {refused}, all {all}:\n{text}"),
        )?;
        Ok(Cell::Held)
    });
}

#[test]
fn call_and_call_task_read_json_arguments_from_stdin_alike() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "count"
description = "Prints its number"
task = "optional"
arguments.n = { type = "integer" }
command.argv = ["echo", "n={n}"]
"#,
    );
    for task in [false, true] {
        let mut command = std::process::Command::new(crate::harness::BINARY);
        crate::harness::keep_tasks_here(&mut command);
        command
            .arg("--config")
            .arg(workspace.manifest())
            .args(["call", "count", "--json", "-"])
            .env("NO_COLOR", "1")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        if task {
            command.arg("--task");
        }
        let mut child = command.spawn().expect("mcp-serve call");
        std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), br#"{"n": 3}"#)
            .expect("write stdin");
        let output = child.wait_with_output().expect("exit");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains("n=3"),
            "--task {task}: {:?} {stdout} {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn a_required_task_tool_refuses_a_request_without_tasks_before_its_arguments() {
    let workspace = Workspace::new(
        r#"
[[tools]]
name = "only-task"
description = "Runs only as a task"
task = "required"
arguments.n = { type = "integer" }
[tools.static]
content = [{ type = "text", text = "ok" }]
"#,
    );
    let server = crate::http_harness::HttpServer::start(&workspace.manifest(), &[]);
    for arguments in [json!({"n": 1}), json!({"n": "not a number"}), json!({})] {
        let (_, answer) = server.modern(
            3,
            "tools/call",
            json!({"name": "only-task", "arguments": arguments}),
        );
        assert_eq!(
            answer["error"]["code"],
            json!(-32021),
            "{arguments}: {answer}"
        );
    }
}

#[test]
fn every_entry_redacts_every_secret_the_manifest_references() {
    matrix("redaction", |kind, asking| {
        if asking && !kind.can_ask() {
            return Ok(Cell::Apart("asks, and nothing can be asked here"));
        }
        let workspace = workspace();
        let name = tool(kind, "leak", asking);
        let mut entry = Entry::start(kind, &workspace);
        let mut call = Call::new(&name, Answer::Accept);
        call.show = true;
        let ended = entry.run(&[call]);
        let shown = says(&ended[0]);
        // `test` quotes the text as a failed expectation.
        let answered = kind == Kind::Test || !is_error(&ended[0]);
        check(answered && runs(&workspace, &name) == 1, || {
            format!("the command did not run: {:?}", ended[0])
        })?;
        check(
            !shown.contains(SECRET) && shown.contains("[redacted]"),
            || format!("shown: {shown:?}"),
        )?;
        check(!entry.log().contains(SECRET), || {
            "the log shows it".to_owned()
        })?;
        Ok(Cell::Held)
    });
}

/// Rewrites the manifest and waits until the server says it reloaded it (`count` reloads).
fn reload(server: &crate::harness::Server, workspace: &Workspace, text: &str, count: usize) {
    std::fs::write(workspace.manifest(), text).expect("rewrite the manifest");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while server.stderr().matches("reloaded the manifest").count() < count {
        assert!(
            std::time::Instant::now() < deadline,
            "no reload: {}",
            server.stderr()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn a_reload_keeps_a_tools_slots_and_rate_counts_unless_they_change() {
    let manifest = |description: &str, max: u32| {
        format!(
            "[[tools]]\nname = \"hold\"\ndescription = \"{description}\"\nmax-concurrent = {max}\n\
             [tools.command]\nscript = 'echo run >> runs-hold; sleep 5; echo ok'\n\n\
             [[tools]]\nname = \"counted\"\ndescription = \"{description}\"\nrate = \"2/m\"\n\
             [tools.command]\nscript = 'echo ok'\n"
        )
    };
    let workspace = Workspace::new(&manifest("before", 1));
    let mut server = crate::harness::Server::start_with(&workspace.manifest(), &["--watch"], &[]);
    server.handshake("2025-11-25");
    for _ in 0..2 {
        assert_eq!(server.call("counted", json!({}))["isError"], json!(false));
    }
    server.start_request("tools/call", json!({"name": "hold", "arguments": {}}));
    std::thread::sleep(std::time::Duration::from_millis(300));
    reload(&server, &workspace, &manifest("after", 1), 1);
    // The same bounds: the call begun before the reload still holds the one slot, and the
    // two calls before it still count.
    let counted = server.call("counted", json!({}));
    assert!(
        crate::harness::text(&counted).contains("rate limit: at most 2 calls a minute"),
        "{counted}"
    );
    let second = server.call("hold", json!({}));
    assert!(
        crate::harness::text(&second).contains("`hold` is busy: 1 calls of it are already running"),
        "{second}"
    );
    // The control: a changed bound starts afresh, so the same overlap now runs.
    reload(&server, &workspace, &manifest("after", 2), 2);
    let third = server.call("hold", json!({}));
    assert_eq!(third["isError"], json!(false), "{third}");
    // The held call and the third ran; the busy one never did.
    assert_eq!(runs(&workspace, "hold"), 2);
}
