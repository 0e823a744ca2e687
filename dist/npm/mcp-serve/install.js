// postinstall: replaces bin/mcp-serve, the Node launcher, with a link to the platform
// package's binary (esbuild does the same), so a host that starts `mcp-serve` starts the
// binary itself: no Node process between the host and the server, no Node start-up. If the
// binary does not run here, or the link cannot be made, the launcher stays and still works.
"use strict";
const childProcess = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const { binaryPath } = require("./platform.js");

const { version } = require("./package.json");

try {
  const binary = binaryPath();
  const said = childProcess.execFileSync(binary, ["--version"], { encoding: "utf8" }).trim();
  if (said !== `mcp-serve ${version}`) {
    throw new Error(`${binary} says \`${said}\`, not \`mcp-serve ${version}\``);
  }
  const launcher = path.join(__dirname, "bin", "mcp-serve");
  const staged = `${launcher}.link`;
  fs.rmSync(staged, { force: true });
  fs.symlinkSync(path.relative(path.dirname(launcher), binary), staged);
  fs.renameSync(staged, launcher);
} catch (error) {
  console.error(`mcp-serve: keeping the Node launcher (${error.message})`);
}
