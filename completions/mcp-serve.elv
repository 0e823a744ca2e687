
use builtin;
use str;

set edit:completion:arg-completer[mcp-serve] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'mcp-serve'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'mcp-serve'= {
            cand -c 'The manifest [default: ./tools.toml]'
            cand --config 'The manifest [default: ./tools.toml]'
            cand --toolsets 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]'
            cand --max-calls 'At most this many tool calls run at once; beyond, calls wait (--queue) or fail fast'
            cand --queue 'Calls that may wait for a free slot when --max-calls are running; beyond, calls fail fast'
            cand --state-key-file 'Seal the state of 2026 calls that ask the client (`input_required`) with the key in this file (at least 32 bytes), so every replica accepts it; default: a random key'
            cand --heartbeat 'For a call that asked for progress: report it is still running after this long without progress (0 turns heartbeats off)'
            cand --task-store 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir'
            cand --data-dir 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]'
            cand --task-lease 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out'
            cand --max-tasks 'The most tasks the store keeps, running or ended and kept for their `task-ttl`; beyond it a new task is refused'
            cand --max-task-bytes 'The most the store keeps of tasks: results, progress, logs, answers, and the arguments of running tasks; beyond it a new task or a result is refused'
            cand --max-tasks-per-caller 'As --max-tasks, per caller (a session, a token''s subject; callers that nothing names, such as stateless requests without OAuth, are one caller)'
            cand --max-task-bytes-per-caller 'As --max-task-bytes, per caller'
            cand --http 'Serve Streamable HTTP on this address instead of stdio (port 0 picks a free port)'
            cand --path 'The MCP endpoint''s path'
            cand --max-sessions 'With --sessions: the most sessions open at once'
            cand --session-idle 'With --sessions: close a session after this long without requests'
            cand --allowed-host 'Accept this Host header (repeatable); default: the loopback names, plus the bound address'
            cand --allowed-origin 'Accept this Origin, e.g. `https://app.example.com:443` or `http://localhost:*` (repeatable); default when bound to loopback: localhost origins; requests without Origin always pass'
            cand --auth-token-env 'Require `Authorization: Bearer <token>`, the token read from this environment variable'
            cand --auth-token-file 'Require `Authorization: Bearer <token>`, the token read from this file'
            cand --max-body 'The largest request body accepted'
            cand --request-rate 'Every caller''s allowance of requests, whatever they ask, e.g. `100/s`, `6000/m`: the token''s subject, else the client''s address; over it, 429 with Retry-After'
            cand --request-burst 'With --request-rate: how many requests may come at once [default: the rate''s count]'
            cand --header-timeout 'How long a client may take to send request headers, and how long an idle connection stays open'
            cand --body-timeout 'How long a client may take to send a request''s body once its headers have arrived'
            cand --trusted-proxy 'A reverse proxy (an address or a network, e.g. 10.0.0.0/8; repeatable) whose X-Forwarded-For names the client, for per-caller rates, task bounds, audit and traces'
            cand --max-connections 'The most connections open at once (the HTTP endpoint''s and the egress proxy''s, whose tunnels count as two); at it, the oldest idle one is closed to make room [default: the descriptor limit, raised to its hard limit at start, less a quarter (at most 256) kept for commands; at most 16384]'
            cand --max-connections-per-address 'The most of them one client address may hold [default: half of --max-connections]'
            cand --shutdown-grace 'On SIGTERM or SIGINT, how long in-flight calls get to finish before they are stopped'
            cand --metrics-addr 'Serve Prometheus metrics at `http://ADDR/metrics` on a listener of their own, with no authentication (keep it on a private network); works with stdio too'
            cand --log-format 'Log lines for people, or one JSON object per line for a collector'
            cand --otlp-endpoint 'Export traces (a span per request and per backend run) over OTLP/HTTP to this collector, e.g. `http://127.0.0.1:4318`; the standard `OTEL_EXPORTER_OTLP_*` variables work too'
            cand -v 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand --verbose 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand --watch 'Reload the manifest when it changes (a broken edit keeps the previous tools), and tell clients that the tool list changed'
            cand --discovery 'List tools that find, call and add the others (`find_tools`, `call_tool`, `add_tools`) instead of every tool, as `[server] discovery = true` does'
            cand --sessions 'Give legacy (2025) clients sessions: a GET stream and resumable responses. The 2026 protocol is always stateless'
            cand --sse 'Answer every POST with an SSE stream; by default the answer is plain JSON unless a notification (progress, a log) comes before the result'
            cand --allow-unauthenticated 'Serve a non-loopback address without a token (when something in front authenticates)'
            cand --metrics 'Serve Prometheus metrics at `/metrics` on the HTTP listener, behind its authentication'
            cand --audit 'Log an audit record per tool call: caller, tool, outcome, duration, and the names and types of the arguments'
            cand --audit-values 'With --audit, record the argument values too (the manifest''s secrets redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand check 'Validate the manifest and lint it for the hosts you target'
            cand list 'Show the tools, as a table or as the exact `tools/list` JSON'
            cand call 'Run one tool exactly as the server would, from the terminal'
            cand search 'Find the tools that do what you describe, best first'
            cand test 'Run the examples the manifest declares for its tools'
            cand init 'Write a commented starter manifest (and its JSON Schema) that passes `check`'
            cand install 'Add this server to a host''s configuration, with absolute paths'
            cand skill 'Write a SKILL.md on using the manifest''s tools, to edit and serve with [[skills]]'
            cand bundle 'Write the manifest as its own server: an MCP Bundle (.mcpb) and its server.json'
            cand import 'Write a manifest from an API description'
            cand tasks 'Read and cancel the tasks in the store (--task-store, --data-dir)'
            cand schema 'Print the JSON Schema of the manifest format'
            cand completions 'Print shell completions'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'mcp-serve;check'= {
            cand --target 'Also check what these hosts accept (repeatable)'
            cand --format 'Print the findings as JSON'
            cand -c 'The manifest [default: ./tools.toml]'
            cand --config 'The manifest [default: ./tools.toml]'
            cand --toolsets 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]'
            cand --task-store 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir'
            cand --data-dir 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]'
            cand --task-lease 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out'
            cand --log-format 'Log lines for people, or one JSON object per line for a collector'
            cand --strict 'Make warnings that serving would refuse errors: secrets that are not set here'
            cand -v 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand --verbose 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mcp-serve;list'= {
            cand --protocol-version 'With --json: the protocol version of that client'
            cand -c 'The manifest [default: ./tools.toml]'
            cand --config 'The manifest [default: ./tools.toml]'
            cand --toolsets 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]'
            cand --task-store 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir'
            cand --data-dir 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]'
            cand --task-lease 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out'
            cand --log-format 'Log lines for people, or one JSON object per line for a collector'
            cand --json 'Print the `tools/list` result a client gets, as JSON'
            cand --apps 'With --json: for a client that renders MCP Apps (tools'' `_meta.ui`, and the tools only a page may call)'
            cand -v 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand --verbose 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mcp-serve;call'= {
            cand --json 'All arguments as one JSON object (`-` reads it from stdin)'
            cand --answer 'Answer a field the tool asks for (`[tools.ask]`), typed like arguments (repeatable); on a terminal, what is missing is asked'
            cand --out-dir 'Where images, audio and other binary blocks are saved'
            cand -c 'The manifest [default: ./tools.toml]'
            cand --config 'The manifest [default: ./tools.toml]'
            cand --toolsets 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]'
            cand --task-store 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir'
            cand --data-dir 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]'
            cand --task-lease 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out'
            cand --log-format 'Log lines for people, or one JSON object per line for a collector'
            cand --json-out 'Print the structured result as JSON instead of the text blocks'
            cand --dry-run 'Print what would run (argv, environment, stdin, HTTP request), secrets redacted, and run nothing'
            cand --yes 'Answer yes to the tool''s confirmation (`confirm`)'
            cand --task 'Run the call as a task in the task store (--task-store, --data-dir), so `mcp-serve tasks` sees it from elsewhere, and follow it; Ctrl-C cancels it'
            cand -v 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand --verbose 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mcp-serve;search'= {
            cand --limit 'How many tools to show'
            cand -c 'The manifest [default: ./tools.toml]'
            cand --config 'The manifest [default: ./tools.toml]'
            cand --toolsets 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]'
            cand --task-store 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir'
            cand --data-dir 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]'
            cand --task-lease 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out'
            cand --log-format 'Log lines for people, or one JSON object per line for a collector'
            cand --json 'Print the tools found as JSON: each one''s name, title, description and score'
            cand -v 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand --verbose 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mcp-serve;test'= {
            cand -c 'The manifest [default: ./tools.toml]'
            cand --config 'The manifest [default: ./tools.toml]'
            cand --toolsets 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]'
            cand --task-store 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir'
            cand --data-dir 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]'
            cand --task-lease 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out'
            cand --log-format 'Log lines for people, or one JSON object per line for a collector'
            cand -v 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand --verbose 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mcp-serve;init'= {
            cand -c 'The manifest [default: ./tools.toml]'
            cand --config 'The manifest [default: ./tools.toml]'
            cand --toolsets 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]'
            cand --task-store 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir'
            cand --data-dir 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]'
            cand --task-lease 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out'
            cand --log-format 'Log lines for people, or one JSON object per line for a collector'
            cand --command-tool 'Include a command tool (the default when no kind is chosen)'
            cand --http-tool 'Include an HTTP tool'
            cand --app 'Give the command tool a page (an MCP App), written beside as greet.html'
            cand --force 'Replace an existing file'
            cand -v 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand --verbose 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mcp-serve;install'= {
            cand --name 'The server''s name in the host [default: the manifest''s server name]'
            cand --via 'How the host starts the server: this binary''s path, or the package, pinned to this version, through uvx or npx'
            cand -c 'The manifest [default: ./tools.toml]'
            cand --config 'The manifest [default: ./tools.toml]'
            cand --toolsets 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]'
            cand --task-store 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir'
            cand --data-dir 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]'
            cand --task-lease 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out'
            cand --log-format 'Log lines for people, or one JSON object per line for a collector'
            cand --dry-run 'Print the configuration snippet only'
            cand --force 'Replace an entry of the same name that another server wrote'
            cand -v 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand --verbose 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'mcp-serve;skill'= {
            cand --name 'The skill''s name (and its folder''s) [default: the server''s name]'
            cand --output 'The folder to write the skill''s folder in'
            cand -c 'The manifest [default: ./tools.toml]'
            cand --config 'The manifest [default: ./tools.toml]'
            cand --toolsets 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]'
            cand --task-store 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir'
            cand --data-dir 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]'
            cand --task-lease 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out'
            cand --log-format 'Log lines for people, or one JSON object per line for a collector'
            cand --force 'Replace an existing SKILL.md'
            cand -v 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand --verbose 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mcp-serve;bundle'= {
            cand -o 'The bundle to write; `server.json` is written beside it'
            cand --output 'The bundle to write; `server.json` is written beside it'
            cand --author 'The bundle''s author, as hosts show it'
            cand --registry-name 'The server''s name in the MCP Registry, e.g. `io.github.ada/weather`'
            cand --url 'Where the bundle will be downloaded from (a GitHub or GitLab release asset)'
            cand -c 'The manifest [default: ./tools.toml]'
            cand --config 'The manifest [default: ./tools.toml]'
            cand --toolsets 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]'
            cand --task-store 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir'
            cand --data-dir 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]'
            cand --task-lease 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out'
            cand --log-format 'Log lines for people, or one JSON object per line for a collector'
            cand --force 'Replace an existing bundle and server.json'
            cand -v 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand --verbose 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mcp-serve;import'= {
            cand -c 'The manifest [default: ./tools.toml]'
            cand --config 'The manifest [default: ./tools.toml]'
            cand --toolsets 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]'
            cand --task-store 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir'
            cand --data-dir 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]'
            cand --task-lease 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out'
            cand --log-format 'Log lines for people, or one JSON object per line for a collector'
            cand -v 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand --verbose 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand -h 'Print help'
            cand --help 'Print help'
            cand openapi 'One HTTP tool per operation of an `OpenAPI` 3.0 or 3.1 description (JSON or YAML)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'mcp-serve;import;openapi'= {
            cand -o 'Write the manifest here, and its JSON Schema beside it, instead of to stdout'
            cand --output 'Write the manifest here, and its JSON Schema beside it, instead of to stdout'
            cand --include 'Keep operations whose operationId matches this glob (repeatable)'
            cand --exclude 'Drop operations whose operationId matches this glob (repeatable)'
            cand --tag 'Keep operations with this tag (repeatable)'
            cand --method 'Keep operations with this HTTP method (repeatable)'
            cand --path 'Keep operations whose path matches this glob, e.g. ''/repos/*'' (repeatable)'
            cand --base-url 'The API''s base URL, instead of the description''s `servers`'
            cand --env-prefix 'Put in front of each credential variable''s name [default: the server name, as `SWAGGER_PETSTORE_`]'
            cand --name 'The server''s name [default: from the description''s title]'
            cand --max-output-schema 'Leave out an output schema larger than this (as compact JSON): every client reads it in `tools/list`'
            cand --max-items 'Give each tool whose response has lists `max-items = N`'
            cand -c 'The manifest [default: ./tools.toml]'
            cand --config 'The manifest [default: ./tools.toml]'
            cand --toolsets 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]'
            cand --task-store 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir'
            cand --data-dir 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]'
            cand --task-lease 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out'
            cand --log-format 'Log lines for people, or one JSON object per line for a collector'
            cand --force 'Replace an existing --output file'
            cand --no-output-schema 'Leave out output schemas (for an API whose responses stray from its description)'
            cand --project 'Give each tool a `project` keeping its response''s readable top-level fields (of each item, for a list): strings that are no link, numbers, booleans and lists of those; the output schema says the same'
            cand -v 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand --verbose 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mcp-serve;import;help'= {
            cand openapi 'One HTTP tool per operation of an `OpenAPI` 3.0 or 3.1 description (JSON or YAML)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'mcp-serve;import;help;openapi'= {
        }
        &'mcp-serve;import;help;help'= {
        }
        &'mcp-serve;tasks'= {
            cand -c 'The manifest [default: ./tools.toml]'
            cand --config 'The manifest [default: ./tools.toml]'
            cand --toolsets 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]'
            cand --task-store 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir'
            cand --data-dir 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]'
            cand --task-lease 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out'
            cand --log-format 'Log lines for people, or one JSON object per line for a collector'
            cand -v 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand --verbose 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand -h 'Print help'
            cand --help 'Print help'
            cand list 'Every task not yet forgotten, oldest first'
            cand get 'One task as `tasks/get` shows it, with its progress and logs'
            cand cancel 'Cancel a running task; the server running it stops its process'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'mcp-serve;tasks;list'= {
            cand --format 'Print them as JSON, one record per line'
            cand -c 'The manifest [default: ./tools.toml]'
            cand --config 'The manifest [default: ./tools.toml]'
            cand --toolsets 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]'
            cand --task-store 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir'
            cand --data-dir 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]'
            cand --task-lease 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out'
            cand --log-format 'Log lines for people, or one JSON object per line for a collector'
            cand -v 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand --verbose 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mcp-serve;tasks;get'= {
            cand -c 'The manifest [default: ./tools.toml]'
            cand --config 'The manifest [default: ./tools.toml]'
            cand --toolsets 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]'
            cand --task-store 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir'
            cand --data-dir 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]'
            cand --task-lease 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out'
            cand --log-format 'Log lines for people, or one JSON object per line for a collector'
            cand -v 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand --verbose 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mcp-serve;tasks;cancel'= {
            cand -c 'The manifest [default: ./tools.toml]'
            cand --config 'The manifest [default: ./tools.toml]'
            cand --toolsets 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]'
            cand --task-store 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir'
            cand --data-dir 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]'
            cand --task-lease 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out'
            cand --log-format 'Log lines for people, or one JSON object per line for a collector'
            cand -v 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand --verbose 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mcp-serve;tasks;help'= {
            cand list 'Every task not yet forgotten, oldest first'
            cand get 'One task as `tasks/get` shows it, with its progress and logs'
            cand cancel 'Cancel a running task; the server running it stops its process'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'mcp-serve;tasks;help;list'= {
        }
        &'mcp-serve;tasks;help;get'= {
        }
        &'mcp-serve;tasks;help;cancel'= {
        }
        &'mcp-serve;tasks;help;help'= {
        }
        &'mcp-serve;schema'= {
            cand -c 'The manifest [default: ./tools.toml]'
            cand --config 'The manifest [default: ./tools.toml]'
            cand --toolsets 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]'
            cand --task-store 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir'
            cand --data-dir 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]'
            cand --task-lease 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out'
            cand --log-format 'Log lines for people, or one JSON object per line for a collector'
            cand -v 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand --verbose 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mcp-serve;completions'= {
            cand -c 'The manifest [default: ./tools.toml]'
            cand --config 'The manifest [default: ./tools.toml]'
            cand --toolsets 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest''s `[server] toolsets`, else every tool]'
            cand --task-store 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir'
            cand --data-dir 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]'
            cand --task-lease 'A running task''s lease: its server renews it; a task whose server died reads as failed once it runs out'
            cand --log-format 'Log lines for people, or one JSON object per line for a collector'
            cand -v 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand --verbose 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mcp-serve;help'= {
            cand check 'Validate the manifest and lint it for the hosts you target'
            cand list 'Show the tools, as a table or as the exact `tools/list` JSON'
            cand call 'Run one tool exactly as the server would, from the terminal'
            cand search 'Find the tools that do what you describe, best first'
            cand test 'Run the examples the manifest declares for its tools'
            cand init 'Write a commented starter manifest (and its JSON Schema) that passes `check`'
            cand install 'Add this server to a host''s configuration, with absolute paths'
            cand skill 'Write a SKILL.md on using the manifest''s tools, to edit and serve with [[skills]]'
            cand bundle 'Write the manifest as its own server: an MCP Bundle (.mcpb) and its server.json'
            cand import 'Write a manifest from an API description'
            cand tasks 'Read and cancel the tasks in the store (--task-store, --data-dir)'
            cand schema 'Print the JSON Schema of the manifest format'
            cand completions 'Print shell completions'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'mcp-serve;help;check'= {
        }
        &'mcp-serve;help;list'= {
        }
        &'mcp-serve;help;call'= {
        }
        &'mcp-serve;help;search'= {
        }
        &'mcp-serve;help;test'= {
        }
        &'mcp-serve;help;init'= {
        }
        &'mcp-serve;help;install'= {
        }
        &'mcp-serve;help;skill'= {
        }
        &'mcp-serve;help;bundle'= {
        }
        &'mcp-serve;help;import'= {
            cand openapi 'One HTTP tool per operation of an `OpenAPI` 3.0 or 3.1 description (JSON or YAML)'
        }
        &'mcp-serve;help;import;openapi'= {
        }
        &'mcp-serve;help;tasks'= {
            cand list 'Every task not yet forgotten, oldest first'
            cand get 'One task as `tasks/get` shows it, with its progress and logs'
            cand cancel 'Cancel a running task; the server running it stops its process'
        }
        &'mcp-serve;help;tasks;list'= {
        }
        &'mcp-serve;help;tasks;get'= {
        }
        &'mcp-serve;help;tasks;cancel'= {
        }
        &'mcp-serve;help;schema'= {
        }
        &'mcp-serve;help;completions'= {
        }
        &'mcp-serve;help;help'= {
        }
    ]
    $completions[$command]
}
