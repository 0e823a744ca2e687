"""Drives mcp-serve's Tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`) with the
official Python SDK client (`mcp`, pinned in requirements.txt) and prints one JSON line per
step, for the integration tests.

    python task_client.py URL [MODE]

MODE is the client's version negotiation: auto (default; 2026-07-28 if offered) | legacy
(initialize; needs a server started with --sessions so the declared capability sticks) | a
modern version string such as 2026-07-28.

The SDK has no Tasks client of its own. What it has is the generic extension seam the Tasks
extension is built on (SEP-2133 `ClientExtension`): a `ResultClaim` teaches `tools/call` the
`resultType: "task"` shape and its resolver, and `Request.name_param` puts the `Mcp-Name`
header on `tasks/*` requests. So the SDK does the transport, the handshake or per-request
`_meta` envelope, the capability declaration and JSON-RPC; this file only adds the task
types. One gap: the SDK activates claims on modern (2026) connections only, and validates
a legacy `tools/call` result as a plain CallToolResult, so on a 2025-11-25 session the call
that creates a task goes through the session's raw JSON-RPC request (`send_raw_request`).

The steps: a 3-step call runs as a task and is polled (every pollIntervalMs) to completion,
having been seen `working` with a progress statusMessage; a 60-step call runs as a task and
is cancelled. Exit 0 when all of that held; otherwise the reason is on stderr and exit 1.
"""

import asyncio
import json
import sys
import time
from typing import Any, Literal

import mcp_types as types
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim, advertise
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

TASKS = "io.modelcontextprotocol/tasks"
TERMINAL = {"completed", "failed", "cancelled"}


class Failure(Exception):
    pass


def leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside an exception group (the client's task group wraps what it raises)."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


def emit(step: str, **fields: Any) -> None:
    print(json.dumps({"step": step, **fields}), flush=True)


def dump(model: types.Result) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


class CreateTaskResult(types.Result):
    """`tools/call` answered with a task (`resultType: "task"`)."""

    result_type: Literal["task"]
    task_id: str
    status: str
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class DetailedTask(types.Result):
    """The answer to `tasks/get`: the task, with its result, error or input requests inlined."""

    result_type: str | None = None
    task_id: str
    status: Literal["working", "input_required", "completed", "failed", "cancelled"]
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


class AckResult(types.Result):
    """The answer to `tasks/cancel` and `tasks/update`."""

    result_type: str | None = None


class TaskIdParams(types.RequestParams):
    task_id: str


class GetTaskRequest(types.Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class CancelTaskRequest(types.Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


async def get_task(session, task_id: str) -> DetailedTask:
    return await session.send_request(GetTaskRequest(params=TaskIdParams(task_id=task_id)), DetailedTask)


async def cancel_task(session, task_id: str) -> AckResult:
    return await session.send_request(CancelTaskRequest(params=TaskIdParams(task_id=task_id)), AckResult)


async def poll(session, task: CreateTaskResult, until, deadline_s: float = 60) -> tuple[DetailedTask, list[dict]]:
    """`tasks/get` every pollIntervalMs until `until(detail)` or a terminal status."""
    seen: list[dict] = []
    interval = (task.poll_interval_ms or 1000) / 1000
    deadline = time.monotonic() + deadline_s
    while True:
        await asyncio.sleep(interval)
        detail = await get_task(session, task.task_id)
        if detail.task_id != task.task_id:
            raise Failure(f"tasks/get answered for task {detail.task_id!r}, asked {task.task_id!r}")
        if not seen or (seen[-1]["status"], seen[-1].get("statusMessage")) != (detail.status, detail.status_message):
            seen.append({"status": detail.status, "statusMessage": detail.status_message})
        if until(detail) or detail.status in TERMINAL:
            return detail, seen
        if time.monotonic() > deadline:
            raise Failure(f"task {task.task_id} still {detail.status!r} after {deadline_s}s; seen {seen}")
        if detail.poll_interval_ms:
            interval = detail.poll_interval_ms / 1000


async def run_to_completion(task: CreateTaskResult, ctx: ClaimContext) -> types.CallToolResult:
    """The claim's resolver: what `client.call_tool` does with a task, until it completes."""
    emit("started", task=dump(task))
    if task.status != "working":
        raise Failure(f"a new task should be working, it is {task.status!r}")
    working_messages: set[str] = set()

    def note(detail: DetailedTask) -> bool:
        if detail.status == "working" and detail.status_message:
            working_messages.add(detail.status_message)
        return False

    final, seen = await poll(ctx.session, task, note)
    emit("polled", taskId=task.task_id, seen=seen)
    if not working_messages:
        raise Failure(f"never saw status working with a statusMessage; seen {seen}")
    if final.status != "completed":
        raise Failure(f"task ended {final.status!r}, not completed: {dump(final)}")
    if final.result is None:
        raise Failure(f"a completed task carries no result: {dump(final)}")
    return types.CallToolResult.model_validate(final.result, by_name=False)


class TasksExtension(ClientExtension):
    identifier = TASKS

    def claims(self):
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=run_to_completion)]


async def start_task(client: Client, name: str, arguments: dict[str, Any]) -> CreateTaskResult:
    """A `tools/call` that must come back as a task, without resolving it."""
    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
        result = await client.session.call_tool(name, arguments, allow_claimed=True)
        if not isinstance(result, CreateTaskResult):
            raise Failure(f"tools/call {name} did not create a task: {dump(result)}")
        return result
    # Legacy session: no claims, so the SDK's raw JSON-RPC request on the same session.
    raw = await client.session._dispatcher.send_raw_request(  # noqa: SLF001
        "tools/call", {"name": name, "arguments": arguments}, {}
    )
    if raw.get("resultType") != "task":
        raise Failure(f"tools/call {name} did not create a task: {json.dumps(raw)}")
    return CreateTaskResult.model_validate(raw, by_name=False)


async def main() -> int:
    url = sys.argv[1]
    mode = sys.argv[2] if len(sys.argv) > 2 else "auto"
    # A claim-bearing extension is only advertised where its claims are active (2026), so a
    # legacy connection declares the extension by identifier.
    extensions = [advertise(TASKS)] if mode == "legacy" else [TasksExtension()]

    async def elicit(_context, _params):
        return types.ElicitResult(action="decline")

    try:
        async with Client(url, mode=mode, elicitation_callback=elicit, cache=None, extensions=extensions) as client:
            emit("connected", protocolVersion=client.protocol_version)
            session = client.session

            # 1-3: a short call, resolved to its final result while it is polled.
            if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                final = await client.call_tool("slow_steps", {"steps": 3})
            else:
                task = await start_task(client, "slow_steps", {"steps": 3})
                final = await run_to_completion(
                    task, ClaimContext(session=session, tool_name="slow_steps", read_timeout_seconds=None)
                )
            texts = [block.text for block in final.content if isinstance(block, types.TextContent)]
            emit("completed", isError=final.is_error, text="".join(texts))
            if final.is_error or "did 3 steps" not in "".join(texts):
                raise Failure(f"unexpected final result: {dump(final)}")

            # 4: a long call, cancelled once it is running.
            task = await start_task(client, "slow_steps", {"steps": 60})
            emit("started", task=dump(task))
            running, seen = await poll(session, task, lambda d: d.status == "working" and bool(d.status_message))
            if running.status != "working":
                raise Failure(f"the long task ended {running.status!r} before it could be cancelled: {seen}")
            emit("running", taskId=task.task_id, statusMessage=running.status_message)
            ack = await cancel_task(session, task.task_id)
            emit("cancel", result=dump(ack))
            cancelled, seen = await poll(session, task, lambda d: d.status != "working")
            emit("cancelled", task=dump(cancelled), seen=seen)
            if cancelled.status != "cancelled":
                raise Failure(f"after tasks/cancel the task is {cancelled.status!r}: {dump(cancelled)}")
    except BaseException as error:  # noqa: BLE001 - anything is a failure, with its reason
        for leaf in leaves(error):
            reason = str(leaf) if isinstance(leaf, Failure) else f"{type(leaf).__name__}: {leaf}"
            print(f"task_client: {reason}", file=sys.stderr)
        return 1
    emit("ok")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
