"""FastMCP's `Client`: `list_tools` and `call_tool` (with `raise_on_error=False`, the result
an agent loop hands back to its model), in the era `FRAMEWORK_MODE` asks for (its default,
`auto`, negotiates 2026-07-28)."""

import asyncio
import pathlib
import sys
from importlib.metadata import version

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import common  # noqa: E402

from fastmcp import Client  # noqa: E402
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport  # noqa: E402


class Adapter:
    def __init__(self, client, tools):
        self.client, self.tools = client, {tool.name: tool for tool in tools}

    def names(self):
        return list(self.tools)

    def schema(self, name):
        return self.tools[name].input_schema

    def strict(self, name):
        return None

    async def invoke(self, name, arguments):
        out = await self.client.call_tool(name, arguments, raise_on_error=False)
        text = "\n".join(block.text for block in out.content if getattr(block, "type", "") == "text")
        content = [block.model_dump(mode="json") for block in out.content]
        return common.Outcome(text, content, out.is_error, out.structured_content)


async def main():
    kind, target, manifest = common.arguments()
    report = common.Report("fastmcp", version("fastmcp"), kind)
    transport = (
        StdioTransport(command=target, args=["--config", manifest])
        if kind == "stdio"
        else StreamableHttpTransport(target)
    )
    try:
        async with Client(transport, mode=common.mode() or "auto") as client:
            report.out["protocolVersion"] = client._session_state.session.protocol_version
            await common.run(report, Adapter(client, await client.list_tools()))
    except Exception as error:  # noqa: BLE001 - the report says what went wrong
        report.fail_rest(f"session failed: {error!r}")
    report.print()


asyncio.run(main())
