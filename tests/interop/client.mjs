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
  { versionNegotiation: { mode }, capabilities: { elicitation: {} } },
);
// The user's answer to a confirmation: declined first, then accepted. Each question is
// recorded, whichever way it reached the client (a request, or input_required).
let answer = "decline";
const asked = [];
client.setRequestHandler("elicitation/create", async (request) => {
  asked.push(request.params.message);
  return { action: answer };
});
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
  report.prompts = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
  report.prompt = await client.getPrompt({
    name: "compare-products",
    arguments: { first: "Mug rack", second: "Travel mug" },
  });
  report.completion = await client.complete({
    ref: { type: "ref/prompt", name: "compare-products" },
    argument: { name: "first", value: "mu" },
  });
  report.resources = (await client.listResources()).resources.map((resource) => resource.uri);
  report.catalog = await client.readResource({ uri: "catalog://catalog.tsv" });
  report.templates = (await client.listResourceTemplates()).resourceTemplates.map(
    (template) => template.uriTemplate,
  );
  report.picture = await client.readResource({ uri: "catalog://products/mug-rack.png" });
  report.declined = await client.callTool({ name: "clear-catalog", arguments: {} });
  report.searchAfterDecline = await client.callTool({ name: "search", arguments: { query: "mug" } });
  answer = "accept";
  report.accepted = await client.callTool({ name: "clear-catalog", arguments: {} });
  report.searchAfterAccept = await client.callTool({ name: "search", arguments: { query: "mug" } });
  report.asked = asked;
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
