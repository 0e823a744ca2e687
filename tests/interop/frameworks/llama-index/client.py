"""llama-index-tools-mcp: `BasicMCPClient`, `McpToolSpec.to_tool_list_async` (FunctionTools
with a pydantic model per input schema), each tool's OpenAI form (`to_openai_tool`, what a
function-calling LLM gets), and `FunctionTool.acall`, as an agent workflow calls a tool.
`BasicMCPClient` opens a session per request; `acall` fills every field default (`None` for
an optional argument) before calling."""

import asyncio
import pathlib
import sys
from importlib.metadata import version

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import common  # noqa: E402

from llama_index.tools.mcp import BasicMCPClient, McpToolSpec  # noqa: E402


class Adapter:
    def __init__(self, tools):
        self.tools = {tool.metadata.name: tool for tool in tools}

    def names(self):
        return list(self.tools)

    def schema(self, name):
        return self.tools[name].metadata.to_openai_tool()["function"]["parameters"]

    def strict(self, name):
        return None

    async def invoke(self, name, arguments):
        out = await self.tools[name].acall(**arguments)
        raw = out.raw_output
        return common.Outcome(
            out.content, [out.blocks, raw], getattr(raw, "isError", None), getattr(raw, "structuredContent", None)
        )


async def main():
    kind, target, manifest = common.arguments()
    report = common.Report("llama-index-tools-mcp", version("llama-index-tools-mcp"), kind)
    client = BasicMCPClient(target, args=["--config", manifest]) if kind == "stdio" else BasicMCPClient(target)
    try:
        tools = await McpToolSpec(client=client).to_tool_list_async()
        await common.run(report, Adapter(tools))
    except Exception as error:  # noqa: BLE001 - the report says what went wrong
        report.fail_rest(f"session failed: {error!r}")
    report.print()


asyncio.run(main())
