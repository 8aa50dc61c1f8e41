"""Which user answers a server's `elicitation/create`: the one whose tool call is running.

The run that may ask its user binds an `Asker` around its turn (`answering`, as the event sink is
bound); a server's call captures it, with the run's context, when it starts (`Elicitations.calling`).
The session's `elicitation_callback` (an `Elicitations`) then asks that run's user, in that run's
context, within the time the call has left. A call of a run nobody can answer (evals, a pipe) gets
`cancel`, and its step says so; a bad schema gets `decline` with the reason logged. The user's
answers never reach a log.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from mcp import types

from brainchat import events
from brainchat.redact import get_logger, mask
from brainchat.tools.mcp_elicit import Asker, BadSchema, Form, InvalidAnswer, Reply, parse_schema

log = get_logger("brainchat.tools.mcp")
MARGIN = 1.0  # seconds of the call kept for the answer to reach the server and its result to come
_asker: contextvars.ContextVar[Asker | None] = contextvars.ContextVar(
    "brainchat_mcp_asker", default=None
)


@contextlib.contextmanager
def answering(asker: Asker | None) -> Iterator[None]:
    """MCP calls started in this context (the turn's tasks too) may ask the user through `asker`."""
    token = _asker.set(asker)
    try:
        yield
    finally:
        _asker.reset(token)


@dataclass(eq=False)
class _Caller:
    tool: str
    asker: Asker | None
    deadline: float  # time.monotonic() when the call gives up
    context: contextvars.Context  # the run's: its event sink, its tool call, its UI
    pending: set[asyncio.Task[Reply]] = field(default_factory=set)


class Elicitations:
    """One server's elicitation callback, and the calls that may be asked about."""

    def __init__(self, server: str):
        self.server = server
        self._callers: list[_Caller] = []

    @contextlib.contextmanager
    def calling(self, tool: str, timeout: float) -> Iterator[None]:  # noqa: ASYNC109
        """A call of `tool` runs: a question from the server now goes to this run's user."""
        caller = _Caller(tool, _asker.get(), time.monotonic() + timeout, contextvars.copy_context())
        self._callers.append(caller)
        try:
            yield
        finally:
            self._callers.remove(caller)
            for task in caller.pending:  # the call ended (stop, timeout): its form goes too
                task.cancel()

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        """The ClientSession's elicitation_callback."""
        reply = await self._answer(params)
        return types.ElicitResult(action=reply.action, content=reply.content)

    async def _answer(self, params: types.ElicitRequestParams) -> Reply:
        if not isinstance(params, types.ElicitRequestFormParams):
            log.warning("MCP server %r asked for URL-mode elicitation, not offered", self.server)
            return Reply("decline")
        caller = self._caller()
        if caller is None:
            return Reply("cancel")
        try:
            fields = parse_schema(params.requestedSchema)
        except BadSchema as exc:
            log.warning("MCP server %r elicitation declined: bad schema: %s", self.server, exc)
            _note(caller, f"server '{self.server}' asked for input with a form brainchat cannot "
                  f"show ({exc}): declined")  # fmt: skip
            return Reply("decline")
        form = Form(
            server=self.server,
            message=mask(params.message)[:2000],
            fields=fields,
            tool=caller.tool,
            call_id=caller.context.run(events.current_tool_call)[0],
            timeout=caller.deadline - time.monotonic() - MARGIN,
        )
        if caller.asker is None:
            _note(caller, f"server '{self.server}' asked for input ({form.message[:80]}), but "
                  "nobody can answer in this run: cancelled")  # fmt: skip
            return Reply("cancel")
        _note(caller, f"server '{self.server}' asks you: {form.message[:120]}")
        reply = await self._ask(caller, form)
        _note(caller, f"server '{self.server}' asked: {form.message[:80]} · {form.summary(reply)}")
        return reply

    def open_call(self) -> _Caller | None:
        """The call a server's unasked message (a log line, a sampling request) belongs to: the
        open calls' run, when they are one run's; else None (whose it is cannot be told)."""
        if not self._callers or len({id(c.asker) for c in self._callers}) > 1:
            return None
        return self._callers[0]

    def _caller(self) -> _Caller | None:
        """The call the server asks about: one call's (or one run's) only; else nobody's."""
        askers = {id(c.asker) for c in self._callers}
        if not self._callers:
            log.warning("MCP server %r asked for input outside a tool call: cancelled", self.server)
            return None
        if len(askers) > 1:  # which conversation's call asked cannot be told: ask none of them
            log.warning(
                "MCP server %r asked for input while calls of several runs were open: cancelled",
                self.server,
            )
            return None
        return self._callers[0]

    async def _ask(self, caller: _Caller, form: Form) -> Reply:
        if form.timeout <= 0:
            return Reply("cancel")
        asker = caller.asker
        assert asker is not None

        async def ask() -> Reply:
            return await asker(form)

        task = asyncio.create_task(ask(), context=caller.context.copy())
        caller.pending.add(task)
        try:
            reply = await asyncio.wait_for(asyncio.shield(task), form.timeout)
        except TimeoutError:
            task.cancel()
            return Reply("cancel")
        except asyncio.CancelledError:
            if task.cancelled() and not _cancelling():
                return Reply("cancel")  # the call ended, not this session
            task.cancel()
            raise
        except Exception as exc:  # noqa: BLE001 - a broken form is a cancel, not a crash
            log.warning(
                "MCP server %r elicitation form failed: %s", self.server, type(exc).__name__
            )
            return Reply("cancel")
        finally:
            caller.pending.discard(task)
        return _checked(form, reply, self.server)


def elicit_aside(session: Any, responder: Any, callback: Any) -> bool:
    """Answer a server's `elicitation/create` in a task of its own (True), not in the session's
    receive loop, which the SDK blocks until the answer: a form open for minutes would hold every
    other result and progress note of that server, other conversations' calls included."""
    request = responder.request.root
    if not isinstance(request, types.ElicitRequest) or request.params.task is not None:
        return False
    session._task_group.start_soon(answer_aside, session, responder, callback)
    return True


async def answer_aside(
    session: Any, responder: Any, callback: Any, what: str = "elicitation", failed: Any = None
) -> None:
    """Run a server request's callback in its own task and send its answer: a result, or an
    ErrorData as the JSON-RPC error. A callback that raises never takes the session down: the
    server gets `failed` (elicitation: cancel)."""
    from mcp.shared.context import RequestContext

    with responder:  # its cancel scope: the server may cancel the request
        ctx = RequestContext(
            request_id=responder.request_id,
            meta=responder.request_meta,
            session=session,
            lifespan_context=None,
        )
        try:
            result: Any = await callback(ctx, responder.request.root.params)
        except Exception as exc:  # noqa: BLE001 - never take the session down
            log.warning("MCP %s failed: %s", what, type(exc).__name__)
            result = failed if failed is not None else types.ElicitResult(action="cancel")
        if isinstance(result, types.ErrorData):
            await responder.respond(result)
        else:
            await responder.respond(types.ClientResult(root=result))


def _checked(form: Form, reply: Reply, server: str) -> Reply:
    """The asker's reply as it may go to the server: accept only with content that validates."""
    if reply.action != "accept":
        return Reply(reply.action)
    try:
        return Reply("accept", form.validate(reply.content or {}))
    except InvalidAnswer as exc:  # the asker let through what the form forbids: names, no values
        log.warning("MCP server %r elicitation declined: invalid %s", server, sorted(exc.errors))
        return Reply("decline")


def _cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _note(caller: _Caller, text: str) -> None:
    """A line in the asking call's step (its title while running, its body when done)."""
    call_id, name = caller.context.run(events.current_tool_call)
    event = events.ToolProgress(
        call_id=call_id, name=name or caller.tool, message=text, data={"elicitation": True}
    )
    caller.context.run(events.emit, event)
