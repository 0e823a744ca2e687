"""What a server does in its first minutes, for scripts/layout: start, handshake in both eras,
list, call each kind of tool of benches/kit.toml (a static result, a command, an HTTP API);
over stdio and over HTTP. Usage: workload.py COMMAND... (the server command, under callgrind)."""
import subprocess, json, sys, os, time, urllib.request, socket

def stdio(cmd, modern):
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    def send(o): p.stdin.write((json.dumps(o)+"\n").encode()); p.stdin.flush()
    meta = {"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"}}
    def req(i, method, params):
        if modern: params = dict(params, _meta=meta)
        send({"jsonrpc":"2.0","id":i,"method":method,"params":params}); return p.stdout.readline()
    if not modern:
        req(0, "initialize", {"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}})
        send({"jsonrpc":"2.0","method":"notifications/initialized"})
    req(1, "tools/list", {})
    i = 2
    for _ in range(20):
        for tool, args in [("noop", {}), ("echo", {"message":"hello bench"}), ("fetch_json", {"id":7})]:
            line = req(i, "tools/call", {"name":tool, "arguments":args}); i += 1
            assert b'"result"' in line, line
    p.stdin.close(); p.wait()

def http(cmd, port):
    p = subprocess.Popen(cmd + ["--http", f"127.0.0.1:{port}"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try: socket.create_connection(("127.0.0.1", port)).close(); break
        except OSError: time.sleep(0.1)
    url = f"http://127.0.0.1:{port}/mcp"
    def post(body, headers):
        h = {"Content-Type":"application/json","Accept":"application/json, text/event-stream"}; h.update(headers)
        r = urllib.request.urlopen(urllib.request.Request(url, json.dumps(body).encode(), h), timeout=120)
        return r.headers.get("mcp-session-id"), r.read()
    meta = {"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"}}
    sid, _ = post({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}, {})
    legacy = {"mcp-protocol-version":"2025-11-25"}
    if sid: legacy["mcp-session-id"] = sid
    post({"jsonrpc":"2.0","method":"notifications/initialized"}, legacy)
    modern = {"mcp-protocol-version":"2026-07-28"}
    for i in range(10):
        for tool, args in [("noop", {}), ("echo", {"message":"hello bench"}), ("fetch_json", {"id":7})]:
            _, out = post({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":tool,"arguments":args}}, legacy)
            assert b'"result"' in out, out
            _, out = post({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":tool,"arguments":args,"_meta":meta}}, dict(modern, **{"mcp-method":"tools/call","mcp-name":tool}))
            assert b'"result"' in out, out
    post({"jsonrpc":"2.0","id":99,"method":"tools/list","params":{}}, legacy)
    p.terminate(); p.wait()

if __name__ == "__main__":
    cmd = sys.argv[1:]
    stdio(cmd, False)
    stdio(cmd, True)
    http(cmd, 18777)
