#!/usr/bin/env python3
"""Writes the Python wheel that carries mcp-serve's binaries (scripts/dist runs it).

    wheel.py --out DIR --name NAME --version V --summary TEXT --license SPDX
             --readme FILE --licence-file FILE --glibc 2.17 --mcp-name io.github.OWNER/NAME BINARY...

The layout is the one maturin writes for `bindings = "bin"`: each binary in
`{name}-{version}.data/scripts/`, which pip, pipx and uv install into the environment's
`bin/` as they are (no Python shim: the entry point is the binary itself). It is written
here rather than by maturin because maturin builds the binary itself, and scripts/dist
packages a binary already built (the glibc-2.17 release, or the test suite's debug build)
instead of paying for a second build. The platform tag says the glibc the binary needs, as
scripts/dist read it from the binary's symbol versions: `manylinux_2_17_x86_64` (and its
legacy alias `manylinux2014_x86_64`) for the release.
"""

import argparse
import base64
import hashlib
import os
import zipfile

# Zip entries carry a fixed time, so the same inputs make the same wheel.
EPOCH = (1980, 1, 1, 0, 0, 0)


def platform_tags(glibc):
    major, minor = (int(part) for part in glibc.split("."))
    tags = [f"manylinux_{major}_{minor}_x86_64"]
    if (major, minor) <= (2, 17):
        tags.append("manylinux2014_x86_64")
    return tags


def metadata(args):
    with open(args.readme, encoding="utf-8") as readme:
        description = readme.read()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {args.name}",
        f"Version: {args.version}",
        f"Summary: {args.summary}",
        f"License: {args.license}",
        "Classifier: Environment :: Console",
        "Classifier: Operating System :: POSIX :: Linux",
        "Classifier: Programming Language :: Rust",
        "Description-Content-Type: text/markdown",
    ]
    # The MCP Registry's ownership marker: the PyPI package names the server it publishes.
    marker = f"\n\n<!-- mcp-name: {args.mcp_name} -->\n"
    return "\n".join(lines) + "\n\n" + description.rstrip("\n") + marker


def main():
    parser = argparse.ArgumentParser()
    for option in ("out", "name", "version", "summary", "license", "readme", "licence-file", "glibc", "mcp-name"):
        parser.add_argument(f"--{option}", required=True)
    parser.add_argument("binaries", nargs="+")
    args = parser.parse_args()

    distribution = args.name.replace("-", "_")
    tags = platform_tags(args.glibc)
    data = f"{distribution}-{args.version}.data/scripts"
    info = f"{distribution}-{args.version}.dist-info"
    wheel = "\n".join(
        ["Wheel-Version: 1.0", "Generator: mcp-serve scripts/dist", "Root-Is-Purelib: false"]
        + [f"Tag: py3-none-{tag}" for tag in tags]
    ) + "\n"
    with open(args.licence_file, "rb") as licence:
        licence_text = licence.read()

    entries = [(f"{data}/{os.path.basename(binary)}", open(binary, "rb").read(), 0o755) for binary in args.binaries]
    entries += [
        (f"{info}/METADATA", metadata(args).encode(), 0o644),
        (f"{info}/WHEEL", wheel.encode(), 0o644),
        (f"{info}/LICENSE", licence_text, 0o644),
    ]
    record = ""
    for path, content, _ in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
        record += f"{path},sha256={digest},{len(content)}\n"
    record += f"{info}/RECORD,,\n"
    entries.append((f"{info}/RECORD", record.encode(), 0o644))

    name = f"{distribution}-{args.version}-py3-none-{'.'.join(tags)}.whl"
    path = os.path.join(args.out, name)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for entry, content, mode in entries:
            member = zipfile.ZipInfo(entry, date_time=EPOCH)
            member.external_attr = (0o100000 | mode) << 16
            member.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(member, content)
    print(path)


if __name__ == "__main__":
    main()
