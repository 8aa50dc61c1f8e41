"""Tool schemas converted once per process, not once per session or turn.

Every session builds its own tool objects (the EEG tools close over the session's study), so
LangChain's per-instance memo never hits for a new session, and converting 23 pydantic models to
OpenAI function schemas cost ~10 ms of CPU per agent build. A tool's schema depends only on its
class, name, description, argument schema and (for injected arguments) its function's code, which
are the same in every session: that is the cache key. A tool with an argument schema that cannot
be keyed is converted every time, as before.
"""

from __future__ import annotations

import copy
import json
from collections import OrderedDict
from typing import Any

from langchain_core.tools import BaseTool

MAX_ENTRIES = 2048  # MCP servers may bring many distinct tools; old ones are dropped first

_openai: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()
_json: dict[type, dict[str, Any]] = {}
stats = {"hits": 0, "misses": 0}  # tests and benches read it


def _key(tool: BaseTool) -> tuple[Any, ...] | None:
    schema = tool.args_schema
    if isinstance(schema, dict):
        try:
            schema_key: Any = json.dumps(schema, sort_keys=True)
        except (TypeError, ValueError):
            return None
    elif schema is None or isinstance(schema, type):
        schema_key = schema
    else:
        return None
    fn = getattr(tool, "coroutine", None) or getattr(tool, "func", None)
    return (
        type(tool),
        tool.name,
        tool.description,
        schema_key,
        getattr(fn, "__code__", fn),  # injected arguments are read from the signature
        (tool.metadata or {}).get("type"),  # LangChain's custom_tool marker
    )


def _copy(schema: dict[str, Any]) -> dict[str, Any]:
    # A caller that edits a schema must not change the cached one (json is ~5x faster than deepcopy).
    try:
        return json.loads(json.dumps(schema))  # type: ignore[no-any-return]
    except (TypeError, ValueError):
        return copy.deepcopy(schema)


def openai_schema(tool: BaseTool) -> dict[str, Any]:
    """`convert_to_openai_tool(tool)`, computed once per distinct tool definition."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    key = _key(tool)
    if key is None:
        stats["misses"] += 1
        return convert_to_openai_tool(tool)
    cached = _openai.get(key)
    if cached is None:
        stats["misses"] += 1
        cached = convert_to_openai_tool(tool)
        _openai[key] = cached
        if len(_openai) > MAX_ENTRIES:
            _openai.popitem(last=False)
    else:
        stats["hits"] += 1
        _openai.move_to_end(key)
    return _copy(cached)


def args_json_schema(tool: BaseTool) -> dict[str, Any]:
    """The JSON schema of a tool's arguments ({} without one); pydantic classes converted once."""
    schema = tool.args_schema
    if schema is None:
        return {}
    if isinstance(schema, dict):
        return schema
    cached = _json.get(schema)
    if cached is None:
        cached = _json[schema] = schema.model_json_schema()  # type: ignore[union-attr]
    return _copy(cached)
