"""Configured MCP servers (MCP_CONFIG / mcp_servers.json), one hub shared by every conversation."""

from __future__ import annotations

from typing import Any

from brainchat.redact import get_logger
from brainchat.settings import Settings
from brainchat.tools.registry import ToolFailure, ToolSet

log = get_logger("brainchat.ui")  # masks secrets in records
_hub: Any = None
_failures: list[ToolFailure] = []


async def start(settings: Settings) -> None:
    """Connect the configured servers once at app start; failures are kept for the tool list."""
    global _hub, _failures
    try:
        from brainchat.tools.mcp import McpHub

        hub = McpHub.from_config_file(settings.mcp_config)
        if not hub.servers and not hub.config_failures:
            return
        await hub.start()
        _hub = hub
        for failure in hub.failures():
            log.error("MCP %s: %s", failure.source, failure.reason)
    except Exception as exc:  # noqa: BLE001 - MCP trouble never stops the app
        log.exception("MCP servers not started")
        _failures = [ToolFailure("mcp", f"{type(exc).__name__}: {exc}")]


def hub() -> Any:
    """The configured servers' McpHub, or None (/resource reads it)."""
    return _hub


def configured_servers() -> dict[str, Any]:
    """The configured servers by name (none without a hub): their prompts and resources."""
    return dict(_hub.servers) if _hub is not None else {}


def toolset() -> ToolSet:
    if _hub is None:
        return ToolSet(failures=list(_failures))
    try:
        return _hub.toolset()  # type: ignore[no-any-return]
    except Exception as exc:  # noqa: BLE001
        return ToolSet(failures=[ToolFailure("mcp", str(exc))])


async def refreshed_toolset() -> ToolSet:
    """Before an agent turn: retry servers that are down (their backoff permitting), then list tools."""
    if _hub is not None:
        try:
            await _hub.reconnect_failed()
        except Exception:  # noqa: BLE001 - a retry that fails leaves the server listed as failed
            log.exception("MCP reconnect failed")
    return toolset()


async def stop() -> None:
    global _hub
    if _hub is not None:
        await _hub.close()
        _hub = None
