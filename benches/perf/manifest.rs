//! The manifests the benchmark serves, written to a temporary directory.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The three tools every server in the comparison exposes (the same as the shared kit's
/// peers): a command, an HTTP request and a constant result.
pub(crate) fn tools(upstream: &str) -> String {
    format!(
        r#"[server]
name = "mcp-serve-bench"
version = "1.0.0"

[[tools]]
name = "echo"
description = "Echo a message with /bin/echo."
[tools.arguments.message]
type = "string"
description = "The message."
[tools.command]
argv = ["/bin/echo", "{{message}}"]

[[tools]]
name = "fetch_json"
description = "Fetch an item from the local upstream."
[tools.arguments.id]
type = "integer"
description = "The item's id."
[tools.output-schema]
type = "object"
required = ["id", "name"]
properties = {{ id = {{ type = "integer" }}, name = {{ type = "string" }} }}
[tools.http]
url = "{upstream}/items/{{id}}"

[[tools]]
name = "noop"
description = "Return a constant."
[tools.static]
content = [{{ type = "text", text = "ok" }}]
"#
    )
}

/// The same tools behind an OAuth resource server whose issuer is the local upstream.
pub(crate) fn tools_with_auth(upstream: &str) -> String {
    tools(upstream).replacen(
        "version = \"1.0.0\"\n",
        &format!(
            "version = \"1.0.0\"\n\n[server.auth]\nissuer = \"{upstream}\"\naudience = \"{}\"\n",
            crate::issuer::AUDIENCE
        ),
        1,
    )
}

/// The `echo` tool confined the way the example's tools are: no files but the system's, no
/// network, bounded memory and CPU time (the sandbox's cost is this beside `echo`).
pub(crate) fn sandboxed_echo() -> String {
    r#"[server]
name = "mcp-serve-bench-sandboxed"
version = "1.0.0"

[[tools]]
name = "echo"
description = "Echo a message with /bin/echo, sandboxed."
[tools.arguments.message]
type = "string"
[tools.command]
argv = ["/bin/echo", "{message}"]
[tools.sandbox]
read = []
write = []
network = false
memory = "256MiB"
cpu = "10s"
open-files = 256
"#
    .to_owned()
}

/// The same `echo` with a host list instead of `network = false`: its own network namespace,
/// the trampoline forwarding to the egress proxy and waiting for the program, and a grant
/// at the proxy per call (the program makes no request: this is what the list costs).
pub(crate) fn sandboxed_hosts_echo() -> String {
    sandboxed_echo()
        .replace("-sandboxed\"", "-sandboxed-hosts\"")
        .replace("network = false", "network = [\"api.example.com:443\"]")
}

/// A manifest of `count` command tools, each with a two-argument input schema.
pub(crate) fn many_tools(count: usize) -> String {
    let mut text = String::from("[server]\nname = \"big\"\nversion = \"1.0.0\"\n");
    for index in 0..count {
        let _ = write!(
            text,
            r#"
[[tools]]
name = "tool_{index}"
title = "Tool {index}"
description = "Synthetic tool number {index}, for measuring tools/list."
[tools.arguments.query]
type = "string"
description = "What to look for."
[tools.arguments.limit]
type = "integer"
description = "How many results."
default = 10
[tools.command]
argv = ["/bin/echo", "--", "{{query}}", "{{limit}}"]
"#
        );
    }
    text
}

/// Writes `text` as `dir/name` and returns the path.
pub(crate) fn write(dir: &Path, name: &str, text: &str) -> anyhow::Result<PathBuf> {
    let path = dir.join(name);
    std::fs::write(&path, text)?;
    Ok(path)
}
