"""One understanding of the request per turn: a typed record the model makes, in any language.

A guided model's turn starts with it: the function-call model reads the request (and the last
turn, for a follow-up) and fills `RequestRecord` with the steps asked for or implied, the files
picked by their place in a listing, the values the user fixed (kept only where the request
writes them), and whether a plot, a listing or a web search is asked.
The request carries a JSON schema (`response_format`), so llama.cpp, vLLM, Ollama and OpenAI
make a valid record by construction; a server that refuses the schema is asked for the same JSON
in text, and that choice is remembered for the model. Rules that guide a model read this record
and nothing else of the user's words. A record that cannot be made leaves every such rule idle.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError

from brainchat.agent import habits
from brainchat.agent.budget import cut_text
from brainchat.events import RequestUnderstood, emit
from brainchat.grounding import units
from brainchat.prompts import load_prompt

HISTORY_TOKENS = 300  # the last turn, for a follow-up ("now with EEGNet")
REQUIRED = {"steps", "needs_tools"}  # a reply without them is not a record
MAX_ITEMS = 10  # steps a record may hold
MAX_VALUES = 6  # positions and fixed values: a small model otherwise lists every default


class RequestRecord(BaseModel):
    """What one request asks for (see the module docstring and prompts/record.md)."""

    # the order the model writes them in: what kind of request it is first, then its steps
    language: str = ""
    needs_tools: bool = True
    web: bool = False
    listing: bool = False
    plot: bool = False
    steps: list[str] = Field(default_factory=list)
    positions: list[int] = Field(default_factory=list)
    fixed: dict[str, dict[str, Any]] = Field(default_factory=dict)  # tool -> argument -> value

    # of the fixed values, those the request writes (tool -> argument names): only these are
    # the user's words to hold a call to; a choice read from other words only guides
    said: dict[str, set[str]] = Field(default_factory=dict, exclude=True)

    def written_values(self, tool: str) -> dict[str, Any]:
        """The values fixed for `tool` that the request writes."""
        return {
            k: v for k, v in self.values().get(tool, {}).items() if k in self.said.get(tool, ())
        }

    def values(self) -> dict[str, dict[str, Any]]:
        """The fixed values by tool: {"bandpass_filter": {"l_freq": 8, "h_freq": 30}}."""
        return {tool: dict(args) for tool, args in self.fixed.items() if isinstance(args, dict)}


def schema(steps: list[str], tools: list[str]) -> dict[str, Any]:
    """The record's JSON schema, its step ids and tool names closed to the ones that exist."""
    value = {"type": ["number", "string", "boolean", "array", "null"]}
    step = {"type": "string", "enum": steps} if steps else {"type": "string"}
    # a server that decodes by the schema writes the fields in this order: whether the request
    # needs tools, the web, a listing or a figure is decided before its steps are listed
    props: dict[str, Any] = {
        "language": {"type": "string"},
        **{k: {"type": "boolean"} for k in ("needs_tools", "web", "listing", "plot")},
        "steps": {"type": "array", "items": step, "maxItems": MAX_ITEMS},
        "positions": {"type": "array", "items": {"type": "integer"}, "maxItems": MAX_VALUES},
        "fixed": {
            "type": "object",
            "properties": {t: {"type": "object", "additionalProperties": value} for t in tools},
            "additionalProperties": False,
        },
    }
    return {"type": "object", "properties": props, "required": list(props)}


def _complete(made: dict[str, Any]) -> dict[str, Any]:
    """An example's record with every field, in the schema's order."""
    return RequestRecord.model_validate(made).model_dump()


def parse(text: str, steps: list[str]) -> RequestRecord | None:
    """The record in a reply's text (bare, fenced or with words around it), steps it does not
    know dropped; None when there is none."""
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if match is None:
        return None
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not REQUIRED <= set(data):
        return None  # another JSON object (a tool call written as text) is no record
    fixed = data.get("fixed")
    # a tool's entry that is no object says nothing
    data["fixed"] = {k: v for k, v in fixed.items() if isinstance(v, dict)} if isinstance(fixed, dict) else {}  # fmt: skip
    try:
        record = RequestRecord.model_validate(data)
    except ValidationError:
        return None
    if steps:
        record.steps = [s for s in record.steps if s in steps]
    return record


NUMBER = re.compile(r"\d+(?:\.\d+)?")


def written(value: Any, request: str, unit: str | None = None) -> bool:
    """`value` is written in the request: a number (or a text of one) as a number (8 in "8-30
    Hz"), in `unit` where the argument has one (0.5 in "500 ms" for seconds; not 2.5 of "2.5
    秒" for a frequency), a text as its letters and digits ("csp_lda" in "CSP+LDA"), a list
    item by item."""
    if isinstance(value, list):
        return bool(value) and all(written(v, request, unit) for v in value)
    if isinstance(value, bool) or value is None:
        return False
    label = isinstance(value, str) and NUMBER.fullmatch(value.strip()) is not None
    if label:
        value = float(value)  # a number written as text is a number: "0" is not in "0.5 s"
    if isinstance(value, int | float):
        # a number is no quantity where it is part of a name ("decim 1" is not in "sub-01"),
        # but a label written as text may be one ("01" is sub-01's subject)
        return any(
            math.isclose(n, float(value), rel_tol=1e-9, abs_tol=1e-12)
            for n in units.numbers(request, unit, names=label)
        )
    said = re.sub(r"[\W_]+", "", str(value)).casefold()
    return bool(said) and said in re.sub(r"[\W_]+", "", request).casefold()


def messages(
    question: str,
    history: list[BaseMessage],
    steps_text: str,
    study: str,
    examples: list[tuple[str, dict[str, Any]]] = (),  # type: ignore[assignment]
) -> list[BaseMessage]:
    """The record's request: the prompt with the steps, worked examples of records of requests
    like this one, and the study; the last turn; the request."""
    system = load_prompt("record").replace("{steps}", steps_text).replace("{study}", study)
    if examples:
        shown = "\n".join(
            f"- Request: {request}\n  Record: {json.dumps(_complete(made), ensure_ascii=False)}"
            for request, made in examples
        )
        system = system.replace("{examples}", f"Records of requests like this one:\n{shown}")
    system = system.replace("{examples}", "")
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
    keep: Callable[[RequestRecord], RequestRecord] = lambda made: made,
) -> RequestRecord | None:
    """Ask the model for the record (JSON schema first, text where the server refuses it), keep
    what `keep` keeps of it, and say it as an event, whatever came of it."""
    started = time.perf_counter()
    shape = _shape(spec)
    record, why = None, ""
    try:
        record, shape = await _ask(llm, spec, request, steps, tools, callbacks, shape)
        why = "" if record is not None else "the reply held no readable record"
        record = keep(record) if record is not None else None
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


def unmade(name: str, why: str) -> None:
    """Say that no record was asked for, and why."""
    emit(RequestUnderstood(record=None, model=name, how="none", problem=why))


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
