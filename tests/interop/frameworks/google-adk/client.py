"""google-adk: an `McpToolset`, its `get_tools`, each tool's Gemini function declaration
(`_get_declaration`, what an `LlmAgent` sends Gemini: the input schema as written in
`parametersJsonSchema` by default, or, with `ADK_DISABLE_JSON_SCHEMA_FOR_FUNC_DECL=1`,
converted by `_to_gemini_schema` to Gemini's `Schema`) and `run_async`, as the agent's flow
calls a tool with the model's function call. `FRAMEWORK_MODE=auto` turns on its 2026-era
client (`ADK_ENABLE_MCP_MODERN_PROTOCOL`). A tool error reaches the model as the result's
dump with `isError`."""

import os

import asyncio
import pathlib
import sys
from importlib.metadata import version

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import common  # noqa: E402

if common.mode() == "auto":
    os.environ["ADK_ENABLE_MCP_MODERN_PROTOCOL"] = "1"

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.agents.invocation_context import InvocationContext  # noqa: E402
from google.adk.sessions import InMemorySessionService  # noqa: E402
from google.adk.tools.mcp_tool import McpToolset  # noqa: E402
from google.adk.tools.mcp_tool.mcp_session_manager import (  # noqa: E402
    StdioConnectionParams,
    StreamableHTTPConnectionParams,
)
from google.adk.tools.tool_context import ToolContext  # noqa: E402
from mcp import StdioServerParameters  # noqa: E402


def lowered(value):
    """Gemini's `Schema` spells types `OBJECT`, `STRING`…: read as JSON Schema's."""
    if isinstance(value, dict):
        return {key: (item.lower() if key == "type" and isinstance(item, str) else lowered(item)) for key, item in value.items()}
    if isinstance(value, list):
        return [lowered(item) for item in value]
    return value


class Adapter:
    def __init__(self, tools, context):
        self.tools, self.context = {tool.name: tool for tool in tools}, context

    def names(self):
        return list(self.tools)

    def schema(self, name):
        declaration = self.tools[name]._get_declaration()
        if declaration.parameters_json_schema is not None:
            return declaration.parameters_json_schema
        return lowered(declaration.parameters.model_dump(mode="json", exclude_none=True))

    def strict(self, name):
        return None

    async def invoke(self, name, arguments):
        out = await self.tools[name].run_async(args=arguments, tool_context=ToolContext(self.context))
        error = bool(out.get("isError") or out.get("is_error") or "error" in out)
        text = "\n".join(block.get("text", "") for block in out.get("content", []) if block.get("type") == "text")
        return common.Outcome(text or str(out.get("error", "")), out, error, out.get("structuredContent"))


async def main():
    kind, target, manifest = common.arguments()
    converted = os.environ.get("ADK_DISABLE_JSON_SCHEMA_FOR_FUNC_DECL") == "1"
    report = common.Report("google-adk" + (" (Schema)" if converted else ""), version("google-adk"), kind)
    connection = (
        StdioConnectionParams(server_params=StdioServerParameters(command=target, args=["--config", manifest]))
        if kind == "stdio"
        else StreamableHTTPConnectionParams(url=target)
    )
    toolset = McpToolset(connection_params=connection)
    try:
        sessions = InMemorySessionService()
        session = await sessions.create_session(app_name="frameworks", user_id="test")
        context = InvocationContext(
            session_service=sessions, invocation_id="call", agent=LlmAgent(name="frameworks"), session=session
        )
        await common.run(report, Adapter(await toolset.get_tools(), context))
    except Exception as error:  # noqa: BLE001 - the report says what went wrong
        report.fail_rest(f"session failed: {error!r}")
    finally:
        await toolset.close()
    report.print()


asyncio.run(main())
