"""The local tool families a session gets: web search and EEG analysis. Failures are listed, never raised."""

from __future__ import annotations

from typing import TYPE_CHECKING

from langchain_core.tools import BaseTool

from brainchat.tools.registry import ToolFailure, ToolSet
from brainchat.tools.search import backend_from_settings, make_search_tool

if TYPE_CHECKING:
    from brainchat.session import Session


def local_toolset(session: Session) -> ToolSet:
    tools: list[BaseTool] = []
    failures: list[ToolFailure] = []
    settings = session.settings
    try:
        backend = backend_from_settings(settings.search_backend, settings.search_fixture)
        cache = session.search_cache if settings.limits.enable_cache else None
        tools.append(make_search_tool(backend, cache))
    except Exception as exc:  # noqa: BLE001 - one broken family never takes the others down
        failures.append(ToolFailure("web_search", str(exc)))
    try:
        from brainchat.eeg.tools import build_eeg_tools

        tools.extend(build_eeg_tools(session.study))
    except Exception as exc:  # noqa: BLE001
        failures.append(ToolFailure("eeg", f"EEG tools unavailable: {type(exc).__name__}: {exc}"))
    return ToolSet(tools=tools, failures=failures)
