// The View's Content-Security-Policy, built as the MCP Apps spec says (2026-01-26, "Security
// Implications"): from the domains the UI resource declares in `_meta.ui.csp` and nothing else.
// Where the spec's construction and its "restrictive default" differ (connect-src 'self' vs
// 'none' when no domain is declared), this takes the stricter; the spec lets hosts restrict
// further, never loosen.

// A source a server may declare: an origin (`https://x.example:8443`, `https://*.example.com`)
// or a bare scheme (`data:`). Anything else, such as `; script-src *`, is dropped.
const SOURCE = /^(?:[a-z][a-z0-9+.-]*:\/\/(?:\*\.)?[a-z0-9.-]+(?::\d{1,5})?|[a-z][a-z0-9+.-]*:)$/i;

const sources = (list) => (Array.isArray(list) ? list : []).filter((s) => typeof s === "string" && SOURCE.test(s));

/** The policy for `csp` = `{connectDomains, resourceDomains, frameDomains, baseUriDomains}`. */
export function buildCsp(csp) {
  csp ??= {};
  const resources = sources(csp.resourceDomains);
  const list = (...parts) => parts.flat().join(" ");
  const or = (declared, fallback) => (declared.length ? declared.join(" ") : fallback);
  return [
    "default-src 'none'",
    `script-src ${list("'self'", "'unsafe-inline'", resources)}`,
    `style-src ${list("'self'", "'unsafe-inline'", resources)}`,
    `img-src ${list("'self'", "data:", resources)}`,
    `font-src ${list("'self'", resources)}`,
    `media-src ${list("'self'", "data:", resources)}`,
    `connect-src ${or(sources(csp.connectDomains), "'none'")}`,
    `frame-src ${or(sources(csp.frameDomains), "'none'")}`,
    "object-src 'none'",
    `base-uri ${or(sources(csp.baseUriDomains), "'self'")}`,
  ].join("; ");
}

/** The iframe `allow` attribute for `_meta.ui.permissions`: what ext-apps' buildAllowAttribute
 * returns, without importing it (that would pull the whole SDK into the sandbox proxy). */
export function allowAttribute(permissions = {}) {
  const features = [
    ["camera", "camera"],
    ["microphone", "microphone"],
    ["geolocation", "geolocation"],
    ["clipboardWrite", "clipboard-write"],
  ];
  return features.filter(([key]) => permissions?.[key]).map(([, feature]) => feature).join("; ");
}

/** `html` with the policy as its first element, so it governs everything the page loads. */
export function withCsp(html, policy) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy}">`;
  const doctype = /^\s*<!doctype[^>]*>/i.exec(html)?.[0] ?? "";
  return doctype + meta + html.slice(doctype.length);
}
