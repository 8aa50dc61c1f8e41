"""One understanding of the request per turn: a typed record the model makes, in any language.

A guided model's turn starts with it: the function-call model reads the request (and the last
turn, for a follow-up) and fills `RequestRecord` with the steps asked for or implied, the files
and values the user fixed, and whether a plot, a listing, a comparison or a web search is asked.
The request carries a JSON schema (`response_format`), so llama.cpp, vLLM, Ollama and OpenAI
make a valid record by construction; a server that refuses the schema is asked for the same JSON
in text, and that choice is remembered for the model. Rules that guide a model read this record
and nothing else of the user's words. A record that cannot be made leaves every such rule idle.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError

from brainchat.agent import habits
from brainchat.agent.budget import cut_text
from brainchat.events import RequestUnderstood, emit
from brainchat.prompts import load_prompt

HISTORY_TOKENS = 300  # the last turn, for a follow-up ("now with EEGNet")
REQUIRED = {"steps", "needs_tools"}  # a reply without them is not a record


class Fixed(BaseModel):
    """A value the user stated for one argument of one tool."""

    tool: str
    name: str
    value: Any = None


class RequestRecord(BaseModel):
    """What one request asks for (see the module docstring and prompts/record.md)."""

    language: str = ""
    steps: list[str] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)
    positions: list[int] = Field(default_factory=list)
    fixed: list[Fixed] = Field(default_factory=list)
    plot: bool = False
    listing: bool = False
    comparison: bool = False
    web: bool = False
    needs_tools: bool = True

    def values(self) -> dict[str, dict[str, Any]]:
        """The fixed values by tool: {"bandpass_filter": {"l_freq": 8, "h_freq": 30}}."""
        out: dict[str, dict[str, Any]] = {}
        for f in self.fixed:
            out.setdefault(f.tool, {})[f.name] = f.value
        return out


def schema(steps: list[str], tools: list[str]) -> dict[str, Any]:
    """The record's JSON schema, its step ids and tool names closed to the ones that exist."""
    strings = {"type": "array", "items": {"type": "string"}}
    value = {"type": ["number", "string", "boolean", "array", "null"]}
    step = {"type": "string", "enum": steps} if steps else {"type": "string"}
    tool = {"type": "string", "enum": tools} if tools else {"type": "string"}
    props: dict[str, Any] = {
        "language": {"type": "string"},
        "steps": {"type": "array", "items": step},
        "files": strings,
        "positions": {"type": "array", "items": {"type": "integer"}},
        "fixed": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"tool": tool, "name": {"type": "string"}, "value": value},
                "required": ["tool", "name", "value"],
            },
        },
        **{k: {"type": "boolean"} for k in ("plot", "listing", "comparison", "web", "needs_tools")},
    }
    return {"type": "object", "properties": props, "required": list(props)}


def parse(text: str, steps: list[str]) -> RequestRecord | None:
    """The record in a reply's text (bare, fenced or with words around it), steps it does not
    know dropped; None when there is none."""
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if match is None:
        return None
    try:
        data = json.loads(match.group(0))
        record = RequestRecord.model_validate(data)
    except (json.JSONDecodeError, ValidationError):
        return None
    if not isinstance(data, dict) or not REQUIRED <= set(data):
        return None  # another JSON object (a tool call written as text) is no record
    if steps:
        record.steps = [s for s in record.steps if s in steps]
    return record


def messages(
    question: str, history: list[BaseMessage], steps_text: str, study: str
) -> list[BaseMessage]:
    """The record's request: the prompt with the steps and the study, the last turn, the request."""
    system = load_prompt("record").replace("{steps}", steps_text).replace("{study}", study)
    last = [m for m in history if isinstance(m.content, str)][-2:]
    earlier = "\n".join(f"{m.type}: {m.content}" for m in last)
    text = f"Request: {question}"
    if earlier:
        text = f"The conversation's last turn:\n{cut_text(earlier, HISTORY_TOKENS)}\n\n{text}"
    return [SystemMessage(system.strip()), HumanMessage(text)]


async def understand(
    llm: Any,
    spec: Any,
    name: str,
    request: list[BaseMessage],
    steps: list[str],
    tools: list[str],
    callbacks: list[Any],
) -> RequestRecord | None:
    """Ask the model for the record (JSON schema first, text where the server refuses it); said
    as an event, whatever came of it."""
    started = time.perf_counter()
    shape = _shape(spec)
    record, why = None, ""
    try:
        record, shape = await _ask(llm, spec, request, steps, tools, callbacks, shape)
        why = "" if record is not None else "the reply held no readable record"
    except Exception as exc:  # noqa: BLE001 - no record: the run goes on unguided by one
        why = f"the request for it failed ({type(exc).__name__})"
    emit(
        RequestUnderstood(
            record=record.model_dump() if record is not None else None,
            model=name,
            duration=round(time.perf_counter() - started, 4),
            how=shape,
            problem=why,
        )
    )
    return record


def _shape(spec: Any) -> str:
    """How the record is asked for: a JSON schema, unless the spec or the server said no."""
    if spec is not None and not spec.response_format:
        return "text"
    return habits.recall(spec).get("record_format") or "schema"


async def _ask(
    llm: Any,
    spec: Any,
    request: list[BaseMessage],
    steps: list[str],
    tools: list[str],
    callbacks: list[Any],
    shape: str,
) -> tuple[RequestRecord | None, str]:
    import openai

    config = {"callbacks": callbacks}
    if shape == "schema":
        fmt = {
            "type": "json_schema",
            "json_schema": {"name": "request_record", "schema": schema(steps, tools)},
        }
        try:
            reply = await llm.bind(response_format=fmt).ainvoke(
                request, config=config, stream=False
            )
            return parse(str(reply.content), steps), shape
        except openai.BadRequestError:
            habits.remember(spec, record_format="text")  # this server takes no JSON schema
    ask = [
        *request[:-1],
        HumanMessage(f"{request[-1].content}\n\nReply with the JSON object only."),
    ]
    reply = await llm.ainvoke(ask, config=config, stream=False)
    return parse(str(reply.content), steps), "text"
