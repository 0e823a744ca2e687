// Connects to mcp-serve over stdio, prints the tools it sees, then waits for the server to
// say the tool list changed and prints the new list. The test edits the manifest between.
//
//   node watch_client.mjs MODE BINARY MANIFEST      MODE: legacy | auto
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [mode, binary, manifest] = process.argv.slice(2);
let announce;
const changed = new Promise((resolve) => (announce = resolve));
const client = new Client(
  { name: "mcp-serve-watch", version: "1.0.0" },
  {
    versionNegotiation: { mode },
    listChanged: {
      tools: {
        debounceMs: 0,
        onChanged: (error, tools) => announce({ error: error?.message ?? null, tools: tools?.map((t) => t.name) ?? null }),
      },
    },
  },
);
const transport = new StdioClientTransport({ command: binary, args: ["--config", manifest, "--watch"], stderr: "ignore" });
const print = (value) => process.stdout.write(JSON.stringify(value) + "\n");
try {
  await client.connect(transport);
  const listed = await client.listTools();
  print({ era: client.getProtocolEra() ?? null, tools: listed.tools.map((t) => t.name) });
  const timeout = new Promise((resolve) => setTimeout(() => resolve({ error: "no list_changed within 20 s", tools: null }), 20000));
  print(await Promise.race([changed, timeout]));
} catch (error) {
  print({ failure: String(error?.stack ?? error) });
} finally {
  await client.close();
}
