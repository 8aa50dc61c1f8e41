"""The scripted OpenAI-compatible server, exercised through real clients over real HTTP."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator

import httpx
import openai
import pytest
from langchain_core.messages import AIMessageChunk, HumanMessage
from langchain_openai import ChatOpenAI

from brainchat.testing.replies import call_text
from brainchat.testing.scripted_server import (
    Call,
    Drop,
    Empty,
    Fault,
    Malformed,
    ScriptedServer,
    Text,
    ToolCalls,
    reply_from_dict,
    reply_to_dict,
)

USER = [{"role": "user", "content": "hello"}]


def chat_model(server: ScriptedServer, model: str = "m1", **kwargs: object) -> ChatOpenAI:
    kwargs = {"stream_usage": True, "max_retries": 0, **kwargs}
    return ChatOpenAI(base_url=server.base_url, api_key="x", model=model, **kwargs)


@pytest.fixture
def client(scripted_server: ScriptedServer) -> Iterator[openai.OpenAI]:
    """An openai SDK client for the scripted server, without retries."""
    with openai.OpenAI(base_url=scripted_server.base_url, api_key="x", max_retries=0) as sdk:
        yield sdk


async def collect(llm: ChatOpenAI, text: str = "hello") -> list[AIMessageChunk]:
    return [chunk async for chunk in llm.astream([HumanMessage(text)])]


def total(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    out = chunks[0]
    for chunk in chunks[1:]:
        out = out + chunk
    return out


async def test_text_streams_in_several_chunks_with_usage(scripted_server: ScriptedServer) -> None:
    scripted_server.queue("m1", Text("EEG measures electrical activity of the brain"))
    chunks = await collect(chat_model(scripted_server))
    pieces = [c.content for c in chunks if c.content]
    assert len(pieces) >= 3
    assert "".join(pieces) == "EEG measures electrical activity of the brain"
    usage = total(chunks).usage_metadata
    (rec,) = scripted_server.requests
    assert rec.usage is not None and rec.outcome == "ok"
    assert usage is not None and usage["input_tokens"] == rec.usage["prompt_tokens"]
    assert usage["output_tokens"] == rec.usage["completion_tokens"] == len(pieces)
    assert rec.usage["prompt_tokens"] == 2 + 3  # ceil(len("hello") / 4) + 3


async def test_chunk_size_and_reasoning_come_first(scripted_server: ScriptedServer) -> None:
    scripted_server.queue("m1", Text("abcdefgh", reasoning="think first", chunk_size=3))
    async with openai.AsyncOpenAI(base_url=scripted_server.base_url, api_key="x") as client:
        stream = await client.chat.completions.create(model="m1", messages=USER, stream=True)
        deltas = [c.choices[0].delta for c in [c async for c in stream] if c.choices]
    reasoning = [d.model_extra.get("reasoning_content") for d in deltas]
    assert "".join(r for r in reasoning if r) == "think first"
    assert [d.content for d in deltas if d.content] == ["abc", "def", "gh"]
    assert reasoning[0] and deltas[0].role == "assistant"


async def test_tool_calls_assemble_through_chatopenai(scripted_server: ScriptedServer) -> None:
    calls = [
        Call("web_search", {"query": "mu rhythm", "max_results": 5}),
        Call("load_edf", "{}", id="c9"),
    ]
    scripted_server.queue("m1", ToolCalls(calls))
    chunks = await collect(chat_model(scripted_server))
    message = total(chunks)
    assert [(c["name"], c["args"]) for c in message.tool_calls] == [
        ("web_search", {"query": "mu rhythm", "max_results": 5}),
        ("load_edf", {}),
    ]
    assert message.tool_calls[0]["id"] == "call_1_0" and message.tool_calls[1]["id"] == "c9"
    for index in (0, 1):  # each call's arguments arrive in at least two chunks
        parts = [tc for c in chunks for tc in c.tool_call_chunks if tc["index"] == index]
        assert len(parts) >= 2
    assert message.response_metadata["finish_reason"] == "tool_calls"


def test_non_streaming_text_and_tool_calls(
    scripted_server: ScriptedServer, client: openai.OpenAI
) -> None:
    scripted_server.queue(
        "m1", Text("all at once", reasoning="hm"), ToolCalls([Call("f", {"x": 1})])
    )
    first = client.chat.completions.create(model="m1", messages=USER)
    assert first.choices[0].message.content == "all at once"
    assert first.usage is not None and first.usage.completion_tokens == 1 + 3
    second = client.chat.completions.create(model="m1", messages=USER)
    call = second.choices[0].message.tool_calls[0]
    assert (call.function.name, json.loads(call.function.arguments)) == ("f", {"x": 1})
    assert [r.usage for r in scripted_server.requests] == [
        first.usage.model_dump(exclude_none=True),
        second.usage.model_dump(exclude_none=True),
    ]


async def test_usage_switches(scripted_server: ScriptedServer) -> None:
    scripted_server.send_usage = False
    scripted_server.queue("m1", Text("a b"), Text("c d", usage=True))
    assert total(await collect(chat_model(scripted_server))).usage_metadata is None
    assert total(await collect(chat_model(scripted_server))).usage_metadata is not None
    scripted_server.send_usage = True
    scripted_server.queue(
        "m1", Text("e f", usage=False), Text("g h", prompt_tokens=100, completion_tokens=7)
    )
    assert total(await collect(chat_model(scripted_server))).usage_metadata is None
    usage = total(await collect(chat_model(scripted_server))).usage_metadata
    scripted_server.queue("m1", Text("i j"))
    assert usage is not None and (
        usage["input_tokens"],
        usage["output_tokens"],
        usage["total_tokens"],
    ) == (100, 7, 107)
    assert (
        total(await collect(chat_model(scripted_server, stream_usage=False))).usage_metadata is None
    )
    sent = [r.usage is not None for r in scripted_server.requests]
    assert sent == [False, True, False, True, False]
    assert [r.stream_options for r in scripted_server.requests][-2:] == [
        {"include_usage": True},
        None,
    ]


def test_faults_reach_the_client_as_openai_errors(
    scripted_server: ScriptedServer, client: openai.OpenAI
) -> None:
    scripted_server.queue("m1", Fault(429, "slow down"), Fault(500), Text("recovered"))
    with pytest.raises(openai.RateLimitError) as rate:
        client.chat.completions.create(model="m1", messages=USER, stream=True)
    assert rate.value.response.headers["retry-after"] == "0"
    assert "slow down" in rate.value.message
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="m1", messages=USER)
    assert (
        client.chat.completions.create(model="m1", messages=USER).choices[0].message.content
        == "recovered"
    )
    assert [r.outcome for r in scripted_server.requests] == ["fault", "fault", "ok"]


async def test_fault_through_chatopenai(scripted_server: ScriptedServer) -> None:
    scripted_server.queue("m1", Fault(429))
    with pytest.raises(openai.RateLimitError):
        await collect(chat_model(scripted_server))


async def test_drop_makes_the_stream_raise(scripted_server: ScriptedServer) -> None:
    scripted_server.queue("m1", Drop(after_chunks=2))
    seen: list[str] = []
    with pytest.raises((openai.APIConnectionError, httpx.HTTPError)):
        async for chunk in chat_model(scripted_server).astream("hi"):
            seen.append(str(chunk.content))
    assert "".join(seen) == "this answer "
    assert scripted_server.requests[0].outcome == "drop"


def test_drop_non_streaming_raises(scripted_server: ScriptedServer, client: openai.OpenAI) -> None:
    scripted_server.queue("m1", Drop())
    with pytest.raises((openai.APIConnectionError, httpx.HTTPError)):
        client.chat.completions.create(model="m1", messages=USER)


def test_malformed_chunk_raises(scripted_server: ScriptedServer, client: openai.OpenAI) -> None:
    scripted_server.queue("m1", Malformed(after_chunks=1))
    stream = client.chat.completions.create(model="m1", messages=USER, stream=True)
    with pytest.raises(ValueError):  # json.JSONDecodeError
        for _ in stream:
            pass


@pytest.mark.scripted_lenient("asserts the echo that answers an unscripted request")
def test_per_model_queues_defaults_and_echo(
    scripted_server: ScriptedServer, client: openai.OpenAI
) -> None:
    scripted_server.queue("m1", Text("one"), Text("two"))
    scripted_server.queue("m2", Text("for m2"))
    scripted_server.set_default("m2", Text("m2 default"))

    def ask(model: str, text: str = "hello") -> str:
        messages = [{"role": "user", "content": text}]
        return (
            client.chat.completions.create(model=model, messages=messages)
            .choices[0]
            .message.content
        )

    assert [ask("m2"), ask("m1"), ask("m2"), ask("m1"), ask("m1", "again")] == [
        "for m2",
        "one",
        "m2 default",
        "two",
        "(scripted) again",
    ]
    scripted_server.set_default(None, {"type": "text", "content": "any model"})
    assert ask("m3") == "any model"
    assert [r.model for r in scripted_server.requests_for("m2")] == ["m2", "m2"]
    assert scripted_server.remaining() == 0
    assert [m.id for m in client.models.list()] == ["m1", "m2", "m3"]


async def test_request_log_records_messages_tools_and_params(
    scripted_server: ScriptedServer,
) -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "web_search",
            "description": "Search the web.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
        },
    }
    scripted_server.queue("m7", Text("Event-related desynchronisation."))
    llm = chat_model(scripted_server, "m7", temperature=0.2).bind_tools([tool])
    await collect(llm, "what is ERD?")
    (rec,) = scripted_server.requests_for("m7")
    assert rec.messages == [{"role": "user", "content": "what is ERD?"}]
    assert rec.tools is not None and rec.tools[0]["function"]["name"] == "web_search"
    assert rec.stream is True and rec.stream_options == {"include_usage": True}
    assert rec.params["temperature"] == 0.2
    assert rec.reply is not None and rec.reply["type"] == "text"
    assert rec.started_at <= rec.first_chunk_at <= rec.finished_at  # type: ignore[operator]
    scripted_server.clear()
    assert scripted_server.requests == []


async def test_ttft_and_token_delay_are_observed(scripted_server: ScriptedServer) -> None:
    scripted_server.queue("m1", Text("one two three", ttft=0.3, token_delay=0.05))
    await collect(chat_model(scripted_server))
    rec = scripted_server.requests[0]
    assert rec.first_chunk_at is not None and rec.finished_at is not None
    assert rec.first_chunk_at >= rec.started_at + 0.3 * 0.9
    assert rec.finished_at >= rec.first_chunk_at + 2 * 0.05 * 0.9


async def test_pace_scales_every_replys_timing_and_reset_restores_it(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.pace = 2  # the demo's BRAINCHAT_DEMO_PACE: twice as slow
    scripted_server.queue("m1", Text("one two three", ttft=0.2, token_delay=0.05))
    await collect(chat_model(scripted_server))
    rec = scripted_server.requests[0]
    assert rec.reply is not None and (rec.reply["ttft"], rec.reply["token_delay"]) == (0.4, 0.1)
    assert rec.first_chunk_at is not None and rec.first_chunk_at >= rec.started_at + 0.4 * 0.9
    scripted_server.pace = 0  # at once: a reply scripted to wait 30 s does not
    scripted_server.queue("m1", Text("one two three", ttft=30.0, token_delay=5.0))
    await collect(chat_model(scripted_server))
    rec = scripted_server.requests[1]
    assert rec.reply is not None and (rec.reply["ttft"], rec.reply["token_delay"]) == (0.0, 0.0)
    scripted_server.reset()
    assert scripted_server.pace == 1.0


async def test_client_going_away_is_recorded(scripted_server: ScriptedServer) -> None:
    scripted_server.queue("m1", Text("a b c d e f g h", token_delay=0.2))
    async for _chunk in chat_model(scripted_server).astream("hi"):
        break  # closes the stream after the first chunk, like a stop button
    for _ in range(100):
        if scripted_server.requests[0].finished_at is not None:
            break
        await asyncio.sleep(0.05)
    assert scripted_server.requests[0].outcome == "disconnected"


def test_admin_api_over_http(scripted_server: ScriptedServer, client: openai.OpenAI) -> None:
    with httpx.Client(base_url=scripted_server.admin_url) as admin:
        replies = [{"type": "text", "content": "from admin"}, {"type": "fault", "status": 500}]
        response = admin.post("/queue", json={"model": "m1", "replies": replies})
        assert response.json() == {"queued": 2, "remaining": 2}
        assert (
            admin.post("/queue", json={"model": "m1", "replies": [{"type": "nope"}]}).status_code
            == 400
        )
        assert admin.post("/config", json={"send_usage": False}).json() == {
            "send_usage": False,
            "reject_stream_options": False,
        }
        answer = client.chat.completions.create(model="m1", messages=USER)
        assert answer.choices[0].message.content == "from admin" and answer.usage is None
        with pytest.raises(openai.InternalServerError):
            client.chat.completions.create(model="m1", messages=USER)
        logged = admin.get("/requests").json()
        assert [(r["model"], r["outcome"], r["messages"]) for r in logged] == [
            ("m1", "ok", USER),
            ("m1", "fault", USER),
        ]
        admin.post("/default", json={"model": None, "reply": {"type": "text", "content": "dflt"}})
        assert (
            client.chat.completions.create(model="zz", messages=USER).choices[0].message.content
            == "dflt"
        )
        assert admin.post("/reset").status_code == 200
        assert admin.get("/requests").json() == [] and scripted_server.send_usage is True


def test_replies_round_trip_and_validate() -> None:
    replies = [
        Text("hi", reasoning="r", ttft=0.1),
        ToolCalls([Call("f", {"a": 1}, id="x")], content="calling"),
        Fault(429, "m"),
        Drop(after_chunks=3),
        Malformed(usage=False),
    ]
    for reply in replies:
        assert reply_from_dict(json.loads(json.dumps(reply_to_dict(reply)))) == reply
    with pytest.raises(ValueError, match="not one of"):
        reply_from_dict({"type": "video"})
    with pytest.raises(ValueError, match="unknown field"):
        reply_from_dict({"type": "text", "content": "x", "colour": "red"})


def test_a_responder_chooses_replies_by_what_is_asked_after_the_queue() -> None:
    def by_question(request):  # a reply from the request's content, not from an order
        asked = request.messages[-1]["content"]
        return None if asked == "pass" else {"type": "text", "content": f"you asked {asked}"}

    with (
        ScriptedServer(responder=by_question) as server,
        openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0) as sdk,
    ):
        server.queue("m", Text("queued first"))
        server.set_default("m", Text("the default"))

        def ask(text: str) -> str:
            message = {"role": "user", "content": text}
            reply = sdk.chat.completions.create(model="m", messages=[message])
            return str(reply.choices[0].message.content)

        assert ask("a") == "queued first"  # the queue still goes first
        assert [ask("b"), ask("b"), ask("c")] == ["you asked b"] * 2 + ["you asked c"]
        assert ask("pass") == "the default"  # None: the responder passes
        server.responder = lambda request: 1 / 0  # a broken responder fails the request loudly
        with pytest.raises(openai.InternalServerError, match="ZeroDivisionError"):
            ask("d")
        assert server.requests[-1].outcome == "fault"


def test_script_file_and_command_line_with_a_responder(tmp_path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"queues": {"m": [{"type": "text", "content": "from file"}]}}))
    assert ScriptedServer(script=script).remaining("m") == 1
    responder = "brainchat.demo.replies:respond"  # the demo's, as README shows it by hand
    cmd = [sys.executable, "-m", "brainchat.testing.scripted_server", "--port", "0"]
    with subprocess.Popen(
        [*cmd, "--responder", responder, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as proc:
        try:
            assert proc.stdout is not None
            base_url = proc.stdout.readline().strip()
            assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
            with openai.OpenAI(base_url=base_url, api_key="x", max_retries=0) as client:
                first = client.chat.completions.create(model="m", messages=USER)
                asked = [{"role": "user", "content": "Search the literature on ERD, cite it"}]
                agent = client.chat.completions.create(model="demo-agent", messages=asked)
            assert first.choices[0].message.content == "from file"
            assert agent.choices[0].message.tool_calls[0].function.name == "web_search"
        finally:
            proc.terminate()
    bad = subprocess.run([*cmd, "--responder", "json:nothing"], capture_output=True, text=True)
    assert bad.returncode != 0 and "json has no function nothing" in bad.stderr


def test_server_restarts_cleanly() -> None:
    with ScriptedServer() as server:
        port = server.port
        assert httpx.get(f"{server.base_url}/models").status_code == 200
    with ScriptedServer(port) as again:  # the port is free again after stop()
        assert again.port == port


async def test_empty_reply_streams_no_content_and_whole_is_empty(
    scripted_server: ScriptedServer, client: openai.OpenAI
) -> None:
    scripted_server.queue("m1", Empty(), Empty())
    chunks = await collect(chat_model(scripted_server))
    reply = total(chunks)
    assert reply.content == "" and not reply.tool_call_chunks
    assert reply.usage_metadata is not None  # the finish and usage chunks still come
    whole = client.chat.completions.create(model="m1", messages=USER)
    assert whole.choices[0].message.content == "" and not whole.choices[0].message.tool_calls
    assert [r.outcome for r in scripted_server.requests] == ["ok", "ok"]


def test_stream_options_can_be_refused_with_http_400(
    scripted_server: ScriptedServer, client: openai.OpenAI
) -> None:
    scripted_server.reject_stream_options = True
    scripted_server.queue("m1", Text("kept for the next request"))
    with pytest.raises(openai.BadRequestError, match="stream_options"):
        client.chat.completions.create(
            model="m1", messages=USER, stream=True, stream_options={"include_usage": True}
        )
    assert scripted_server.remaining("m1") == 1  # the refusal used up no scripted reply
    stream = client.chat.completions.create(model="m1", messages=USER, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == (
        "kept for the next request"
    )
    with httpx.Client(base_url=scripted_server.admin_url) as admin:
        assert admin.post("/config", json={"reject_stream_options": False}).json() == {
            "send_usage": True,
            "reject_stream_options": False,
        }
    assert scripted_server.reject_stream_options is False


async def test_silent_stream_sends_headers_then_nothing(scripted_server: ScriptedServer) -> None:
    scripted_server.queue("m1", Text("late", ttft=3.0))
    llm = chat_model(scripted_server, stream_chunk_timeout=0.5)
    with pytest.raises(TimeoutError):
        await collect(llm)
    await asyncio.sleep(0.2)
    assert scripted_server.requests[0].first_chunk_at is None


def test_tool_calls_written_as_text() -> None:
    calls = [Call("web_search", {"query": "EEG"}), Call("load_data", {"files": ["a.edf"]})]
    fenced = call_text(calls, prose="Searching.")
    assert fenced.startswith("Searching.\n```json\n") and fenced.count("```json") == 2
    assert json.loads(fenced.split("```json\n")[1].split("\n```")[0]) == {
        "name": "web_search",
        "arguments": {"query": "EEG"},
    }
    bare = call_text(calls, fenced=False).splitlines()
    assert [json.loads(line)["name"] for line in bare] == ["web_search", "load_data"]
    assert reply_from_dict({"type": "empty", "ttft": 0.1}) == Empty(ttft=0.1)


def test_models_list_is_configurable_and_a_key_can_be_required(
    scripted_server: ScriptedServer,
) -> None:
    """`/v1/models` reports the configured list; with `api_key` set, both endpoints need it."""
    scripted_server.models = ["llama-3.2-1b", "qwen2.5-1.5b"]
    scripted_server.api_key = "sk-right-key-123456"
    right = openai.OpenAI(
        base_url=scripted_server.base_url, api_key="sk-right-key-123456", max_retries=0
    )
    wrong = openai.OpenAI(base_url=scripted_server.base_url, api_key="sk-wrong", max_retries=0)
    with right, wrong:
        assert [m.id for m in right.models.list()] == ["llama-3.2-1b", "qwen2.5-1.5b"]
        with pytest.raises(openai.AuthenticationError):
            wrong.models.list()
        with pytest.raises(openai.AuthenticationError):
            wrong.chat.completions.create(model="qwen2.5-1.5b", messages=USER)
        assert scripted_server.requests == []  # a refused request is not served
        reply = right.chat.completions.create(model="qwen2.5-1.5b", messages=USER)
        assert reply.choices[0].message.content == "(scripted) hello"
        assert httpx.get(f"{scripted_server.base_url}/models").status_code == 401  # no key
    with httpx.Client(base_url=scripted_server.admin_url) as admin:
        answer = admin.post("/config", json={"models": ["a"], "api_key": None}).json()
        assert answer == {"send_usage": True, "reject_stream_options": False, "models": ["a"]}
        assert httpx.get(f"{scripted_server.base_url}/models").json()["data"][0]["id"] == "a"
    scripted_server.reset()
    assert scripted_server.models is None and scripted_server.api_key is None
