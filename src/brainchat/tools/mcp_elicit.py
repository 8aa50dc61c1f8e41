"""MCP elicitation, form mode: a server asks the user for input in the middle of a call.

The server sends `elicitation/create` with a `message` and a flat `requestedSchema` (string with
format email/uri/date/date-time and min/maxLength, number/integer with minimum/maximum, boolean,
single-select enum by `enum` (+ `enumNames`) or `oneOf` const/title, multi-select arrays of such
options). `parse_schema` turns it into a `Form` of `Field`s, or raises `BadSchema` naming what the
specification does not allow; `Form.validate` checks an answer against it before it is sent back
as `accept`. Whoever can ask the user (the chat's form, the terminal) is an `Asker`:
`async (form) -> Reply`; mcp_elicit_route.py finds the asker of the run whose call the server
asked in. Nothing here knows Chainlit or a terminal.
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal
from urllib.parse import urlsplit

from brainchat.redact import secret_name

Action = Literal["accept", "decline", "cancel"]
Kind = Literal["string", "number", "integer", "boolean", "enum", "multi"]
MAX_FIELDS = 50
FORMATS = ("email", "uri", "date", "date-time")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+")
_TRUE, _FALSE = {"y", "yes", "true", "1", "on"}, {"n", "no", "false", "0", "off"}
HIDDEN = "•••"  # what a summary shows for a secret field's value


class BadSchema(ValueError):
    """The server's requestedSchema is not one the specification allows (the reason says why)."""


class InvalidAnswer(ValueError):
    """An answer that does not match the form: field name -> what is wrong (never the value)."""

    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


@dataclass(frozen=True)
class Field:
    """One property of the requested schema."""

    name: str
    kind: Kind
    title: str = ""
    description: str = ""
    required: bool = False
    format: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    minimum: float | None = None
    maximum: float | None = None
    options: tuple[tuple[str, str], ...] = ()  # (value, label) of an enum / multi-select
    default: Any = None

    @property
    def label(self) -> str:
        return self.title or self.name

    @property
    def secret(self) -> bool:
        """Password-like: its value is never logged or shown in a summary."""
        return secret_name(self.name) or secret_name(self.title) or self.format == "password"

    def hint(self) -> str:
        """The expected shape in a few words: 'integer 18-99', 'email', 'one of: mu, beta'."""
        if self.kind in ("enum", "multi"):
            many = "one or more of" if self.kind == "multi" else "one of"
            return f"{many}: " + ", ".join(label for _, label in self.options)
        if self.kind == "boolean":
            return "yes or no"
        if self.kind in ("number", "integer"):
            lo, hi = self.minimum, self.maximum
            span = f" {lo:g}-{hi:g}" if lo is not None and hi is not None else ""
            span = span or (f" ≥ {lo:g}" if lo is not None else f" ≤ {hi:g}" if hi else "")
            return f"{'whole number' if self.kind == 'integer' else 'number'}{span}"
        parts = [self.format or "text"]
        if self.min_length or self.max_length:
            parts.append(f"{self.min_length or 0}-{self.max_length or '…'} characters")
        return ", ".join(parts)

    def parse(self, raw: Any) -> Any:
        """The typed value of an answer given as text (a terminal, a form box) or already typed;
        ValueError says what is wrong. None for an empty answer."""
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return None  # an empty box: no answer (required fields say so)
        if self.kind == "boolean":
            return _boolean(raw)
        if self.kind in ("number", "integer"):
            return _number(raw, self.kind == "integer")
        if self.kind == "enum":
            return self._option(raw)
        if self.kind == "multi":
            items = raw if isinstance(raw, list) else str(raw).split(",")
            return [self._option(i) for i in items if str(i).strip()]
        if not isinstance(raw, str):
            raise ValueError("must be text")
        return raw

    def check(self, value: Any) -> None:
        """ValueError if a typed value breaks the field's limits."""
        if self.kind in ("number", "integer"):
            if self.minimum is not None and value < self.minimum:
                raise ValueError(f"must be at least {self.minimum:g}")
            if self.maximum is not None and value > self.maximum:
                raise ValueError(f"must be at most {self.maximum:g}")
        elif self.kind == "string":
            n = len(value)
            if self.min_length is not None and n < self.min_length:
                raise ValueError(f"must have at least {self.min_length} characters")
            if self.max_length is not None and n > self.max_length:
                raise ValueError(f"must have at most {self.max_length} characters")
            if self.format:
                _check_format(self.format, value)

    def _option(self, raw: Any) -> str:
        text = str(raw).strip()
        for value, label in self.options:
            if text == value or text.lower() == label.lower():
                return value
        if text.isdigit() and 1 <= int(text) <= len(self.options):  # a terminal's numbered list
            return self.options[int(text) - 1][0]
        raise ValueError("must be " + self.hint())


@dataclass(frozen=True)
class Form:
    """What a server asked: its name, its message and the fields to fill."""

    server: str
    message: str
    fields: tuple[Field, ...]
    tool: str = ""
    call_id: str = ""
    timeout: float = 120.0  # seconds the user has before the form is cancelled

    def validate(self, answers: dict[str, Any]) -> dict[str, Any]:
        """The content to send with `accept`: typed, checked; InvalidAnswer names the fields."""
        content: dict[str, Any] = {}
        errors: dict[str, str] = {}
        for f in self.fields:
            try:
                value = f.parse(answers.get(f.name))
                if value is None or value == []:
                    if f.required:
                        raise ValueError("is required")
                    continue
                f.check(value)
            except ValueError as exc:
                errors[f.name] = str(exc)
                continue
            content[f.name] = value
        if errors:
            raise InvalidAnswer(errors)
        return content

    def summary(self, reply: Reply) -> str:
        """What was answered, for the step: secret fields as •••; never for the logs."""
        if reply.action != "accept":
            return {"decline": "you declined", "cancel": "cancelled"}[reply.action]
        content = reply.content or {}
        shown = [
            f"{f.label}: {HIDDEN if f.secret else _short(content[f.name])}"
            for f in self.fields
            if f.name in content
        ]
        return "you accepted" + (" (" + "; ".join(shown) + ")" if shown else "")


@dataclass(frozen=True)
class Reply:
    action: Action
    content: dict[str, Any] | None = field(default=None)


Asker = Callable[[Form], Awaitable[Reply]]  # asks this run's user; the chat form or a terminal


def parse_schema(schema: Any) -> tuple[Field, ...]:
    """The fields of a requestedSchema; BadSchema names what the specification does not allow."""
    if not isinstance(schema, dict):
        raise BadSchema("requestedSchema is not an object")
    if schema.get("type", "object") != "object":
        raise BadSchema(f"requestedSchema has type {schema.get('type')!r}, not 'object'")
    props = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(props, dict) or not isinstance(required, list):
        raise BadSchema("'properties' must be an object and 'required' a list")
    if len(props) > MAX_FIELDS:
        raise BadSchema(f"{len(props)} fields (at most {MAX_FIELDS})")
    unknown = [r for r in required if r not in props]
    if unknown:
        raise BadSchema(f"required names {unknown[0]!r}, which is not a property")
    return tuple(_field(str(name), spec, name in required) for name, spec in props.items())


def _field(name: str, spec: Any, required: bool) -> Field:
    if not isinstance(spec, dict):
        raise BadSchema(f"property {name!r} is not an object")
    kind = spec.get("type")
    base: dict[str, Any] = {
        "name": name,
        "title": _text(spec.get("title")),
        "description": _text(spec.get("description")),
        "required": required,
        "default": spec.get("default"),
    }
    if kind == "string" and ("enum" in spec or "oneOf" in spec or "anyOf" in spec):
        return Field(kind="enum", options=_options(name, spec), **base)
    if kind == "array":
        items = spec.get("items")
        if not isinstance(items, dict) or not ({"enum", "anyOf", "oneOf"} & set(items)):
            raise BadSchema(f"property {name!r} is an array of anything but options")
        return Field(kind="multi", options=_options(name, items), **base)
    if kind == "string":
        fmt = spec.get("format")
        if fmt is not None and fmt not in FORMATS:
            raise BadSchema(f"property {name!r} has format {fmt!r} (allowed: {', '.join(FORMATS)})")
        lo, hi = _bound(name, spec, "minLength", int), _bound(name, spec, "maxLength", int)
        return Field(kind="string", format=fmt, min_length=lo, max_length=hi, **base)  # type: ignore[arg-type]
    if kind in ("number", "integer"):
        lo, hi = _bound(name, spec, "minimum", float), _bound(name, spec, "maximum", float)
        return Field(kind=kind, minimum=lo, maximum=hi, **base)
    if kind == "boolean":
        return Field(kind="boolean", **base)
    raise BadSchema(f"property {name!r} has type {kind!r} (allowed: string, number, integer, "
                    "boolean, enum, array of options; no nested objects)")  # fmt: skip


def _options(name: str, spec: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    if "enum" in spec:
        values, labels = spec["enum"], spec.get("enumNames", spec["enum"])
        if not isinstance(values, list) or not isinstance(labels, list):
            raise BadSchema(f"property {name!r}: 'enum' and 'enumNames' must be lists")
        if len(labels) != len(values):
            raise BadSchema(f"property {name!r}: enumNames and enum differ in length")
        pairs = list(zip(values, labels, strict=True))
    else:
        choices = spec.get("oneOf", spec.get("anyOf"))
        if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
            raise BadSchema(f"property {name!r}: oneOf/anyOf must list {{const, title}} objects")
        pairs = [(c.get("const"), c.get("title", c.get("const"))) for c in choices]
    if not pairs or not all(isinstance(v, str) and isinstance(t, str) for v, t in pairs):
        raise BadSchema(f"property {name!r}: options must be a non-empty list of strings")
    return tuple(pairs)


def _bound(name: str, spec: dict[str, Any], key: str, kind: type) -> Any:
    value = spec.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadSchema(f"property {name!r}: {key} must be a number")
    return kind(value)


def _text(value: Any) -> str:
    return value[:500] if isinstance(value, str) else ""


def _boolean(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise ValueError("must be yes or no")


def _number(raw: Any, integer: bool) -> int | float:
    if isinstance(raw, bool):
        raise ValueError("must be a number")
    try:
        value = float(raw) if not isinstance(raw, int | float) else raw
    except ValueError:
        raise ValueError("must be a whole number" if integer else "must be a number") from None
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    if integer:
        if not float(value).is_integer():
            raise ValueError("must be a whole number")
        return int(value)
    return value


def _check_format(fmt: str, value: str) -> None:
    if fmt == "email" and not _EMAIL.fullmatch(value):
        raise ValueError("must be an email address (name@example.org)")
    if fmt == "uri":
        parts = urlsplit(value)
        if not parts.scheme or not (parts.netloc or parts.path) or " " in value:
            raise ValueError("must be a URI (https://example.org/...)")
    if fmt == "date":
        try:
            date.fromisoformat(value)
        except ValueError:
            raise ValueError("must be a date (YYYY-MM-DD)") from None
    if fmt == "date-time":
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError("must be a date and time (YYYY-MM-DDTHH:MM:SS)") from None


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    return text if len(text) <= 60 else text[:57] + "…"
