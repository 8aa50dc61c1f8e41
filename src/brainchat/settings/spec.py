"""A model spec (CHAT_MODEL, AGENT_*_MODEL, a connection's model): JSON -> a checked ModelSpec.

The spec's own keys are declared in `SpecVars` (type, range, default, help), as the environment
variables are in declared.py; `parse_model_spec` adds what no single key can say: the provider's
preset, where the key comes from, and that max_tokens leaves room in the window for the input.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast
from urllib.parse import urlsplit

from brainchat import redact
from brainchat.settings.declared import Declared, var
from brainchat.settings.errors import ConfigError
from brainchat.settings.fields import check, default

PROVIDERS: dict[str, dict[str, str | None]] = {
    # provider -> default base_url and the env var holding its key
    "openai": {"base_url": "https://api.openai.com/v1", "key_env": "OPENAI_API_KEY"},
    "deepseek": {"base_url": "https://api.deepseek.com/v1", "key_env": "DEEPSEEK_API_KEY"},
    "ollama": {"base_url": "http://localhost:11434/v1", "key_env": None},
    "vllm": {"base_url": "http://localhost:8000/v1", "key_env": None},
    "openai-compatible": {"base_url": None, "key_env": None},
}
SPEC_EXAMPLE = 'JSON like {"provider": "openai", "model": "gpt-4o-mini"}'
KEY_AS_MODEL = (
    "it looks like an API key, not a model name; put the key in api_key (or OPENAI_API_KEY) "
    "and give a model name such as gpt-4o-mini"
)
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
VARIANT = re.compile(r"[A-Za-z0-9_-]{1,40}")
ToolCalling = Literal["native", "prompt", "auto"]
Guidance = Literal["auto", "minimal", "guided"]
DEFAULT_REPLY_TOKENS = 1024  # a reply's limit when a spec sets no max_tokens


class SpecVars(Declared):
    """A spec's checked keys (the alias is the JSON key)."""

    temperature: float | None = var(None, "temperature", "sampling temperature", ge=0, le=2)
    max_tokens: int | None = var(None, "max_tokens", "a reply's limit", ge=1, le=1_000_000)
    timeout: float = var(60.0, "timeout", "seconds per request and between chunks", ge=1, le=3600)
    max_retries: int = var(2, "max_retries", "retries of a failed request", ge=0, le=10)
    stream_usage: bool = var(True, "stream_usage", "ask for usage in the stream")
    input_price: float | None = var(None, "input_price", "USD per million", ge=0, le=10_000)
    output_price: float | None = var(None, "output_price", "USD per million", ge=0, le=10_000)
    context_window: int = var(16000, "context_window", "tokens", ge=512, le=10_000_000)
    tool_calling: ToolCalling = var(
        "native",
        "tool_calling",
        "how the function-call model calls tools",
        choices={
            "native": "the server's own tool calls",
            "prompt": "tools described in the system prompt, calls read from the reply's JSON",
            "auto": "native, plus calls written as JSON in the text",
        },
    )
    stream_tool_calls: bool = var(True, "stream_tool_calls", "stream the function-call request")
    guidance: Guidance = var(
        "auto",
        "guidance",
        "how much the agent guides the function-call model",
        choices={
            "auto": "guided when it calls tools through the prompt, else minimal",
            "minimal": "loop limits, approvals and the answer check only",
            "guided": "also a record of the request, the next step, worked examples and checks "
            "of its calls against the request (for small models)",
        },
    )
    response_format: bool = var(
        True, "response_format", "send a JSON schema for structured replies (guided models)"
    )


CHECKED = tuple(SpecVars.model_fields)
SPEC_KEYS = {
    *CHECKED,
    *("provider", "model", "model_name", "base_url", "api_key", "api_key_env"),
    *("prompt_variant", "label"),
}


def _d(name: str) -> Any:
    return default(SpecVars, name)


@dataclass(frozen=True)
class ModelSpec:
    """One OpenAI-compatible model endpoint. The key never appears in repr or logs."""

    model: str
    provider: str = "openai"
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    temperature: float | None = _d("temperature")
    max_tokens: int | None = _d("max_tokens")
    timeout: float = _d("timeout")
    max_retries: int = _d("max_retries")
    stream_usage: bool = _d("stream_usage")
    input_price: float | None = _d("input_price")  # USD per million input tokens
    output_price: float | None = _d("output_price")  # USD per million output tokens
    prompt_variant: str | None = None
    context_window: int = _d("context_window")
    label: str | None = None
    tool_calling: ToolCalling = _d("tool_calling")
    stream_tool_calls: bool = _d(
        "stream_tool_calls"
    )  # False: the function-call request is not streamed
    guidance: Guidance = _d("guidance")  # how much the agent guides this model (agent/profile.py)
    response_format: bool = _d("response_format")  # JSON-schema replies for guided requests
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


def parse_tool_calling(var_name: str, raw: object) -> ToolCalling:
    return cast(ToolCalling, check(SpecVars, "tool_calling", raw, var_name))


def parse_model_spec(var: str, raw: str | Mapping[str, Any], env: Mapping[str, str]) -> ModelSpec:
    """Parse one JSON model spec (or a bare model name) into a ModelSpec."""
    data = _spec_data(var, raw)
    provider, model = _provider_and_model(var, data)
    base_url = _base_url(var, data, provider, env)
    api_key = _api_key(var, data, provider, env)
    for name in ("label", "prompt_variant"):
        if data.get(name) is not None and not isinstance(data[name], str):
            raise ConfigError(f"{var}.{name}", data[name], "expected a JSON string")
    variant = data.get("prompt_variant") or None  # "" is the default prompt
    if variant is not None and not VARIANT.fullmatch(variant):
        # load_prompt joins it into a file name: no '/', no '..'
        raise ConfigError(
            f"{var}.prompt_variant", variant, "allowed: letters, digits, '_' and '-' (1-40)"
        )
    checked = {
        name: check(SpecVars, name, data.get(name, _d(name)), f"{var}.{name}") for name in CHECKED
    }
    _check_reply_room(var, checked, explicit_window="context_window" in data)
    return ModelSpec(
        model=model,
        provider=provider,
        base_url=base_url,
        api_key=api_key or "not-needed",
        prompt_variant=variant,
        label=data.get("label"),
        **checked,
    )


def _spec_data(var: str, raw: str | Mapping[str, Any]) -> dict[str, Any]:
    """The spec as a dict of known keys: JSON text, a bare model name, or a mapping."""
    if not isinstance(raw, str):
        data: Any = dict(raw)
    elif not (text := raw.strip()).startswith("{"):
        # a JSON array or string is not a model name: `["gpt-4o"]` would be sent as the id
        if not text or any(c.isspace() or c in "[]{}\"'" for c in text):
            raise ConfigError(var, raw, f"expected {SPEC_EXAMPLE} or a model name")
        data = {"model": text}
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
    return data


def _provider_and_model(var: str, data: dict[str, Any]) -> tuple[str, str]:
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
    return provider, model.strip()


def _base_url(var: str, data: dict[str, Any], provider: str, env: Mapping[str, str]) -> str:
    base_url = data.get("base_url") or PROVIDERS[provider]["base_url"]
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
    return str(base_url).rstrip("/")


def _api_key(var: str, data: dict[str, Any], provider: str, env: Mapping[str, str]) -> str | None:
    api_key = data.get("api_key")
    if api_key is not None and not isinstance(api_key, str):
        # not shown: a key typed as a number or list is still a key
        raise ConfigError(f"{var}.api_key", None, "expected the key as a JSON string", secret=True)
    key_env = data.get("api_key_env") or PROVIDERS[provider]["key_env"]
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
    return api_key


def _check_reply_room(var: str, checked: dict[str, Any], *, explicit_window: bool) -> None:
    """Every request is input + max_tokens <= the window; past half, little is left for input."""
    window, max_tokens = checked["context_window"], checked["max_tokens"]
    if max_tokens is None or max_tokens <= window // 2:
        return
    raise ConfigError(
        f"{var}.max_tokens",
        max_tokens,
        f"must be at most half of context_window ({window:,} tokens"
        + ("" if explicit_window else ", the default when the spec sets none")
        + f"), so at most {window // 2:,}: the rest of the window is the input (prompt, "
        "tools, history). Lower max_tokens, or set context_window to the model's real "
        "window",
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
