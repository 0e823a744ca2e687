// Where the platform package's binary is: `@mcp-serve/<platform>-<arch>`, installed by npm
// as this package's optional dependency (only the one whose `os` and `cpu` match).
"use strict";
const path = require("node:path");

const PACKAGE = `@mcp-serve/${process.platform}-${process.arch}`;

function binaryPath() {
  let manifest;
  try {
    manifest = require.resolve(`${PACKAGE}/package.json`);
  } catch {
    throw new Error(
      `${PACKAGE} is not installed: mcp-serve has no build for ${process.platform} ${process.arch}, ` +
        "or npm was asked to leave optional dependencies out (--omit=optional)",
    );
  }
  return path.join(path.dirname(manifest), "bin", "mcp-serve");
}

module.exports = { PACKAGE, binaryPath };
