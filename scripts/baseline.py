#!/usr/bin/env python3
"""A rough performance baseline, not the benchmark issue 8 asks for.

Serves tools.example.toml with the release binary and reports the median over five runs of:
cold start to the first tools/list answer, RSS after it, the p50 latency of 200 sequential
calls of the `search` command tool over stdio, and peak RSS. For comparison it also reports
the p50 of spawning the same command directly from Python. All figures come from the same
run; the machine is noisy, so compare ratios.

    cargo build --release && python3 scripts/baseline.py
"""
import os
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(ROOT, "target", "release", "mcp-serve")


def status(pid, key):
    with open(f"/proc/{pid}/status") as lines:
        return int(next(line for line in lines if line.startswith(key)).split()[1])


def one_run():
    started = time.perf_counter()
    server = subprocess.Popen(
        [BINARY, "--config", "tools.example.toml"],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    server.stdin.write(
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        b'"capabilities":{},"clientInfo":{"name":"baseline","version":"1"}}}\n'
        b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'
    )
    server.stdin.flush()
    server.stdout.readline()
    server.stdout.readline()
    cold = time.perf_counter() - started
    rss = status(server.pid, "VmRSS")
    latencies = []
    for request in range(3, 203):
        sent = time.perf_counter()
        server.stdin.write(
            b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search","arguments":{"query":"mug"}}}\n'
            % request
        )
        server.stdin.flush()
        server.stdout.readline()
        latencies.append(time.perf_counter() - sent)
    peak = status(server.pid, "VmHWM")
    server.stdin.close()
    server.wait()
    return cold, rss, statistics.median(latencies), peak


def main():
    runs = [one_run() for _ in range(5)]
    spawn = []
    for _ in range(200):
        started = time.perf_counter()
        subprocess.run([os.path.join(ROOT, "examples", "catalog.sh"), "search", "--", "mug", "10"], stdout=subprocess.DEVNULL)
        spawn.append(time.perf_counter() - started)
    call = statistics.median(run[2] for run in runs)
    floor = statistics.median(spawn)
    print(f"cold start to tools/list   {statistics.median(run[0] for run in runs) * 1000:7.1f} ms")
    print(f"RSS after tools/list       {statistics.median(run[1] for run in runs) / 1024:7.1f} MiB")
    print(f"search p50 over stdio      {call * 1000:7.2f} ms")
    print(f"same command spawned       {floor * 1000:7.2f} ms   (ratio {call / floor:.2f}x)")
    print(f"peak RSS                   {statistics.median(run[3] for run in runs) / 1024:7.1f} MiB")


if __name__ == "__main__":
    main()
