"""openai-agents: `MCPServerStdio` / `MCPServerStreamableHttp`, `MCPUtil.get_function_tools`
with strict-schema conversion (what an `Agent(mcp_servers=…)` hands the model), then each
`FunctionTool.on_invoke_tool`, as a run does with the model's tool call."""

import asyncio
import json
import pathlib
import sys
from importlib.metadata import version

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import common  # noqa: E402

from agents import Agent, RunContextWrapper  # noqa: E402
from agents.mcp import MCPServerStdio, MCPServerStreamableHttp, MCPUtil  # noqa: E402
from agents.tool_context import ToolContext  # noqa: E402


class Adapter:
    def __init__(self, tools):
        self.tools = {tool.name: tool for tool in tools}

    def names(self):
        return list(self.tools)

    def schema(self, name):
        return self.tools[name].params_json_schema

    def strict(self, name):
        return self.tools[name].strict_json_schema

    async def invoke(self, name, arguments):
        text = json.dumps(arguments)
        context = ToolContext(context=None, tool_name=name, tool_call_id="call", tool_arguments=text)
        out = await self.tools[name].on_invoke_tool(context, text)
        # An `isError` result reaches the model as its text, with no flag.
        return common.Outcome(common.text_of(out), out)


async def main():
    kind, target, manifest = common.arguments()
    report = common.Report("openai-agents", version("openai-agents"), kind)
    if kind == "stdio":
        server = MCPServerStdio({"command": target, "args": ["--config", manifest]}, use_structured_content=True)
    else:
        server = MCPServerStreamableHttp({"url": target}, use_structured_content=True)
    try:
        async with server:
            tools = await MCPUtil.get_function_tools(
                server, True, RunContextWrapper(context=None), Agent(name="frameworks")
            )
            await common.run(report, Adapter(tools))
    except Exception as error:  # noqa: BLE001 - the report says what went wrong
        report.fail_rest(f"session failed: {error!r}")
    report.print()


asyncio.run(main())
