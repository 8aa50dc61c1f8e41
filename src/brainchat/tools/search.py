"""web_search: ddgs in production, a JSON fixture backend for tests and offline demos, a session cache."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any, Protocol

from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, Field

from brainchat.tools.registry import set_flags


class SearchBackend(Protocol):
    name: str

    def search(self, query: str, max_results: int) -> list[dict[str, str]]: ...


class DdgsBackend:
    """The `ddgs` metasearch package (synchronous; the tool runs it in a thread)."""

    name = "ddgs"

    def __init__(self, timeout: int = 8, proxy: str | None = None) -> None:
        self.timeout = timeout
        self.proxy = proxy  # e.g. "socks5h://127.0.0.1:9150"; None: ddgs's own (DDGS_PROXY)

    def search(self, query: str, max_results: int) -> list[dict[str, str]]:
        from ddgs import DDGS
        from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

        try:
            ddgs = DDGS(timeout=self.timeout, proxy=self.proxy)
            rows = ddgs.text(query, max_results=max_results) or []
        except RatelimitException:
            raise ToolException(
                "web search is rate-limited right now; wait a minute or answer from what you have"
            ) from None
        except TimeoutException:
            raise ToolException(
                f"web search timed out after {self.timeout} s; try again later or answer from what you have"
            ) from None
        except DDGSException as exc:
            text = str(exc)
            if "No results" in text:
                return []
            raise ToolException(failure_text(text)) from None
        return [
            {"title": r.get("title", ""), "url": r.get("href", ""), "snippet": r.get("body", "")}
            for r in rows
        ]


NO_NETWORK = (  # how ddgs's HTTP client says a search service was never reached
    "dnserror", "error sending request", "connecterror", "connection refused", "unreachable",
    "resolv", "proxyerror", "connecttimeout",
)  # fmt: skip
URL = re.compile(r"\(?\b[a-z][a-z0-9+.-]*://[^\s)'\"]*\)?", re.IGNORECASE)


def failure_text(text: str) -> str:
    """What the model and the user read for a failed search: never the internal search URL
    (ddgs names the engine's URL it tried; cut at 160 characters it was noise)."""
    if any(mark in text.lower() for mark in NO_NETWORK):
        return (
            "web search unavailable: no network (the search services could not be reached); "
            "answer from what you have"
        )
    said = " ".join(URL.sub("", text).split())[:160]
    return f"web search failed ({said}); try again later or answer from what you have"


class FixtureBackend:
    """Results from a JSON file: a list served for every query, or {"queries": {...}, "default": [...]}."""

    name = "fixture"

    def __init__(self, path: Path) -> None:
        self.path = path

    def search(self, query: str, max_results: int) -> list[dict[str, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ToolException(f"search fixture {self.path} is unreadable: {exc}") from None
        if isinstance(data, dict):
            queries = {normalize(k): v for k, v in (data.get("queries") or {}).items()}
            rows = queries.get(normalize(query), data.get("default", []))
        else:
            rows = data
        if isinstance(rows, dict) and rows.get("error"):
            raise ToolException(str(rows["error"]))
        return [dict(r) for r in rows or []][:max_results]


def normalize(query: str) -> str:
    return " ".join(query.lower().split())


class SearchArgs(BaseModel):
    query: str = Field(
        min_length=2,
        max_length=400,
        description="A short keyword query made of the request's own subject words",
    )
    max_results: int = Field(
        default=5, ge=1, le=10, description="How many results to return (1-10)"
    )


def make_search_tool(
    backend: SearchBackend, cache: dict[str, Any] | None = None, timeout: float = 15.0
) -> StructuredTool:
    """The web_search tool; `cache` (per session) serves a repeated normalized query locally."""

    async def web_search(query: str, max_results: int = 5) -> tuple[str, dict[str, Any]]:
        key = f"{normalize(query)}|{max_results}"
        if cache is not None and key in cache:
            rows = cache[key]
            return _text(rows), {"sources": rows, "cache_hit": True}
        try:
            rows = await asyncio.wait_for(
                asyncio.to_thread(backend.search, query, max_results), timeout
            )
        except TimeoutError:
            raise ToolException(
                f"web search did not answer within {timeout:g} s (no network?); answer from what you have"
            ) from None
        if cache is not None and rows:
            cache[key] = rows
        return _text(rows), {"sources": rows, "cache_hit": False}

    tool = StructuredTool.from_function(
        coroutine=web_search,
        name="web_search",
        description="Search the web. Returns numbered results with title, URL and snippet.",
        args_schema=SearchArgs,
        response_format="content_and_artifact",
    )
    return set_flags(tool, read_only=True, source="local", web=True)  # type: ignore[return-value]


def _text(rows: list[dict[str, str]]) -> str:
    if not rows:
        return "No results."
    return "\n".join(
        f"[{i}] {r.get('title', '')}\n{r.get('url', '')}\n{r.get('snippet', '')}"
        for i, r in enumerate(rows, 1)
    )


def backend_from_settings(kind: str, fixture: Path | None) -> SearchBackend:
    if kind == "fixture":
        if fixture is None:
            raise ValueError(
                "BRAINCHAT_SEARCH_BACKEND=fixture needs BRAINCHAT_SEARCH_FIXTURE=<json file>"
            )
        return FixtureBackend(fixture)
    return DdgsBackend()
