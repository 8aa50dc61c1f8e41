"""Model pairs to evaluate: `scripted`, a configured model's name, a JSON spec, or `FC+ANSWER`."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from brainchat.settings import ConfigError, ModelSpec, Settings, parse_model_spec

SCRIPTED = "scripted"


@dataclass(frozen=True)
class ModelPair:
    """The function-call model and the answer model of one evaluated configuration."""

    name: str
    function_call: ModelSpec | None = None
    answer: ModelSpec | None = None

    @property
    def scripted(self) -> bool:
        return self.function_call is None

    def describe(self) -> dict[str, str]:
        if self.scripted:
            return {"function_call": SCRIPTED, "answer": SCRIPTED}
        assert self.function_call is not None
        answer = self.answer or self.function_call
        return {"function_call": self.function_call.name, "answer": answer.name}


def scripted_specs(base_url: str, scenario: str) -> tuple[ModelSpec, ModelSpec]:
    """A scenario's own model names on the scripted server, so concurrent scenarios stay apart."""
    base = ModelSpec(
        model="",
        provider="openai-compatible",
        base_url=base_url,
        api_key="scripted",
        max_retries=0,
        context_window=32000,
    )
    return (
        replace(base, model=f"{scenario}/function_call", label="scripted-fc"),
        replace(base, model=f"{scenario}/answer", label="scripted-answer"),
    )


def resolve_pairs(
    items: list[str] | None, settings: Settings, env: dict[str, str]
) -> list[ModelPair]:
    """Each --models item as a pair; none given: the configured pair, else the scripted one."""
    if not items:
        fc = settings.model_for("function_call")
        if fc is None:
            return [ModelPair(SCRIPTED)]
        answer = settings.model_for("answer")
        return [_pair(fc, answer)]
    return [_resolve(item, settings, env) for item in items]


def _pair(fc: ModelSpec, answer: ModelSpec | None) -> ModelPair:
    same = answer is None or answer.name == fc.name
    return ModelPair(fc.name if same else f"{fc.name}+{answer.name}", fc, answer)  # type: ignore[union-attr]


def _resolve(item: str, settings: Settings, env: dict[str, str]) -> ModelPair:
    text = item.strip()
    if text == SCRIPTED:
        return ModelPair(SCRIPTED)
    if text.startswith("{"):
        try:
            data: Any = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError("--models", text, f"a JSON model spec ({exc.msg})") from None
        if isinstance(data, dict) and "function_call" in data:
            fc = _one(data["function_call"], settings, env)
            answer = _one(data["answer"], settings, env) if data.get("answer") else None
            return _pair(fc, answer)
        return _pair(_one(data, settings, env), None)
    if "+" in text:
        fc_name, answer_name = text.split("+", 1)
        return _pair(_one(fc_name, settings, env), _one(answer_name, settings, env))
    return _pair(_one(text, settings, env), None)


def _one(value: Any, settings: Settings, env: dict[str, str]) -> ModelSpec:
    if isinstance(value, dict):
        return parse_model_spec("--models", value, env)
    name = str(value).strip()
    if name in settings.models:
        return settings.models[name]
    known = ", ".join(sorted(settings.models)) or "none configured"
    raise ConfigError(
        "--models",
        name,
        f"'scripted', the name of a configured model ({known}), a JSON model spec, "
        "or FC+ANSWER of those",
    )
