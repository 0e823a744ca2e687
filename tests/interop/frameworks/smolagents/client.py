"""smolagents with mcpadapt: `ToolCollection.from_mcp` (mcpadapt's smolagents adapter),
each tool's JSON form (`get_tool_json_schema`, what a `ToolCallingAgent` sends a model),
and calling the tool as an agent step does. mcpadapt names tools with `_` for `-`, hands on
an `isError` result as plain text, and returns only a result's first content block (an
image as a PIL image)."""

import asyncio
import io
import pathlib
import sys
from importlib.metadata import version

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import common  # noqa: E402

from mcp import StdioServerParameters  # noqa: E402
from PIL import Image  # noqa: E402
from smolagents import ToolCollection  # noqa: E402
from smolagents.models import get_tool_json_schema  # noqa: E402


class Adapter:
    def __init__(self, tools):
        self.tools = {tool.name.replace("_", "-"): tool for tool in tools}

    def names(self):
        return list(self.tools)

    def schema(self, name):
        return get_tool_json_schema(self.tools[name])["function"]["parameters"]

    def strict(self, name):
        return None

    async def invoke(self, name, arguments):
        out = self.tools[name](**arguments)
        if isinstance(out, Image.Image):
            # The picture intact: the same pixels as the shipped file.
            same = out.tobytes() == Image.open(io.BytesIO(common.PNG)).tobytes()
            return common.Outcome(str(out), common.PNG if same else out)
        return common.Outcome(out if isinstance(out, str) else str(out), out)


async def main():
    kind, target, manifest = common.arguments()
    report = common.Report("smolagents+mcpadapt", f"{version('smolagents')}+{version('mcpadapt')}", kind)
    parameters = (
        StdioServerParameters(command=target, args=["--config", manifest])
        if kind == "stdio"
        else {"url": target, "transport": "streamable-http"}
    )
    try:
        with ToolCollection.from_mcp(parameters, trust_remote_code=True) as collection:
            await common.run(report, Adapter(collection.tools))
    except Exception as error:  # noqa: BLE001 - the report says what went wrong
        report.fail_rest(f"session failed: {error!r}")
    report.print()


asyncio.run(main())
