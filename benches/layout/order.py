"""Writes the link order for scripts/layout: the functions the workload ran (callgrind, on the
`profiling` build, whose symbols have other hashes than the release build's), named as the
release link names them (its map file). A function is matched by its path without the hash
and its size, so that of a generic function's many instantiations only those that ran move.

Usage: order.py 'CALLGRIND_GLOB' PROFILING_BINARY RELEASE_MAP OUT"""
import glob
import re
import subprocess
import sys

callgrind, binary, release_map, out = sys.argv[1:5]
hashed = re.compile(r"17h[0-9a-f]{16}E$")


def key(name):
    return hashed.sub("", name)


sizes = {}
listing = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True, text=True, check=True)
for line in listing.stdout.splitlines():
    fields = line.split()
    if len(fields) == 4 and fields[2] in "tT":
        sizes[fields[3]] = int(fields[1], 16)

ran = {}  # (path, size) -> where it first appears (callgrind groups by file, not by time)
for path in sorted(glob.glob(callgrind)):
    for line in open(path, errors="replace"):
        match = re.match(r"c?fn=\(\d+\) (_ZN\S+)", line)
        if match and match.group(1) in sizes:
            name = match.group(1)
            ran.setdefault((key(name), sizes[name]), len(ran))

ordered = []
section = re.compile(r"\s*[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+\s+\S+:\(\.text\.(?:unlikely\.)?(_ZN\S+)\)$")
for line in open(release_map, errors="replace"):
    match = section.match(line)
    if match:
        size, name = int(match.group(1), 16), match.group(2)
        when = ran.get((key(name), size))
        if when is not None:
            ordered.append((when, size, name))
ordered.sort()
with open(out, "w") as file:
    for _, _, name in ordered:
        file.write(name + "\n")
if not ordered:
    sys.exit("order.py: no function matched: is the map from lld, and the callgrind files from the profiling build?")
total = sum(size for _, size, _ in ordered)
print(f"{len(ran)} functions ran; {len(ordered)} release functions ordered, {total / 2**20:.1f} MiB", file=sys.stderr)
