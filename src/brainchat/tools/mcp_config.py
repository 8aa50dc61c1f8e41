"""MCP server configuration: the widespread `mcpServers` JSON format, validated into typed configs."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from brainchat.redact import mask_args, mask_url, remember, secret_name, show
from brainchat.tools.registry import ToolFailure

Transport = Literal["stdio", "streamable_http", "sse"]

DEFAULT_TIMEOUT = 30.0
DEFAULT_CONNECT_TIMEOUT = 20.0
CONFIG_ENV = "MCP_CONFIG"
DEFAULT_FILENAME = "mcp_servers.json"

# Aliases seen in Claude Desktop, Cursor, VS Code and Claude Code files.
_TRANSPORT_ALIASES: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "streamable_http",
    "streamable_http": "streamable_http",
    "streamable-http": "streamable_http",
    "streamablehttp": "streamable_http",
    "sse": "sse",
}
_FLAG_KEYS = {"read_only", "readOnly", "destructive", "timeout"}
_SERVER_KEYS = {
    "type",
    "transport",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "tools",
    "enabled",
    "disabled",
    "connect_timeout",
    "connectTimeout",
    # Keys other clients write that mean nothing here; accepted and ignored.
    "description",
    "autoApprove",
    "alwaysAllow",
    "note",
} | _FLAG_KEYS
_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
_VAR_RE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class ToolOverride:
    """Per-tool flags; None means 'as the server says'."""

    read_only: bool | None = None
    destructive: bool | None = None
    timeout: float | None = None


@dataclass(frozen=True)
class McpServerConfig:
    """One MCP server: how to reach it and how the agent may use its tools."""

    name: str
    transport: Transport = "stdio"
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    read_only: bool = False
    destructive: bool | None = None  # None: as the server's destructiveHint says
    timeout: float = DEFAULT_TIMEOUT
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    tools: dict[str, ToolOverride] = field(default_factory=dict)
    enabled: bool = True

    def flags_for(self, tool: str, destructive_hint: bool = False) -> tuple[bool, bool, float]:
        """(read_only, destructive, timeout) of one tool, per-tool overrides first.

        The server's `destructiveHint: true` counts unless the config says `"destructive": false`
        for the tool or the server; its `readOnlyHint` never makes a tool read-only (only config
        does), and a destructive tool is never read-only (it must not run in parallel).
        """
        o = self.tools.get(tool, ToolOverride())
        destructive = o.destructive if o.destructive is not None else self.destructive
        if destructive is None:
            destructive = destructive_hint
        read_only = self.read_only if o.read_only is None else o.read_only
        return (
            read_only and not destructive,
            destructive,
            self.timeout if o.timeout is None else o.timeout,
        )

    def asks_first(self, tool: str, read_only_hint: bool = False) -> bool:
        """Whether a tool asks before its first use in a conversation.

        The MCP specification's defaults make a tool without hints possibly destructive, so it
        asks unless the server marks it `readOnlyHint: true` or the config vouches for it:
        `readOnly`, or an explicit `"destructive": false` (per tool, else per server).
        """
        o = self.tools.get(tool, ToolOverride())
        read_only = self.read_only if o.read_only is None else o.read_only
        destructive = self.destructive if o.destructive is None else o.destructive
        return not (read_only_hint or read_only or destructive is False)

    def describe(self) -> str:
        """Command or URL for status lines; values that may be secrets are masked."""
        if self.transport == "stdio":
            return " ".join([self.command or "", *mask_args(self.args)]).strip()
        return f"{self.transport} {mask_url(str(self.url), drop_query=True)}"


class ConfigError(ValueError):
    """A bad entry; the message names the server, the key and what is allowed, never a secret."""


def default_config_path() -> Path:
    """`mcp_servers.json` at the project root (the folder with pyproject.toml), else the cwd."""
    root = Path(__file__).resolve().parents[3]
    base = root if (root / "pyproject.toml").is_file() else Path.cwd()
    return base / DEFAULT_FILENAME


def load_mcp_config(path: Path | None = None) -> tuple[list[McpServerConfig], list[ToolFailure]]:
    """Read the servers of an `mcpServers` file; never raises.

    `path=None` uses `$MCP_CONFIG`, else the optional default file (absent = no servers).
    A file that is named explicitly (argument or env) and missing is a failure.
    """
    explicit = path is not None or bool(os.environ.get(CONFIG_ENV))
    if path is None:
        path = Path(os.environ[CONFIG_ENV]) if os.environ.get(CONFIG_ENV) else default_config_path()
    where = f"MCP config {path}"
    if not path.is_file():
        if not explicit:
            return [], []
        return [], [
            ToolFailure(
                "mcp",
                f"{where}: file not found (set {CONFIG_ENV} to an existing file, or unset it)",
            )
        ]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return [], [ToolFailure("mcp", f"{where}: cannot read: {exc}")]
    except json.JSONDecodeError as exc:
        return [], [
            ToolFailure(
                "mcp", f"{where}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            )
        ]
    return parse_mcp_config(data, where=where, base_dir=path.parent)


def parse_mcp_config(
    data: Any, *, where: str = "MCP config", base_dir: Path | None = None
) -> tuple[list[McpServerConfig], list[ToolFailure]]:
    """Validate parsed JSON; each bad server is one failure, the good ones still load."""
    servers = data.get("mcpServers", data.get("servers")) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        msg = f'{where}: expected an object {{"mcpServers": {{"<name>": {{...}}}}}}'
        return [], [ToolFailure("mcp", msg)]
    configs: list[McpServerConfig] = []
    failures: list[ToolFailure] = []
    for name, entry in servers.items():
        try:
            config = parse_server(str(name), entry, base_dir=base_dir)
        except ConfigError as exc:
            failures.append(ToolFailure(f"mcp:{name}", f"{where}: server '{name}': {exc}"))
            continue
        if config.enabled:
            configs.append(config)
    return configs, failures


def parse_server(name: str, entry: Any, *, base_dir: Path | None = None) -> McpServerConfig:
    """One `mcpServers` entry -> McpServerConfig, or ConfigError saying what is wrong."""
    if not _NAME_RE.match(name):
        raise ConfigError("the name must be 1-40 letters, digits, '_' or '-'")
    if not isinstance(entry, dict):
        raise ConfigError(f"expected an object, got {type(entry).__name__}")
    unknown = set(entry) - _SERVER_KEYS
    if unknown:
        raise ConfigError(f"unknown key(s) {sorted(unknown)}; allowed: {sorted(_SERVER_KEYS)}")
    if not (_bool(entry, "enabled", default=True) and not _bool(entry, "disabled", default=False)):
        return McpServerConfig(
            name=name, enabled=False
        )  # not checked further: ${VARS} may be unset
    transport = _transport(entry)
    common: dict[str, Any] = {
        "name": name,
        "transport": transport,
        "read_only": _bool(entry, "read_only", "readOnly", default=False),
        "destructive": _bool(entry, "destructive", default=None),  # type: ignore[arg-type]
        "timeout": _seconds(entry, "timeout", DEFAULT_TIMEOUT),
        "connect_timeout": _seconds(
            entry, "connect_timeout", DEFAULT_CONNECT_TIMEOUT, "connectTimeout"
        ),
        "tools": _overrides(entry.get("tools", {})),
        "enabled": _bool(entry, "enabled", default=True)
        and not _bool(entry, "disabled", default=False),
    }
    if transport == "stdio":
        command = _expand(_str(entry, "command"), "command")
        if not command:
            raise ConfigError(
                "'command' is required for a stdio server (or give 'url' for HTTP/SSE)"
            )
        if "/" in command and not Path(command).is_absolute() and base_dir is not None:
            command = str((base_dir / command).resolve())
        cwd = entry.get("cwd")
        if cwd is not None:
            cwd = _expand(_str(entry, "cwd"), "cwd")
            if base_dir is not None and not Path(cwd).is_absolute():
                cwd = str((base_dir / cwd).resolve())
        return McpServerConfig(
            command=command,
            args=[_expand(a, "args") for a in _str_list(entry, "args")],
            env={k: _expand(v, f"env.{k}", k) for k, v in _str_dict(entry, "env").items()}
            if "env" in entry
            else None,
            cwd=cwd,
            **common,
        )
    url = _expand(_str(entry, "url"), "url")
    if not re.match(r"^https?://[^/\s]+", url or ""):
        raise ConfigError(f"'url' must be an http(s) URL for a {transport} server, got {show(url)}")
    headers = {k: _expand(v, f"headers.{k}", k) for k, v in _str_dict(entry, "headers").items()}
    return McpServerConfig(url=url, headers=headers, **common)


def _transport(entry: dict[str, Any]) -> Transport:
    raw = entry.get("type", entry.get("transport"))
    if raw is None:
        if "url" not in entry:
            return "stdio"
        return "sse" if str(entry["url"]).rstrip("/").endswith("/sse") else "streamable_http"
    key = str(raw).lower().replace(" ", "")
    if key not in _TRANSPORT_ALIASES:
        raise ConfigError(
            f"'type' {show(raw)} is not a transport; allowed: {sorted(_TRANSPORT_ALIASES)}"
        )
    return _TRANSPORT_ALIASES[key]


def _expand(value: str | None, key: str, name: str | None = None) -> str:
    """Replace ${VAR} / ${env:VAR} with the environment's value (a missing one is an error).

    A credential (an env or header `name` like GITHUB_TOKEN or Authorization, or a ${VAR} like
    ${API_KEY}) is remembered by `redact`: a server's stderr or error may quote it back, and it
    need not look like a key. Other values (NODE_ENV=production) are not: masking them everywhere
    would hide ordinary words.
    """
    if value is None:
        return ""

    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in os.environ:
            raise ConfigError(
                f"'{key}' uses ${{{m.group(1)}}} but that environment variable is not set"
            )
        if secret_name(m.group(1)):
            remember(os.environ[m.group(1)])
        return os.environ[m.group(1)]

    expanded = _VAR_RE.sub(sub, value)
    if name is not None and secret_name(name):
        remember(expanded)
        # "Bearer XYZ": the credential after the scheme word, as a server may quote it alone
        scheme, _, credential = expanded.partition(" ")
        if scheme.lower() in ("bearer", "basic", "token"):
            remember(credential.strip())
    return expanded


def _str(entry: dict[str, Any], key: str) -> str | None:
    value = entry.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"'{key}' must be a string, got {show(value)}")
    return value


def _str_list(entry: dict[str, Any], key: str) -> list[str]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise ConfigError(f"'{key}' must be a list of strings, got {show(value)}")
    return [str(v) for v in value]


def _str_dict(entry: dict[str, Any], key: str) -> dict[str, str]:
    value = entry.get(key) or {}
    if not isinstance(value, dict) or not all(
        isinstance(v, str | int | float) for v in value.values()
    ):
        if isinstance(value, dict):  # name the entry, never its value (headers hold tokens)
            name, bad = next(
                (k, v) for k, v in value.items() if not isinstance(v, str | int | float)
            )
            raise ConfigError(f"'{key}.{name}' must be a string, got a {type(bad).__name__}")
        raise ConfigError(f"'{key}' must be an object of string values, got {show(value)}")
    return {str(k): str(v) for k, v in value.items()}


def _bool(entry: dict[str, Any], *keys: str, default: bool) -> bool:
    for key in keys:
        if key in entry:
            if not isinstance(entry[key], bool):
                raise ConfigError(f"'{key}' must be true or false, got {show(entry[key])}")
            return entry[key]
    return default


def _seconds(entry: dict[str, Any], key: str, default: float, alias: str = "") -> float:
    value = entry.get(key, entry.get(alias, default)) if alias else entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 3600:
        raise ConfigError(f"'{key}' must be a number of seconds in (0, 3600], got {show(value)}")
    return float(value)


def _overrides(raw: Any) -> dict[str, ToolOverride]:
    if not isinstance(raw, dict):
        raise ConfigError(
            f"'tools' must map tool names to {{read_only, destructive, timeout}}, got {show(raw)}"
        )
    out: dict[str, ToolOverride] = {}
    for tool, spec in raw.items():
        if not isinstance(spec, dict) or set(spec) - _FLAG_KEYS:
            bad = sorted(set(spec) - _FLAG_KEYS) if isinstance(spec, dict) else show(spec)
            raise ConfigError(f"tools.{tool}: bad entry {bad}; allowed keys: {sorted(_FLAG_KEYS)}")
        try:
            out[str(tool)] = ToolOverride(
                read_only=_bool(spec, "read_only", "readOnly", default=None),  # type: ignore[arg-type]
                destructive=_bool(spec, "destructive", default=None),  # type: ignore[arg-type]
                timeout=_seconds(spec, "timeout", 0.0) if "timeout" in spec else None,
            )
        except ConfigError as exc:
            raise ConfigError(f"tools.{tool}: {exc}") from None
    return out
