// What every framework script checks (the Node.js twin of ../common.py; see its docstring):
// started as `node client.mjs stdio BINARY MANIFEST` or `node client.mjs http URL`, it
// prints one line `REPORT {json}`. FRAMEWORK_MODE asks a framework that speaks both eras
// for `legacy` or `auto`.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(here, "../../../..");
export const PNG = readFileSync(path.join(REPO, "examples/products/mug-rack.png"));
export const TOOLS = ["search", "product-details", "product-card", "ping", "picture", "list-files", "tag"];
export const SEARCH = "Travel mug\nMug rack";
export const TOO_MANY = "limit: 999 is greater than the maximum of 50";
export const DETAILS = { name: "Mug rack", price: 36 };
export const TAG = "label=x color=red";
export const CHECKS = [
  "list", "properties", "call", "rejected", "after-rejected", "structured", "image",
  "content", "no-args", "null-optional", "ref-schema",
];

export function args() {
  const [kind, ...rest] = process.argv.slice(2);
  return kind === "stdio" ? { kind, binary: rest[0], manifest: rest[1] } : { kind, url: rest[0] };
}

export const mode = () => process.env.FRAMEWORK_MODE || null;

export class Report {
  constructor(framework, version, transport) {
    this.out = { framework, version, transport, protocolVersion: null, checks: {} };
  }
  record(name, ok, detail) {
    this.out.checks[name] = { ok: Boolean(ok), detail: String(detail ?? "").slice(0, 2000) };
  }
  async check(name, run) {
    try {
      const [ok, detail] = await run();
      this.record(name, ok, detail);
    } catch (error) {
      this.record(name, false, `${error?.name}: ${error?.message}`);
    }
  }
  failRest(detail) {
    for (const name of CHECKS) this.out.checks[name] ??= { ok: false, detail };
  }
  print() {
    this.failRest("not run");
    process.stdout.write(`\nREPORT ${JSON.stringify(this.out)}\n`);
  }
}

const isObject = (value) => value !== null && typeof value === "object";

export const hasProperties = (schema) =>
  isObject(schema) && schema.type === "object" && isObject(schema.properties);

export function pngIn(value) {
  if (value instanceof Uint8Array) return Buffer.from(value).equals(PNG);
  if (typeof value === "string") {
    const data = value.startsWith("data:") ? value.split(",", 2)[1] : value;
    return /^[A-Za-z0-9+/=]+$/.test(data) && Buffer.from(data, "base64").equals(PNG);
  }
  if (Array.isArray(value)) return value.some(pngIn);
  if (isObject(value)) return Object.values(value).some(pngIn);
  return false;
}

export function detailsIn(value) {
  if (typeof value === "string") {
    try { return detailsIn(JSON.parse(value)); } catch { return false; }
  }
  if (Array.isArray(value)) return value.some(detailsIn);
  if (isObject(value)) {
    if (value.name === DETAILS.name && value.price === DETAILS.price) return true;
    return Object.values(value).some(detailsIn);
  }
  return false;
}

const show = (value) => { try { return JSON.stringify(value); } catch { return String(value); } };

// Every check through `adapter`: names(), schema(name), strict(name), invoke(name, args) ->
// { text, value, error (true/false, or null when the framework has no flag), structured }.
export async function run(report, adapter) {
  const call = async () => {
    const out = await adapter.invoke("search", { query: "mug" });
    return [out.error !== true && out.text.trim() === SEARCH, show(out)];
  };
  const steps = [
    ["list", async () => {
      const names = await adapter.names();
      return [show([...names].sort()) === show([...TOOLS].sort()), show(names)];
    }],
    ["properties", async () => {
      const bad = [];
      for (const name of await adapter.names()) if (!hasProperties(await adapter.schema(name))) bad.push(name);
      return [bad.length === 0, bad.length ? show(bad) : "every converted schema has `properties`"];
    }],
    ["call", call],
    ["rejected", async () => {
      const out = await adapter.invoke("search", { query: "mug", limit: 999 });
      return [out.error !== false && out.text.includes(TOO_MANY), show(out)];
    }],
    ["after-rejected", call],
    ["structured", async () => {
      const out = await adapter.invoke("product-details", { name: "Mug rack" });
      return [detailsIn(out.structured ?? out.value), show(out)];
    }],
    ["image", async () => {
      const out = await adapter.invoke("picture", {});
      return [out.error !== true && pngIn(out.value), show(out).slice(0, 300)];
    }],
    ["content", async () => {
      const out = await adapter.invoke("product-card", { name: "Mug rack" });
      return [out.error !== true && pngIn(out.value), show(out).slice(0, 300)];
    }],
    ["no-args", async () => {
      const out = await adapter.invoke("ping", {});
      return [out.error !== true && out.text.trim() === "pong", show(out)];
    }],
    ["null-optional", async () => {
      const nulls = await adapter.invoke("list-files", { path: null, all: null, sort: null });
      const plain = await adapter.invoke("list-files", {});
      return [nulls.error !== true && nulls.text === plain.text && nulls.text.includes("tools.toml"), show(nulls)];
    }],
    ["ref-schema", async () => {
      const schema = await adapter.schema("tag");
      const text = show(schema);
      const strict = await adapter.strict("tag");
      const out = await adapter.invoke("tag", { label: "x", color: "red" });
      const colors = show(schema?.properties?.color?.enum) === show(["red", "green", "blue"]);
      const ok = !text.includes("$ref") && colors && strict !== false && out.text.trim() === TAG;
      return [ok, `strict=${strict} ${text} -> ${show(out)}`];
    }],
  ];
  for (const [name, step] of steps) await report.check(name, step);
}
