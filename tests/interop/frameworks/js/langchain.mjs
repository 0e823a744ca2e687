// @langchain/mcp-adapters: a `MultiServerMCPClient`, `getTools()` (DynamicStructuredTools
// whose schema it dereferences and simplifies), each tool's OpenAI form
// (`convertToOpenAITool`, what `bindTools` sends a model), and `tool.invoke` with a tool
// call, as a LangGraph `ToolNode` does (which turns a thrown `ToolException` into the error
// the model reads).
import { createRequire } from "node:module";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import * as common from "./common.mjs";

const version = createRequire(import.meta.url)("@langchain/mcp-adapters/package.json").version;
const target = common.args();
const report = new common.Report("@langchain/mcp-adapters", version, target.kind);
const connection = target.kind === "stdio"
  ? { transport: "stdio", command: target.binary, args: ["--config", target.manifest] }
  : { transport: "http", url: target.url };
const client = new MultiServerMCPClient({ mcpServers: { catalog: connection }, throwOnLoadError: true });

const textOf = (content) =>
  typeof content === "string" ? content
    : Array.isArray(content) ? content.filter((part) => part.type === "text").map((part) => part.text).join("\n")
      : JSON.stringify(content);

try {
  const tools = Object.fromEntries((await client.getTools()).map((tool) => [tool.name, tool]));
  let id = 0;
  await common.run(report, {
    names: () => Object.keys(tools),
    schema: (name) => convertToOpenAITool(tools[name]).function.parameters,
    strict: () => null,
    invoke: async (name, args) => {
      try {
        const message = await tools[name].invoke({ name, args, id: `call-${id++}`, type: "tool_call" });
        return { text: textOf(message.content), value: [message.content, message.artifact], error: false, structured: message.artifact };
      } catch (error) {
        // A ToolNode hands the model either: the server's error, or its own refusal of
        // arguments that do not fit the schema (checked before anything is sent).
        const kind = error?.name === "ToolException" ? error.name : error?.constructor?.name;
        if (kind !== "ToolException" && kind !== "ToolInputParsingException") throw error;
        return { text: `${kind}: ${error.message}`, value: error, error: true };
      }
    },
  });
} catch (error) {
  report.failRest(`session failed: ${error?.stack ?? error}`);
} finally {
  await client.close();
}
report.print();
