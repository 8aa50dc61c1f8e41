"""The store on real databases: SQLite through aiosqlite and an embedded Postgres through asyncpg."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import inspect, text

from brainchat.store import schema
from brainchat.store.accounts import AccountError, Accounts
from brainchat.store.config import async_url, sqlite_url
from brainchat.store.database import SchemaError, make_engine, migrate
from brainchat.store.records import Store

NOW = "2026-01-01T00:00:00.000Z"


def later(n: int) -> str:
    return f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}.000Z"


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Any) -> str:
    """A fresh, empty database of each kind."""
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "state" / "brainchat.db")
    name = "t_" + uuid.uuid4().hex[:12]
    return async_url(request.getfixturevalue("embedded_pg").new_database(name))


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Store]:
    engine = make_engine(db_url)
    await migrate(engine)
    yield Store(engine)
    await engine.dispose()


async def tables(engine: Any) -> set[str]:
    async with engine.connect() as conn:
        return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))


async def test_a_fresh_database_gets_the_whole_schema_once(db_url):
    engine = make_engine(db_url)
    assert await migrate(engine) == (0, schema.SCHEMA_VERSION)
    assert await migrate(engine) == (schema.SCHEMA_VERSION, schema.SCHEMA_VERSION)
    assert {
        "users",
        "threads",
        "steps",
        "elements",
        "feedbacks",
        "brainchat_accounts",
    } <= await tables(engine)
    async with engine.connect() as conn:
        cols = await conn.run_sync(lambda c: {x["name"] for x in inspect(c).get_columns("steps")})
    assert {"autoCollapse", "defaultOpen", "modes", "command", "icon"} <= cols
    await engine.dispose()


async def test_two_processes_migrating_at_once_agree(db_url):
    engines = [make_engine(db_url) for _ in range(3)]
    results = await asyncio.gather(*(migrate(e) for e in engines))
    assert sorted(r[0] for r in results) == [0, schema.SCHEMA_VERSION, schema.SCHEMA_VERSION]
    for e in engines:
        await e.dispose()


async def test_version_1_data_survives_the_migration_to_version_2(db_url):
    engine = make_engine(db_url)
    assert await migrate(engine, target=1) == (0, 1)
    assert "brainchat_accounts" not in await tables(engine)
    store = Store(engine)
    user = await store.create_user("ana", {"provider": "password"}, NOW)
    await store.upsert_thread(
        "t1", name="old", user_id=user["id"], user_identifier="ana", created_at=NOW
    )
    assert await migrate(engine, target=2) == (1, 2)
    assert "brainchat_accounts" in await tables(engine)
    thread = await store.get_thread("t1")
    assert thread is not None and thread["name"] == "old" and thread["userIdentifier"] == "ana"
    await engine.dispose()


async def test_a_newer_schema_is_refused_with_what_to_do(db_url):
    engine = make_engine(db_url)
    await migrate(engine)
    async with engine.begin() as conn:
        await conn.execute(text("UPDATE brainchat_schema SET version = 99"))
    with pytest.raises(SchemaError, match="upgrade brainchat"):
        await migrate(engine)
    await engine.dispose()


async def test_tables_from_chainlits_docs_are_adopted_and_completed(db_url):
    """The docs' steps table lacks autoCollapse (Chainlit's writes then fail silently)."""
    engine = make_engine(db_url)
    async with engine.begin() as conn:
        await conn.execute(
            text(
                'CREATE TABLE users ("id" TEXT PRIMARY KEY, "identifier" TEXT NOT NULL UNIQUE, "metadata" TEXT NOT NULL, "createdAt" TEXT)'
            )
        )
        await conn.execute(
            text(
                'CREATE TABLE threads ("id" TEXT PRIMARY KEY, "createdAt" TEXT, "name" TEXT, "userId" TEXT, "userIdentifier" TEXT, "tags" TEXT, "metadata" TEXT)'
            )
        )
        await conn.execute(
            text(
                'CREATE TABLE steps ("id" TEXT PRIMARY KEY, "name" TEXT NOT NULL, "type" TEXT NOT NULL, "threadId" TEXT NOT NULL, "parentId" TEXT, "streaming" BOOLEAN NOT NULL, "waitForAnswer" BOOLEAN, "isError" BOOLEAN, "metadata" TEXT, "tags" TEXT, "input" TEXT, "output" TEXT, "createdAt" TEXT, "command" TEXT, "start" TEXT, "end" TEXT, "generation" TEXT, "showInput" TEXT, "language" TEXT, "indent" INT, "defaultOpen" BOOLEAN)'
            )
        )
        await conn.execute(
            text(
                'CREATE TABLE elements ("id" TEXT PRIMARY KEY, "threadId" TEXT, "type" TEXT, "url" TEXT, "chainlitKey" TEXT, "name" TEXT NOT NULL, "display" TEXT, "objectKey" TEXT, "size" TEXT, "page" INT, "language" TEXT, "forId" TEXT, "mime" TEXT, "props" TEXT)'
            )
        )
        await conn.execute(
            text(
                'CREATE TABLE feedbacks ("id" TEXT PRIMARY KEY, "forId" TEXT NOT NULL, "threadId" TEXT NOT NULL, "value" INT NOT NULL, "comment" TEXT)'
            )
        )
    assert await migrate(engine) == (1, schema.SCHEMA_VERSION)
    store = Store(engine)
    await store.upsert_thread("t1", created_at=NOW)
    await store.upsert_step({"id": "s1", "threadId": "t1", "name": "Thinking", "type": "llm",
                             "streaming": False, "autoCollapse": True, "createdAt": NOW})  # fmt: skip
    step = await store.get_step("s1")
    assert step is not None and step["autoCollapse"] is True
    await engine.dispose()


async def test_steps_round_trip_with_json_fields_and_updates(store):
    await store.upsert_thread("t1", created_at=NOW)
    await store.upsert_step({"id": "m1", "threadId": "t1", "name": "User", "type": "user_message",
                             "output": "load subject 1", "modes": {"mode": "agent"},
                             "metadata": {"a": [1, 2]}, "tags": ["x"], "streaming": False,
                             "createdAt": later(1), "showInput": False})  # fmt: skip
    await store.upsert_step({"id": "m1", "threadId": "t1", "name": "User", "type": "user_message",
                             "output": "edited", "createdAt": later(1)})  # fmt: skip
    thread = await store.get_thread("t1")
    assert thread is not None
    (step,) = thread["steps"]
    assert step["output"] == "edited" and step["modes"] == {"mode": "agent"}
    assert step["metadata"] == {"a": [1, 2]} and step["tags"] == ["x"]


async def test_a_saved_step_makes_its_thread_once_and_never_overwrites_it(store):
    """The data layer's step save: the thread is created with the first step, an existing
    thread keeps its name and metadata, and a thread deleted meanwhile comes back with its next
    step (the process forgets it knew the thread)."""
    await store.save_step({"id": "s1", "threadId": "t1", "name": "User", "type": "user_message",
                           "output": "hi", "createdAt": later(1)}, created_at=NOW)  # fmt: skip
    thread = await store.get_thread("t1")
    assert thread is not None and thread["createdAt"] == NOW and thread["metadata"] == {}
    await store.upsert_thread("t2", name="Mu rhythm", metadata={"a": 1}, created_at=NOW)
    for i, output in enumerate(["first", "second"]):
        await store.save_step({"id": "s2", "threadId": "t2", "name": "Answer", "output": output,
                               "type": "assistant_message", "createdAt": later(2)},
                              created_at=later(9 + i))  # fmt: skip
    thread = await store.get_thread("t2")
    assert thread is not None and (thread["name"], thread["metadata"]) == ("Mu rhythm", {"a": 1})
    assert thread["createdAt"] == NOW and [s["output"] for s in thread["steps"]] == ["second"]
    await store.delete_thread("t1")
    assert await store.get_thread("t1") is None
    await store.save_step({"id": "s3", "threadId": "t1", "name": "User", "type": "user_message",
                           "output": "again", "createdAt": later(3)}, created_at=later(3))  # fmt: skip
    thread = await store.get_thread("t1")
    assert thread is not None and [s["output"] for s in thread["steps"]] == ["again"]
    with pytest.raises(ValueError, match="invalid thread id"):
        await store.save_step({"id": "s4", "threadId": "../x"}, created_at=NOW)


async def test_thread_metadata_merges_and_none_deletes(store):
    await store.upsert_thread("t1", metadata={"a": 1, "b": 2}, created_at=NOW)
    await store.upsert_thread("t1", metadata={"b": None, "c": 3}, created_at=NOW)
    thread = await store.get_thread("t1")
    assert thread is not None and thread["metadata"] == {"a": 1, "c": 3}


async def test_the_thread_list_is_per_user_newest_first_paged_and_searchable(store):
    ana = await store.create_user("ana", {}, NOW)
    bob = await store.create_user("bob", {}, NOW)
    for i in range(5):
        await store.upsert_thread(
            f"a{i}", name=f"ana {i}", user_id=ana["id"], user_identifier="ana", created_at=NOW
        )
        await store.upsert_step({"id": f"s{i}", "threadId": f"a{i}", "name": "User", "type": "user_message",
                                 "output": f"question {i} about alpha" if i == 2 else f"question {i}",
                                 "streaming": False, "createdAt": later(10 - i)})  # fmt: skip
    await store.upsert_thread(
        "b0", name="bob's", user_id=bob["id"], user_identifier="bob", created_at=NOW
    )
    page, more = await store.list_threads(ana["id"], first=3)
    assert [t["id"] for t in page] == ["a0", "a1", "a2"] and more
    page2, more2 = await store.list_threads(ana["id"], first=3, cursor="a2")
    assert [t["id"] for t in page2] == ["a3", "a4"] and not more2
    hits, _ = await store.list_threads(ana["id"], first=10, search="ALPHA")
    assert [t["id"] for t in hits] == ["a2"]
    assert [t["id"] for t in (await store.list_threads(bob["id"], first=10))[0]] == ["b0"]


async def test_deleting_a_step_deletes_its_nested_steps_and_their_elements(store):
    await store.upsert_thread("t1", created_at=NOW)
    for sid, parent in (("m", None), ("run", "m"), ("tool", "run"), ("other", None)):
        await store.upsert_step({"id": sid, "threadId": "t1", "parentId": parent, "name": sid,
                                 "type": "tool", "streaming": False, "createdAt": NOW})  # fmt: skip
    await store.upsert_element({"id": "e1", "threadId": "t1", "forId": "tool", "name": "plot",
                                "objectKey": "u/e1/plot"})  # fmt: skip
    assert await store.delete_step("m") == ["u/e1/plot"]
    thread = await store.get_thread("t1")
    assert thread is not None
    assert [s["id"] for s in thread["steps"]] == ["other"] and thread["elements"] == []


async def test_deleting_a_thread_deletes_everything_in_it(store):
    user = await store.create_user("ana", {}, NOW)
    await store.upsert_thread("t1", user_id=user["id"], user_identifier="ana", created_at=NOW)
    await store.upsert_step({"id": "s1", "threadId": "t1", "name": "x", "type": "tool",
                             "streaming": False, "createdAt": NOW})  # fmt: skip
    await store.upsert_element(
        {"id": "e1", "threadId": "t1", "forId": "s1", "name": "p", "objectKey": "k1"}
    )
    await store.upsert_feedback({"forId": "s1", "value": 1})
    assert await store.delete_thread("t1") == ["k1"]
    assert await store.get_thread("t1") is None and await store.get_step("s1") is None
    async with store.engine.connect() as conn:
        left = [(await conn.execute(text(f"SELECT COUNT(*) FROM {t}"))).scalar()
                for t in ("steps", "elements", "feedbacks", "threads")]  # fmt: skip
    assert left == [0, 0, 0, 0]


async def test_ids_that_are_not_ids_are_refused_not_stored(store):
    with pytest.raises(ValueError, match="invalid thread id"):
        await store.upsert_thread("x') OR 1=1; --", created_at=NOW)
    assert await store.get_thread("x') OR 1=1; --") is None


async def test_accounts_hash_verify_list_and_remove(store):
    accounts = Accounts(store)
    await accounts.add("ana", "correct horse", NOW)
    with pytest.raises(AccountError, match="exists already"):
        await accounts.add("ana", "another one", NOW)
    with pytest.raises(AccountError, match="8 to 1024"):
        await accounts.add("bob", "short", NOW)
    with pytest.raises(AccountError, match="not valid"):
        await accounts.add("../etc", "long enough", NOW)
    assert await accounts.verify("ana", "correct horse", later(5))
    assert not await accounts.verify("ana", "wrong horse", NOW)
    assert not await accounts.verify("nobody", "correct horse", NOW)
    (row,) = await accounts.list()
    assert row["identifier"] == "ana" and row["lastLoginAt"] == later(5)
    async with store.engine.connect() as conn:
        stored = (await conn.execute(text("SELECT password_hash FROM brainchat_accounts"))).scalar()
    assert stored.startswith("$argon2id$") and "correct horse" not in stored
    await accounts.set_password("ana", "battery staple")
    assert await accounts.verify("ana", "battery staple", NOW)
    assert await accounts.remove("ana") and not await accounts.remove("ana")
    assert not await accounts.verify("ana", "battery staple", NOW)


async def test_session_keys_change_on_password_change_logout_and_removal(store):
    """A cookie names the account's session key; each of these ends every older cookie."""
    accounts = Accounts(store)
    await accounts.add("ana", "correct horse", NOW)
    key = await accounts.open_session("ana")
    assert key and await accounts.open_session("ana") == key  # a second login: same sessions
    await accounts.set_password("ana", "battery staple")
    after_passwd = await accounts.session_key("ana")
    assert after_passwd not in (None, key)
    assert await accounts.end_sessions("ana") and not await accounts.end_sessions("nobody")
    after_logout = await accounts.session_key("ana")
    assert after_logout not in (None, after_passwd)
    await accounts.remove("ana")
    assert await accounts.session_key("ana") is None
    await accounts.add("ana", "correct horse", NOW)  # the name comes back: old cookies stay dead
    assert await accounts.session_key("ana") not in (None, key, after_passwd, after_logout)


async def test_an_account_from_before_session_keys_gets_one_at_its_next_login(db_url):
    engine = make_engine(db_url)
    await migrate(engine, target=3)
    await Accounts(Store(engine)).add("ana", "correct horse", NOW)
    async with engine.begin() as conn:  # as version 3 made it (its table is made from today's)
        await conn.execute(text('ALTER TABLE brainchat_accounts DROP COLUMN "session_key"'))
    assert await migrate(engine) == (3, schema.SCHEMA_VERSION)
    accounts = Accounts(Store(engine))
    assert await accounts.session_key("ana") is None  # no cookie of before names a key
    key = await accounts.open_session("ana")
    assert key and await accounts.session_key("ana") == key
    await engine.dispose()


async def test_an_id_of_another_threads_step_or_element_is_not_moved(store):
    """Chainlit takes message and element ids from the page: reusing one writes nothing."""
    await store.upsert_thread("ana1", created_at=NOW)
    await store.upsert_thread("bob1", created_at=NOW)
    step = {"id": "q1", "threadId": "ana1", "name": "User", "type": "user_message",
            "output": "her question", "input": "her input", "createdAt": NOW}  # fmt: skip
    assert await store.save_step(step, created_at=NOW)
    assert await store.save_step({**step, "output": "edited"}, created_at=NOW)  # her own update
    stolen = {**step, "threadId": "bob1", "output": "mine now", "parentId": None}
    assert not await store.save_step(stolen, created_at=NOW)
    assert not await store.upsert_step(stolen)
    assert await store.step_thread("q1") == "ana1"
    got = await store.get_step("q1")
    assert got is not None and got["output"] == "edited"
    plot = {"id": "e1", "threadId": "ana1", "forId": "q1", "name": "plot", "objectKey": "k1"}
    assert await store.upsert_element(plot)
    assert not await store.upsert_element({**plot, "threadId": "bob1", "name": "moved"})
    assert await store.element_thread("e1") == "ana1"
    assert (await store.get_element("ana1", "e1") or {}).get("name") == "plot"
    await store.save_step({"id": "b1", "threadId": "bob1", "name": "User", "type": "user_message",
                           "createdAt": NOW}, created_at=NOW)  # fmt: skip
    await store.save_step({"id": "t1", "threadId": "ana1", "name": "tool", "type": "tool",
                           "parentId": "b1", "createdAt": NOW}, created_at=NOW)  # fmt: skip
    await store.delete_step("b1")  # deleting his step takes nothing nested in her thread
    assert await store.get_step("b1") is None and await store.get_step("t1") is not None
