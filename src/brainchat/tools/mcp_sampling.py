"""A server asks the client's model for a completion mid-call (MCP sampling/createMessage).

Served as VS Code serves it: only while one of the server's tools is being called by a run, and
only with that run's user's approval for that server (allow once, always for this server in the
conversation, or deny); by the run's function-call model, within the run's time, its tokens in
the run's usage; shown as a step of its own. With no call open, nobody to ask, a denial or a
request brainchat cannot serve, the server gets an error (code -1, as the specification's
"user rejected" example uses), never a silent substitute.

The agent binds the model for its run (`serving`), the page binds who approves (`approving`);
both are read in the context of the calling run (Elicitations.open_call), as a question
(elicitation) is routed.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from mcp import types

from brainchat import events
from brainchat.redact import get_logger, mask

log = get_logger("brainchat.tools.mcp")
Decision = Literal["once", "always", "deny"]
REJECTED = -1  # the error code the specification's sampling section uses for a user's refusal
MAX_TOKENS = 4096  # the most one sampling request may ask of the run's model
MARGIN = 1.0  # seconds of the call kept for the reply to reach the server
_ids = itertools.count(1)


@dataclass(frozen=True)
class Model:
    """The model a run serves sampling with: its function-call model and usage callbacks."""

    llm: Any  # a LangChain chat model
    name: str
    callbacks: list[Any]
    remaining: Callable[[], float]  # seconds the run has left for tool work


@dataclass(frozen=True)
class Request:
    """What the user is asked to approve."""

    server: str
    tool: str
    messages: list[tuple[str, str]]  # (role, text)
    system: str
    max_tokens: int
    timeout: float  # seconds the user has to answer

    def preview(self, limit: int = 600) -> str:
        text = "\n".join(f"{role}: {body}" for role, body in self.messages)
        return text if len(text) <= limit else text[:limit] + " …"


Approver = Callable[[Request], Awaitable[Decision]]
_model: contextvars.ContextVar[Model | None] = contextvars.ContextVar(
    "brainchat_sampling_model", default=None
)
_approver: contextvars.ContextVar[Approver | None] = contextvars.ContextVar(
    "brainchat_sampling_approver", default=None
)


@contextlib.contextmanager
def serving(model: Model) -> Iterator[None]:
    """Sampling requests made during this run's tool calls are served by `model`."""
    token = _model.set(model)
    try:
        yield
    finally:
        _model.reset(token)


@contextlib.contextmanager
def approving(approver: Approver | None) -> Iterator[None]:
    """Sampling requests made during this turn's tool calls are approved by `approver`."""
    token = _approver.set(approver)
    try:
        yield
    finally:
        _approver.reset(token)


class Refused(Exception):
    """The request is not served; the message goes to the server."""


class Sampler:
    """One server's sampling_callback (`elicitations`: the server's Elicitations, whose open
    call says which run's model and user serve the request)."""

    def __init__(self, elicitations: Any) -> None:
        self.elicitations = elicitations

    @property
    def server(self) -> str:
        return str(self.elicitations.server)  # a plugged server is named at connect

    async def __call__(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        try:
            return await self._serve(params)
        except Refused as exc:
            log.info("MCP server %r sampling refused: %s", self.server, exc)
            return types.ErrorData(code=REJECTED, message=str(exc))

    async def _serve(self, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        caller = self.elicitations.open_call()
        if caller is None:
            raise Refused("sampling is served only while a brainchat run is calling a tool of "
                          "this server (none is, or calls of several runs are open)")  # fmt: skip
        model = caller.context.run(_model.get)
        approver = caller.context.run(_approver.get)
        if model is None:
            raise Refused("the calling run has no model to serve sampling")
        seconds = min(caller.deadline - time.monotonic(), model.remaining()) - MARGIN
        if seconds <= 0:
            raise Refused("the calling tool call has no time left for sampling")
        request = _request(self.server, caller.tool, params, seconds)
        if approver is None:
            _note(caller, f"server '{self.server}' asked for the model (sampling), but nobody "
                  "can approve in this run: refused")  # fmt: skip
            raise Refused("nobody can approve sampling in this run (no user at the chat)")
        started = time.monotonic()
        decision = await _in(caller, approver(request), seconds)
        if decision not in ("once", "always"):
            _note(caller, f"server '{self.server}' asked for the model (sampling): denied")
            raise Refused("the user denied the sampling request")
        left = seconds - (time.monotonic() - started)
        return await _in(caller, _complete(self.server, model, request, params), left)


def _request(
    server: str, tool: str, params: types.CreateMessageRequestParams, seconds: float
) -> Request:
    messages: list[tuple[str, str]] = []
    for m in params.messages:
        blocks = m.content if isinstance(m.content, list) else [m.content]
        texts = [_text(b) for b in blocks]
        messages.append((m.role, "\n".join(t for t in texts if t)))
    return Request(
        server=server,
        tool=tool,
        messages=messages,
        system=params.systemPrompt or "",
        max_tokens=max(1, min(params.maxTokens, MAX_TOKENS)),
        timeout=seconds,
    )


def _text(block: Any) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    kind = getattr(block, "type", "content")
    raise Refused(f"brainchat serves text sampling only; a message held {kind} content")


async def _in(caller: Any, work: Awaitable[Any], seconds: float) -> Any:
    """`work` run in the calling run's context (its page, its events, its usage), bounded."""

    async def run() -> Any:
        return await work

    task = asyncio.get_running_loop().create_task(run(), context=caller.context.copy())
    caller.pending.add(task)  # the call ends (stop, timeout): this goes too
    try:
        return await asyncio.wait_for(asyncio.shield(task), max(seconds, 0.1))
    except TimeoutError:
        task.cancel()
        raise Refused("no answer within the calling tool call's time") from None
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if task.cancelled() and not (current is not None and current.cancelling()):
            raise Refused("the calling tool call ended") from None  # not this session's end
        task.cancel()
        raise
    finally:
        caller.pending.discard(task)


async def _complete(
    server: str, model: Model, request: Request, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    """The run's model answers; a step of its own shows what was asked and answered."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    call_id, _ = events.current_tool_call()
    step = f"{call_id or 'mcp'}.sampling{next(_ids)}"
    name = f"sampling ({server})"
    started = time.time()
    args = {"messages": [f"{r}: {t[:300]}" for r, t in request.messages], "max_tokens":
            request.max_tokens}  # fmt: skip
    events.emit(events.ToolCallStarted(call_id=step, name=name, args=args, source=f"mcp:{server}"))
    chat: list[Any] = [SystemMessage(request.system)] if request.system else []
    chat += [(HumanMessage if r == "user" else AIMessage)(t) for r, t in request.messages]
    llm = model.llm
    if getattr(llm, "streaming", False):  # one reply, not tokens in the run's thinking step
        llm = llm.model_copy(update={"streaming": False})
    options: dict[str, Any] = {"max_tokens": request.max_tokens}
    if params.temperature is not None:
        options["temperature"] = params.temperature
    if params.stopSequences:
        options["stop"] = params.stopSequences
    try:
        reply = await llm.ainvoke(chat, config={"callbacks": model.callbacks}, **options)
    except Exception as exc:  # noqa: BLE001 - the server gets the reason, the run goes on
        _finished(step, name, started, "error", error=f"{type(exc).__name__}: {mask(str(exc))}")
        raise Refused(f"the model failed: {type(exc).__name__}") from None
    text = reply.content if isinstance(reply.content, str) else str(reply.content)
    finish = (getattr(reply, "response_metadata", None) or {}).get("finish_reason")
    _finished(step, name, started, "success", summary=mask(text)[:2000])
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=text),
        model=model.name,
        stopReason="maxTokens" if finish == "length" else "endTurn",
    )


def _finished(step: str, name: str, started: float, status: Any, **kw: Any) -> None:
    now = time.time()
    events.emit(
        events.ToolFinished(
            call_id=step,
            name=name,
            status=status,
            duration=now - started,
            summary=kw.get("summary", ""),
            error=kw.get("error"),
            started_at=started,
            finished_at=now,
        )
    )


def _note(caller: Any, text: str) -> None:
    call_id, name = caller.context.run(events.current_tool_call)
    event = events.ToolProgress(
        call_id=call_id, name=name or caller.tool, message=text, data={"sampling": True}
    )
    caller.context.run(events.emit, event)


def sample_aside(session: Any, responder: Any, callback: Any) -> bool:
    """Answer a server's `sampling/createMessage` in a task of its own (True), not in the
    session's receive loop: an approval left open would hold every other message of the server."""
    request = responder.request.root
    if not isinstance(request, types.CreateMessageRequest) or request.params.task is not None:
        return False
    from brainchat.tools.mcp_elicit_route import answer_aside

    failed = types.ErrorData(code=types.INTERNAL_ERROR, message="sampling failed")
    session._task_group.start_soon(answer_aside, session, responder, callback, "sampling", failed)
    return True
