"""A name chosen for a thread (the user's rename, the chat model's title) is never replaced by the
name taken from its first question, whichever write lands first: Chainlit names a thread from a
task of its own, which a fast title model can beat. Over brainchat's data layer and a real
SQLite store."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from brainchat.store.config import sqlite_url
from brainchat.store.database import make_engine, migrate
from brainchat.store.records import Store
from brainchat.ui.datalayer import BrainchatDataLayer, LocalStorageClient, short_title

QUESTION = "What is the mu rhythm and where is it recorded over the scalp?"


@pytest.fixture
async def layer(tmp_path: Path) -> AsyncIterator[BrainchatDataLayer]:
    engine = make_engine(sqlite_url(tmp_path / "state" / "brainchat.db"))
    await migrate(engine)
    yield BrainchatDataLayer(Store(engine), LocalStorageClient(tmp_path / "files"))
    await engine.dispose()


async def new_thread(layer: BrainchatDataLayer) -> tuple[str, str]:
    """A thread of a new user, not yet named: (thread id, user id)."""
    user = await layer.store.create_user(f"u-{uuid.uuid4().hex[:8]}", {}, "2026-11-29T00:00:00Z")
    tid = str(uuid.uuid4())
    await layer.update_thread(tid, user_id=user["id"])
    return tid, user["id"]


async def name_of(layer: BrainchatDataLayer, tid: str) -> str | None:
    thread = await layer.store.get_thread(tid)
    return thread["name"] if thread else None


async def test_a_title_written_before_the_first_question_names_the_thread_stays(layer) -> None:
    tid, uid = await new_thread(layer)
    await layer.update_thread(tid, name="Mu rhythm")  # the chat model's title, written first
    await layer.update_thread(tid, name=QUESTION, user_id=uid)  # Chainlit's first-interaction name
    assert await name_of(layer, tid) == "Mu rhythm"


async def test_a_rename_is_kept_when_the_first_question_is_saved_after_it(layer) -> None:
    """A thread begun with a button is named by its first question's step, overriding a name
    taken from files; a name the user chose is not overridden."""
    tid, uid = await new_thread(layer)
    await layer.update_thread(tid, name="show_tools", user_id=uid)  # no title: named later
    await layer.update_thread(tid, name="My mu study")
    step = {"id": str(uuid.uuid4()), "threadId": tid, "type": "user_message", "output": QUESTION}
    await layer._save_step(step)  # what create_step runs once Chainlit flushes its queue
    assert await name_of(layer, tid) == "My mu study"


async def test_the_first_question_names_the_thread_and_a_later_title_replaces_it(layer) -> None:
    tid, uid = await new_thread(layer)
    await layer.update_thread(tid, name=QUESTION, user_id=uid)
    assert await name_of(layer, tid) == short_title(QUESTION)
    await layer.update_thread(tid, name="Mu rhythm")
    assert await name_of(layer, tid) == "Mu rhythm"
