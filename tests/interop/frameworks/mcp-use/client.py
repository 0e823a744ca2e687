"""mcp-use: an `MCPClient` from a config dict, its `OpenAIMCPAdapter` (the OpenAI-format
tools it hands an OpenAI client), and the `LangChainAdapter` tools an `MCPAgent` runs,
called with `ainvoke` as the agent's executor does. A tool error reaches the model as the
structured error dict `format_error` makes."""

import asyncio
import pathlib
import sys
from importlib.metadata import version

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import common  # noqa: E402

from mcp_use import MCPClient  # noqa: E402
from mcp_use.agents.adapters import LangChainAdapter, OpenAIMCPAdapter  # noqa: E402


class Adapter:
    def __init__(self, openai_tools, tools):
        self.openai = {tool["function"]["name"]: tool for tool in openai_tools}
        self.tools = {tool.name: tool for tool in tools}

    def names(self):
        return list(self.tools)

    def schema(self, name):
        return self.openai[name]["function"]["parameters"]

    def strict(self, name):
        return None

    async def invoke(self, name, arguments):
        out = await self.tools[name].ainvoke(arguments)
        if isinstance(out, dict) and "error" in out:
            return common.Outcome(str(out.get("details", "")), out, True)
        return common.Outcome(common.text_of(out), out, False)


async def main():
    kind, target, manifest = common.arguments()
    report = common.Report("mcp-use", version("mcp-use"), kind)
    server = {"command": target, "args": ["--config", manifest]} if kind == "stdio" else {"url": target}
    client = MCPClient.from_dict({"mcpServers": {"catalog": server}})
    try:
        await client.create_all_sessions()
        openai_tools = await OpenAIMCPAdapter().create_tools(client)
        tools = await LangChainAdapter().create_tools(client)
        await common.run(report, Adapter(openai_tools, tools))
    except Exception as error:  # noqa: BLE001 - the report says what went wrong
        report.fail_rest(f"session failed: {error!r}")
    finally:
        await client.close_all_sessions()
    report.print()


asyncio.run(main())
