"""Chat mode through real ChatOpenAI against the scripted server over HTTP."""

from __future__ import annotations

import logging

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from brainchat import redact
from brainchat.chat import stream_chat
from brainchat.session import Session
from brainchat.settings import Settings, load_settings
from brainchat.testing.scripted_server import Drop, Fault, Malformed, Text
from brainchat.usage import count_message_tokens, count_tokens, fit_history

from support import collect, of, spec, text


def session_for(server, **kw) -> Session:
    return Session(Settings(chat_model=spec(server, "chat-m", **kw)))


async def test_streams_tokens_and_reports_server_usage(scripted_server) -> None:
    scripted_server.queue("chat-m", Text("Alpha rhythm is 8 to 12 Hz.", ttft=0.05))
    events = await collect(stream_chat(spec(scripted_server, "chat-m"), [], "What is alpha?"))
    tokens = of(events, "answer_token")
    assert len(tokens) >= 3 and text(events) == "Alpha rhythm is 8 to 12 Hz."
    stats = of(events, "stats")[0]
    reported = scripted_server.requests[-1].usage
    row = stats.rows[0]
    assert (row.input_tokens, row.output_tokens) == (
        reported["prompt_tokens"],
        reported["completion_tokens"],
    )
    assert row.estimated is False and row.model == "chat-m" and row.calls == 1
    assert row.ttft is not None and row.ttft >= 0.04 and stats.total_seconds >= row.ttft
    assert of(events, "run_finished")[0].reason == "answered"
    assert scripted_server.requests[-1].stream_options == {"include_usage": True}
    assert scripted_server.requests[-1].messages[0]["role"] == "system"


async def test_no_usage_from_server_is_estimated_and_flagged(scripted_server) -> None:
    scripted_server.send_usage = False
    scripted_server.queue("chat-m", Text("Beta is 13 to 30 Hz."))
    events = await collect(
        stream_chat(spec(scripted_server, "chat-m", stream_usage=False), [], "Beta?")
    )
    row = of(events, "stats")[0].rows[0]
    assert row.estimated is True and row.output_tokens > 0 and row.input_tokens > 0
    assert scripted_server.requests[-1].stream_options is None  # stream_usage off: not even asked


async def test_conversation_is_context_and_history_grows(scripted_server) -> None:
    session = session_for(scripted_server)
    scripted_server.queue("chat-m", Text("First answer."), Text("Second answer."))
    await collect(session.ask("first question"))
    await collect(session.ask("second question"))
    sent = scripted_server.requests[-1].messages
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[1]["content"] == "first question" and sent[2]["content"] == "First answer."
    assert len(session.history) == 4


def test_history_is_trimmed_to_budget_keeping_recent_turns() -> None:
    system, question = SystemMessage("sys"), HumanMessage("now?")
    history = []
    for i in range(40):
        history += [
            HumanMessage(f"question {i} " + "word " * 50),
            AIMessage(f"answer {i} " + "word " * 50),
        ]
    fixed = count_message_tokens([system, question])
    kept = [system, *fit_history(history, fixed, 800), question]  # what chat sends
    assert count_message_tokens(kept) <= 800
    assert kept[0] is system and kept[-1] is question
    assert isinstance(kept[1], HumanMessage)  # never starts with a dangling answer
    assert "question 39" in kept[-3].content and "answer 39" in kept[-2].content
    assert len(kept) < len(history)


async def test_long_chat_never_overflows_window(scripted_server) -> None:
    session = session_for(scripted_server, context_window=1200, max_tokens=200)
    for i in range(12):
        scripted_server.queue(
            "chat-m", Text(f"reply {i} " + " ".join(f"lorem ipsum{j}" for j in range(40)))
        )
        await collect(session.ask(f"message {i} " + "dolor sit " * 40))
    sent = scripted_server.requests[-1].messages
    assert sent[-1]["content"].startswith("message 11")
    assert len(sent) < 2 * 12 + 1
    assert scripted_server.requests[-1].usage["prompt_tokens"] < 1400


def sent_input_tokens(request) -> int:
    """The request's input as the budget counts it (OpenAI's chat accounting)."""
    return 3 + sum(3 + count_tokens(str(m.get("content") or "")) for m in request.messages)


async def test_input_plus_max_tokens_never_exceed_the_window(scripted_server) -> None:
    # window - max_tokens = 400 is below the old 512-token floor: the floor let input + reply
    # past the window. A spec built in code (or resized from a model list) skips the settings check.
    session = session_for(scripted_server, context_window=1000, max_tokens=600)
    for i in range(6):
        scripted_server.queue(
            "chat-m", Text(f"reply {i} " + " ".join(f"lorem ipsum{j}" for j in range(40)))
        )
        await collect(session.ask(f"message {i} " + "dolor sit " * 40))
    assert len(scripted_server.requests) == 6
    for request in scripted_server.requests:
        reply = request.params.get("max_completion_tokens") or request.params.get("max_tokens")
        assert reply == 600
        assert sent_input_tokens(request) + reply <= 1000


async def test_a_message_over_what_max_tokens_leaves_is_refused_with_both_sizes(
    scripted_server,
) -> None:
    session = session_for(scripted_server, context_window=2048, max_tokens=1900)
    events = await collect(session.ask("word " * 150))
    assert not scripted_server.requests
    message = of(events, "notice")[0].message
    assert f"Your message is about {count_tokens('word ' * 150):,} tokens" in message
    assert "1,900 kept for the answer" in message


async def test_rate_limit_is_retried_then_answers(scripted_server) -> None:
    scripted_server.queue("chat-m", Fault(429), Text("after retry"))
    events = await collect(stream_chat(spec(scripted_server, "chat-m", max_retries=2), [], "hi"))
    assert text(events) == "after retry"
    assert len(scripted_server.requests_for("chat-m")) == 2


async def test_server_error_gives_friendly_message_and_next_message_works(scripted_server) -> None:
    session = session_for(scripted_server)
    scripted_server.queue("chat-m", Fault(500), Text("recovered"))
    events = await collect(session.ask("first"))
    notice = of(events, "notice")[0]
    assert (
        notice.kind == "error"
        and "HTTP 500" in notice.message
        and "Traceback" not in notice.message
    )
    assert of(events, "run_finished")[0].reason == "error"
    assert session.history == []
    events = await collect(session.ask("second"))
    assert text(events) == "recovered" and len(session.history) == 2


async def test_refused_connection_names_the_server() -> None:
    from brainchat.settings import ModelSpec

    dead = ModelSpec(
        model="m",
        provider="openai-compatible",
        base_url="http://127.0.0.1:9/v1",
        api_key="k",
        max_retries=0,
    )
    events = await collect(stream_chat(dead, [], "hi"))
    message = of(events, "notice")[0].message
    assert "Could not connect" in message and "127.0.0.1:9" in message


async def test_stream_cut_midway_keeps_partial_and_says_so(scripted_server) -> None:
    scripted_server.queue("chat-m", Drop(after_chunks=2, content="one two three four five"))
    events = await collect(stream_chat(spec(scripted_server, "chat-m"), [], "hi"))
    assert text(events).startswith("one two")
    assert "broke off" in of(events, "notice")[0].message


async def test_stream_cut_before_any_text_is_retried(scripted_server) -> None:
    scripted_server.queue("chat-m", Drop(after_chunks=0), Text("whole answer"))
    events = await collect(stream_chat(spec(scripted_server, "chat-m"), [], "hi"))
    assert text(events) == "whole answer" and not of(events, "notice")


async def test_stream_cut_before_any_text_is_retried_after_a_stream_options_retry(
    scripted_server,
) -> None:
    s = scripted_server
    s.reject_stream_options = True
    s.queue("chat-m", Drop(after_chunks=0), Text("whole answer"))
    events = await collect(stream_chat(spec(s, "chat-m"), [], "hi"))
    assert text(events) == "whole answer" and of(events, "run_finished")[0].reason == "answered"
    assert [r.outcome == "fault" for r in s.requests] == [True, False, False]
    assert [n.kind for n in of(events, "notice")] == ["info"]  # stream_options, nothing else


async def test_malformed_chunk_is_an_error_message(scripted_server) -> None:
    scripted_server.queue("chat-m", Malformed(after_chunks=2))
    events = await collect(stream_chat(spec(scripted_server, "chat-m"), [], "hi"))
    assert len(scripted_server.requests) == 1  # not retried
    assert of(events, "notice")[0].kind == "error"
    assert of(events, "run_finished")[0].reason == "error"


async def test_timeout_is_reported(scripted_server) -> None:
    scripted_server.queue("chat-m", Text("late", ttft=3))
    events = await collect(stream_chat(spec(scripted_server, "chat-m", timeout=1), [], "hi"))
    assert len(scripted_server.requests) == 1  # not retried
    message = of(events, "notice")[0].message
    assert f"chat-m at {scripted_server.base_url} sent nothing for 1 s (model timeout)" in message


async def test_a_configured_key_a_server_quotes_back_is_masked_in_the_chat_and_log(
    scripted_server, caplog
) -> None:
    # no key shape (no sk-, too short and plain for the random-string rule): only the key given in
    # the configuration being remembered by `redact` keeps it out
    key = "token-abc123-chat"
    raw = (
        f'{{"model": "chat-m", "base_url": "{scripted_server.base_url}", "api_key": "{key}",'
        ' "max_retries": 0, "stream_usage": false}'
    )
    settings = load_settings({"CHAT_MODEL": raw}, dotenv=False)
    assert settings.errors == () and settings.chat_model is not None
    scripted_server.queue("chat-m", Fault(400, f"proxy rejected API key {key}"))
    caplog.set_level(logging.DEBUG)
    events = await collect(Session(settings).ask("hi"))
    notices = of(events, "notice")
    notice = next(n for n in notices if n.kind == "error")
    assert "HTTP 400" in notice.message and "***" in notice.message
    assert all(key not in n.message for n in notices)
    # Chat mode logs nothing of the error itself; any brainchat log line that quotes it is masked
    redact.get_logger("brainchat.chat").warning("model call failed: %s", f"rejected {key}")
    assert "model call failed" in caplog.text and key not in caplog.text


async def test_every_request_carries_max_tokens_and_a_cut_reply_is_said(scripted_server) -> None:
    """Issue #23: a spec without max_tokens sent no limit, so a looping model ran to the time
    limit. The request now carries the reserve the budget keeps; a reply the server stopped
    there (finish_reason "length") is kept, with a notice that says why it ends."""
    loop = " ".join(f"[{i}]" for i in range(1, 3000))  # one answer repeated [1] [2] ... [531]
    scripted_server.queue("chat-m", Text("Short."), Text(loop))
    session = Session(Settings(chat_model=spec(scripted_server, "chat-m", context_window=4000)))
    first = await collect(session.ask("hi"))
    assert reply_limit(scripted_server.requests[0]) == 1024  # the default reserve
    assert not [n for n in of(first, "notice") if "length limit" in n.message]
    second = await collect(session.ask("count"))
    assert reply_limit(scripted_server.requests[1]) == 1024
    answer = text(second)
    assert answer.startswith("[1] [2]") and "[1025]" not in answer  # the server cut it there
    (notice,) = [n for n in of(second, "notice") if "length limit" in n.message]
    assert "chat-m's reply reached its length limit of 1,024 tokens" in notice.message
    assert "max_tokens" in notice.hint
    assert of(second, "run_finished")[0].reason == "answered"  # the cut answer is kept


async def test_a_small_window_sends_half_of_it_as_max_tokens(scripted_server) -> None:
    scripted_server.queue("chat-m", Text("ok"))
    await collect(stream_chat(spec(scripted_server, "chat-m", context_window=1200), [], "hi"))
    assert reply_limit(scripted_server.requests[-1]) == 600


def reply_limit(request) -> int | None:
    """max_tokens as sent (langchain-openai names it max_completion_tokens on the wire)."""
    return request.params.get("max_completion_tokens") or request.params.get("max_tokens")
