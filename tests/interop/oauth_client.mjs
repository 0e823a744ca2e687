// Drives mcp-serve as an OAuth resource server with the official TypeScript client's own
// OAuth flow: on the first 401 it reads the challenge, fetches the protected resource
// metadata, discovers the issuer's metadata, gets a token (client credentials) and retries;
// on a 403 insufficient_scope it steps up to the scopes the challenge names. Prints what it
// saw as one JSON document.
//
//   node oauth_client.mjs MODE URL ISSUER CLIENT_ID CLIENT_SECRET
//
// MODE is the client's version negotiation: legacy (initialize) | auto (2026 if offered).
import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [mode, url, issuer, clientId, clientSecret] = process.argv.slice(2);

const provider = new ClientCredentialsProvider({
  clientId,
  clientSecret,
  scope: "tickets:read",
  expectedIssuer: issuer,
});
const client = new Client(
  { name: "mcp-serve-oauth-interop", version: "1.0.0" },
  { versionNegotiation: { mode } },
);
const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });

const text = (result) => result.content?.[0]?.text ?? JSON.stringify(result);
const report = {};
try {
  await client.connect(transport);
  report.era = client.getProtocolEra() ?? null;
  report.firstScope = provider.tokens()?.scope ?? null;
  report.tools = (await client.listTools()).tools.map((tool) => tool.name);
  report.whoami = text(await client.callTool({ name: "whoami", arguments: { note: "hello" } }));
  report.read = text(await client.callTool({ name: "read-tickets", arguments: {} }));
  // Needs tickets:write, which the first token lacks: 403 insufficient_scope, then step-up.
  report.write = text(await client.callTool({ name: "write-ticket", arguments: {} }));
  report.steppedUpScope = provider.tokens()?.scope ?? null;
  report.toolsAfter = (await client.listTools()).tools.map((tool) => tool.name);
} catch (error) {
  report.failure = String(error?.stack ?? error);
} finally {
  await client.close();
}
process.stdout.write(JSON.stringify(report) + "\n");
