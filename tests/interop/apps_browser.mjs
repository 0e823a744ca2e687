// Renders one tool's MCP App (io.modelcontextprotocol/ui) in headless Chromium through a real
// web host (apps/host.js: ext-apps' AppBridge and the SDK's Client) and prints what happened as
// one JSON line, for the integration tests to assert on.
//
//   node apps_browser.mjs --mcp URL --tool NAME --out DIR [--arguments JSON] [--click ID]...
//       [--wait-for SELECTOR] [--allowed-port PORT] [--mode legacy|auto] [--timeout MS]
//
// It serves on 127.0.0.1, on ports of its own: the host page, with /mcp proxied to URL (SSE
// streamed through); the sandbox proxy, on a second origin as the spec requires; a "forbidden"
// origin and an "allowed" one (on PORT, to match a manifest's connect-domains), which count
// the requests reaching them. `{forbidden}` and `{allowed}` in JSON become those origins.
// It waits until the View has its tool result and nothing in it is aria-busy, clicks each ID
// (waiting for the tools/call it makes to come back and the View to settle), and saves a
// screenshot of the app to DIR/card.png. --mode is the host client's version negotiation.
//
// Exit status: 0 and the report; 1 when the harness failed (the report still comes, with
// `failure`, and DIR/page.png); 2 on bad usage; 77 when /usr/bin/chromium is not installed.
import { createServer, request as httpRequest } from "node:http";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const CHROMIUM = "/usr/bin/chromium";
const here = dirname(fileURLToPath(import.meta.url));

let options;
try {
  ({ values: options } = parseArgs({
    options: {
      mcp: { type: "string" },
      tool: { type: "string" },
      arguments: { type: "string", default: "{}" },
      out: { type: "string" },
      click: { type: "string", multiple: true, default: [] },
      "wait-for": { type: "string" },
      "allowed-port": { type: "string", default: "0" },
      mode: { type: "string", default: "legacy" },
      timeout: { type: "string", default: "30000" },
    },
  }));
  if (!options.mcp || !options.tool || !options.out) throw new Error("`--mcp`, `--tool` and `--out` are required");
  JSON.parse(options.arguments);
} catch (error) {
  console.error(`error: ${error.message}\n\nusage: node apps_browser.mjs --mcp URL --tool NAME --out DIR [--arguments JSON] [--click ID]...`);
  process.exit(2);
}
if (!existsSync(CHROMIUM)) {
  console.log(`skipped: chromium not installed (no ${CHROMIUM}; Debian: apt-get install chromium)`);
  process.exit(77);
}
const timeout = Number(options.timeout);
const failure = (message) => Object.assign(new Error(message), { harness: true });
const pathOf = (req) => new URL(req.url, "http://localhost").pathname;

// --- Servers -----------------------------------------------------------------------------

/** An HTTP server on 127.0.0.1 (port 0: any free one), with its origin. */
function listen(handler, port = 0) {
  const server = createServer(handler);
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(Number(port), "127.0.0.1", () =>
      resolve({ server, origin: `http://127.0.0.1:${server.address().port}` }),
    );
  });
}

/** A page that only loads one bundled module. */
function page(res, script, style) {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  res.end(
    `<!DOCTYPE html><html><head><meta charset="utf-8"><title>MCP Apps test host</title>` +
      `<link rel="icon" href="data:,"><style>${style}</style></head>` +
      `<body><script type="module" src="/${script}"></script></body></html>`,
  );
}
const HOST_STYLE =
  "body{margin:0;padding:16px;font:14px system-ui,sans-serif}" +
  "#app{display:block;width:520px;height:160px;border:1px solid #d0d7de;border-radius:8px}";
const SANDBOX_STYLE = "html,body{margin:0;height:100%}iframe{display:block;border:0;width:100%;height:100%}";

function script(res, path) {
  res.writeHead(200, { "content-type": "text/javascript", "cache-control": "no-store" });
  res.end(readFileSync(path));
}

/** /mcp → the server under test: method, headers (Host rewritten, Origin kept) and body go
 * up; the answer streams down as it is written, so SSE works. */
function proxy(req, res, target) {
  const headers = { ...req.headers, host: target.host };
  for (const hop of ["connection", "keep-alive", "proxy-connection", "upgrade"]) delete headers[hop];
  const url = new URL(target.pathname + new URL(req.url, target).search, target);
  const upstream = httpRequest(url, { method: req.method, headers }, (answer) => {
    res.writeHead(answer.statusCode, answer.headers);
    answer.pipe(res);
  });
  upstream.on("error", (error) => (res.headersSent ? res.destroy() : res.writeHead(502).end(String(error))));
  res.on("close", () => upstream.destroy()); // the browser hung up: so do we, upstream
  req.pipe(upstream);
}

/** An origin that counts the requests reaching it, and answers any origin (CORS). */
async function counter(body, port) {
  const hits = { count: 0 };
  const served = await listen((req, res) => {
    hits.count += 1;
    res.writeHead(200, { "access-control-allow-origin": "*", "content-type": "text/plain" });
    res.end(body);
  }, port);
  return { ...served, hits };
}

// --- The run -----------------------------------------------------------------------------

async function bundle(outdir) {
  const { build } = await import("esbuild");
  await build({
    entryPoints: [join(here, "apps/host.js"), join(here, "apps/sandbox.js")],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    outdir,
    logLevel: "warning",
  });
}

async function run(servers, report) {
  const target = new URL(options.mcp);
  const bundled = join(options.out, "bundle");
  mkdirSync(bundled, { recursive: true });
  await bundle(bundled);

  const forbidden = await counter("forbidden origin reached", 0);
  const allowed = await counter("allowed origin reached", options["allowed-port"]);
  const host = await listen((req, res) => {
    const path = pathOf(req);
    if (path === "/mcp" || path.startsWith("/mcp/")) return proxy(req, res, target);
    if (path === "/") return page(res, "host.js", HOST_STYLE);
    if (path === "/host.js") return script(res, join(bundled, "host.js"));
    res.writeHead(404).end();
  });
  const sandbox = await listen((req, res) => {
    if (pathOf(req) === "/sandbox.html") return page(res, "sandbox.js", SANDBOX_STYLE);
    if (pathOf(req) === "/sandbox.js") return script(res, join(bundled, "sandbox.js"));
    res.writeHead(404).end();
  });
  servers.push(forbidden.server, allowed.server, host.server, sandbox.server);
  report.forbiddenOrigin = forbidden.origin;
  report.allowedOrigin = allowed.origin;
  const toolArguments = options.arguments
    .replaceAll("{forbidden}", forbidden.origin)
    .replaceAll("{allowed}", allowed.origin);

  const { chromium } = await import("playwright-core");
  // Each launch gets a fresh, empty --user-data-dir from Playwright.
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  servers.push(browser);
  const tab = await browser.newPage();
  const messages = (report.console = []);
  tab.on("console", (message) => {
    // AppBridge logs every message it relays at debug level; keep what tells of a problem.
    if (message.type() !== "error" && message.type() !== "warning") return;
    messages.push({ type: message.type(), text: message.text().slice(0, 600), url: message.location().url.slice(0, 200) });
  });
  tab.on("pageerror", (error) => messages.push({ type: "pageerror", text: String(error).slice(0, 600) }));

  const query = new URLSearchParams({ tool: options.tool, arguments: toolArguments, sandbox: sandbox.origin, mode: options.mode });
  const view = tab.frameLocator("#app").frameLocator("iframe");
  try {
    await tab.goto(`${host.origin}/?${query}`, { timeout });
    await drive(tab, view, report);
  } catch (error) {
    await tab.screenshot({ path: join(options.out, "page.png") }).catch(() => {});
    throw error;
  } finally {
    report.viewText ??= await view.locator("body").innerText({ timeout: 1000 }).catch(() => null);
    Object.assign(report, await hostReport(tab).catch(() => ({})));
    report.forbiddenHits = forbidden.hits.count;
    report.allowedHits = allowed.hits.count;
    report.cspViolations = messages.filter((m) => /Content Security Policy/i.test(m.text)).map((m) => m.text);
  }
}

const hostReport = (tab) => tab.evaluate(() => window.__report);

/** Waits for the View, clicks, takes the screenshot. */
async function drive(tab, view, report) {
  try {
    await tab.waitForFunction(() => window.__report?.done, null, { timeout });
  } catch {
    throw failure("the host never finished: no tool result reached the View");
  }
  if ((await hostReport(tab)).errors.length) throw failure("the host failed (see `errors`)");

  const settled = () => view.locator('[aria-busy="true"]').first().waitFor({ state: "detached", timeout });
  await settled();
  if (options["wait-for"]) await view.locator(options["wait-for"]).first().waitFor({ timeout });

  report.clicked = [];
  for (const target of options.click) {
    const selector = /^[\w-]+$/.test(target) ? `#${target}` : target;
    const calls = (await hostReport(tab)).appCalls.length;
    const button = view.locator(selector);
    await button.waitFor({ timeout });
    if (await button.isDisabled()) throw failure(`\`${selector}\` is disabled in the View`);
    await button.click({ timeout });
    const answered = (n) => window.__report.appCalls.length > n && window.__report.appCalls.every((c) => !c.pending);
    await tab.waitForFunction(answered, calls, { timeout }).catch(() => {
      throw failure(`clicking \`${selector}\` made no tools/call that came back`);
    });
    await settled();
    report.clicked.push(selector);
  }

  report.screenshot = join(options.out, "card.png");
  const png = await tab.locator("#app").screenshot({ path: report.screenshot, timeout });
  report.pixels = await pixels(tab, png);
  report.viewText = await view.locator("body").innerText({ timeout });
}

/** What the screenshot holds, decoded by the browser: its size, how many of its pixels are
 * not white, and how many colours it has (a blank frame has one). */
async function pixels(tab, png) {
  const url = `data:image/png;base64,${png.toString("base64")}`;
  return tab.evaluate(async (source) => {
    const image = new Image();
    image.src = source;
    await image.decode();
    const canvas = document.createElement("canvas");
    canvas.width = image.width;
    canvas.height = image.height;
    const context = canvas.getContext("2d");
    context.drawImage(image, 0, 0);
    const { data } = context.getImageData(0, 0, image.width, image.height);
    const colours = new Set();
    let nonWhite = 0;
    for (let at = 0; at < data.length; at += 4) {
      const [r, g, b] = [data[at], data[at + 1], data[at + 2]];
      if (r < 250 || g < 250 || b < 250) nonWhite += 1;
      colours.add((r << 16) | (g << 8) | b);
    }
    return { width: image.width, height: image.height, nonWhite, colours: colours.size };
  }, url);
}

const servers = [];
const report = {};
let status = 0;
try {
  await run(servers, report);
} catch (error) {
  status = 1;
  // Playwright colours its call logs: no terminal escapes in the report.
  report.failure = (error.harness ? error.message : String(error?.stack ?? error)).replace(/\x1b\[[0-9;]*m/g, "");
  console.error(`error: ${report.failure}`);
} finally {
  for (const server of servers.reverse()) {
    server.closeAllConnections?.();
    await server.close();
  }
}
console.log(JSON.stringify(report));
process.exit(status);
