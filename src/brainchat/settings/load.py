"""Environment (+ .env) and settings-panel values -> a typed Settings that never raises.

What each variable allows and defaults to is declared in declared.py; here they are read, and a
bad one becomes a `ConfigError` in `settings.errors` (its default stays) so the app can start and
show it instead of crashing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from brainchat import redact
from brainchat.settings.declared import AppVars, LimitVars, ModelVars
from brainchat.settings.errors import ConfigError
from brainchat.settings.fields import check, default, env_name, panel_label
from brainchat.settings.spec import KEY_AS_MODEL, ModelSpec, SpecVars, parse_model_spec

MODEL_VARS = tuple(
    env_name(ModelVars, r) for r in ("chat_model", "function_call_model", "answer_model")
)
UPLOAD_MAX_ENV = env_name(AppVars, "upload_max_mb")
QUOTA_ENV = env_name(AppVars, "user_quota_mb")
OPERATION_ENV = env_name(AppVars, "max_operation_mb")
Mode = Literal["chat", "agent"]
ExecutionMode = Literal["auto", "single_step"]
Evaluation = Literal["rule", "model"]
PlanMode = Literal["off", "auto", "always"]
# the settings panel's fields that set a limit (their labels and ranges are declared in LimitVars)
PANEL_LIMITS = ("max_iterations", "max_execution_time", "execution_mode", "plan_mode")


def _limit(name: str) -> Any:
    return default(LimitVars, name)


def _app(name: str) -> Any:
    return default(AppVars, name)


@dataclass(frozen=True)
class AgentLimits:
    """The run's limits in force (defaults and ranges: LimitVars). Not checked here: tests and
    evals build tighter ones than a user may set."""

    max_iterations: int = _limit("max_iterations")  # hard limit: function-call model calls
    max_execution_time: float = _limit("max_execution_time")  # the whole run, answer included
    execution_mode: ExecutionMode = _limit("execution_mode")
    max_auto_rounds: int = _limit("max_auto_rounds")  # useful tool rounds in auto mode
    max_calls_per_reply: int = _limit("max_calls_per_reply")  # the rest of a reply's are refused
    evaluation: Evaluation = _limit("evaluation")  # "rule": cheap verdicts route; "model" decides
    min_result_chars: int = _limit("min_result_chars")
    enable_cache: bool = _limit("enable_cache")
    verbose: bool = _limit("verbose")
    tool_timeout: float = _limit("tool_timeout")
    loop_repeats_to_stop: int = 2
    confirm_timeout: float = 120.0
    plan_mode: PlanMode = _limit("plan_mode")  # multi-step requests get a verified plan
    max_replans: int = _limit("max_replans")  # replans after a failed or unverified step, per run


@dataclass(frozen=True)
class Settings:
    chat_model: ModelSpec | None = None
    function_call_model: ModelSpec | None = None
    answer_model: ModelSpec | None = None
    limits: AgentLimits = AgentLimits()
    default_mode: Mode = _app("default_mode")
    data_dir: Path = _app("data_dir")
    upload_max_mb: int = _app("upload_max_mb")  # the largest file (or zip) a user may upload
    user_quota_mb: int = _app("user_quota_mb")  # disk a user's files may take (0: none)
    max_operation_mb: int = _app("max_operation_mb")  # memory one study operation may need
    mcp_config: Path | None = _app("mcp_config")
    mcp_max_call_seconds: float = _app("mcp_max_call_seconds")  # tools/mcp_call_limit reads it
    mcp_log_level: str = _app("mcp_log_level")  # tools/mcp_notify reads it
    mcp_roots: str = _app("mcp_roots")  # tools/mcp_roots reads it
    # knowledge/ reads these bounds from the environment where it uses them; declared here so
    # a bad value is named at start-up like any other
    knowledge_max_mb: int = _app("knowledge_max_mb")
    knowledge_max_file_mb: int = _app("knowledge_max_file_mb")
    knowledge_max_pages: int = _app("knowledge_max_pages")
    knowledge_max_chars: int = _app("knowledge_max_chars")
    knowledge_parse_seconds: int = _app("knowledge_parse_seconds")
    knowledge_zip_entries: int = _app("knowledge_zip_entries")
    knowledge_zip_mb: int = _app("knowledge_zip_mb")
    search_backend: str = _app("search_backend")
    search_fixture: Path | None = _app("search_fixture")
    errors: tuple[ConfigError, ...] = ()

    @property
    def models(self) -> dict[str, ModelSpec]:
        """Every configured model by name (the settings panel's choices)."""
        found: dict[str, ModelSpec] = {}
        for spec in (self.chat_model, self.function_call_model, self.answer_model):
            if spec is not None:
                found.setdefault(spec.name, spec)
        return found

    def model_for(self, role: str) -> ModelSpec | None:
        """The model playing a role: the answer model falls back to the function-call model."""
        if role == "chat":
            return self.chat_model or self.function_call_model
        if role == "function_call":
            return self.function_call_model or self.chat_model
        return self.answer_model or self.function_call_model or self.chat_model

    @property
    def configured(self) -> bool:
        return self.chat_model is not None or self.function_call_model is not None

    def problem(self, errors: tuple[ConfigError, ...] | None = None) -> str | None:
        """The message a user sees instead of an answer when the configuration is unusable
        (`errors`: the ones that still count; all of them by default)."""
        errors = self.errors if errors is None else errors
        if errors:
            lines = "\n".join(f"- {err}" for err in errors)
            return f"The configuration has {len(errors)} problem(s):\n{lines}"
        return None if self.configured else NOT_CONFIGURED


NOT_CONFIGURED = (
    "No model is configured. Set CHAT_MODEL (or AGENT_FUNCTION_CALL_MODEL) to a JSON model spec, "
    'e.g. CHAT_MODEL=\'{"provider": "openai", "model": "gpt-4o-mini"}\' with OPENAI_API_KEY set, '
    "or just OPENAI_API_KEY for the default model; then restart. See README.md, Configuration."
)


def read_env(dotenv: bool = True) -> dict[str, str]:
    """The environment over `.env` (real variables win)."""
    if not dotenv:
        return dict(os.environ)
    from dotenv import dotenv_values

    values = {k: v for k, v in dotenv_values(".env").items() if v is not None}
    return {**values, **os.environ}


def _declared(group: Any, env: Mapping[str, str], errors: list[ConfigError]) -> dict[str, Any]:
    """Each field of `group` read from its variable; unset or bad: its default (bad: an error)."""
    out: dict[str, Any] = {}
    for name, field in group.model_fields.items():
        raw = env.get(str(field.alias))
        if raw is None or str(raw).strip() == "":
            out[name] = field.default
            continue
        try:
            out[name] = check(group, name, raw)
        except ConfigError as exc:
            errors.append(exc)
            out[name] = field.default
    return out


def _models(env: Mapping[str, str], errors: list[ConfigError]) -> dict[str, ModelSpec | None]:
    """The three model variables; OPENAI_API_KEY (+ OPENAI_BASE_URL, OPENAI_MODEL) alone make a
    usable default chat model."""
    models: dict[str, ModelSpec | None] = {}
    for var in MODEL_VARS:
        raw = (env.get(var) or "").strip()
        try:
            models[var] = parse_model_spec(var, raw, env) if raw else None
        except ConfigError as exc:
            errors.append(exc)
            models[var] = None
    if any(models.values()) or any(e.variable.startswith(MODEL_VARS) for e in errors):
        return models
    if env.get("OPENAI_API_KEY"):
        spec: dict[str, Any] = {
            "provider": "openai",
            "model": env.get("OPENAI_MODEL") or default(ModelVars, "openai_model"),
        }
        if env.get("OPENAI_BASE_URL"):
            spec.update(
                provider="openai-compatible",
                base_url=env["OPENAI_BASE_URL"],
                api_key_env="OPENAI_API_KEY",
            )
        try:
            models["CHAT_MODEL"] = parse_model_spec("OPENAI_MODEL", spec, env)
        except ConfigError as exc:
            errors.append(exc)
    return models


def load_settings(env: Mapping[str, str] | None = None, *, dotenv: bool = True) -> Settings:
    """Read the configuration; never raises. Problems are in `settings.errors`."""
    env = read_env(dotenv) if env is None else env
    errors: list[ConfigError] = []
    models = _models(env, errors)
    limits = AgentLimits(**_declared(LimitVars, env, errors))
    app = _declared(AppVars, env, errors)
    if app["search_fixture"] is not None:
        app["search_backend"] = "fixture"
    return Settings(
        chat_model=models["CHAT_MODEL"],
        function_call_model=models["AGENT_FUNCTION_CALL_MODEL"],
        answer_model=models["AGENT_ANSWER_MODEL"],
        limits=limits,
        errors=tuple(errors),
        **app,
    )


def with_overrides(
    settings: Settings,
    overrides: Mapping[str, Any],
    extra_models: Mapping[str, ModelSpec] | None = None,
) -> Settings:
    """Apply settings-panel values; raises ConfigError (settings unchanged) on a bad one.

    `extra_models` are more models a role may pick by name (the user's connections); they can
    fill a role even when no model is configured.
    """
    pool = {**settings.models, **(extra_models or {})}
    lim = {
        key: check(LimitVars, key, overrides[key], panel_label(LimitVars, key))
        for key in PANEL_LIMITS
        if overrides.get(key) is not None
    }
    updates: dict[str, Any] = {}
    for role, attr in (
        ("function_call", "function_call_model"),
        ("answer", "answer_model"),
        ("chat", "chat_model"),
    ):
        spec = _role_override(settings, role, overrides, pool)
        if spec is not None:
            updates[attr] = spec
    return replace(settings, limits=replace(settings.limits, **lim), **updates)


def _role_override(
    settings: Settings, role: str, overrides: Mapping[str, Any], pool: Mapping[str, ModelSpec]
) -> ModelSpec | None:
    """A role's model with the panel's pick, temperature and tool calling; None: no change."""
    base = settings.model_for(role)
    name = overrides.get(f"{role}_model")
    temp = overrides.get(f"{role}_temperature")
    calling = overrides.get(f"{role}_tool_calling")
    guidance = overrides.get(f"{role}_guidance")
    streamed = overrides.get(f"{role}_stream_tool_calls")
    if all(v is None for v in (name, temp, calling, guidance, streamed)):
        return None
    spec = pool.get(str(name)) if name else base
    if spec is None and base is None:
        return None  # nothing configured to put a typed id on
    if spec is None:
        assert base is not None
        if not str(name).strip() or any(c.isspace() for c in str(name).strip()):
            raise ConfigError(f"{role} model", name, "a model id without spaces")
        if redact.looks_secret(str(name)):
            raise ConfigError(f"{role} model", None, KEY_AS_MODEL, secret=True)
        spec = replace(base, model=str(name).strip(), label=None)
    for key, raw, label in (
        ("temperature", temp, f"{role} temperature"),
        ("tool_calling", calling, f"{role} tool calling"),
        ("guidance", guidance, f"{role} guidance"),
        ("stream_tool_calls", streamed, f"{role} streamed tool calls"),
    ):
        if raw is not None and raw != "":
            spec = replace(spec, **{key: check(SpecVars, key, raw, label)})
    return spec
