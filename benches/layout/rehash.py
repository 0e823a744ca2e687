"""Brings the link order up to date with a new build without profiling again: the symbol
hashes in hot-functions.txt change whenever Cargo.lock or the compiler does, and lld skips
names it does not find, so a stale file silently orders almost nothing. Each listed function
is looked up in a release link's map by its path without the hash; every function with that
path is listed, in the old order (a generic function's instantiations share one path, so
this may list a few that did not run: they only move).

Usage: rehash.py ORDER RELEASE_MAP [OUT]   (OUT defaults to ORDER)

The map comes from `MCP_SERVE_NO_LAYOUT=1 cargo rustc --profile dist --bin mcp-serve --
-C link-arg=-Wl,-Map=release.map`; scripts/layout --rehash runs both steps."""
import re
import sys

order, release_map = sys.argv[1:3]
out = sys.argv[3] if len(sys.argv) > 3 else order
hashed = re.compile(r"17h[0-9a-f]{16}E$")
section = re.compile(
    r"\s*[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+\s+\S+:\(\.text\.(?:unlikely\.)?(_ZN\S+)\)$"
)

by_path = {}
for line in open(release_map, errors="replace"):
    match = section.match(line)
    if match:
        size, name = int(match.group(1), 16), match.group(2)
        by_path.setdefault(hashed.sub("", name), []).append((name, size))

names = [line.strip() for line in open(order) if line.strip()]
written, seen, total, missing = [], set(), 0, 0
for name in names:
    found = by_path.get(hashed.sub("", name))
    if not found:
        missing += 1
        continue
    for new, size in found:
        if new not in seen:
            seen.add(new)
            written.append(new)
            total += size
if not written:
    sys.exit("rehash.py: no function matched: is the map from lld?")
with open(out, "w") as file:
    file.write("".join(name + "\n" for name in written))
print(
    f"{len(names)} listed, {missing} no longer in the build; "
    f"{len(written)} release functions ordered, {total / 2**20:.1f} MiB",
    file=sys.stderr,
)
