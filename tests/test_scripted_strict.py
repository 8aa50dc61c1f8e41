"""The scripted server is strict: a test that leaves queued replies or makes an unscripted call fails.

Each case runs a small test file in a fresh pytest (pytester) with this suite's tests/conftest.py,
so the fixture's teardown check is what is exercised, as a real test meets it.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from brainchat.testing.replies import Call
from brainchat.testing.scripted_server import ScriptedServer, Text, ToolCalls

pytest_plugins = ["pytester"]

CONFTEST = (Path(__file__).parent / "conftest.py").read_text()
ASK = """
import httpx
from brainchat.testing.scripted_server import Call, Text, ToolCalls

def ask(server, model="m", text="hello"):
    body = {"model": model, "messages": [{"role": "user", "content": text}]}
    return httpx.post(server.base_url + "/chat/completions", json=body, timeout=10).json()
"""


def run_inner(pytester: pytest.Pytester, body: str) -> pytest.RunResult:
    pytester.makeconftest(CONFTEST)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_inner=ASK + body)
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "--strict-markers")


def test_unused_queued_replies_fail_the_test_and_are_named(pytester: pytest.Pytester) -> None:
    result = run_inner(
        pytester,
        """
def test_one_call_of_two(scripted_server):
    scripted_server.queue("m", Text("first"), ToolCalls([Call("web_search", {"query": "x"})]))
    assert ask(scripted_server)["choices"][0]["message"]["content"] == "first"
""",
    )
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*1 queued reply(s) for 'm' never requested: ToolCalls(web_search)*scripted_lenient*"]
    )


def test_a_request_with_nothing_queued_fails_the_test_and_is_named(
    pytester: pytest.Pytester,
) -> None:
    result = run_inner(
        pytester,
        """
def test_an_extra_call(scripted_server):
    scripted_server.queue("m", Text("only one"))
    ask(scripted_server)
    ask(scripted_server, text="one more time")
""",
    )
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*unexpected request to 'm' (its queue was empty), last message user: 'one more time'*"]
    )


def test_exact_use_defaults_and_lenient_tests_pass(pytester: pytest.Pytester) -> None:
    result = run_inner(
        pytester,
        """
import pytest

def test_exact(scripted_server):
    scripted_server.queue("m", Text("a"), Text("b"))
    ask(scripted_server), ask(scripted_server)

def test_a_default_answers_any_number(scripted_server):
    scripted_server.set_default("m", Text("always"))
    ask(scripted_server), ask(scripted_server)

@pytest.mark.scripted_lenient("the model may or may not be asked for a title")
def test_lenient(scripted_server):
    scripted_server.queue("m", Text("maybe"), Text("unused"))
    ask(scripted_server, model="other")

@pytest.mark.scripted_lenient
def test_lenient_without_a_reason(scripted_server):
    pass
""",
    )
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(["*scripted_lenient needs a reason*"])


def test_a_failing_test_reports_its_own_failure_only(pytester: pytest.Pytester) -> None:
    result = run_inner(
        pytester,
        """
def test_fails(scripted_server):
    scripted_server.queue("m", Text("never asked"))
    assert False, "the real failure"
""",
    )
    result.assert_outcomes(failed=1)


def test_problems_name_unused_replies_and_unexpected_requests() -> None:
    with ScriptedServer() as server:
        server.queue("m", Text("used"), ToolCalls([Call("list_recordings", {})]))
        assert "ToolCalls(list_recordings)" in server.problems()
        ask = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        for _ in range(3):
            httpx.post(server.base_url + "/chat/completions", json=ask, timeout=10)
        said = server.problems()
        assert "never requested" not in said
        assert said == "unexpected request to 'm' (its queue was empty), last message user: 'hi'"
        assert [r.model for r in server.unexpected] == ["m"]
        server.reset()
        assert server.problems() == "" and server.unexpected == []
