#!/usr/bin/env python3
"""Cold start through each way a host launches mcp-serve: spawn, `initialize`, then the
first `tools/list` answer, as a host sees it; and, at that moment, the processes between the
host and the server and their resident memory (VmRSS of the whole tree). Starts are
interleaved across the paths, so all share the machine's weather; medians are printed, with
ratios to the first path (the bare binary). docs/performance.md, "Install and launch", has
the setup that installs the artifacts first.

Usage: launch.py [--starts N] [--rounds R] MANIFEST LABEL=COMMAND...
       (each COMMAND is split like a shell line; `--config MANIFEST` is added to it)"""
import json, os, shlex, statistics, subprocess, sys, time

args = sys.argv[1:]
starts, rounds = 20, 3
while args and args[0].startswith("--"):
    option, value = args[0], int(args[1])
    if option == "--starts": starts = value
    elif option == "--rounds": rounds = value
    else: raise SystemExit(__doc__)
    args = args[2:]
if len(args) < 2: raise SystemExit(__doc__)
manifest, paths = args[0], [arg.split("=", 1) for arg in args[1:]]

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "launch", "version": "1"}}}

def tree(pid):
    """The pids of `pid` and all its descendants."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop(); out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                todo += [int(c) for c in open(f"/proc/{p}/task/{task}/children").read().split()]
        except FileNotFoundError:
            pass
    return out

def rss_kib(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"): return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0

def start(command):
    began = time.perf_counter()
    p = subprocess.Popen(command + ["--config", manifest], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    def send(message): p.stdin.write((json.dumps(message) + "\n").encode()); p.stdin.flush()
    def answer():
        while True:
            line = p.stdout.readline()
            if not line: raise SystemExit(f"{command[0]} closed stdout")
            if "id" in json.loads(line): return
    send(INIT); answer()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}); answer()
    elapsed = time.perf_counter() - began
    pids = tree(p.pid)
    memory = sum(rss_kib(pid) for pid in pids)
    p.stdin.close(); p.wait()
    return elapsed * 1e3, len(pids), memory / 1024

results = {label: [] for label, _ in paths}
for _ in range(rounds):
    for _ in range(starts):
        for label, command in paths:
            results[label].append(start(shlex.split(command)))

base = statistics.median(ms for ms, _, _ in results[paths[0][0]])
print("| path | cold start → tools/list, median (ms) | × bare | processes | resident, whole tree (MiB) |")
print("|---|---:|---:|---:|---:|")
for label, _ in paths:
    ms = statistics.median(r[0] for r in results[label])
    processes = statistics.median(r[1] for r in results[label])
    mib = statistics.median(r[2] for r in results[label])
    print(f"| {label} | {ms:.1f} | {ms / base:.1f} | {processes:g} | {mib:.1f} |")
