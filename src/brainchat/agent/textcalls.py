"""Tool calls written as JSON in a reply's text, for models that do not call tools natively.

`tool_calling: "prompt"` describes the tools in the system prompt (`tools_prompt`) and reads the
calls back from the reply (`read_calls`); `"auto"` and `"native"` send native tools and, when a
reply has no native call, read the call-shaped JSON its text holds (rather than take it as the
final reply, or drop it whole for one bad call). Accepted call shapes, one or several, in
fenced ```json blocks or as bare JSON (an object, or a list of objects)::

    {"name": "web_search", "arguments": {"query": "mu rhythm"}}      (the documented form)
    {"tool": "web_search", "args": {...}}    {"function": "web_search", "parameters": {...}}
    {"function": {"name": "web_search", "arguments": "{...}"}}    {"tool_calls": [...]}

Arguments may also be a JSON string. A call whose arguments do not match the tool's JSON schema,
a call to an unknown tool, or JSON that does not parse becomes an *invalid* call: the act node
records it as a failed step and the model reads a short repair hint as its next turn.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from brainchat.agent.jsonvalues import json_values

FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
NAME_KEYS = ("name", "tool", "tool_name", "function")
ARGS_KEYS = ("arguments", "args", "parameters", "input", "tool_input")
CALL_FORM = '{"name": "<tool name>", "arguments": {...}}'
BROKEN = "invalid_tool_call"  # the name a call gets when its JSON does not parse
CALL_SHAPED = re.compile(
    r'"(?:name|tool|tool_name|function)"\s*:\s*[{"]'
)  # broken JSON, yet a call


@dataclass
class TextCalls:
    """What a reply's text holds: calls (some may be invalid) and the text around them."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""  # the reply without the call blocks (what the UI shows as the thought)

    @property
    def valid(self) -> bool:
        return bool(self.calls) and not any(c.get("invalid") for c in self.calls)


def read_calls(
    text: str, schemas: dict[str, dict[str, Any]], *, strict: bool, round_: int = 0
) -> TextCalls:
    """The calls in `text`, each checked against `schemas` (tool name -> JSON schema).

    `strict` (prompt mode): a fenced block or bare JSON that does not parse is an invalid call
    (a repair hint goes back). Otherwise (native, auto) only call-shaped text counts: JSON naming
    a known tool, or naming any tool beside its arguments; JSON that does not parse counts only
    when it names a tool ("name": "..."). Never dropped silently: valid calls run and invalid
    ones go back as repair hints, in every mode.
    """
    found: list[Any] = []
    broken: list[str] = []
    rest = text
    blocks = [m for m in FENCE.finditer(text) if m.group(1).lower() in ("", "json", "tool_call")]
    for match in blocks:
        body = match.group(2).strip()
        if strict and not body:  # "```json\n```": a call begun and left empty, no answer
            broken.append(
                f"your ```json block was empty. Reply with one ```json block holding {CALL_FORM}"
            )
            rest = rest.replace(match.group(0), "")
            continue
        if not body.startswith(("{", "[")):
            continue
        try:
            found.extend(json_values(body))
        except json.JSONDecodeError as exc:
            if not strict and not CALL_SHAPED.search(body):
                continue  # not a call: text as any other
            broken.append(_broken(body, exc))
        rest = rest.replace(match.group(0), "")
    if not blocks:
        found, broken, rest = _bare(text)
        if not strict and not CALL_SHAPED.search(text):
            broken = []
    calls: list[dict[str, Any]] = []
    for item in found:
        for raw in _flatten(item):
            call = _call(raw, schemas)
            if call is not None and (strict or _call_shaped(raw, call, schemas)):
                calls.append(call)
    calls += [{"name": BROKEN, "args": {}, "invalid": why} for why in broken]
    for i, call in enumerate(calls):
        call["id"] = f"text_{round_}_{i}"
    return TextCalls(calls, rest.strip() if calls else text)


def _call_shaped(raw: Any, call: dict[str, Any], schemas: dict[str, dict[str, Any]]) -> bool:
    """Outside prompt mode, JSON is a call when it names a known tool or carries arguments
    beside a name: {"name": "Ada"} in an answer is data, not a call to a tool 'Ada'."""
    if call["name"] in schemas:
        return True
    inner = raw.get("function") if isinstance(raw.get("function"), dict) else {}
    return any(k in raw or k in inner for k in ARGS_KEYS)


def _bare(text: str) -> tuple[list[Any], list[str], str]:
    """JSON not fenced: the whole reply, or objects starting on their own line."""
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        try:
            return [json.loads(stripped)], [], ""
        except json.JSONDecodeError:
            pass
    decoder = json.JSONDecoder()
    found: list[Any] = []
    rest: list[str] = []
    pos = 0
    for match in re.finditer(r"(?m)^[ \t]*([\[{])", text):
        start = match.start(1)
        if start < pos:
            continue
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        found.append(value)
        rest.append(text[pos:start])
        pos = end
    rest.append(text[pos:])
    broken = []
    if not found and stripped.startswith("{") and '"' in stripped:
        try:
            json.loads(stripped)
        except json.JSONDecodeError as exc:
            broken.append(_broken(stripped, exc))
    return found, broken, "".join(rest)


def _flatten(item: Any) -> list[Any]:
    if isinstance(item, list):
        return [x for sub in item for x in _flatten(sub)]
    if isinstance(item, dict) and isinstance(item.get("tool_calls"), list):
        return _flatten(item["tool_calls"])
    return [item]


def _call(raw: Any, schemas: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """One call in any accepted shape, validated; None when `raw` is not call-shaped."""
    if not isinstance(raw, dict):
        return None
    if isinstance(raw.get("function"), dict):
        raw = {**raw, **raw["function"]}
        raw.pop("function", None)
    name = next((raw[k] for k in NAME_KEYS if isinstance(raw.get(k), str)), None)
    if not name:
        return None
    args: Any = next((raw[k] for k in ARGS_KEYS if k in raw), {})
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as exc:
            return {"name": name, "args": {}, "invalid": _broken(args, exc)}
    if not isinstance(args, dict):
        return {
            "name": name,
            "args": {},
            "invalid": f"the arguments must be a JSON object; write {CALL_FORM}",
        }
    if name not in schemas:
        meant = only_meant(name, schemas)
        if meant is not None and schema_problem(args, schemas[meant]) is None:
            return {"name": meant, "args": args, "renamed": name}  # run, and say so
        why = (
            f"there is no tool named {unknown_tool(name, schemas)}. Call one of them as {CALL_FORM}"
        )
        return {"name": name, "args": args, "invalid": why}
    problem = schema_problem(args, schemas[name])
    if problem:
        why = f"the arguments do not match {name}'s schema: {problem}. Fix them and call it again"
        return {"name": name, "args": args, "invalid": why}
    return {"name": name, "args": args}


def schema_problem(args: dict[str, Any], schema: dict[str, Any]) -> str | None:
    """The first way `args` breaks the tool's JSON schema, or None."""
    import jsonschema

    try:
        validator = jsonschema.Draft202012Validator(schema)
        error = next(iter(sorted(validator.iter_errors(args), key=lambda e: e.path)), None)
    except jsonschema.SchemaError:
        return None  # a schema we cannot read: the tool validates its own arguments
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path)
    said = f"{where + ': ' if where else ''}{error.message}"[:300]
    if error.validator in ("required", "additionalProperties") and not error.absolute_path:
        said += f"; its arguments: {_arguments(schema)}"  # the allowed names
    return said


def _arguments(schema: dict[str, Any]) -> str:
    """The arguments a tool takes, as a model can use them: name (type, required)."""
    required = set(schema.get("required") or ())
    parts = []
    for name, prop in (schema.get("properties") or {}).items():
        kind = prop.get("type") if isinstance(prop, dict) else None
        tags = [str(kind)] if kind else []
        if name in required:
            tags.append("required")
        parts.append(f"{name} ({', '.join(tags)})" if tags else name)
    return ", ".join(parts)[:300] or "none"


def _broken(body: str, exc: json.JSONDecodeError) -> str:
    near = body[max(exc.pos - 20, 0) : exc.pos + 20].replace("\n", " ")
    return (
        f"your tool call was not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}, "
        f"near {near!r}). Reply with one ```json block holding {CALL_FORM}"
    )


INSTRUCTION = re.compile(r"(?:;|\.)\s*(?:Reply with|Call one of|Fix them|write )[\s\S]*$")


def what_was_wrong(name: str, error: str) -> str:
    """An invalid call as the answer model reads it: what was wrong, without the repair
    instruction meant for the function-call model (an answer model repeats instructions as the
    answer) and without the name `BROKEN`, which is no tool."""
    said = INSTRUCTION.sub("", error).strip()
    if name != BROKEN:
        return f"{name}: {said}"
    said = said.removeprefix("your tool call was ").removeprefix("your ")
    return f"a reply whose tool call could not be read ({said})"


RESULT_TAG = re.compile(r"<(\s*/?\s*tool_result)", re.IGNORECASE)


def tool_result_block(name: str, text: str) -> str:
    """One tool result, delimited; a <tool_result> or </tool_result> inside it is escaped."""
    safe_name = re.sub(r"[^A-Za-z0-9_.:-]", "_", name)[:100]
    body = RESULT_TAG.sub(r"&lt;\1", text)
    return f'<tool_result name="{safe_name}">\n{body}\n</tool_result>'


def as_plain(messages: list[BaseMessage]) -> list[BaseMessage]:
    """A request for a model without native tools: calls stay as the text the model wrote and
    tool results come back as a user message (no `tools`, no tool role on the wire), each inside
    a <tool_result> block that its text cannot close, so a fetched page cannot speak as the user."""
    out: list[BaseMessage] = []
    results: list[str] = []
    for message in messages:
        if isinstance(message, ToolMessage):
            text = message.content if isinstance(message.content, str) else str(message.content)
            if message.name == BROKEN:  # brainchat's own hint: no tool name to imitate
                results.append(f"(Your last reply held no readable tool call. {text})")
                continue
            results.append(tool_result_block(message.name or "the tool", text))
            continue
        if results:
            out.append(HumanMessage("\n\n".join(results)))
            results = []
        if isinstance(message, AIMessage) and message.tool_calls:
            text = message.content if isinstance(message.content, str) else ""
            if not text.strip():
                text = "\n".join(
                    "```json\n" + json.dumps({"name": c["name"], "arguments": c["args"]}) + "\n```"
                    for c in message.tool_calls
                )
            out.append(AIMessage(content=text))
        else:
            out.append(message)
    if results:
        out.append(HumanMessage("\n\n".join(results)))
    return out


def only_meant(name: str, tools: Collection[str]) -> str | None:
    """The one tool a short name stands for (`epoch` -> `epoch_data`, `train` -> `train_model`),
    or None when none or several do. Prefix and suffix only, never a fuzzy match: a misspelt
    name is told, not guessed."""
    found = [t for t in tools if t.startswith(f"{name}_") or t.endswith(f"_{name}")]
    return found[0] if len(found) == 1 else None


def unknown_tool(name: str, tools: Collection[str]) -> str:
    """ "'epoch' (did you mean 'epoch_data'?); available tools: ...": the closest name first.

    A small model reaches for short names (`epoch`, `split`, `train`); naming the tool it meant
    lets it repair the call in one step instead of reading the whole list.
    """
    known = sorted(tools)
    guess = [t for t in known if t.startswith(f"{name}_") or t.endswith(f"_{name}")]
    guess = guess or difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    meant = f" (did you mean {guess[0]!r}?)" if len(guess) == 1 else ""
    return f"{name!r}{meant}; available tools: {', '.join(known) or 'none'}"
