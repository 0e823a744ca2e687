"""What every framework script checks, and the report it prints for tests/frameworks.rs.

Each script drives mcp-serve through one agent framework's own MCP adapter, the way an
agent would but without a model: list the tools, convert them to the framework's tool
type, and call them through that tool type. It is started as

    python client.py stdio BINARY MANIFEST
    python client.py http URL

and prints one JSON object on a line starting `REPORT `: {"framework", "version",
"transport", "protocolVersion", "checks": {name: {"ok": bool, "detail": str}}}. A check that raises is recorded as failed with the error,
and the script goes on with the next one (the session must still be usable).
"""

import base64
import json
import os
import pathlib
import sys
import traceback

# No framework phones home from a test: their telemetry and tracing off (mcp-use's PostHog
# and Scarf events, openai-agents' trace export, LangSmith, Hugging Face Hub). Set before
# the frameworks are imported; tests/frameworks.rs sets them too.
QUIET = {
    "MCP_USE_ANONYMIZED_TELEMETRY": "false",
    "SCARF_NO_ANALYTICS": "true",
    "DO_NOT_TRACK": "1",
    "OPENAI_AGENTS_DISABLE_TRACING": "1",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGSMITH_TRACING": "false",
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "ANONYMIZED_TELEMETRY": "false",
}
for _name, _value in QUIET.items():
    os.environ[_name] = _value

REPO = pathlib.Path(__file__).resolve().parents[3]
PNG = (REPO / "examples/products/mug-rack.png").read_bytes()

TOOLS = ["search", "product-details", "product-card", "ping", "picture", "list-files", "tag"]
SEARCH = "Travel mug\nMug rack"
TOO_MANY = "limit: 999 is greater than the maximum of 50"
DETAILS = {"name": "Mug rack", "price": 36}
TAG = "label=x color=red"

# Every check, in the order scripts run them.
CHECKS = [
    "list",  # the seven tools, by name (in any order)
    "properties",  # every converted schema is an object schema with `properties`
    "call",  # `search` with arguments: its text
    "rejected",  # `limit = 999` arrives as a tool error naming the violation
    "after-rejected",  # the same session then answers a good call
    "structured",  # `product-details`: the structured result {name, price}
    "image",  # `picture`: one image block, its bytes intact
    "content",  # `product-card`: image, audio and an embedded resource; the picture intact
    "no-args",  # `ping`, which takes no arguments
    "null-optional",  # `list-files` with `null` for every optional argument
    "ref-schema",  # `tag`: its `$ref`s inlined in the converted schema (strict where the converter is)
]


def mode():
    """The protocol era a framework that speaks both is asked for: `legacy` (the 2025
    `initialize` handshake) or `auto` (2026-07-28 when the server offers it), from
    `FRAMEWORK_MODE`; None when not asked."""
    return os.environ.get("FRAMEWORK_MODE") or None


def arguments():
    """The transport and its target: ("stdio", binary, manifest) or ("http", url, None)."""
    kind, *rest = sys.argv[1:]
    if kind == "stdio":
        binary, manifest = rest
        return kind, binary, manifest
    (url,) = rest
    return kind, url, None


class Outcome:
    """One call as the framework hands it on: `error` is its own error flag (None when it
    has none and only the text tells), `text` what the model would read, `value` the
    framework's object itself (searched for the picture and the structured record)."""

    def __init__(self, text, value, error=None, structured=None):
        self.text, self.value, self.error, self.structured = text, value, error, structured

    def __repr__(self):
        return f"error={self.error} text={self.text!r} structured={self.structured!r}"[:600]


class Report:
    def __init__(self, framework, version, transport):
        self.out = {"framework": framework, "version": version, "transport": transport, "checks": {}}
        # The protocol version the session negotiated, where the framework says.
        self.out["protocolVersion"] = None

    def record(self, name, ok, detail=""):
        assert name in CHECKS, name
        self.out["checks"][name] = {"ok": bool(ok), "detail": str(detail)[:2000]}

    async def check(self, name, run):
        """Runs `run()`, which returns (ok, detail); an exception fails the check."""
        try:
            ok, detail = await run()
        except Exception as error:  # noqa: BLE001 - the report says what went wrong
            ok, detail = False, "".join(traceback.format_exception_only(error)).strip()
        self.record(name, ok, detail)

    def fail_rest(self, detail):
        for name in CHECKS:
            self.out["checks"].setdefault(name, {"ok": False, "detail": detail})

    def print(self):
        """The report, on a line of its own after `REPORT ` (frameworks log to stdout too)."""
        self.fail_rest("not run")
        sys.stdout.write("\nREPORT " + json.dumps(self.out) + "\n")
        sys.stdout.flush()


def negotiated():
    """The protocol version of the framework's MCP SDK session: the Python SDK 2's
    `ClientSession` keeps what it negotiated; the 1.x one only ever speaks the 2025 era, at
    its `LATEST_PROTOCOL_VERSION`."""
    import gc

    for thing in gc.get_objects():
        if type(thing).__name__ == "ClientSession" and getattr(thing, "_negotiated_version", None):
            return thing._negotiated_version
    try:
        import mcp.types

        return getattr(mcp.types, "LATEST_PROTOCOL_VERSION", None)
    except ImportError:
        return None


def says(text, expected):
    """Whether `text` is `expected`, or holds it as a Python repr does (llama-index hands its
    model `str()` of the MCP result, newlines escaped)."""
    escaped = expected.encode("unicode_escape").decode()
    return text.strip() == expected or f"text='{escaped}'" in text or f'text="{escaped}"' in text


async def run(report, adapter):
    """Every check, through `adapter`: `names()`, `schema(name)` (the converted schema the
    model would get), `strict(name)` (True/False for a strict-mode converter, else None) and
    `async invoke(name, arguments)` -> Outcome."""

    async def listed():
        names = adapter.names()
        return sorted(names) == sorted(TOOLS), names

    async def properties():
        bad = [name for name in adapter.names() if not has_properties(adapter.schema(name))]
        return not bad, bad or "every converted schema has `properties`"

    async def call():
        out = await adapter.invoke("search", {"query": "mug"})
        return out.error is not True and says(out.text, SEARCH), out

    async def rejected():
        out = await adapter.invoke("search", {"query": "mug", "limit": 999})
        return out.error is not False and TOO_MANY in out.text, out

    async def structured():
        out = await adapter.invoke("product-details", {"name": "Mug rack"})
        return details_in(out.structured if out.structured is not None else out.value), out

    async def image():
        out = await adapter.invoke("picture", {})
        return out.error is not True and png_in(out.value), out

    async def content():
        out = await adapter.invoke("product-card", {"name": "Mug rack"})
        return out.error is not True and png_in(out.value), out

    async def no_args():
        out = await adapter.invoke("ping", {})
        return out.error is not True and says(out.text, "pong"), out

    async def null_optional():
        nulls = await adapter.invoke("list-files", {"path": None, "all": None, "sort": None})
        plain = await adapter.invoke("list-files", {})
        ok = nulls.error is not True and nulls.text == plain.text and "tools.toml" in nulls.text
        return ok, nulls

    async def ref_schema():
        ok, text = refs_inlined(adapter.schema("tag"))
        strict = adapter.strict("tag")
        out = await adapter.invoke("tag", {"label": "x", "color": "red"})
        ok = ok and strict is not False and says(out.text, TAG)
        return ok, f"strict={strict} {text} -> {out}"

    async def listed_and_versioned():
        report.out["protocolVersion"] = report.out["protocolVersion"] or negotiated()
        return await listed()

    for name, step in [
        ("list", listed_and_versioned),
        ("properties", properties),
        ("call", call),
        ("rejected", rejected),
        ("after-rejected", call),
        ("structured", structured),
        ("image", image),
        ("content", content),
        ("no-args", no_args),
        ("null-optional", null_optional),
        ("ref-schema", ref_schema),
    ]:
        await report.check(name, step)


def has_properties(schema):
    return isinstance(schema, dict) and schema.get("type") == "object" and isinstance(schema.get("properties"), dict)


def refs_inlined(schema):
    """The converted `tag` schema keeps the whole schema: no `$ref`, and the colours."""
    text = json.dumps(schema)
    color = (schema.get("properties") or {}).get("color") or {}
    ok = "$ref" not in text and color.get("enum") == ["red", "green", "blue"]
    return ok, text


def png_in(value):
    """Whether `value` (bytes, base64 text, or a structure holding either) carries the picture."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value) == PNG or PNG in bytes(value)
    if isinstance(value, str):
        if value.startswith("data:"):
            value = value.split(",", 1)[-1]
        try:
            return base64.b64decode(value, validate=True) == PNG
        except Exception:  # noqa: BLE001 - not base64
            return False
    if isinstance(value, dict):
        return any(png_in(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(png_in(item) for item in value)
    for attribute in ("data", "image", "source", "content", "base64", "bytes"):
        if hasattr(value, attribute) and png_in(getattr(value, attribute)):
            return True
    return False


def details_in(value):
    """Whether `value` is, or holds as JSON text, the structured product record."""
    if isinstance(value, dict):
        if {key: value.get(key) for key in DETAILS} == DETAILS:
            return True
        return any(details_in(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(details_in(item) for item in value)
    if isinstance(value, str):
        try:
            return details_in(json.loads(value))
        except ValueError:
            return False
    for attribute in ("structuredContent", "structured_content", "content", "text", "artifact", "raw_output"):
        if hasattr(value, attribute) and details_in(getattr(value, attribute)):
            return True
    return False


def text_of(value):
    """The text a framework's tool result carries, however it wraps it."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "\n".join(text_of(item) for item in value)
    if isinstance(value, dict):
        if "text" in value:
            return text_of(value["text"])
        if "content" in value:
            return text_of(value["content"])
        return json.dumps(value)
    for attribute in ("text", "content"):
        if hasattr(value, attribute):
            return text_of(getattr(value, attribute))
    return str(value)
