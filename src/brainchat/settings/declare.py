"""How a variable is declared (`var`) and the base of every group of them (`Declared`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


def var(
    default: Any,
    name: str,
    help: str,
    *,
    ge: float | None = None,
    le: float | None = None,
    unit: str = "",
    allowed: str = "",
    shown_default: str = "",
    choices: dict[str, str] | None = None,
    panel: str = "",
    secret: bool = False,
) -> Any:
    """One declared variable `name` (the field's alias: an environment variable, or a spec's
    JSON key): `help` is its README line (markdown), `unit` follows its range,
    `allowed` and `shown_default` describe what its type and default cannot say alone,
    `choices` explains each allowed word, `panel` is its label in the settings panel, and
    `secret` keeps its value out of every message."""
    extra: dict[str, Any] = {
        "unit": unit,
        "allowed": allowed,
        "shown_default": shown_default,
        "choices": choices or {},
        "panel": panel,
        "secret": secret,
    }
    return Field(default, alias=name, description=help, ge=ge, le=le, json_schema_extra=extra)


class Declared(BaseModel):
    model_config = ConfigDict(populate_by_name=True, frozen=True)
