"""web_search: the fixture backend, the real ddgs backend's failure path here (no network), timeouts."""

from __future__ import annotations

import asyncio
import time

import pytest
from langchain_core.tools import ToolException

from brainchat.tools.registry import flags_of
from brainchat.tools.search import DdgsBackend, FixtureBackend, make_search_tool

from support import write_fixture


async def test_fixture_results_are_numbered_with_title_url_snippet(tmp_path) -> None:
    tool = make_search_tool(FixtureBackend(write_fixture(tmp_path / "fx.json")), {})
    content, artifact = await tool.coroutine(query="EEGNet", max_results=2)
    assert (
        content.startswith("[1] EEGNet: a compact CNN") and "https://example.org/eegnet" in content
    )
    assert "[2] Motor imagery" in content and "[3]" not in content
    assert len(artifact["sources"]) == 2 and artifact["cache_hit"] is False
    assert flags_of(tool).read_only


async def test_fixture_per_query_results_and_scripted_error(tmp_path) -> None:
    path = write_fixture(
        tmp_path / "fx.json",
        {
            "queries": {
                "rate limited": {"error": "rate limit reached"},
                "csp": [{"title": "CSP", "url": "u", "snippet": "s"}],
            },
            "default": [],
        },
    )
    backend = FixtureBackend(path)
    assert backend.search("  CSP ", 5)[0]["title"] == "CSP"
    assert backend.search("other", 5) == []
    with pytest.raises(ToolException, match="rate limit"):
        backend.search("Rate   Limited", 5)


async def test_an_unreachable_network_fails_with_a_clear_message() -> None:
    # Through a proxy on a closed loopback port every request is refused, network or not.
    backend = DdgsBackend(timeout=3, proxy="http://127.0.0.1:9")
    tool = make_search_tool(backend, {}, timeout=10)
    with pytest.raises(ToolException) as info:
        await tool.ainvoke({"query": "EEG motor imagery"})
    message = str(info.value)
    assert "web search" in message and (
        "network" in message or "timed out" in message or "did not answer" in message
    )
    # issue #23: the error showed a cut internal search URL ("error sending request for url
    # (https://search.yahoo.com/search;_ylt=7ag...")
    assert "://" not in message and "_ylt" not in message, message


def test_a_network_failure_is_said_without_the_search_services_url() -> None:
    from brainchat.tools.search import failure_text

    offline = (  # verbatim, ddgs 9 with no DNS
        "DNSError: DNSError('error sending request for url (https://search.yahoo.com/search;"
        "_ylt=7agYIIKjdIZ5BjspMlftPjBE;_ylu=uY9wc5K-zOSVs-B6uzgF4eJo7FjB4gQIPIkH0c3rm7s38NQ?p=mu+"
        "rhythm) > error resolving DNS > DNS error: no records found for Query { name: Name("
        '"search.yahoo.com."), query_type: A, query_class: IN }\')'
    )
    assert failure_text(offline) == (
        "web search unavailable: no network (the search services could not be reached); "
        "answer from what you have"
    )
    other = failure_text("Unexpected page at https://html.duckduckgo.com/html?q=x (status 418)")
    assert "://" not in other and "status 418" in other


async def test_a_hanging_backend_is_cut_by_the_outer_timeout() -> None:
    class Hanging:
        name = "hanging"

        def search(self, query: str, max_results: int) -> list[dict[str, str]]:
            time.sleep(3)
            return []

    tool = make_search_tool(Hanging(), {}, timeout=0.5)
    with pytest.raises(ToolException, match="did not answer within 0.5 s"):
        await tool.ainvoke({"query": "anything"})
    await asyncio.sleep(0)
