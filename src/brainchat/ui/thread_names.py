"""A thread's name, unique among its user's threads: a title another thread already has gets
" (2)", " (3)"... (two threads asking the same question stay apart in the sidebar)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

_naming = asyncio.Lock()  # one naming at a time: two threads asking the same get (1) and (2)
# threads named on purpose (renamed by their user, or titled by the chat model): a name taken from
# the first question never replaces theirs. Chainlit names a thread from a task of its own, which
# can end after a fast title model has answered. Recent ones are enough: the race is seconds long.
_chosen: dict[str, None] = {}
CHOSEN_KEPT = 4096


async def unique_title(engine: Any, thread_id: str, title: str) -> str:
    """`title`, or `title (k)` with the smallest k from 2 that no other thread of the thread's
    user is named (a thread without a user yet keeps `title`)."""
    from sqlalchemy import select

    from brainchat.store.schema import threads

    async with engine.connect() as conn:
        owner = select(threads.c.userId).where(threads.c.id == thread_id).scalar_subquery()
        stmt = select(threads.c.name).where(
            threads.c.userId == owner,
            threads.c.id != thread_id,
            threads.c.name.startswith(title, autoescape=True),
        )
        taken = {row[0] for row in await conn.execute(stmt)}
    k = 1
    while (named := title if k == 1 else f"{title} ({k})") in taken:
        k += 1
    return named


async def name_thread(
    store: Any, thread_id: str, title: str, *, unnamed_only: bool = False
) -> str | None:
    """Name the thread `title`, made unique among its user's threads; with `unnamed_only`, only a
    thread that has no name yet. The name given, or None when it kept the one it had."""
    from chainlit.utils import utc_now
    from sqlalchemy import select

    from brainchat.store.schema import threads

    async with _naming:
        if thread_id in _chosen:
            return None
        if unnamed_only:
            async with store.engine.connect() as conn:
                stmt = select(threads.c.name).where(threads.c.id == thread_id)
                if (await conn.execute(stmt)).scalar():
                    return None
        named = await unique_title(store.engine, thread_id, title)
        await store.upsert_thread(thread_id, name=named, created_at=utc_now())
        return named


async def rename_thread(store: Any, thread_id: str, title: str) -> None:
    """Name the thread `title` on purpose (a rename, a model's title): kept as given, and never
    replaced by a name taken from its first question afterwards."""
    from chainlit.utils import utc_now

    async with _naming:
        _chosen[thread_id] = None
        while len(_chosen) > CHOSEN_KEPT:
            del _chosen[next(iter(_chosen))]
        await store.upsert_thread(thread_id, name=title, created_at=utc_now())


def attached(element: Any) -> bool:
    """A file the user sent (Chainlit's copy in its session files folder)."""
    from chainlit.config import FILES_DIRECTORY

    return Path(element.path).resolve().is_relative_to(FILES_DIRECTORY.resolve())
