"""Model connections: probing a real server's /models, the session using the picked models, and
the store keeping each user's keys encrypted."""

from __future__ import annotations

import http.server
import threading
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from brainchat.connections import Connection, ConnectionFailed, checked, probe
from brainchat.redact import mask
from brainchat.session import Session
from brainchat.settings import Settings
from brainchat.store.config import async_url, sqlite_url
from brainchat.store.connections import ConnectionStore
from brainchat.store.database import make_engine, migrate
from brainchat.store.records import Store
from brainchat.store.schema import SCHEMA_VERSION
from brainchat.testing.scripted_server import ScriptedServer, Text

from support import collect, of, spec, write_fixture

KEY = "sk-conn-test-9f8e7d6c5b4a"
NOW = "2026-01-01T00:00:00.000Z"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def html_server(tmp_path: Path) -> Iterator[str]:
    """A real web server whose /models is an HTML page (a URL that is not an OpenAI API)."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "models").write_text("<html><body>Welcome</body></html>")
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path / "site"))
    handler.log_message = lambda *a: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


async def test_probe_lists_the_models_the_server_reports(scripted_server: ScriptedServer) -> None:
    scripted_server.models = ["llama-3.2-1b", "qwen2.5-1.5b"]
    scripted_server.api_key = KEY
    conn = await probe(checked("my llama", scripted_server.base_url + "/", KEY))
    assert conn.models == ("llama-3.2-1b", "qwen2.5-1.5b")
    assert conn.base_url == scripted_server.base_url and conn.api_key == KEY
    assert KEY not in repr(conn)
    spec_ = conn.spec("qwen2.5-1.5b")
    assert (spec_.model, spec_.base_url, spec_.api_key) == ("qwen2.5-1.5b", conn.base_url, KEY)
    assert spec_.name == "qwen2.5-1.5b @ my llama"
    assert spec_.context_window == 16000  # the list states none: ModelSpec's default


async def test_a_context_window_the_model_list_states_sizes_the_requests(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    """vLLM's /models states max_model_len: a 4,096-token model's requests are cut to fit it."""
    s = scripted_server
    s.models, s.context_windows = ["small"], {"small": 4096}
    conn = await probe(checked("lab", s.base_url, None))
    assert conn.spec("small").context_window == 4096
    session = unconfigured_session(tmp_path)
    session.add_connection(conn)
    session.apply_settings({"chat_model": "small @ lab"})
    events = await collect(session.ask("x " * 5_000))  # ~5k tokens: over 4,096, under 16,000
    assert not s.requests_for("small")  # never sent
    [notice] = [n for n in of(events, "notice") if n.kind == "error"]
    assert "about 5,0" in notice.message and "context window 4,096" in notice.message
    assert "small @ lab" in notice.message
    s.queue("small", Text("short"))
    events = await collect(session.ask("a short question"))  # the conversation goes on
    assert of(events, "run_finished")[0].answer == "short"


async def test_each_failure_says_why_names_the_connection_and_never_the_key(
    scripted_server: ScriptedServer, html_server: str
) -> None:
    scripted_server.models = ["m1"]
    scripted_server.api_key = KEY
    wrong = "sk-wrong-key-0123456789abcdef"
    cases = [
        (checked("lab", scripted_server.base_url, wrong), "refused the API key (HTTP 401)"),
        (checked("lab", scripted_server.base_url, None), "refused the API key (HTTP 401)"),
        (checked("lab", f"http://127.0.0.1:{_free_port()}/v1", wrong), "could not reach"),
        (checked("lab", scripted_server.url, KEY), "no model list at"),  # no /v1: 404
        (checked("lab", html_server, wrong), "did not answer with an OpenAI model list"),
    ]
    for conn, why in cases:
        with pytest.raises(ConnectionFailed) as caught:
            await probe(conn, wait=5)
        message = str(caught.value)
        assert why in message, message
        assert "connection 'lab'" in message and conn.shown_url in message
        assert wrong not in message and KEY not in message
    scripted_server.models = []
    scripted_server.api_key = None
    with pytest.raises(ConnectionFailed, match="lists no models"):
        await probe(checked("lab", scripted_server.base_url, None))


async def test_a_redirect_is_not_followed_and_a_dripping_server_is_cut_at_the_limit(
    html_server: str, tmp_path: Path
) -> None:
    """A 301 is neither followed nor named (its target may be internal: issue #21); a server
    that sends a byte now and then cannot hold the panel longer than the probe's time limit."""
    import asyncio
    import time

    (tmp_path / "site" / "moved" / "models").mkdir(parents=True)  # a folder: 301 to models/
    with pytest.raises(ConnectionFailed, match=r"with a redirect \(HTTP 301\)") as refused:
        await probe(checked("lab", f"{html_server}/moved", None), wait=5)
    assert "/moved/models/" not in str(refused.value)

    async def drip(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")  # fmt: skip
        try:
            for _ in range(100):
                writer.write(b"1\r\n \r\n")
                await writer.drain()
                await asyncio.sleep(0.3)  # each read well within the per-read timeout
        except (ConnectionError, asyncio.CancelledError):
            pass

    server = await asyncio.start_server(drip, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    started = time.monotonic()
    with pytest.raises(ConnectionFailed, match="no answer within 1.5 s"):
        await probe(checked("drip", f"http://127.0.0.1:{port}/v1", None), wait=1.5)
    assert time.monotonic() - started < 10  # not 100 x 0.3 s
    server.close()


def test_a_credential_or_query_in_the_base_url_is_refused() -> None:
    for url in ("http://user:pw-secret-1@host/v1", "https://host/v1?api-key=abc", "http://h/v1#x"):
        with pytest.raises(ConnectionFailed, match="API key field") as caught:
            checked("x", url, None)
        assert "pw-secret-1" not in str(caught.value)


def test_bad_form_values_are_refused_before_any_request() -> None:
    with pytest.raises(ConnectionFailed, match="base URL 'localhost:8080' is not valid"):
        checked("x", "localhost:8080", None)
    with pytest.raises(ConnectionFailed, match="not valid") as caught:
        checked("x", "", KEY)
    assert KEY not in str(caught.value)
    with pytest.raises(ConnectionFailed, match="provider name"):
        checked(KEY, "http://localhost:8080/v1", None)  # a key pasted into the name field
    assert checked("", "http://localhost:8080/v1", "").name == "localhost:8080"


def unconfigured_session(tmp_path: Path) -> Session:
    settings = Settings(
        data_dir=tmp_path / "data",
        search_backend="fixture",
        search_fixture=write_fixture(tmp_path / "fx.json"),
    )
    return Session(settings)


async def test_picked_connection_models_run_chat_and_agent_turns_with_their_key(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    """No model configured: a connection's models, once picked, serve the next turns."""
    s = scripted_server
    s.models, s.api_key = ["fc-x", "ans-x", "chat-x"], KEY
    session = unconfigured_session(tmp_path)
    assert session.config_problem() is not None
    session.add_connection(await probe(checked("lab", s.base_url, KEY)))
    session.apply_settings({"function_call_model": "fc-x @ lab", "answer_model": "ans-x @ lab",
                            "chat_model": "chat-x @ lab"})  # fmt: skip
    assert session.config_problem() is None
    s.queue("chat-x", Text("hello from chat-x"))
    events = await collect(session.ask("hi"))
    assert of(events, "run_finished")[0].answer == "hello from chat-x"
    session.set_mode("agent")
    s.queue("fc-x", Text("no tools needed"))
    s.queue("ans-x", Text("agent answer"))
    events = await collect(session.ask("what is EEG"))
    assert of(events, "run_finished")[0].answer == "agent answer"
    assert [r.model for r in s.requests] == ["chat-x", "fc-x", "ans-x"]  # all accepted the key


async def test_removing_a_connection_takes_its_models_off_the_roles(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    s = scripted_server
    s.models = ["chat-x", "fc-x"]
    session = unconfigured_session(tmp_path)
    session.add_connection(await probe(checked("lab", s.base_url, None)))
    session.add_connection(await probe(checked("other", s.base_url, None)))
    session.apply_settings({"chat_model": "chat-x @ lab", "function_call_model": "fc-x @ other"})
    assert session.remove_connection("nope") is None
    removed = session.remove_connection("lab")
    assert removed is not None and removed.name == "lab" and list(session.connections) == ["other"]
    assert "chat_model" not in session.overrides
    assert session.settings.chat_model is None  # chat falls back to the other connection's pick
    assert session.settings.model_for("chat").model == "fc-x"  # type: ignore[union-attr]
    session.remove_connection("other")
    assert session.overrides == {} and session.config_problem() is not None


async def test_a_saved_pick_of_a_removed_connection_drops_only_that_pick(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    settings = Settings(chat_model=spec(scripted_server, "env-chat"), data_dir=tmp_path)
    session = Session(settings)
    saved = {"chat_model": "m1 @ lab", "max_iterations": 7, "chat_temperature": "0.3"}
    assert session.restore_settings(saved) == ["chat_model=m1 @ lab"]
    assert session.settings.limits.max_iterations == 7
    assert session.settings.chat_model.model == "env-chat"  # type: ignore[union-attr]
    assert session.settings.chat_model.temperature == 0.3  # type: ignore[union-attr]


async def test_a_broken_model_variable_stops_blocking_once_the_mode_uses_picked_models(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    """CHAT_MODEL is malformed: the first screen says so and offers a connection; once the
    models this mode uses come from the user's connection, the bad variable no longer blocks,
    while a problem that is not about models still does."""
    from brainchat.settings import load_settings

    s = scripted_server
    s.models = ["chat-x", "fc-x"]
    env = {"CHAT_MODEL": '{"model": "x", "base_url": ', "BRAINCHAT_DATA_DIR": str(tmp_path)}
    session = Session(load_settings(env, dotenv=False))
    assert "CHAT_MODEL" in (session.config_problem() or "")
    session.add_connection(await probe(checked("lab", s.base_url, None)))
    assert "CHAT_MODEL" in (session.config_problem() or "")  # nothing picked yet
    session.apply_settings({"chat_model": "chat-x @ lab"})
    assert session.config_problem() is None
    s.queue("chat-x", Text("hello despite CHAT_MODEL"))
    events = await collect(session.ask("hi"))
    assert of(events, "run_finished")[0].answer == "hello despite CHAT_MODEL"
    session.set_mode("agent")  # its roles fall back to the picked chat model
    assert session.config_problem() is None
    both = {**env, "AGENT_MAX_ITERATIONS": "0"}
    other = Session(load_settings(both, dotenv=False))
    other.add_connection(await probe(checked("lab", s.base_url, None)))
    other.apply_settings({"chat_model": "chat-x @ lab"})
    problem = other.config_problem() or ""
    assert "AGENT_MAX_ITERATIONS" in problem and "CHAT_MODEL" not in problem


async def test_a_new_connection_or_key_rebuilds_the_cached_agent(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    s = scripted_server
    settings = Settings(
        function_call_model=spec(s, "env-fc"),
        answer_model=spec(s, "env-ans"),
        default_mode="agent",
        data_dir=tmp_path / "data",
        search_backend="fixture",
        search_fixture=write_fixture(tmp_path / "fx.json"),
    )
    session = Session(settings)
    s.set_default("env-ans", Text("An answer."))  # the answer model answers every turn
    s.queue("env-fc", Text("no tools"))
    await collect(session.ask("q0"))
    assert session.agents.builds == 1
    s.models = ["fc-y"]
    session.add_connection(await probe(checked("lab", s.base_url, "key-one-1234")))
    assert session.agents.builds == 1 and session.settings == settings  # nothing picked yet
    session.apply_settings({"function_call_model": "fc-y @ lab"})
    s.queue("fc-y", Text("no tools"))
    await collect(session.ask("q1"))
    assert session.agents.builds == 2
    assert s.requests[-1].model == "env-ans" and s.requests[-2].model == "fc-y"
    # the same connection again with another key: the role keeps its model, with the new key
    session.add_connection(await probe(checked("lab", s.base_url, "key-two-5678")))
    assert session.settings.function_call_model.api_key == "key-two-5678"  # type: ignore[union-attr]
    s.queue("fc-y", Text("no tools"))
    await collect(session.ask("q2"))
    assert session.agents.builds == 3
    # the connection no longer lists the picked model: the role goes back to the configured one
    s.models = ["other"]
    session.add_connection(await probe(checked("lab", s.base_url, "key-two-5678")))
    assert session.settings.function_call_model.model == "env-fc"  # type: ignore[union-attr]


def test_a_remembered_key_is_masked_even_when_it_does_not_look_like_one() -> None:
    from brainchat import redact

    plain = f"letmein{uuid.uuid4().hex[:4]}"
    assert mask(f"key was {plain}") == f"key was {plain}"
    redact.remember(plain)
    assert mask(f"key was {plain}.") == "key was ***."
    # ...in logs and messages only: another user may still name a connection with that text
    assert checked(plain, "http://localhost:8080/v1", None).name == plain
    redact.remember("ollama")  # a placeholder key, not a secret: other users' "ollama" stays
    assert mask("ollama at localhost") == "ollama at localhost"
    assert checked("ollama", "http://localhost:11434/v1", "ollama").name == "ollama"


# -- the store --------------------------------------------------------------------------------
@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Any) -> str:
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "state" / "brainchat.db")
    name = "c_" + uuid.uuid4().hex[:12]
    return async_url(request.getfixturevalue("embedded_pg").new_database(name))


async def test_keys_are_encrypted_at_rest_and_only_their_user_reads_them(db_url: str) -> None:
    engine = make_engine(db_url)
    await migrate(engine)
    store = ConnectionStore(Store(engine), b"app secret one")
    conn = Connection("lab", "http://127.0.0.1:9/v1", KEY, ("m1", "m2"))
    await store.save("ana", conn, NOW)
    await store.save("ana", Connection("local", "http://127.0.0.1:8/v1", None, ("x",)), NOW)
    async with engine.connect() as c:
        rows = [tuple(r) for r in await c.execute(text("SELECT * FROM brainchat_connections"))]
    raw = repr(rows)
    assert KEY not in raw and KEY[3:15] not in raw  # the raw rows hold no trace of the key
    assert "http://127.0.0.1:9/v1" in raw  # the URL is not secret
    assert await store.load("ana") == [conn, Connection("local", "http://127.0.0.1:8/v1", None,
                                                        ("x",))]  # fmt: skip
    assert await store.load("bob") == []  # another user has no connections...
    async with engine.begin() as c:  # ...and a row copied to them does not decrypt
        await c.execute(
            text(
                "INSERT INTO brainchat_connections SELECT 'bob', name, base_url, key_token, "
                'models, "createdAt", "updatedAt" FROM brainchat_connections '
                "WHERE identifier = 'ana'"
            )
        )
    assert [c.name for c in await store.load("bob")] == ["local"]  # the keyless one only
    other_app = ConnectionStore(Store(engine), b"another secret")
    assert [c.name for c in await other_app.load("ana")] == ["local"]
    # replacing a connection keeps one row with the new key
    await store.save("ana", Connection("lab", "http://127.0.0.1:9/v1", "new-key-42", ("m1",)), NOW)
    loaded = {c.name: c for c in await store.load("ana")}
    assert loaded["lab"].api_key == "new-key-42" and loaded["lab"].models == ("m1",)
    await store.save_picks("ana", {"chat_model": "m1 @ lab"}, NOW)
    assert await store.load_picks("ana") == {"chat_model": "m1 @ lab"}
    assert await store.load_picks("bob") == {}
    assert await store.remove("ana", "lab") and not await store.remove("ana", "lab")
    await engine.dispose()


async def test_a_version_2_database_gains_the_connection_tables(db_url: str) -> None:
    engine = make_engine(db_url)
    assert await migrate(engine, target=2) == (0, 2)
    store = Store(engine)
    await store.create_user("ana", {}, NOW)
    assert await migrate(engine) == (
        2,
        SCHEMA_VERSION,
    )  # version 3 added them; later ones keep them
    conns = ConnectionStore(store, b"s")
    await conns.save("ana", Connection("lab", "http://h/v1", "k-123456", ("m",)), NOW)
    assert (await conns.load("ana"))[0].api_key == "k-123456"
    assert (await store.get_user("ana")) is not None
    await engine.dispose()


def test_a_users_key_is_masked_in_their_output_and_logs_not_in_another_users() -> None:
    """Issue #21: masking Ana's key in Bob's messages would tell Bob when his guess is right."""
    import logging

    from brainchat import redact

    key = f"orchid-{uuid.uuid4().hex[:6]}"
    redact.remember(key, "ana")
    served: list[str | None] = ["bob"]
    redact.serve(lambda: served[0])
    try:
        assert mask(f"the base URL {key!r}") == f"the base URL {key!r}"  # Bob's own text
        served[0] = "ana"
        assert mask(f"the base URL {key!r}") == "the base URL '***'"
        served[0] = None  # no user (a background task, the CLI): every key is masked
        assert mask(f"the base URL {key!r}") == "the base URL '***'"
        served[0] = "bob"
        record = logging.LogRecord("brainchat.ui", logging.INFO, "", 0, "typed %s", (key,), None)
        redact.MaskingFilter().filter(record)  # a log line in Bob's task still hides Ana's key
        assert record.getMessage() == "typed ***"
    finally:
        redact.serve(lambda: None)
