"""pydantic-ai: an `MCPToolset` (built on FastMCP's `Client`, in the era `FRAMEWORK_MODE`
asks for), its `get_tools` (the tool definitions an `Agent(toolsets=[…])` sends a model)
and `call_tool`, as the agent's tool manager does with the model's tool call."""

import asyncio
import pathlib
import sys
from importlib.metadata import version

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import common  # noqa: E402

from fastmcp import Client  # noqa: E402
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport  # noqa: E402
from pydantic_ai import RunContext  # noqa: E402
from pydantic_ai.exceptions import ModelRetry  # noqa: E402
from pydantic_ai.mcp import MCPToolset  # noqa: E402
from pydantic_ai.models.test import TestModel  # noqa: E402
from pydantic_ai.usage import RunUsage  # noqa: E402


class Adapter:
    def __init__(self, toolset, tools, context):
        self.toolset, self.tools, self.context = toolset, tools, context

    def names(self):
        return list(self.tools)

    def schema(self, name):
        return self.tools[name].tool_def.parameters_json_schema

    def strict(self, name):
        return None

    async def invoke(self, name, arguments):
        try:
            out = await self.toolset.call_tool(name, arguments, self.context, self.tools[name])
        except ModelRetry as retry:  # what the model is sent back, to correct its call
            return common.Outcome(retry.message, retry, True)
        return common.Outcome(common.text_of(out), out, False)


async def main():
    kind, target, manifest = common.arguments()
    report = common.Report("pydantic-ai", version("pydantic-ai-slim"), kind)
    transport = (
        StdioTransport(command=target, args=["--config", manifest])
        if kind == "stdio"
        else StreamableHttpTransport(target)
    )
    toolset = MCPToolset(Client(transport, mode=common.mode() or "auto"))
    try:
        async with toolset:
            report.out["protocolVersion"] = toolset.client._session_state.session.protocol_version
            context = RunContext(deps=None, model=TestModel(), usage=RunUsage())
            tools = await toolset.get_tools(context)
            await common.run(report, Adapter(toolset, tools, context))
    except Exception as error:  # noqa: BLE001 - the report says what went wrong
        report.fail_rest(f"session failed: {error!r}")
    report.print()


asyncio.run(main())
