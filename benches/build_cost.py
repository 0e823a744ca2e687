#!/usr/bin/env python3
"""What each crate, and each optional feature, costs to build, from a `cargo build --timings`
report (scripts/dist writes one: target/zigbuild/cargo-timings/cargo-timing.html). A
feature's cost is the build time of the crates only it brings in (`cargo tree` with and
without it); on 2 cores, the wall time saved is about half that sum once the build is
wider than the cores.

Usage: build_cost.py TIMINGS_HTML [FEATURE...]   (run from the checkout)"""
import json, re, subprocess, sys

if len(sys.argv) < 2: raise SystemExit(__doc__)
html = open(sys.argv[1], encoding="utf-8").read()
units = json.loads(re.search(r"const UNIT_DATA = (\[.*?\]);\n", html, re.S).group(1))
total = re.search(r"<td>Total time:</td><td>([^<]*)</td>", html)
cost = {}
for unit in units:
    key = (unit["name"], unit["version"])
    cost[key] = cost.get(key, 0.0) + unit["duration"]

def packages(*features):
    out = subprocess.run(
        ["cargo", "tree", "--locked", "-e", "normal,build", "--prefix", "none", "-f", "{p}",
         "--no-default-features", *(["--features", ",".join(features)] if features else [])],
        capture_output=True, text=True, check=True).stdout
    found = set()
    for line in out.splitlines():
        name, version = line.split()[:2]
        found.add((name, version.lstrip("v")))
    return found

print(f"total wall time: {total.group(1) if total else '?'}; crate time summed: {sum(cost.values()):.0f} s")
print("\n| crate | s |\n|---|---:|")
for (name, version), seconds in sorted(cost.items(), key=lambda item: -item[1])[:15]:
    print(f"| {name} {version} | {seconds:.1f} |")
features = sys.argv[2:]
if features:
    lean = packages()
    print("\n| feature | crates only it brings | their build time, summed (s) | share of all |\n|---|---:|---:|---:|")
    every = set()
    for feature in features:
        own = packages(feature) - lean
        every |= own
        seconds = sum(cost.get(key, 0.0) for key in own)
        print(f"| `{feature}` | {len(own)} | {seconds:.0f} | {seconds / sum(cost.values()):.0%} |")
    seconds = sum(cost.get(key, 0.0) for key in every)
    print(f"| all three | {len(every)} | {seconds:.0f} | {seconds / sum(cost.values()):.0%} |")
