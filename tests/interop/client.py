"""Drives mcp-serve with the official Python SDK client (`mcp`, pinned in
requirements.txt) and prints what it saw as one JSON document, for the integration tests.

    python client.py MODE stdio COMMAND [ARG...] MANIFEST   (runs COMMAND ARG... --config MANIFEST)
    python client.py MODE http URL

MODE is the client's version negotiation: legacy (initialize) | auto (2026 if offered).
With SERVER_ENV set (a JSON object), the stdio server also gets those variables, as a
host sets a bundle's `mcp_config.env`.
"""

import asyncio
import json
import os
import sys

import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def dump(result):
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main():
    mode, kind, *rest = sys.argv[1:]
    server = (
        rest[0]
        if kind == "http"
        else StdioServerParameters(
            command=rest[0],
            args=[*rest[1:-1], "--config", rest[-1]],
            env=json.loads(os.environ["SERVER_ENV"]) if "SERVER_ENV" in os.environ else None,
        )
    )
    answer = {"action": "decline"}
    asked = []

    async def elicit(_context, params):
        asked.append(params.message)
        return types.ElicitResult(action=answer["action"])

    report = {}
    try:
        async with Client(server, mode=mode, elicitation_callback=elicit, cache=None) as client:
            report["protocolVersion"] = client.protocol_version
            report["tools"] = [tool.name for tool in (await client.list_tools()).tools]
            report["search"] = dump(await client.call_tool("search", {"query": "mug"}))
            report["prompts"] = [prompt.name for prompt in (await client.list_prompts()).prompts]
            report["prompt"] = dump(
                await client.get_prompt("compare-products", {"first": "Mug rack", "second": "Travel mug"})
            )
            report["completion"] = dump(
                await client.complete(
                    types.PromptReference(type="ref/prompt", name="compare-products"),
                    {"name": "first", "value": "mu"},
                )
            )
            report["resources"] = [str(r.uri) for r in (await client.list_resources()).resources]
            report["catalog"] = dump(await client.read_resource("catalog://catalog.tsv"))
            templates = (await client.list_resource_templates()).resource_templates
            report["templates"] = [template.uri_template for template in templates]
            report["picture"] = dump(await client.read_resource("catalog://products/mug-rack.png"))
            report["declined"] = dump(await client.call_tool("clear-catalog", {}))
            report["searchAfterDecline"] = dump(await client.call_tool("search", {"query": "mug"}))
            answer["action"] = "accept"
            report["accepted"] = dump(await client.call_tool("clear-catalog", {}))
            report["searchAfterAccept"] = dump(await client.call_tool("search", {"query": "mug"}))
            report["asked"] = asked
    except Exception as error:  # the report says what went wrong
        import traceback

        report["failure"] = "".join(traceback.format_exception(error))
    print(json.dumps(report))


asyncio.run(main())
