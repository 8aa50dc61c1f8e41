"""Environment (+ .env) and UI settings -> a typed, validated configuration that never raises.

Every problem becomes a `ConfigError` naming the variable, the bad value (masked, or not shown
when it may be a secret) and what is allowed; `load_settings` collects them so the app can start
and show them instead of crashing.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, cast
from urllib.parse import urlsplit

from brainchat import redact

PROVIDERS: dict[str, dict[str, str | None]] = {
    # provider -> default base_url and the env var holding its key
    "openai": {"base_url": "https://api.openai.com/v1", "key_env": "OPENAI_API_KEY"},
    "deepseek": {"base_url": "https://api.deepseek.com/v1", "key_env": "DEEPSEEK_API_KEY"},
    "ollama": {"base_url": "http://localhost:11434/v1", "key_env": None},
    "vllm": {"base_url": "http://localhost:8000/v1", "key_env": None},
    "openai-compatible": {"base_url": None, "key_env": None},
}
SPEC_KEYS = {
    "provider",
    "model",
    "model_name",
    "base_url",
    "api_key",
    "api_key_env",
    "temperature",
    "max_tokens",
    "timeout",
    "stream_usage",
    "input_price",
    "output_price",
    "prompt_variant",
    "context_window",
    "max_retries",
    "label",
    "tool_calling",
    "stream_tool_calls",
}
MODEL_VARS = ("CHAT_MODEL", "AGENT_FUNCTION_CALL_MODEL", "AGENT_ANSWER_MODEL")
UPLOAD_MAX_ENV = "BRAINCHAT_UPLOAD_MAX_MB"
QUOTA_ENV = "BRAINCHAT_USER_QUOTA_MB"
OPERATION_ENV = "BRAINCHAT_MAX_OPERATION_MB"
SPEC_EXAMPLE = 'JSON like {"provider": "openai", "model": "gpt-4o-mini"}'
KEY_AS_MODEL = (
    "it looks like an API key, not a model name; put the key in api_key (or OPENAI_API_KEY) "
    "and give a model name such as gpt-4o-mini"
)
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
VARIANT = re.compile(r"[A-Za-z0-9_-]{1,40}")
Mode = Literal["chat", "agent"]
ExecutionMode = Literal["auto", "single_step"]
Evaluation = Literal["rule", "model"]
PlanMode = Literal["off", "auto", "always"]
ToolCalling = Literal["native", "prompt", "auto"]
TOOL_CALLING = ("native", "prompt", "auto")
TOOL_CALLING_HELP = (
    "allowed: native (the server's own tool calls), prompt (tools described in the system "
    "prompt, calls read from the reply's JSON), auto (native, plus calls written as JSON in the text)"
)


class ConfigError(ValueError):
    """A configuration value that cannot be used, with what would be accepted; never a secret."""

    def __init__(self, variable: str, value: object, allowed: str, *, secret: bool = False) -> None:
        # `value` keeps only the masked form: the exception may be logged or shown anywhere.
        self.variable, self.allowed = variable, allowed
        self.value = redact.HIDDEN if secret else redact.show(value)
        super().__init__(f"{variable}: {self.value} is not valid; {allowed}")


DEFAULT_REPLY_TOKENS = 1024  # a reply's limit when a spec sets no max_tokens


@dataclass(frozen=True)
class ModelSpec:
    """One OpenAI-compatible model endpoint. The key never appears in repr or logs."""

    model: str
    provider: str = "openai"
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float = 60.0
    max_retries: int = 2
    stream_usage: bool = True
    input_price: float | None = None  # USD per million input tokens
    output_price: float | None = None  # USD per million output tokens
    prompt_variant: str | None = None
    context_window: int = 16000
    label: str | None = None
    tool_calling: ToolCalling = "native"
    stream_tool_calls: bool = True  # False: the function-call request is not streamed
    user_url: bool = False  # a user typed base_url (a connection): requests go through netguard

    @property
    def name(self) -> str:
        return self.label or self.model

    @property
    def reply_tokens(self) -> int:
        """The reply's length limit, sent as max_tokens with every request: the spec's, else
        what the context budget keeps for the reply (1,024, or half a smaller window)."""
        return self.max_tokens or min(DEFAULT_REPLY_TOKENS, self.context_window // 2)

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        if self.input_price is None and self.output_price is None:
            return None
        return (
            input_tokens * (self.input_price or 0.0) + output_tokens * (self.output_price or 0.0)
        ) / 1_000_000


@dataclass(frozen=True)
class AgentLimits:
    max_iterations: int = 10  # hard limit: function-call model calls per run
    max_execution_time: float = 60.0  # the whole run, answer stage included
    execution_mode: ExecutionMode = "auto"
    max_auto_rounds: int = 5  # success limit in auto mode: tool rounds with a useful result
    max_calls_per_reply: int = 8  # tool calls run from one model reply; the rest are refused
    evaluation: Evaluation = "rule"  # "rule": cheap verdicts route; "model": the model decides
    min_result_chars: int = 20
    enable_cache: bool = True
    verbose: bool = False
    tool_timeout: float = 30.0
    loop_repeats_to_stop: int = 2
    confirm_timeout: float = 120.0
    plan_mode: PlanMode = "off"  # multi-step requests get a verified plan (agent/plan.py)
    max_replans: int = 2  # replans after a failed or unverified step, per run


@dataclass(frozen=True)
class Settings:
    chat_model: ModelSpec | None = None
    function_call_model: ModelSpec | None = None
    answer_model: ModelSpec | None = None
    limits: AgentLimits = AgentLimits()
    default_mode: Mode = "chat"
    data_dir: Path = Path("data")
    upload_max_mb: int = 500  # the largest file (or zip) a user may upload, in MB
    user_quota_mb: int = 20_000  # disk a user's uploads, models and exports may take (0: none)
    max_operation_mb: int = 4_000  # memory one study operation may need (resample, filter...)
    mcp_config: Path | None = None
    search_backend: str = "ddgs"
    search_fixture: Path | None = None
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


def _num(var: str, raw: object, kind: type, lo: float, hi: float) -> Any:
    try:
        value = kind(raw)
        if isinstance(raw, bool) or (kind is int and isinstance(raw, float)):
            raise ValueError
    except (TypeError, ValueError, OverflowError):  # int(1e999) overflows: JSON reads it as inf
        raise ConfigError(var, raw, f"expected a {kind.__name__} from {lo} to {hi}") from None
    if not lo <= value <= hi:  # NaN fails every comparison, inf the bound: both refused
        raise ConfigError(var, raw, f"allowed range is {lo} to {hi}")
    return value


def _bool(var: str, raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off", ""}:
        return False
    raise ConfigError(var, raw, "expected true or false")


def parse_model_spec(var: str, raw: str | Mapping[str, Any], env: Mapping[str, str]) -> ModelSpec:
    """Parse one JSON model spec (or a bare model name) into a ModelSpec."""
    if isinstance(raw, str):
        text = raw.strip()
        if not text.startswith("{"):
            # a JSON array or string is not a model name: `["gpt-4o"]` would be sent as the id
            if not text or any(c.isspace() or c in "[]{}\"'" for c in text):
                raise ConfigError(var, raw, f"expected {SPEC_EXAMPLE} or a model name")
            data: dict[str, Any] = {"model": text}
        else:
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                near = redact.excerpt(text, exc.pos, shown_keys=SPEC_KEYS - {"api_key"})
                raise ConfigError(
                    var,
                    near,
                    f"broken JSON at line {exc.lineno} column {exc.colno} ({exc.msg}); "
                    f"expected {SPEC_EXAMPLE}",
                ) from None
    else:
        data = dict(raw)
    if not isinstance(data, dict):
        raise ConfigError(var, raw, "expected a JSON object")
    unknown = set(data) - SPEC_KEYS
    if unknown:
        key = sorted(unknown)[0]  # its value is never shown: an unknown key may hold anything
        close = difflib.get_close_matches(key, SPEC_KEYS, n=1)
        hint = f"unknown key{f' (did you mean {close[0]!r}?)' if close else ''}"
        raise ConfigError(
            f"{var}.{redact.mask(key)}",
            None,
            f"{hint}; known keys: {', '.join(sorted(SPEC_KEYS))}",
            secret=True,
        )
    raw_provider = data.get("provider") or (
        "openai-compatible" if data.get("base_url") else "openai"
    )
    provider = str(raw_provider).lower()
    if provider not in PROVIDERS:
        raise ConfigError(f"{var}.provider", raw_provider, f"allowed: {', '.join(PROVIDERS)}")
    model = data.get("model") or data.get("model_name")
    if not isinstance(model, str) or not model.strip():
        raise ConfigError(
            f"{var}.model", model, "a model name is required (key 'model' or 'model_name')"
        )
    if redact.looks_secret(model):
        raise ConfigError(f"{var}.model", None, KEY_AS_MODEL, secret=True)
    preset = PROVIDERS[provider]
    base_url = data.get("base_url") or preset["base_url"]
    if provider == "openai" and not data.get("base_url") and env.get("OPENAI_BASE_URL"):
        base_url = env["OPENAI_BASE_URL"]
    if not base_url:
        raise ConfigError(
            f"{var}.base_url",
            None,
            f"provider {provider!r} needs a base_url such as http://localhost:8000/v1",
        )
    if not _http_url(base_url):
        raise ConfigError(
            f"{var}.base_url",
            base_url,
            "expected an http:// or https:// URL with a host and no spaces, such as "
            "http://localhost:8000/v1",
        )
    api_key = data.get("api_key")
    if api_key is not None and not isinstance(api_key, str):
        # not shown: a key typed as a number or list is still a key
        raise ConfigError(f"{var}.api_key", None, "expected the key as a JSON string", secret=True)
    key_env = data.get("api_key_env") or preset["key_env"]
    if key_env and not (isinstance(key_env, str) and ENV_NAME.fullmatch(key_env)):
        # not shown: users paste the key itself here, and it need not look like one
        allowed = (
            "the name of an environment variable holding the key (letters, digits and '_', "
            "such as OPENAI_API_KEY), not the key itself"
        )
        raise ConfigError(f"{var}.api_key_env", None, allowed, secret=True)
    if not api_key and key_env:
        api_key = env.get(str(key_env))
        if not api_key:
            raise ConfigError(
                f"{var}.api_key",
                None,
                f"set the environment variable {key_env} or give api_key / api_key_env in the spec",
            )
    # Masked from now on in every message and log line, also a key with no key shape that a
    # server quotes back in an error ("proxy rejected API key token-abc123").
    redact.remember(api_key)
    for name in ("label", "prompt_variant"):
        if data.get(name) is not None and not isinstance(data[name], str):
            raise ConfigError(f"{var}.{name}", data[name], "expected a JSON string")
    variant = data.get("prompt_variant") or None  # "" is the default prompt
    if variant is not None and not VARIANT.fullmatch(variant):
        # load_prompt joins it into a file name: no '/', no '..'
        raise ConfigError(
            f"{var}.prompt_variant", variant, "allowed: letters, digits, '_' and '-' (1-40)"
        )
    window = _num(f"{var}.context_window", data.get("context_window", 16000), int, 512, 10_000_000)
    max_tokens = (
        None
        if data.get("max_tokens") is None
        else _num(f"{var}.max_tokens", data["max_tokens"], int, 1, 1_000_000)
    )
    if max_tokens is not None and max_tokens > window // 2:
        # Every request is input + max_tokens <= the window; past half, little is left for input.
        raise ConfigError(
            f"{var}.max_tokens",
            max_tokens,
            f"must be at most half of context_window ({window:,} tokens"
            + ("" if "context_window" in data else ", the default when the spec sets none")
            + f"), so at most {window // 2:,}: the rest of the window is the input (prompt, "
            "tools, history). Lower max_tokens, or set context_window to the model's real "
            "window",
        )
    return ModelSpec(
        model=model.strip(),
        provider=provider,
        base_url=str(base_url).rstrip("/"),
        api_key=api_key or "not-needed",
        temperature=None
        if data.get("temperature") is None
        else _num(f"{var}.temperature", data["temperature"], float, 0, 2),
        max_tokens=max_tokens,
        timeout=_num(f"{var}.timeout", data.get("timeout", 60), float, 1, 3600),
        max_retries=_num(f"{var}.max_retries", data.get("max_retries", 2), int, 0, 10),
        stream_usage=_bool(f"{var}.stream_usage", data.get("stream_usage", True)),
        input_price=None
        if data.get("input_price") is None
        else _num(f"{var}.input_price", data["input_price"], float, 0, 10_000),
        output_price=None
        if data.get("output_price") is None
        else _num(f"{var}.output_price", data["output_price"], float, 0, 10_000),
        prompt_variant=variant,
        context_window=window,
        label=data.get("label"),
        tool_calling=parse_tool_calling(f"{var}.tool_calling", data.get("tool_calling", "native")),
        stream_tool_calls=_bool(f"{var}.stream_tool_calls", data.get("stream_tool_calls", True)),
    )


def _http_url(value: object) -> bool:
    """An http(s) URL with a host and no whitespace (`http://` alone is not one)."""
    if not isinstance(value, str) or any(c.isspace() for c in value):
        return False
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def parse_tool_calling(var: str, raw: object) -> ToolCalling:
    value = str(raw).strip().lower() if isinstance(raw, str) else raw
    if value not in TOOL_CALLING:
        raise ConfigError(var, raw, TOOL_CALLING_HELP)
    return cast(ToolCalling, value)


def _default_model(env: Mapping[str, str]) -> ModelSpec | None:
    """OPENAI_API_KEY (+ OPENAI_BASE_URL, OPENAI_MODEL) alone make a usable default."""
    if not env.get("OPENAI_API_KEY"):
        return None
    spec: dict[str, Any] = {"provider": "openai", "model": env.get("OPENAI_MODEL") or "gpt-4o-mini"}
    if env.get("OPENAI_BASE_URL"):
        spec.update(
            provider="openai-compatible",
            base_url=env["OPENAI_BASE_URL"],
            api_key_env="OPENAI_API_KEY",
        )
    return parse_model_spec("OPENAI_MODEL", spec, env)


def _read(
    env: Mapping[str, str], errors: list[ConfigError], var: str, parse: Any, default: Any
) -> Any:
    raw = env.get(var)
    if raw is None or str(raw).strip() == "":
        return default
    try:
        return parse(var, raw.strip())
    except ConfigError as exc:
        errors.append(exc)
        return default


def _mode(var: str, raw: str) -> Mode:
    if raw.lower() not in ("chat", "agent"):
        raise ConfigError(var, raw, "allowed: chat, agent")
    return cast(Mode, raw.lower())


def _exec_mode(var: str, raw: str) -> ExecutionMode:
    value = raw.lower().replace("-", "_")
    if value not in ("auto", "single_step"):
        raise ConfigError(var, raw, "allowed: auto, single_step")
    return cast(Any, value)


def _plan_mode(var: str, raw: str) -> PlanMode:
    value = str(raw).strip().lower()
    if value not in ("off", "auto", "always"):
        raise ConfigError(var, raw, "allowed: off, auto, always")
    return cast(Any, value)


def _evaluation(var: str, raw: str) -> Evaluation:
    value = raw.strip().lower()
    if value not in ("rule", "model"):
        raise ConfigError(var, raw, "allowed: rule, model")
    return cast(Any, value)


def load_settings(env: Mapping[str, str] | None = None, *, dotenv: bool = True) -> Settings:
    """Read the configuration; never raises. Problems are in `settings.errors`."""
    if env is None:
        if dotenv:
            from dotenv import dotenv_values

            values = {k: v for k, v in dotenv_values(".env").items() if v is not None}
            env = {**values, **os.environ}
        else:
            env = dict(os.environ)
    errors: list[ConfigError] = []
    models: dict[str, ModelSpec | None] = {}
    for var in MODEL_VARS:
        models[var] = _read(env, errors, var, lambda v, r: parse_model_spec(v, r, env), None)
    if not any(models.values()) and not any(e.variable.startswith(MODEL_VARS) for e in errors):
        try:
            models["CHAT_MODEL"] = _default_model(env)
        except ConfigError as exc:
            errors.append(exc)
    limits = AgentLimits(
        max_iterations=_read(
            env, errors, "AGENT_MAX_ITERATIONS", lambda v, r: _num(v, r, int, 1, 30), 10
        ),
        max_execution_time=_read(
            env, errors, "AGENT_MAX_EXECUTION_TIME", lambda v, r: _num(v, r, float, 10, 300), 60.0
        ),
        execution_mode=_read(env, errors, "AGENT_EXECUTION_MODE", _exec_mode, "auto"),
        max_auto_rounds=_read(
            env, errors, "AGENT_MAX_TOOL_ROUNDS", lambda v, r: _num(v, r, int, 1, 30), 5
        ),
        max_calls_per_reply=_read(
            env, errors, "AGENT_MAX_TOOL_CALLS", lambda v, r: _num(v, r, int, 1, 50), 8
        ),
        evaluation=_read(env, errors, "AGENT_EVALUATION", _evaluation, "rule"),
        min_result_chars=_read(
            env, errors, "AGENT_MIN_RESULT_CHARS", lambda v, r: _num(v, r, int, 0, 10_000), 20
        ),
        enable_cache=_read(env, errors, "AGENT_ENABLE_CACHE", _bool, True),
        verbose=_read(env, errors, "AGENT_VERBOSE", _bool, False),
        tool_timeout=_read(
            env, errors, "AGENT_TOOL_TIMEOUT", lambda v, r: _num(v, r, float, 1, 3600), 30.0
        ),
        plan_mode=_read(env, errors, "AGENT_PLAN_MODE", _plan_mode, "off"),
        max_replans=_read(env, errors, "AGENT_MAX_REPLANS", lambda v, r: _num(v, r, int, 0, 5), 2),
    )
    fixture = env.get("BRAINCHAT_SEARCH_FIXTURE")
    return Settings(
        chat_model=models["CHAT_MODEL"],
        function_call_model=models["AGENT_FUNCTION_CALL_MODEL"],
        answer_model=models["AGENT_ANSWER_MODEL"],
        limits=limits,
        default_mode=_read(env, errors, "DEFAULT_MODE", _mode, "chat"),
        data_dir=Path(env.get("BRAINCHAT_DATA_DIR") or "data"),
        upload_max_mb=_read(
            env, errors, UPLOAD_MAX_ENV, lambda v, r: _num(v, r, int, 1, 100_000), 500
        ),
        user_quota_mb=_read(
            env, errors, QUOTA_ENV, lambda v, r: _num(v, r, int, 0, 100_000_000), 20_000
        ),
        max_operation_mb=_read(
            env, errors, OPERATION_ENV, lambda v, r: _num(v, r, int, 10, 10_000_000), 4_000
        ),
        mcp_config=Path(env["MCP_CONFIG"]) if env.get("MCP_CONFIG") else None,
        search_backend="fixture" if fixture else (env.get("BRAINCHAT_SEARCH_BACKEND") or "ddgs"),
        search_fixture=Path(fixture) if fixture else None,
        errors=tuple(errors),
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
    limits = settings.limits
    updates: dict[str, Any] = {}
    lim: dict[str, Any] = {}
    checks = {
        "max_iterations": lambda v: _num("Max iterations", v, int, 1, 30),
        "max_execution_time": lambda v: _num("Max execution time", v, float, 10, 300),
        "execution_mode": lambda v: _exec_mode("Execution mode", str(v)),
        "plan_mode": lambda v: _plan_mode("Plan mode", str(v)),
    }
    for key, check in checks.items():
        if key in overrides and overrides[key] is not None:
            lim[key] = check(overrides[key])
    for role, attr in (
        ("function_call", "function_call_model"),
        ("answer", "answer_model"),
        ("chat", "chat_model"),
    ):
        base = settings.model_for(role)
        name = overrides.get(f"{role}_model")
        temp = overrides.get(f"{role}_temperature")
        calling = overrides.get(f"{role}_tool_calling")
        streamed = overrides.get(f"{role}_stream_tool_calls")
        if name is None and temp is None and calling is None and streamed is None:
            continue
        spec = pool.get(str(name)) if name else base
        if spec is None and base is None:
            continue  # nothing configured to put a typed id on
        if spec is None:
            assert base is not None
            if not str(name).strip() or any(c.isspace() for c in str(name).strip()):
                raise ConfigError(f"{role} model", name, "a model id without spaces")
            if redact.looks_secret(str(name)):
                raise ConfigError(f"{role} model", None, KEY_AS_MODEL, secret=True)
            spec = replace(base, model=str(name).strip(), label=None)
        if temp is not None and temp != "":
            spec = replace(spec, temperature=_num(f"{role} temperature", temp, float, 0, 2))
        if calling is not None and calling != "":
            spec = replace(spec, tool_calling=parse_tool_calling(f"{role} tool calling", calling))
        if streamed is not None and streamed != "":
            spec = replace(spec, stream_tool_calls=_bool(f"{role} streamed tool calls", streamed))
        updates[attr] = spec
    return replace(settings, limits=replace(limits, **lim), **updates)
