"""langchain-mcp-adapters: a `MultiServerMCPClient` session, `load_mcp_tools`, each tool's
OpenAI form (`convert_to_openai_tool`, what `bind_tools` sends a model), and `tool.ainvoke`
with a tool call, as a LangGraph agent's tool node does."""

import asyncio
import itertools
import pathlib
import sys
from importlib.metadata import version

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import common  # noqa: E402

from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from langchain_mcp_adapters.client import MultiServerMCPClient  # noqa: E402
from langchain_mcp_adapters.tools import load_mcp_tools  # noqa: E402


class Adapter:
    def __init__(self, tools):
        self.tools = {tool.name: tool for tool in tools}
        self.ids = itertools.count()

    def names(self):
        return list(self.tools)

    def schema(self, name):
        return convert_to_openai_tool(self.tools[name])["function"]["parameters"]

    def strict(self, name):
        return None

    async def invoke(self, name, arguments):
        call = {"name": name, "args": arguments, "id": f"call-{next(self.ids)}", "type": "tool_call"}
        message = await self.tools[name].ainvoke(call)
        structured = (message.artifact or {}).get("structured_content")
        return common.Outcome(common.text_of(message.content), message, message.status == "error", structured)


async def main():
    kind, target, manifest = common.arguments()
    report = common.Report("langchain-mcp-adapters", version("langchain-mcp-adapters"), kind)
    if kind == "stdio":
        connection = {"transport": "stdio", "command": target, "args": ["--config", manifest]}
    else:
        connection = {"transport": "streamable_http", "url": target}
    try:
        async with MultiServerMCPClient({"catalog": connection}).session("catalog") as session:
            await common.run(report, Adapter(await load_mcp_tools(session)))
    except Exception as error:  # noqa: BLE001 - the report says what went wrong
        report.fail_rest(f"session failed: {error!r}")
    report.print()


asyncio.run(main())
