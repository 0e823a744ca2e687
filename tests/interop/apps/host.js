// A web host for one MCP App (io.modelcontextprotocol/ui), built on the official host side:
// ext-apps' AppBridge and the TypeScript SDK's Client. apps_browser.mjs bundles and serves it.
//
//   /?tool=NAME&arguments=JSON&sandbox=ORIGIN&mode=legacy|auto    (mode: version negotiation)
//
// It connects to /mcp on its own origin declaring the UI extension, finds the tool's ui://
// resource, reads it, and shows it the way the spec requires of a web page: through a sandbox
// proxy on another origin (sandbox.js), which loads the View in an inner iframe under a CSP built
// from the resource's declared domains (desktop hosts may skip the proxy and frame the View
// directly; a web page may not). It then calls the tool and hands the View its input and
// result. Calls the View makes go to the server only if the tool's visibility includes "app".
// Everything a test checks is in window.__report.
import {
  AppBridge,
  PostMessageTransport,
  buildAllowAttribute,
  getToolUiResourceUri,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { buildCsp } from "./csp.js";

const UI = "io.modelcontextprotocol/ui";
const MIME = "text/html;profile=mcp-app";
const HOST = { name: "mcp-serve-apps-test-host", version: "1.0.0" };

const report = (window.__report = {
  done: false, // the View was given its tool result, or the host gave up (errors)
  protocolVersion: null, // as negotiated
  serverExtension: null, // the server's capabilities.extensions[UI]
  tools: [], // every tool tools/list returned
  modelTools: [], // those a host may show the model (visibility includes "model")
  toolMeta: null, // the tool's _meta
  resourceUri: null,
  listed: null, // {mimeType, meta} of the ui:// resource's resources/list entry, if any
  resource: null, // {mimeType, length (characters), meta}: the resources/read content item
  csp: null, // the policy the View runs under
  allow: null, // the iframe allow attribute
  initialized: false, // the View sent ui/notifications/initialized
  appInfo: null, // what the View said in ui/initialize
  toolResult: null, // {isError, contentTypes, structuredContent} of the host's own tools/call
  toolResultDelivered: false,
  appCalls: [], // tools/call from the View: {name, pending, refusedBy, isError, text}
  logs: [], // notifications/message the View sent
  messages: [], // ui/message requests the View sent
  sizes: [], // ui/notifications/size-changed
  errors: [],
});
const fail = (error) => {
  report.errors.push(String(error?.stack ?? error));
  report.done = true;
};
window.addEventListener("error", (event) => fail(event.error ?? event.message));
window.addEventListener("unhandledrejection", (event) => fail(event.reason));

const config = new URLSearchParams(location.search);
const toolName = config.get("tool");
const toolArguments = JSON.parse(config.get("arguments") ?? "{}");
const textOf = (result) => (result?.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("\n");
const utf8 = (binary) => new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
// The spec's rule for visibility (default ["model", "app"]).
const visibleTo = (tool, who) => {
  const visibility = tool?._meta?.ui?.visibility;
  return !Array.isArray(visibility) || visibility.includes(who);
};

async function main() {
  const client = new Client(HOST, {
    versionNegotiation: { mode: config.get("mode") ?? "legacy" },
    capabilities: { extensions: { [UI]: { mimeTypes: [MIME] } } },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.origin)));
  report.protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
  const serverCapabilities = client.getServerCapabilities();
  report.serverExtension = serverCapabilities?.extensions?.[UI] ?? null;

  const { tools } = await client.listTools();
  report.tools = tools.map((t) => t.name);
  report.modelTools = tools.filter((t) => visibleTo(t, "model")).map((t) => t.name);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const tool = byName.get(toolName);
  if (!tool) throw new Error(`tools/list has no tool named ${toolName}`);
  report.toolMeta = tool._meta ?? null;
  const uri = (report.resourceUri = getToolUiResourceUri(tool) ?? null);
  if (!uri) throw new Error(`${toolName} has no UI resource (_meta.ui.resourceUri)`);

  // The UI resource: exactly one content item of the MCP App MIME type. Its _meta.ui wins over
  // the resources/list entry's; the spec says hosts check both.
  const listing = (await client.listResources()).resources.find((r) => r.uri === uri) ?? null;
  report.listed = listing && { mimeType: listing.mimeType ?? null, meta: listing._meta ?? null };
  const { contents } = await client.readResource({ uri });
  if (contents.length !== 1) throw new Error(`resources/read ${uri} returned ${contents.length} items, not 1`);
  const [content] = contents;
  if (content.mimeType !== MIME) throw new Error(`${uri} has MIME type ${content.mimeType}, not ${MIME}`);
  const html = "blob" in content ? utf8(atob(content.blob)) : content.text;
  const ui = content._meta?.ui ?? listing?._meta?.ui ?? {};
  report.resource = { mimeType: content.mimeType, length: html.length, meta: content._meta ?? null };
  report.csp = buildCsp(ui.csp); // what sandbox.js applies, from the same declared domains
  report.allow = buildAllowAttribute(ui.permissions);

  // The sandbox proxy's frame: another origin, allowed scripts and its own origin (spec).
  const frame = document.createElement("iframe");
  frame.id = "app";
  frame.title = toolName;
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin");
  if (report.allow) frame.setAttribute("allow", report.allow);
  if (ui.prefersBorder === false) frame.style.border = "none";
  document.body.append(frame);

  const hostCapabilities = {
    openLinks: {},
    serverTools: serverCapabilities.tools,
    serverResources: serverCapabilities.resources,
    logging: {},
  };
  const hostContext = { theme: "light", platform: "web", displayMode: "inline", containerDimensions: { maxHeight: 800 } };
  const bridge = new AppBridge(client, HOST, hostCapabilities, { hostContext });
  bridge.addEventListener("sandboxready", () =>
    bridge.sendSandboxResourceReady({ html, csp: ui.csp, permissions: ui.permissions }).catch(fail),
  );
  bridge.addEventListener("initialized", () => {
    report.initialized = true;
    report.appInfo = bridge.getAppVersion() ?? null;
    deliver().catch(fail);
  });
  bridge.addEventListener("sizechange", ({ width, height }) => {
    report.sizes.push({ width, height });
    if (height != null) frame.style.height = `${height}px`;
  });
  bridge.addEventListener("loggingmessage", (params) => report.logs.push(params));
  bridge.onmessage = async (params) => {
    report.messages.push(params);
    return {};
  };

  // Only after initialized may the host send to the View: its input, then the tool's result.
  async function deliver() {
    await bridge.sendToolInput({ arguments: toolArguments });
    const result = await client.callTool({ name: toolName, arguments: toolArguments });
    report.toolResult = {
      isError: result.isError ?? false,
      contentTypes: (result.content ?? []).map((b) => b.type),
      structuredContent: result.structuredContent ?? null,
    };
    await bridge.sendToolResult(result);
    report.toolResultDelivered = true;
    report.done = true;
  }

  // The proxy's WindowProxy stays the same across its navigation, so connect first, then load.
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));

  // connect() installed a tools/call handler that forwards anything; replace it with one that
  // keeps to the spec: a View may call only tools whose visibility includes "app".
  bridge.oncalltool = async (params, extra) => {
    // refusedBy: "host" (visibility), "server" (a JSON-RPC error), or null (a result).
    const call = { name: params.name, pending: true, refusedBy: null, isError: false, text: "" };
    report.appCalls.push(call);
    try {
      const target = byName.get(params.name);
      if (!target || !visibleTo(target, "app")) {
        call.refusedBy = "host";
        throw new Error(`${params.name} is not a tool this app may call`);
      }
      const result = await client.callTool(params, { signal: extra.mcpReq.signal });
      Object.assign(call, { isError: result.isError ?? false, text: textOf(result) });
      return result;
    } catch (error) {
      Object.assign(call, { refusedBy: call.refusedBy ?? "server", isError: true, text: error.message });
      throw error;
    } finally {
      call.pending = false;
    }
  };

  frame.src = `${config.get("sandbox")}/sandbox.html`;
}

main().catch(fail);
