// The Vercel AI SDK: `createMCPClient` from @ai-sdk/mcp (its stdio transport, or `http`),
// `client.tools()` (dynamic tools with a JSON schema), each tool's schema as `ai` sends it
// to a provider (`asSchema(...).jsonSchema`), and `execute` then `toModelOutput`, as
// `generateText` runs a tool call. FRAMEWORK_MODE=legacy turns off its 2026 discovery
// (`protocolVersionDiscovery: false`).
import { createRequire } from "node:module";
import { experimental_createMCPClient as createMCPClient } from "@ai-sdk/mcp";
import { Experimental_StdioMCPTransport as StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";
import { asSchema } from "ai";
import * as common from "./common.mjs";

const require = createRequire(import.meta.url);
const version = `${require("ai/package.json").version}+${require("@ai-sdk/mcp/package.json").version}`;
const target = common.args();
const report = new common.Report("ai+@ai-sdk/mcp", version, target.kind);
const transport = target.kind === "stdio"
  ? new StdioMCPTransport({ command: target.binary, args: ["--config", target.manifest] })
  : { type: "http", url: target.url };
let client;
try {
  client = await createMCPClient({ transport, protocolVersionDiscovery: common.mode() !== "legacy" });
  report.out.protocolVersion = client.protocolVersion ?? client.serverInfo?.protocolVersion ?? null;
  const tools = await client.tools();
  let id = 0;
  await common.run(report, {
    names: () => Object.keys(tools),
    schema: async (name) => await asSchema(tools[name].inputSchema).jsonSchema,
    strict: () => null,
    invoke: async (name, args) => {
      const toolCallId = `call-${id++}`;
      const output = await tools[name].execute(args, { toolCallId, messages: [] });
      const model = await tools[name].toModelOutput({ output, toolCallId, input: args });
      const parts = model.type === "content" ? model.value : [];
      const text = parts.filter((part) => part.type === "text").map((part) => part.text).join("\n");
      return { text, value: [output, model], error: Boolean(output?.isError), structured: output?.structuredContent };
    },
  });
} catch (error) {
  report.failRest(`session failed: ${error?.stack ?? error}`);
} finally {
  await client?.close();
}
report.print();
