// The sandbox proxy of the MCP Apps spec ("Sandbox proxy"), as a web host must run it: served
// from an origin other than the host's, in an iframe the host sandboxes with allow-scripts and
// allow-same-origin. It tells the host it is ready, receives the View's HTML with the declared
// CSP domains and permissions, loads the View in an inner iframe with an opaque origin under
// that policy, and relays every other JSON-RPC message between the host and the View.
import { allowAttribute, buildCsp, withCsp } from "./csp.js";

const READY = "ui/notifications/sandbox-proxy-ready";
const RESOURCE = "ui/notifications/sandbox-resource-ready";
// The embedding page's origin (the referrer of this frame): the only one we talk to.
const hostOrigin = document.referrer && new URL(document.referrer).origin;
if (!hostOrigin || window.parent === window) throw new Error("sandbox.html must be framed by the host page");

const view = document.createElement("iframe");
view.title = "MCP App";

function load({ html, sandbox, csp, permissions }) {
  // Never same-origin with this proxy, whatever the host asks.
  const flags = (sandbox ?? "allow-scripts").split(/\s+/).filter((f) => f && f !== "allow-same-origin");
  view.setAttribute("sandbox", flags.join(" "));
  const allow = allowAttribute(permissions);
  if (allow) view.setAttribute("allow", allow);
  view.srcdoc = withCsp(html, buildCsp(csp));
  document.body.append(view);
}

window.addEventListener("message", (event) => {
  const message = event.data;
  const isSandboxMethod = typeof message?.method === "string" && message.method.startsWith("ui/notifications/sandbox-");
  if (event.source === window.parent && event.origin === hostOrigin) {
    if (message?.method === RESOURCE) load(message.params);
    else if (!isSandboxMethod) view.contentWindow?.postMessage(message, "*");
  } else if (event.source !== null && event.source === view.contentWindow) {
    if (!isSandboxMethod) window.parent.postMessage(message, hostOrigin);
  }
});

window.parent.postMessage({ jsonrpc: "2.0", method: READY, params: {} }, hostOrigin);
