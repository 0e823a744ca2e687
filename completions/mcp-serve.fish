# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_mcp_serve_global_optspecs
    string join \n c/config= toolsets= v/verbose max-calls= queue= watch discovery state-key-file= heartbeat= task-store= data-dir= task-lease= max-tasks= max-task-bytes= max-tasks-per-caller= max-task-bytes-per-caller= http= path= sessions max-sessions= session-idle= sse allowed-host= allowed-origin= auth-token-env= auth-token-file= allow-unauthenticated max-body= request-rate= request-burst= header-timeout= body-timeout= trusted-proxy= max-connections= max-connections-per-address= shutdown-grace= metrics metrics-addr= log-format= audit audit-values otlp-endpoint= h/help V/version
end

function __fish_mcp_serve_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_mcp_serve_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_mcp_serve_using_subcommand
    set -l cmd (__fish_mcp_serve_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -s c -l config -d 'The manifest [default: ./tools.toml]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l toolsets -d 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest\'s `[server] toolsets`, else every tool]' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l max-calls -d 'At most this many tool calls run at once; beyond, calls wait (--queue) or fail fast' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l queue -d 'Calls that may wait for a free slot when --max-calls are running; beyond, calls fail fast' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l state-key-file -d 'Seal the state of 2026 calls that ask the client (`input_required`) with the key in this file (at least 32 bytes), so every replica accepts it; default: a random key' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l heartbeat -d 'For a call that asked for progress: report it is still running after this long without progress (0 turns heartbeats off)' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l task-store -d 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l data-dir -d 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l task-lease -d 'A running task\'s lease: its server renews it; a task whose server died reads as failed once it runs out' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l max-tasks -d 'The most tasks the store keeps, running or ended and kept for their `task-ttl`; beyond it a new task is refused' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l max-task-bytes -d 'The most the store keeps of tasks: results, progress, logs, answers, and the arguments of running tasks; beyond it a new task or a result is refused' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l max-tasks-per-caller -d 'As --max-tasks, per caller (a session, a token\'s subject; callers that nothing names, such as stateless requests without OAuth, are one caller)' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l max-task-bytes-per-caller -d 'As --max-task-bytes, per caller' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l http -d 'Serve Streamable HTTP on this address instead of stdio (port 0 picks a free port)' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l path -d 'The MCP endpoint\'s path' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l max-sessions -d 'With --sessions: the most sessions open at once' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l session-idle -d 'With --sessions: close a session after this long without requests' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l allowed-host -d 'Accept this Host header (repeatable); default: the loopback names, plus the bound address' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l allowed-origin -d 'Accept this Origin, e.g. `https://app.example.com:443` or `http://localhost:*` (repeatable); default when bound to loopback: localhost origins; requests without Origin always pass' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l auth-token-env -d 'Require `Authorization: Bearer <token>`, the token read from this environment variable' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l auth-token-file -d 'Require `Authorization: Bearer <token>`, the token read from this file' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l max-body -d 'The largest request body accepted' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l request-rate -d 'Every caller\'s allowance of requests, whatever they ask, e.g. `100/s`, `6000/m`: the token\'s subject, else the client\'s address; over it, 429 with Retry-After' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l request-burst -d 'With --request-rate: how many requests may come at once [default: the rate\'s count]' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l header-timeout -d 'How long a client may take to send request headers, and how long an idle connection stays open' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l body-timeout -d 'How long a client may take to send a request\'s body once its headers have arrived' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l trusted-proxy -d 'A reverse proxy (an address or a network, e.g. 10.0.0.0/8; repeatable) whose X-Forwarded-For names the client, for per-caller rates, task bounds, audit and traces' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l max-connections -d 'The most connections open at once (the HTTP endpoint\'s and the egress proxy\'s, whose tunnels count as two); at it, the oldest idle one is closed to make room [default: the descriptor limit, raised to its hard limit at start, less a quarter (at most 256) kept for commands; at most 16384]' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l max-connections-per-address -d 'The most of them one client address may hold [default: half of --max-connections]' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l shutdown-grace -d 'On SIGTERM or SIGINT, how long in-flight calls get to finish before they are stopped' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l metrics-addr -d 'Serve Prometheus metrics at `http://ADDR/metrics` on a listener of their own, with no authentication (keep it on a private network); works with stdio too' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l log-format -d 'Log lines for people, or one JSON object per line for a collector' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l otlp-endpoint -d 'Export traces (a span per request and per backend run) over OTLP/HTTP to this collector, e.g. `http://127.0.0.1:4318`; the standard `OTEL_EXPORTER_OTLP_*` variables work too' -r
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -s v -l verbose -d 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l watch -d 'Reload the manifest when it changes (a broken edit keeps the previous tools), and tell clients that the tool list changed'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l discovery -d 'List tools that find, call and add the others (`find_tools`, `call_tool`, `add_tools`) instead of every tool, as `[server] discovery = true` does'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l sessions -d 'Give legacy (2025) clients sessions: a GET stream and resumable responses. The 2026 protocol is always stateless'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l sse -d 'Answer every POST with an SSE stream; by default the answer is plain JSON unless a notification (progress, a log) comes before the result'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l allow-unauthenticated -d 'Serve a non-loopback address without a token (when something in front authenticates)'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l metrics -d 'Serve Prometheus metrics at `/metrics` on the HTTP listener, behind its authentication'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l audit -d 'Log an audit record per tool call: caller, tool, outcome, duration, and the names and types of the arguments'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -l audit-values -d 'With --audit, record the argument values too (the manifest\'s secrets redacted)'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -s V -l version -d 'Print version'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -f -a "check" -d 'Validate the manifest and lint it for the hosts you target'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -f -a "list" -d 'Show the tools, as a table or as the exact `tools/list` JSON'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -f -a "call" -d 'Run one tool exactly as the server would, from the terminal'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -f -a "search" -d 'Find the tools that do what you describe, best first'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -f -a "test" -d 'Run the examples the manifest declares for its tools'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -f -a "init" -d 'Write a commented starter manifest (and its JSON Schema) that passes `check`'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -f -a "install" -d 'Add this server to a host\'s configuration, with absolute paths'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -f -a "skill" -d 'Write a SKILL.md on using the manifest\'s tools, to edit and serve with [[skills]]'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -f -a "bundle" -d 'Write the manifest as its own server: an MCP Bundle (.mcpb) and its server.json'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -f -a "import" -d 'Write a manifest from an API description'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -f -a "tasks" -d 'Read and cancel the tasks in the store (--task-store, --data-dir)'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -f -a "schema" -d 'Print the JSON Schema of the manifest format'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -f -a "completions" -d 'Print shell completions'
complete -c mcp-serve -n "__fish_mcp_serve_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand check" -l target -d 'Also check what these hosts accept (repeatable)' -r -f -a "claude-desktop\t''
claude-code\t''
cursor\t''
vscode\t''
gemini\t''
openai\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand check" -l format -d 'Print the findings as JSON' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand check" -s c -l config -d 'The manifest [default: ./tools.toml]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand check" -l toolsets -d 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest\'s `[server] toolsets`, else every tool]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand check" -l task-store -d 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand check" -l data-dir -d 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand check" -l task-lease -d 'A running task\'s lease: its server renews it; a task whose server died reads as failed once it runs out' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand check" -l log-format -d 'Log lines for people, or one JSON object per line for a collector' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand check" -l strict -d 'Make warnings that serving would refuse errors: secrets that are not set here'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand check" -s v -l verbose -d 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand check" -s h -l help -d 'Print help'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand list" -l protocol-version -d 'With --json: the protocol version of that client' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand list" -s c -l config -d 'The manifest [default: ./tools.toml]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand list" -l toolsets -d 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest\'s `[server] toolsets`, else every tool]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand list" -l task-store -d 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand list" -l data-dir -d 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand list" -l task-lease -d 'A running task\'s lease: its server renews it; a task whose server died reads as failed once it runs out' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand list" -l log-format -d 'Log lines for people, or one JSON object per line for a collector' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand list" -l json -d 'Print the `tools/list` result a client gets, as JSON'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand list" -l apps -d 'With --json: for a client that renders MCP Apps (tools\' `_meta.ui`, and the tools only a page may call)'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand list" -s v -l verbose -d 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand list" -s h -l help -d 'Print help'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand call" -l json -d 'All arguments as one JSON object (`-` reads it from stdin)' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand call" -l answer -d 'Answer a field the tool asks for (`[tools.ask]`), typed like arguments (repeatable); on a terminal, what is missing is asked' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand call" -l out-dir -d 'Where images, audio and other binary blocks are saved' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand call" -s c -l config -d 'The manifest [default: ./tools.toml]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand call" -l toolsets -d 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest\'s `[server] toolsets`, else every tool]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand call" -l task-store -d 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand call" -l data-dir -d 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand call" -l task-lease -d 'A running task\'s lease: its server renews it; a task whose server died reads as failed once it runs out' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand call" -l log-format -d 'Log lines for people, or one JSON object per line for a collector' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand call" -l json-out -d 'Print the structured result as JSON instead of the text blocks'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand call" -l dry-run -d 'Print what would run (argv, environment, stdin, HTTP request), secrets redacted, and run nothing'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand call" -l yes -d 'Answer yes to the tool\'s confirmation (`confirm`)'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand call" -l task -d 'Run the call as a task in the task store (--task-store, --data-dir), so `mcp-serve tasks` sees it from elsewhere, and follow it; Ctrl-C cancels it'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand call" -s v -l verbose -d 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand call" -s h -l help -d 'Print help'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand search" -l limit -d 'How many tools to show' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand search" -s c -l config -d 'The manifest [default: ./tools.toml]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand search" -l toolsets -d 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest\'s `[server] toolsets`, else every tool]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand search" -l task-store -d 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand search" -l data-dir -d 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand search" -l task-lease -d 'A running task\'s lease: its server renews it; a task whose server died reads as failed once it runs out' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand search" -l log-format -d 'Log lines for people, or one JSON object per line for a collector' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand search" -l json -d 'Print the tools found as JSON: each one\'s name, title, description and score'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand search" -s v -l verbose -d 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand search" -s h -l help -d 'Print help'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand test" -s c -l config -d 'The manifest [default: ./tools.toml]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand test" -l toolsets -d 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest\'s `[server] toolsets`, else every tool]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand test" -l task-store -d 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand test" -l data-dir -d 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand test" -l task-lease -d 'A running task\'s lease: its server renews it; a task whose server died reads as failed once it runs out' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand test" -l log-format -d 'Log lines for people, or one JSON object per line for a collector' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand test" -s v -l verbose -d 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand test" -s h -l help -d 'Print help'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand init" -s c -l config -d 'The manifest [default: ./tools.toml]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand init" -l toolsets -d 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest\'s `[server] toolsets`, else every tool]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand init" -l task-store -d 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand init" -l data-dir -d 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand init" -l task-lease -d 'A running task\'s lease: its server renews it; a task whose server died reads as failed once it runs out' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand init" -l log-format -d 'Log lines for people, or one JSON object per line for a collector' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand init" -l command-tool -d 'Include a command tool (the default when no kind is chosen)'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand init" -l http-tool -d 'Include an HTTP tool'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand init" -l app -d 'Give the command tool a page (an MCP App), written beside as greet.html'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand init" -l force -d 'Replace an existing file'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand init" -s v -l verbose -d 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand init" -s h -l help -d 'Print help'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand install" -l name -d 'The server\'s name in the host [default: the manifest\'s server name]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand install" -l via -d 'How the host starts the server: this binary\'s path, or the package, pinned to this version, through uvx or npx' -r -f -a "path\t'This binary, by its absolute path'
uvx\t'`uvx mcp-serve@VERSION`: the wheel from the Python package index, cached by uv'
npx\t'`npx -y mcp-serve@VERSION`: the npm package and its platform binary'"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand install" -s c -l config -d 'The manifest [default: ./tools.toml]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand install" -l toolsets -d 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest\'s `[server] toolsets`, else every tool]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand install" -l task-store -d 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand install" -l data-dir -d 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand install" -l task-lease -d 'A running task\'s lease: its server renews it; a task whose server died reads as failed once it runs out' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand install" -l log-format -d 'Log lines for people, or one JSON object per line for a collector' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand install" -l dry-run -d 'Print the configuration snippet only'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand install" -l force -d 'Replace an entry of the same name that another server wrote'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand install" -s v -l verbose -d 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand install" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand skill" -l name -d 'The skill\'s name (and its folder\'s) [default: the server\'s name]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand skill" -l output -d 'The folder to write the skill\'s folder in' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand skill" -s c -l config -d 'The manifest [default: ./tools.toml]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand skill" -l toolsets -d 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest\'s `[server] toolsets`, else every tool]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand skill" -l task-store -d 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand skill" -l data-dir -d 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand skill" -l task-lease -d 'A running task\'s lease: its server renews it; a task whose server died reads as failed once it runs out' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand skill" -l log-format -d 'Log lines for people, or one JSON object per line for a collector' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand skill" -l force -d 'Replace an existing SKILL.md'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand skill" -s v -l verbose -d 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand skill" -s h -l help -d 'Print help'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand bundle" -s o -l output -d 'The bundle to write; `server.json` is written beside it' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand bundle" -l author -d 'The bundle\'s author, as hosts show it' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand bundle" -l registry-name -d 'The server\'s name in the MCP Registry, e.g. `io.github.ada/weather`' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand bundle" -l url -d 'Where the bundle will be downloaded from (a GitHub or GitLab release asset)' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand bundle" -s c -l config -d 'The manifest [default: ./tools.toml]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand bundle" -l toolsets -d 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest\'s `[server] toolsets`, else every tool]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand bundle" -l task-store -d 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand bundle" -l data-dir -d 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand bundle" -l task-lease -d 'A running task\'s lease: its server renews it; a task whose server died reads as failed once it runs out' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand bundle" -l log-format -d 'Log lines for people, or one JSON object per line for a collector' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand bundle" -l force -d 'Replace an existing bundle and server.json'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand bundle" -s v -l verbose -d 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand bundle" -s h -l help -d 'Print help'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and not __fish_seen_subcommand_from openapi help" -s c -l config -d 'The manifest [default: ./tools.toml]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and not __fish_seen_subcommand_from openapi help" -l toolsets -d 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest\'s `[server] toolsets`, else every tool]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and not __fish_seen_subcommand_from openapi help" -l task-store -d 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and not __fish_seen_subcommand_from openapi help" -l data-dir -d 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and not __fish_seen_subcommand_from openapi help" -l task-lease -d 'A running task\'s lease: its server renews it; a task whose server died reads as failed once it runs out' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and not __fish_seen_subcommand_from openapi help" -l log-format -d 'Log lines for people, or one JSON object per line for a collector' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and not __fish_seen_subcommand_from openapi help" -s v -l verbose -d 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and not __fish_seen_subcommand_from openapi help" -s h -l help -d 'Print help'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and not __fish_seen_subcommand_from openapi help" -f -a "openapi" -d 'One HTTP tool per operation of an `OpenAPI` 3.0 or 3.1 description (JSON or YAML)'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and not __fish_seen_subcommand_from openapi help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -s o -l output -d 'Write the manifest here, and its JSON Schema beside it, instead of to stdout' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -l include -d 'Keep operations whose operationId matches this glob (repeatable)' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -l exclude -d 'Drop operations whose operationId matches this glob (repeatable)' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -l tag -d 'Keep operations with this tag (repeatable)' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -l method -d 'Keep operations with this HTTP method (repeatable)' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -l path -d 'Keep operations whose path matches this glob, e.g. \'/repos/*\' (repeatable)' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -l base-url -d 'The API\'s base URL, instead of the description\'s `servers`' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -l env-prefix -d 'Put in front of each credential variable\'s name [default: the server name, as `SWAGGER_PETSTORE_`]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -l name -d 'The server\'s name [default: from the description\'s title]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -l max-output-schema -d 'Leave out an output schema larger than this (as compact JSON): every client reads it in `tools/list`' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -l max-items -d 'Give each tool whose response has lists `max-items = N`' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -s c -l config -d 'The manifest [default: ./tools.toml]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -l toolsets -d 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest\'s `[server] toolsets`, else every tool]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -l task-store -d 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -l data-dir -d 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -l task-lease -d 'A running task\'s lease: its server renews it; a task whose server died reads as failed once it runs out' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -l log-format -d 'Log lines for people, or one JSON object per line for a collector' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -l force -d 'Replace an existing --output file'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -l no-output-schema -d 'Leave out output schemas (for an API whose responses stray from its description)'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -l project -d 'Give each tool a `project` keeping its response\'s readable top-level fields (of each item, for a list): strings that are no link, numbers, booleans and lists of those; the output schema says the same'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -s v -l verbose -d 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from openapi" -s h -l help -d 'Print help'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from help" -f -a "openapi" -d 'One HTTP tool per operation of an `OpenAPI` 3.0 or 3.1 description (JSON or YAML)'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand import; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and not __fish_seen_subcommand_from list get cancel help" -s c -l config -d 'The manifest [default: ./tools.toml]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and not __fish_seen_subcommand_from list get cancel help" -l toolsets -d 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest\'s `[server] toolsets`, else every tool]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and not __fish_seen_subcommand_from list get cancel help" -l task-store -d 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and not __fish_seen_subcommand_from list get cancel help" -l data-dir -d 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and not __fish_seen_subcommand_from list get cancel help" -l task-lease -d 'A running task\'s lease: its server renews it; a task whose server died reads as failed once it runs out' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and not __fish_seen_subcommand_from list get cancel help" -l log-format -d 'Log lines for people, or one JSON object per line for a collector' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and not __fish_seen_subcommand_from list get cancel help" -s v -l verbose -d 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and not __fish_seen_subcommand_from list get cancel help" -s h -l help -d 'Print help'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and not __fish_seen_subcommand_from list get cancel help" -f -a "list" -d 'Every task not yet forgotten, oldest first'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and not __fish_seen_subcommand_from list get cancel help" -f -a "get" -d 'One task as `tasks/get` shows it, with its progress and logs'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and not __fish_seen_subcommand_from list get cancel help" -f -a "cancel" -d 'Cancel a running task; the server running it stops its process'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and not __fish_seen_subcommand_from list get cancel help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from list" -l format -d 'Print them as JSON, one record per line' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from list" -s c -l config -d 'The manifest [default: ./tools.toml]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from list" -l toolsets -d 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest\'s `[server] toolsets`, else every tool]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from list" -l task-store -d 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from list" -l data-dir -d 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from list" -l task-lease -d 'A running task\'s lease: its server renews it; a task whose server died reads as failed once it runs out' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from list" -l log-format -d 'Log lines for people, or one JSON object per line for a collector' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from get" -s c -l config -d 'The manifest [default: ./tools.toml]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from get" -l toolsets -d 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest\'s `[server] toolsets`, else every tool]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from get" -l task-store -d 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from get" -l data-dir -d 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from get" -l task-lease -d 'A running task\'s lease: its server renews it; a task whose server died reads as failed once it runs out' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from get" -l log-format -d 'Log lines for people, or one JSON object per line for a collector' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from get" -s v -l verbose -d 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from get" -s h -l help -d 'Print help'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from cancel" -s c -l config -d 'The manifest [default: ./tools.toml]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from cancel" -l toolsets -d 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest\'s `[server] toolsets`, else every tool]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from cancel" -l task-store -d 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from cancel" -l data-dir -d 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from cancel" -l task-lease -d 'A running task\'s lease: its server renews it; a task whose server died reads as failed once it runs out' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from cancel" -l log-format -d 'Log lines for people, or one JSON object per line for a collector' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from cancel" -s v -l verbose -d 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from cancel" -s h -l help -d 'Print help'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from help" -f -a "list" -d 'Every task not yet forgotten, oldest first'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from help" -f -a "get" -d 'One task as `tasks/get` shows it, with its progress and logs'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from help" -f -a "cancel" -d 'Cancel a running task; the server running it stops its process'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand tasks; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand schema" -s c -l config -d 'The manifest [default: ./tools.toml]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand schema" -l toolsets -d 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest\'s `[server] toolsets`, else every tool]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand schema" -l task-store -d 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand schema" -l data-dir -d 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand schema" -l task-lease -d 'A running task\'s lease: its server renews it; a task whose server died reads as failed once it runs out' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand schema" -l log-format -d 'Log lines for people, or one JSON object per line for a collector' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand schema" -s v -l verbose -d 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand schema" -s h -l help -d 'Print help'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand completions" -s c -l config -d 'The manifest [default: ./tools.toml]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand completions" -l toolsets -d 'Serve only the tools of these toolsets (comma-separated; `all`: every tool); `list`, `check`, `call` and reloads see the same choice [default: the manifest\'s `[server] toolsets`, else every tool]' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand completions" -l task-store -d 'Keep tasks in Redis, shared by every replica: `redis://HOST[:PORT][/DB]` (a password in the URL is never logged); default: an embedded `SQLite` file in --data-dir' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand completions" -l data-dir -d 'Where the embedded task store lives [default: $XDG_STATE_HOME/mcp-serve, else ~/.local/state/mcp-serve]' -r -F
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand completions" -l task-lease -d 'A running task\'s lease: its server renews it; a task whose server died reads as failed once it runs out' -r
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand completions" -l log-format -d 'Log lines for people, or one JSON object per line for a collector' -r -f -a "text\t''
json\t''"
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand completions" -s v -l verbose -d 'More logging on stderr (-v debug, -vv trace); `RUST_LOG` overrides'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand completions" -s h -l help -d 'Print help'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand help; and not __fish_seen_subcommand_from check list call search test init install skill bundle import tasks schema completions help" -f -a "check" -d 'Validate the manifest and lint it for the hosts you target'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand help; and not __fish_seen_subcommand_from check list call search test init install skill bundle import tasks schema completions help" -f -a "list" -d 'Show the tools, as a table or as the exact `tools/list` JSON'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand help; and not __fish_seen_subcommand_from check list call search test init install skill bundle import tasks schema completions help" -f -a "call" -d 'Run one tool exactly as the server would, from the terminal'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand help; and not __fish_seen_subcommand_from check list call search test init install skill bundle import tasks schema completions help" -f -a "search" -d 'Find the tools that do what you describe, best first'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand help; and not __fish_seen_subcommand_from check list call search test init install skill bundle import tasks schema completions help" -f -a "test" -d 'Run the examples the manifest declares for its tools'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand help; and not __fish_seen_subcommand_from check list call search test init install skill bundle import tasks schema completions help" -f -a "init" -d 'Write a commented starter manifest (and its JSON Schema) that passes `check`'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand help; and not __fish_seen_subcommand_from check list call search test init install skill bundle import tasks schema completions help" -f -a "install" -d 'Add this server to a host\'s configuration, with absolute paths'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand help; and not __fish_seen_subcommand_from check list call search test init install skill bundle import tasks schema completions help" -f -a "skill" -d 'Write a SKILL.md on using the manifest\'s tools, to edit and serve with [[skills]]'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand help; and not __fish_seen_subcommand_from check list call search test init install skill bundle import tasks schema completions help" -f -a "bundle" -d 'Write the manifest as its own server: an MCP Bundle (.mcpb) and its server.json'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand help; and not __fish_seen_subcommand_from check list call search test init install skill bundle import tasks schema completions help" -f -a "import" -d 'Write a manifest from an API description'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand help; and not __fish_seen_subcommand_from check list call search test init install skill bundle import tasks schema completions help" -f -a "tasks" -d 'Read and cancel the tasks in the store (--task-store, --data-dir)'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand help; and not __fish_seen_subcommand_from check list call search test init install skill bundle import tasks schema completions help" -f -a "schema" -d 'Print the JSON Schema of the manifest format'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand help; and not __fish_seen_subcommand_from check list call search test init install skill bundle import tasks schema completions help" -f -a "completions" -d 'Print shell completions'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand help; and not __fish_seen_subcommand_from check list call search test init install skill bundle import tasks schema completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand help; and __fish_seen_subcommand_from import" -f -a "openapi" -d 'One HTTP tool per operation of an `OpenAPI` 3.0 or 3.1 description (JSON or YAML)'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand help; and __fish_seen_subcommand_from tasks" -f -a "list" -d 'Every task not yet forgotten, oldest first'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand help; and __fish_seen_subcommand_from tasks" -f -a "get" -d 'One task as `tasks/get` shows it, with its progress and logs'
complete -c mcp-serve -n "__fish_mcp_serve_using_subcommand help; and __fish_seen_subcommand_from tasks" -f -a "cancel" -d 'Cancel a running task; the server running it stops its process'
