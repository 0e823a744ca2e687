// Drives mcp-serve over stdio with the official TypeScript client and prints what it saw as
// one JSON document, for tests/integration to assert on.
//
//   node stdio_client.mjs BINARY MANIFEST MODE      MODE: legacy | auto | pin:VERSION
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [binary, manifest, modeArgument] = process.argv.slice(2);
const mode = modeArgument.startsWith("pin:") ? { pin: modeArgument.slice(4) } : modeArgument;

const client = new Client(
  { name: "mcp-serve-interop", version: "1.0.0" },
  { versionNegotiation: { mode } },
);
const transport = new StdioClientTransport({
  command: binary,
  args: ["--config", manifest],
  stderr: "ignore",
});

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
