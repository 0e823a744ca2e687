
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'mcp-serve' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'mcp-serve'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'mcp-serve' {
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--toolsets', '--toolsets', [CompletionResultType]::ParameterName, 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]')
            [CompletionResult]::new('--max-calls', '--max-calls', [CompletionResultType]::ParameterName, 'At most this many tool calls run at once; beyond, calls wait (--queue) or fail fast')
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Calls that may wait for a free slot when --max-calls are running; beyond, calls fail fast')
            [CompletionResult]::new('--state-key-file', '--state-key-file', [CompletionResultType]::ParameterName, 'Seal the state of 2026 calls that ask the client (`input_required`) with the key in this file (at least 32 bytes), so every replica accepts it; default: a random key')
            [CompletionResult]::new('--heartbeat', '--heartbeat', [CompletionResultType]::ParameterName, 'For a call that asked for progress: report it is still running after this long without progress (0 turns heartbeats off)')
            [CompletionResult]::new('--task-store', '--task-store', [CompletionResultType]::ParameterName, 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]')
            [CompletionResult]::new('--task-lease', '--task-lease', [CompletionResultType]::ParameterName, 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out')
            [CompletionResult]::new('--max-tasks', '--max-tasks', [CompletionResultType]::ParameterName, 'The most tasks the store keeps, running or ended and kept for their `task-ttl`; beyond it a new task is refused')
            [CompletionResult]::new('--max-task-bytes', '--max-task-bytes', [CompletionResultType]::ParameterName, 'The most the store keeps of tasks: results, progress, logs, answers, and the arguments of running tasks; beyond it a new task or a result is refused')
            [CompletionResult]::new('--max-tasks-per-caller', '--max-tasks-per-caller', [CompletionResultType]::ParameterName, 'As --max-tasks, per caller (a session, a token''s subject; callers that nothing names, such as stateless requests without OAuth, are one caller)')
            [CompletionResult]::new('--max-task-bytes-per-caller', '--max-task-bytes-per-caller', [CompletionResultType]::ParameterName, 'As --max-task-bytes, per caller')
            [CompletionResult]::new('--http', '--http', [CompletionResultType]::ParameterName, 'Serve Streamable HTTP on this address instead of stdio (port 0 picks a free port)')
            [CompletionResult]::new('--path', '--path', [CompletionResultType]::ParameterName, 'The MCP endpoint''s path')
            [CompletionResult]::new('--max-sessions', '--max-sessions', [CompletionResultType]::ParameterName, 'With --sessions: the most sessions open at once')
            [CompletionResult]::new('--session-idle', '--session-idle', [CompletionResultType]::ParameterName, 'With --sessions: close a session after this long without requests')
            [CompletionResult]::new('--allowed-host', '--allowed-host', [CompletionResultType]::ParameterName, 'Accept this Host header (repeatable); default: the loopback names, plus the bound address')
            [CompletionResult]::new('--allowed-origin', '--allowed-origin', [CompletionResultType]::ParameterName, 'Accept this Origin, e.g. `https://app.example.com:443` or `http://localhost:*` (repeatable); default when bound to loopback: localhost origins; requests without Origin always pass')
            [CompletionResult]::new('--auth-token-env', '--auth-token-env', [CompletionResultType]::ParameterName, 'Require `Authorization: Bearer <token>`, the token read from this environment variable')
            [CompletionResult]::new('--auth-token-file', '--auth-token-file', [CompletionResultType]::ParameterName, 'Require `Authorization: Bearer <token>`, the token read from this file')
            [CompletionResult]::new('--max-body', '--max-body', [CompletionResultType]::ParameterName, 'The largest request body accepted')
            [CompletionResult]::new('--request-rate', '--request-rate', [CompletionResultType]::ParameterName, 'Every caller''s allowance of requests, whatever they ask, e.g. `100/s`, `6000/m`: the token''s subject, else the client''s address; over it, 429 with Retry-After')
            [CompletionResult]::new('--request-burst', '--request-burst', [CompletionResultType]::ParameterName, 'With --request-rate: how many requests may come at once [default: the rate''s count]')
            [CompletionResult]::new('--header-timeout', '--header-timeout', [CompletionResultType]::ParameterName, 'How long a client may take to send request headers, and how long an idle connection stays open')
            [CompletionResult]::new('--body-timeout', '--body-timeout', [CompletionResultType]::ParameterName, 'How long a client may take to send a request''s body once its headers have arrived')
            [CompletionResult]::new('--trusted-proxy', '--trusted-proxy', [CompletionResultType]::ParameterName, 'A reverse proxy (an address or a network, e.g. 10.0.0.0/8; repeatable) whose X-Forwarded-For names the client, for per-caller rates, task bounds, audit and traces')
            [CompletionResult]::new('--max-connections', '--max-connections', [CompletionResultType]::ParameterName, 'The most connections open at once (the HTTP endpoint''s and the egress proxy''s, whose tunnels count as two); at it, the oldest idle one is closed to make room [default: the descriptor limit, raised to its hard limit at start, less a quarter (at most 256) kept for commands; at most 16384]')
            [CompletionResult]::new('--max-connections-per-address', '--max-connections-per-address', [CompletionResultType]::ParameterName, 'The most of them one client address may hold [default: half of --max-connections]')
            [CompletionResult]::new('--shutdown-grace', '--shutdown-grace', [CompletionResultType]::ParameterName, 'On SIGTERM or SIGINT, how long in-flight calls get to finish before they are stopped')
            [CompletionResult]::new('--metrics-addr', '--metrics-addr', [CompletionResultType]::ParameterName, 'Serve Prometheus metrics at `http://ADDR/metrics` on a listener of their own, with no authentication (keep it on a private network); works with stdio too')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log lines for people, or one JSON object per line for a collector')
            [CompletionResult]::new('--otlp-endpoint', '--otlp-endpoint', [CompletionResultType]::ParameterName, 'Export traces (a span per request and per backend run) over OTLP/HTTP to this collector, e.g. `http://127.0.0.1:4318`; the standard `OTEL_EXPORTER_OTLP_*` variables work too')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Reload the manifest when it changes (a broken edit keeps the previous tools), and tell clients that the tool list changed')
            [CompletionResult]::new('--discovery', '--discovery', [CompletionResultType]::ParameterName, 'List tools that find, call and add the others (`find_tools`, `call_tool`, `add_tools`) instead of every tool, as `[server] discovery = true` does')
            [CompletionResult]::new('--sessions', '--sessions', [CompletionResultType]::ParameterName, 'Give legacy (2025) clients sessions: a GET stream and resumable responses. The 2026 protocol is always stateless')
            [CompletionResult]::new('--sse', '--sse', [CompletionResultType]::ParameterName, 'Answer every POST with an SSE stream; by default the answer is plain JSON unless a notification (progress, a log) comes before the result')
            [CompletionResult]::new('--allow-unauthenticated', '--allow-unauthenticated', [CompletionResultType]::ParameterName, 'Serve a non-loopback address without a token (when something in front authenticates)')
            [CompletionResult]::new('--metrics', '--metrics', [CompletionResultType]::ParameterName, 'Serve Prometheus metrics at `/metrics` on the HTTP listener, behind its authentication')
            [CompletionResult]::new('--audit', '--audit', [CompletionResultType]::ParameterName, 'Log an audit record per tool call: caller, tool, outcome, duration, and the names and types of the arguments')
            [CompletionResult]::new('--audit-values', '--audit-values', [CompletionResultType]::ParameterName, 'With --audit, record the argument values too (the manifest''s secrets redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Validate the manifest and lint it for the hosts you target')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Show the tools, as a table or as the exact `tools/list` JSON')
            [CompletionResult]::new('call', 'call', [CompletionResultType]::ParameterValue, 'Run one tool exactly as the server would, from the terminal')
            [CompletionResult]::new('search', 'search', [CompletionResultType]::ParameterValue, 'Find the tools that do what you describe, best first')
            [CompletionResult]::new('test', 'test', [CompletionResultType]::ParameterValue, 'Run the examples the manifest declares for its tools')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Write a commented starter manifest (and its JSON Schema) that passes `check`')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Add this server to a host''s configuration, with absolute paths')
            [CompletionResult]::new('skill', 'skill', [CompletionResultType]::ParameterValue, 'Write a SKILL.md on using the manifest''s tools, to edit and serve with [[skills]]')
            [CompletionResult]::new('bundle', 'bundle', [CompletionResultType]::ParameterValue, 'Write the manifest as its own server: an MCP Bundle (.mcpb) and its server.json')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Write a manifest from an API description')
            [CompletionResult]::new('tasks', 'tasks', [CompletionResultType]::ParameterValue, 'Read and cancel the tasks in the store (--task-store, --data-dir)')
            [CompletionResult]::new('schema', 'schema', [CompletionResultType]::ParameterValue, 'Print the JSON Schema of the manifest format')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print shell completions')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'mcp-serve;check' {
            [CompletionResult]::new('--target', '--target', [CompletionResultType]::ParameterName, 'Also check what these hosts accept (repeatable)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print the findings as JSON')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--toolsets', '--toolsets', [CompletionResultType]::ParameterName, 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]')
            [CompletionResult]::new('--task-store', '--task-store', [CompletionResultType]::ParameterName, 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]')
            [CompletionResult]::new('--task-lease', '--task-lease', [CompletionResultType]::ParameterName, 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log lines for people, or one JSON object per line for a collector')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Make warnings that serving would refuse errors: secrets that are not set here')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mcp-serve;list' {
            [CompletionResult]::new('--protocol-version', '--protocol-version', [CompletionResultType]::ParameterName, 'With --json: the protocol version of that client')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--toolsets', '--toolsets', [CompletionResultType]::ParameterName, 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]')
            [CompletionResult]::new('--task-store', '--task-store', [CompletionResultType]::ParameterName, 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]')
            [CompletionResult]::new('--task-lease', '--task-lease', [CompletionResultType]::ParameterName, 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log lines for people, or one JSON object per line for a collector')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the `tools/list` result a client gets, as JSON')
            [CompletionResult]::new('--apps', '--apps', [CompletionResultType]::ParameterName, 'With --json: for a client that renders MCP Apps (tools'' `_meta.ui`, and the tools only a page may call)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mcp-serve;call' {
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'All arguments as one JSON object (`-` reads it from stdin)')
            [CompletionResult]::new('--answer', '--answer', [CompletionResultType]::ParameterName, 'Answer a field the tool asks for (`[tools.ask]`), typed like arguments (repeatable); on a terminal, what is missing is asked')
            [CompletionResult]::new('--out-dir', '--out-dir', [CompletionResultType]::ParameterName, 'Where images, audio and other binary blocks are saved')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--toolsets', '--toolsets', [CompletionResultType]::ParameterName, 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]')
            [CompletionResult]::new('--task-store', '--task-store', [CompletionResultType]::ParameterName, 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]')
            [CompletionResult]::new('--task-lease', '--task-lease', [CompletionResultType]::ParameterName, 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log lines for people, or one JSON object per line for a collector')
            [CompletionResult]::new('--json-out', '--json-out', [CompletionResultType]::ParameterName, 'Print the structured result as JSON instead of the text blocks')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print what would run (argv, environment, stdin, HTTP request), secrets redacted, and run nothing')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Answer yes to the tool''s confirmation (`confirm`)')
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'Run the call as a task in the task store (--task-store, --data-dir), so `mcp-serve tasks` sees it from elsewhere, and follow it; Ctrl-C cancels it')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mcp-serve;search' {
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'How many tools to show')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--toolsets', '--toolsets', [CompletionResultType]::ParameterName, 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]')
            [CompletionResult]::new('--task-store', '--task-store', [CompletionResultType]::ParameterName, 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]')
            [CompletionResult]::new('--task-lease', '--task-lease', [CompletionResultType]::ParameterName, 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log lines for people, or one JSON object per line for a collector')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the tools found as JSON: each one''s name, title, description and score')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mcp-serve;test' {
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--toolsets', '--toolsets', [CompletionResultType]::ParameterName, 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]')
            [CompletionResult]::new('--task-store', '--task-store', [CompletionResultType]::ParameterName, 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]')
            [CompletionResult]::new('--task-lease', '--task-lease', [CompletionResultType]::ParameterName, 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log lines for people, or one JSON object per line for a collector')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mcp-serve;init' {
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--toolsets', '--toolsets', [CompletionResultType]::ParameterName, 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]')
            [CompletionResult]::new('--task-store', '--task-store', [CompletionResultType]::ParameterName, 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]')
            [CompletionResult]::new('--task-lease', '--task-lease', [CompletionResultType]::ParameterName, 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log lines for people, or one JSON object per line for a collector')
            [CompletionResult]::new('--command-tool', '--command-tool', [CompletionResultType]::ParameterName, 'Include a command tool (the default when no kind is chosen)')
            [CompletionResult]::new('--http-tool', '--http-tool', [CompletionResultType]::ParameterName, 'Include an HTTP tool')
            [CompletionResult]::new('--app', '--app', [CompletionResultType]::ParameterName, 'Give the command tool a page (an MCP App), written beside as greet.html')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Replace an existing file')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mcp-serve;install' {
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'The server''s name in the host [default: the manifest''s server name]')
            [CompletionResult]::new('--via', '--via', [CompletionResultType]::ParameterName, 'How the host starts the server: this binary''s path, or the package, pinned to this version, through uvx or npx')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--toolsets', '--toolsets', [CompletionResultType]::ParameterName, 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]')
            [CompletionResult]::new('--task-store', '--task-store', [CompletionResultType]::ParameterName, 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]')
            [CompletionResult]::new('--task-lease', '--task-lease', [CompletionResultType]::ParameterName, 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log lines for people, or one JSON object per line for a collector')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print the configuration snippet only')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Replace an entry of the same name that another server wrote')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'mcp-serve;skill' {
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'The skill''s name (and its folder''s) [default: the server''s name]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'The folder to write the skill''s folder in')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--toolsets', '--toolsets', [CompletionResultType]::ParameterName, 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]')
            [CompletionResult]::new('--task-store', '--task-store', [CompletionResultType]::ParameterName, 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]')
            [CompletionResult]::new('--task-lease', '--task-lease', [CompletionResultType]::ParameterName, 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log lines for people, or one JSON object per line for a collector')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Replace an existing SKILL.md')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mcp-serve;bundle' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'The bundle to write; `server.json` is written beside it')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'The bundle to write; `server.json` is written beside it')
            [CompletionResult]::new('--author', '--author', [CompletionResultType]::ParameterName, 'The bundle''s author, as hosts show it')
            [CompletionResult]::new('--registry-name', '--registry-name', [CompletionResultType]::ParameterName, 'The server''s name in the MCP Registry, e.g. `io.github.ada/weather`')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Where the bundle will be downloaded from (a GitHub or GitLab release asset)')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--toolsets', '--toolsets', [CompletionResultType]::ParameterName, 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]')
            [CompletionResult]::new('--task-store', '--task-store', [CompletionResultType]::ParameterName, 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]')
            [CompletionResult]::new('--task-lease', '--task-lease', [CompletionResultType]::ParameterName, 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log lines for people, or one JSON object per line for a collector')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Replace an existing bundle and server.json')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mcp-serve;import' {
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--toolsets', '--toolsets', [CompletionResultType]::ParameterName, 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]')
            [CompletionResult]::new('--task-store', '--task-store', [CompletionResultType]::ParameterName, 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]')
            [CompletionResult]::new('--task-lease', '--task-lease', [CompletionResultType]::ParameterName, 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log lines for people, or one JSON object per line for a collector')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('openapi', 'openapi', [CompletionResultType]::ParameterValue, 'One HTTP tool per operation of an `OpenAPI` 3.0 or 3.1 description (JSON or YAML)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'mcp-serve;import;openapi' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the manifest here, and its JSON Schema beside it, instead of to stdout')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the manifest here, and its JSON Schema beside it, instead of to stdout')
            [CompletionResult]::new('--include', '--include', [CompletionResultType]::ParameterName, 'Keep operations whose operationId matches this glob (repeatable)')
            [CompletionResult]::new('--exclude', '--exclude', [CompletionResultType]::ParameterName, 'Drop operations whose operationId matches this glob (repeatable)')
            [CompletionResult]::new('--tag', '--tag', [CompletionResultType]::ParameterName, 'Keep operations with this tag (repeatable)')
            [CompletionResult]::new('--method', '--method', [CompletionResultType]::ParameterName, 'Keep operations with this HTTP method (repeatable)')
            [CompletionResult]::new('--path', '--path', [CompletionResultType]::ParameterName, 'Keep operations whose path matches this glob, e.g. ''/repos/*'' (repeatable)')
            [CompletionResult]::new('--base-url', '--base-url', [CompletionResultType]::ParameterName, 'The API''s base URL, instead of the description''s `servers`')
            [CompletionResult]::new('--env-prefix', '--env-prefix', [CompletionResultType]::ParameterName, 'Put in front of each credential variable''s name [default: the server name, as `SWAGGER_PETSTORE_`]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'The server''s name [default: from the description''s title]')
            [CompletionResult]::new('--max-output-schema', '--max-output-schema', [CompletionResultType]::ParameterName, 'Leave out an output schema larger than this (as compact JSON): every client reads it in `tools/list`')
            [CompletionResult]::new('--max-items', '--max-items', [CompletionResultType]::ParameterName, 'Give each tool whose response has lists `max-items = N`')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--toolsets', '--toolsets', [CompletionResultType]::ParameterName, 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]')
            [CompletionResult]::new('--task-store', '--task-store', [CompletionResultType]::ParameterName, 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]')
            [CompletionResult]::new('--task-lease', '--task-lease', [CompletionResultType]::ParameterName, 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log lines for people, or one JSON object per line for a collector')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Replace an existing --output file')
            [CompletionResult]::new('--no-output-schema', '--no-output-schema', [CompletionResultType]::ParameterName, 'Leave out output schemas (for an API whose responses stray from its description)')
            [CompletionResult]::new('--project', '--project', [CompletionResultType]::ParameterName, 'Give each tool a `project` keeping its response''s readable top-level fields (of each item, for a list): strings that are no link, numbers, booleans and lists of those; the output schema says the same')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mcp-serve;import;help' {
            [CompletionResult]::new('openapi', 'openapi', [CompletionResultType]::ParameterValue, 'One HTTP tool per operation of an `OpenAPI` 3.0 or 3.1 description (JSON or YAML)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'mcp-serve;import;help;openapi' {
            break
        }
        'mcp-serve;import;help;help' {
            break
        }
        'mcp-serve;tasks' {
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--toolsets', '--toolsets', [CompletionResultType]::ParameterName, 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]')
            [CompletionResult]::new('--task-store', '--task-store', [CompletionResultType]::ParameterName, 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]')
            [CompletionResult]::new('--task-lease', '--task-lease', [CompletionResultType]::ParameterName, 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log lines for people, or one JSON object per line for a collector')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Every task not yet forgotten, oldest first')
            [CompletionResult]::new('get', 'get', [CompletionResultType]::ParameterValue, 'One task as `tasks/get` shows it, with its progress and logs')
            [CompletionResult]::new('cancel', 'cancel', [CompletionResultType]::ParameterValue, 'Cancel a running task; the server running it stops its process')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'mcp-serve;tasks;list' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print them as JSON, one record per line')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--toolsets', '--toolsets', [CompletionResultType]::ParameterName, 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]')
            [CompletionResult]::new('--task-store', '--task-store', [CompletionResultType]::ParameterName, 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]')
            [CompletionResult]::new('--task-lease', '--task-lease', [CompletionResultType]::ParameterName, 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log lines for people, or one JSON object per line for a collector')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mcp-serve;tasks;get' {
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--toolsets', '--toolsets', [CompletionResultType]::ParameterName, 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]')
            [CompletionResult]::new('--task-store', '--task-store', [CompletionResultType]::ParameterName, 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]')
            [CompletionResult]::new('--task-lease', '--task-lease', [CompletionResultType]::ParameterName, 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log lines for people, or one JSON object per line for a collector')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mcp-serve;tasks;cancel' {
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--toolsets', '--toolsets', [CompletionResultType]::ParameterName, 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]')
            [CompletionResult]::new('--task-store', '--task-store', [CompletionResultType]::ParameterName, 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]')
            [CompletionResult]::new('--task-lease', '--task-lease', [CompletionResultType]::ParameterName, 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log lines for people, or one JSON object per line for a collector')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mcp-serve;tasks;help' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Every task not yet forgotten, oldest first')
            [CompletionResult]::new('get', 'get', [CompletionResultType]::ParameterValue, 'One task as `tasks/get` shows it, with its progress and logs')
            [CompletionResult]::new('cancel', 'cancel', [CompletionResultType]::ParameterValue, 'Cancel a running task; the server running it stops its process')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'mcp-serve;tasks;help;list' {
            break
        }
        'mcp-serve;tasks;help;get' {
            break
        }
        'mcp-serve;tasks;help;cancel' {
            break
        }
        'mcp-serve;tasks;help;help' {
            break
        }
        'mcp-serve;schema' {
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--toolsets', '--toolsets', [CompletionResultType]::ParameterName, 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]')
            [CompletionResult]::new('--task-store', '--task-store', [CompletionResultType]::ParameterName, 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]')
            [CompletionResult]::new('--task-lease', '--task-lease', [CompletionResultType]::ParameterName, 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log lines for people, or one JSON object per line for a collector')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mcp-serve;completions' {
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'The manifest [default: ./tools.toml]')
            [CompletionResult]::new('--toolsets', '--toolsets', [CompletionResultType]::ParameterName, 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]')
            [CompletionResult]::new('--task-store', '--task-store', [CompletionResultType]::ParameterName, 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]')
            [CompletionResult]::new('--task-lease', '--task-lease', [CompletionResultType]::ParameterName, 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log lines for people, or one JSON object per line for a collector')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mcp-serve;help' {
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Validate the manifest and lint it for the hosts you target')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Show the tools, as a table or as the exact `tools/list` JSON')
            [CompletionResult]::new('call', 'call', [CompletionResultType]::ParameterValue, 'Run one tool exactly as the server would, from the terminal')
            [CompletionResult]::new('search', 'search', [CompletionResultType]::ParameterValue, 'Find the tools that do what you describe, best first')
            [CompletionResult]::new('test', 'test', [CompletionResultType]::ParameterValue, 'Run the examples the manifest declares for its tools')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Write a commented starter manifest (and its JSON Schema) that passes `check`')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Add this server to a host''s configuration, with absolute paths')
            [CompletionResult]::new('skill', 'skill', [CompletionResultType]::ParameterValue, 'Write a SKILL.md on using the manifest''s tools, to edit and serve with [[skills]]')
            [CompletionResult]::new('bundle', 'bundle', [CompletionResultType]::ParameterValue, 'Write the manifest as its own server: an MCP Bundle (.mcpb) and its server.json')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Write a manifest from an API description')
            [CompletionResult]::new('tasks', 'tasks', [CompletionResultType]::ParameterValue, 'Read and cancel the tasks in the store (--task-store, --data-dir)')
            [CompletionResult]::new('schema', 'schema', [CompletionResultType]::ParameterValue, 'Print the JSON Schema of the manifest format')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print shell completions')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'mcp-serve;help;check' {
            break
        }
        'mcp-serve;help;list' {
            break
        }
        'mcp-serve;help;call' {
            break
        }
        'mcp-serve;help;search' {
            break
        }
        'mcp-serve;help;test' {
            break
        }
        'mcp-serve;help;init' {
            break
        }
        'mcp-serve;help;install' {
            break
        }
        'mcp-serve;help;skill' {
            break
        }
        'mcp-serve;help;bundle' {
            break
        }
        'mcp-serve;help;import' {
            [CompletionResult]::new('openapi', 'openapi', [CompletionResultType]::ParameterValue, 'One HTTP tool per operation of an `OpenAPI` 3.0 or 3.1 description (JSON or YAML)')
            break
        }
        'mcp-serve;help;import;openapi' {
            break
        }
        'mcp-serve;help;tasks' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Every task not yet forgotten, oldest first')
            [CompletionResult]::new('get', 'get', [CompletionResultType]::ParameterValue, 'One task as `tasks/get` shows it, with its progress and logs')
            [CompletionResult]::new('cancel', 'cancel', [CompletionResultType]::ParameterValue, 'Cancel a running task; the server running it stops its process')
            break
        }
        'mcp-serve;help;tasks;list' {
            break
        }
        'mcp-serve;help;tasks;get' {
            break
        }
        'mcp-serve;help;tasks;cancel' {
            break
        }
        'mcp-serve;help;schema' {
            break
        }
        'mcp-serve;help;completions' {
            break
        }
        'mcp-serve;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
