#!/usr/bin/env python3
"""The server's own CPU per tools/call over stdio, apart from its commands' (from /proc/PID/stat:
utime+stime of the server, cutime+cstime of what it reaped), and wall time per call. For
comparing builds, or mcp-serve with the kit's rmcp peer, back to back (docs/performance.md).

Usage: cpu_per_call.py [--modern] TOOL CALLS -- SERVER COMMAND...
       (TOOL: echo, noop or fetch_json of benches/kit.toml, which needs UPSTREAM_URL set)"""
import json, os, subprocess, sys, time
args = sys.argv[1:]
modern = args[0] == "--modern"
if modern: args = args[1:]
tool, n = args[0], int(args[1]); cmd = args[3:]
targs = {"echo": {"message": "hello bench"}, "noop": {}, "fetch_json": {"id": 7}}[tool]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def send(o): p.stdin.write((json.dumps(o) + "\n").encode()); p.stdin.flush()
def recv():
    while True:
        l = p.stdout.readline()
        if not l: raise SystemExit("server closed")
        m = json.loads(l)
        if "id" in m: return m
meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": {"name": "cpu", "version": "1"}, "io.modelcontextprotocol/clientCapabilities": {}}
if not modern:
    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "cpu", "version": "1"}}}); recv()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
def call(i):
    params = {"name": tool, "arguments": targs}
    if modern: params["_meta"] = meta
    send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
    r = recv()
    assert "result" in r and not r["result"].get("isError"), r
for i in range(1, 101): call(i)
tck = os.sysconf("SC_CLK_TCK")
def stat():
    f = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
    return [int(x) for x in f[11:15]]
a = stat(); t0 = time.perf_counter()
for i in range(101, 101 + n): call(i)
t1 = time.perf_counter(); b = stat()
d = [(y - x) * 1e6 / tck / n for x, y in zip(a, b)]
print(f"wall {1e6*(t1-t0)/n:.0f} self {d[0]+d[1]:.0f} (u {d[0]:.0f} s {d[1]:.0f}) children {d[2]+d[3]:.0f}")
p.stdin.close(); p.wait()
