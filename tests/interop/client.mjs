// Drives mcp-serve with the official TypeScript client and prints what it saw as one JSON
// document, for the integration tests to assert on.
//
//   node client.mjs MODE stdio BINARY MANIFEST
//   node client.mjs MODE http URL
//
// MODE is the client's version negotiation: legacy (initialize) | auto (2026 if offered).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [mode, kind, ...rest] = process.argv.slice(2);

const client = new Client(
  { name: "mcp-serve-interop", version: "1.0.0" },
  { versionNegotiation: { mode } },
);
const transport =
  kind === "http"
    ? new StreamableHTTPClientTransport(new URL(rest[0]))
    : new StdioClientTransport({ command: rest[0], args: ["--config", rest[1]], stderr: "ignore" });

const report = {};
try {
  await client.connect(transport);
  report.protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
  report.era = client.getProtocolEra() ?? null;
  report.instructions = client.getInstructions() ?? null;
  report.serverName = client.getServerVersion()?.name ?? null;
  const listed = await client.listTools();
  report.tools = listed.tools.map((tool) => tool.name);
  report.search = await client.callTool({ name: "search", arguments: { query: "mug" } });
  report.tooMany = await client.callTool({ name: "search", arguments: { query: "mug", limit: 999 } });
  report.details = await client.callTool({ name: "product-details", arguments: { name: "Mug rack" } });
  report.missing = await client.callTool({ name: "product-details", arguments: { name: "Teapot" } });
  report.card = await client.callTool({ name: "product-card", arguments: { name: "Mug rack" } });
  try {
    await client.callTool({ name: "serch", arguments: {} });
    report.unknownTool = "no error";
  } catch (error) {
    report.unknownTool = { code: error.code ?? null, message: String(error.message) };
  }
} catch (error) {
  report.failure = String(error?.stack ?? error);
} finally {
  await client.close();
}
process.stdout.write(JSON.stringify(report) + "\n");
