"""Reading a declared field (declared.py): its bounds, words and default, and `check`, which reads a
raw value as the field says or raises a ConfigError naming the variable and what is allowed."""

from __future__ import annotations

import functools
import types
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from brainchat.settings.errors import ConfigError

TRUE, FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off", ""}


def info(group: type[BaseModel], name: str) -> FieldInfo:
    return group.model_fields[name]


def extra(field: FieldInfo) -> dict[str, Any]:
    return field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}


def panel_label(group: type[BaseModel], name: str) -> str:
    """The field's label in the settings panel (what its errors name there)."""
    return str(extra(info(group, name))["panel"])


def env_name(group: type[BaseModel], name: str) -> str:
    return str(info(group, name).alias)


def bounds(field: FieldInfo) -> tuple[float | None, float | None]:
    lo = next((m.ge for m in field.metadata if isinstance(m, annotated_types.Ge)), None)
    hi = next((m.le for m in field.metadata if isinstance(m, annotated_types.Le)), None)
    return lo, hi  # type: ignore[return-value]


def number(value: float | None) -> str:
    """A bound as messages and the README write it: 10000, 0.01 (no 1e+04)."""
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def base_type(field: FieldInfo) -> Any:
    """The field's type without `| None`."""
    tp = field.annotation
    if get_origin(tp) in (Union, types.UnionType):
        tp = next(a for a in get_args(tp) if a is not type(None))
    return tp


def choices(field: FieldInfo) -> tuple[str, ...]:
    tp = base_type(field)
    return tuple(get_args(tp)) if get_origin(tp) is Literal else ()


def allowed_words(field: FieldInfo) -> str:
    """`allowed: a (what a does), b` as errors say it."""
    said = extra(field)["choices"]
    return "allowed: " + ", ".join(f"{c} ({said[c]})" if c in said else c for c in choices(field))


@functools.cache
def _adapter(group: type[BaseModel], name: str) -> TypeAdapter[Any]:
    field = info(group, name)
    return TypeAdapter(Annotated[(base_type(field), *field.metadata)])  # type: ignore[arg-type]


def check(group: type[BaseModel], name: str, raw: object, variable: str = "") -> Any:
    """`raw` read as the declared field `name` of `group`; a ConfigError naming `variable`
    (the variable's own name unless given, e.g. a panel label) when it is not allowed."""
    field = info(group, name)
    var_name = variable or str(field.alias)
    secret = extra(field)["secret"]
    tp = base_type(field)
    if raw is None and tp is not field.annotation:  # an optional field left out
        return None
    if tp is bool:
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in TRUE | FALSE:
            return text in TRUE
        said: tuple[str, dict[str, str]] = ("settings.allowed.bool", {})
        raise ConfigError(var_name, raw, "expected true or false", secret=secret, said=said)
    if choices(field):
        value = str(raw).strip().lower().replace("-", "_") if isinstance(raw, str) else raw
        if value not in choices(field):
            said = ("settings.allowed.choices", {"choices": ", ".join(choices(field))})
            raise ConfigError(var_name, raw, allowed_words(field), secret=secret, said=said)
        return value
    if tp in (int, float):
        return _number(group, name, raw, var_name, secret)
    return Path(str(raw)) if tp is Path else raw


def _number(group: type[BaseModel], name: str, raw: object, var_name: str, secret: bool) -> Any:
    field = info(group, name)
    tp = base_type(field)
    lo, hi = (number(b) for b in bounds(field))
    expected = f"expected a {tp.__name__} from {lo} to {hi}"
    kind = "settings.allowed.whole" if tp is int else "settings.allowed.number"
    said = (kind, {"lo": lo, "hi": hi})
    if isinstance(raw, bool) or (tp is int and isinstance(raw, float)):
        raise ConfigError(var_name, raw, expected, secret=secret, said=said)
    try:
        return _adapter(group, name).validate_python(raw.strip() if isinstance(raw, str) else raw)
    except ValidationError as exc:
        error = exc.errors()[0]["type"]
        out = error in ("greater_than_equal", "less_than_equal")  # NaN fails these too
        if out:
            said = ("settings.allowed.range", {"lo": lo, "hi": hi})
        raise ConfigError(
            var_name,
            raw,
            f"allowed range is {lo} to {hi}" if out else expected,
            secret=secret,
            said=said,
        ) from None
    except (TypeError, ValueError, OverflowError):  # a number too large for a float
        raise ConfigError(var_name, raw, expected, secret=secret, said=said) from None


def default(group: type[BaseModel], name: str) -> Any:
    return info(group, name).default
