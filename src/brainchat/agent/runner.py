"""Session -> a configured agent turn (models per role, tools, study context)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from brainchat.agent.events import Event
from brainchat.agent.graph import build_agent
from brainchat.agent.toolrun import Confirm
from brainchat.llm import make_chat_model
from brainchat.redact import get_logger

if TYPE_CHECKING:
    from brainchat.session import Session

log = get_logger("brainchat.agent")  # masks secrets in records


def stream_agent(
    session: Session, question: str, confirm: Confirm | None = None
) -> AsyncIterator[Event]:
    settings = session.settings
    fc_spec = settings.model_for("function_call")
    answer_spec = settings.model_for("answer")
    assert fc_spec is not None and answer_spec is not None
    fc = make_chat_model(fc_spec, "function_call")
    answer = make_chat_model(answer_spec, "answer")
    toolset = session.toolset()
    agent = build_agent(
        fc,
        answer,
        toolset.tools,
        settings.limits,
        confirm=confirm,
        context=session.study.summary if "load_data" in toolset.names() else None,
        specs={"function_call": fc_spec, "answer": answer_spec},
    )
    session.last_agent = agent
    events = agent.run(question, session.history)
    return _verbose(events) if settings.limits.verbose else events


async def _verbose(events: AsyncIterator[Event]) -> AsyncIterator[Event]:
    """AGENT_VERBOSE: log every thought, tool input/output and decision."""
    async for event in events:
        if event.type not in ("thinking_token", "answer_token"):
            log.info("%s", event.to_dict())
        yield event
