"""Threads and their steps, as Chainlit's dicts, with bound parameters only (no SQL built from ids)."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import delete, func, or_, select

from brainchat.store.schema import elements, feedbacks, steps, threads
from brainchat.store.sql import Db, decode, encode, row_dict

ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
SEARCHED_TYPES = ("user_message", "assistant_message")


def check_id(value: str | None, what: str = "thread id") -> str:
    """Ids are uuids made by Chainlit or its page; anything else is refused, not stored."""
    if not isinstance(value, str) or not ID.match(value):
        raise ValueError(f"invalid {what}: {str(value)[:40]!r}")
    return value


def _step_dict(row: dict[str, Any]) -> dict[str, Any]:
    step = {k: v for k, v in row.items() if not k.startswith("fb_")}
    step["metadata"] = step.get("metadata") or {}
    step["streaming"] = False
    if step.get("showInput") in (None, "false"):
        step["input"] = ""
    if row.get("fb_value") is not None:
        step["feedback"] = {
            "id": row["fb_id"],
            "forId": row["id"],
            "value": row["fb_value"],
            "comment": row.get("fb_comment"),
        }
    return step


class ThreadStore(Db):
    """Threads, steps and the queries the sidebar and the resume need."""

    KNOWN_MAX = 10_000  # thread ids remembered as existing (then forgotten, all at once)

    def __init__(self, engine: Any) -> None:
        super().__init__(engine)
        self._known: set[str] = set()  # threads this process created or saw to exist

    async def upsert_thread(
        self,
        thread_id: str,
        *,
        name: str | None = None,
        user_id: str | None = None,
        user_identifier: str | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        created_at: str,
    ) -> None:
        """Create the thread or update what is given; metadata keys merge (None deletes a key)."""
        check_id(thread_id)
        async with self.write_lock, self.engine.begin() as conn:
            found = (
                await conn.execute(
                    select(threads.c.metadata).where(threads.c.id == thread_id).with_for_update()
                )
            ).first()
            values: dict[str, Any] = {"id": thread_id}
            if found is None:
                values["createdAt"] = created_at
            if metadata is not None:
                merged = {**(decode("metadata", found[0]) or {} if found else {}), **metadata}
                values["metadata"] = {k: v for k, v in merged.items() if v is not None}
            elif found is None:
                values["metadata"] = {}
            for key, value in (
                ("name", name),
                ("userId", user_id),
                ("userIdentifier", user_identifier),
                ("tags", tags),
            ):
                if value is not None:
                    values[key] = value
            await self.upsert(conn, threads, values)

    async def thread_author(self, thread_id: str) -> str | None:
        """The identifier of the thread's user, or None (no such thread, or no user yet)."""
        async with self.engine.connect() as conn:
            stmt = select(threads.c.userIdentifier).where(threads.c.id == thread_id)
            return (await conn.execute(stmt)).scalar()

    async def thread_user_id(self, thread_id: str) -> str | None:
        async with self.engine.connect() as conn:
            stmt = select(threads.c.userId).where(threads.c.id == thread_id)
            return (await conn.execute(stmt)).scalar()

    async def get_thread(self, thread_id: str) -> dict[str, Any] | None:
        """The thread with its steps (oldest first, with feedback) and elements."""
        async with self.engine.connect() as conn:
            row = (await conn.execute(select(threads).where(threads.c.id == thread_id))).first()
            if row is None:
                return None
            stmt = (
                select(
                    steps,
                    feedbacks.c.id.label("fb_id"),
                    feedbacks.c.value.label("fb_value"),
                    feedbacks.c.comment.label("fb_comment"),
                )
                .select_from(steps.outerjoin(feedbacks, feedbacks.c.forId == steps.c.id))
                .where(steps.c.threadId == thread_id)
                .order_by(steps.c.createdAt, steps.c.start)
            )
            step_rows = [_step_dict(row_dict(r)) for r in await conn.execute(stmt)]
            stmt2 = select(elements).where(elements.c.threadId == thread_id)
            element_rows = [row_dict(r) for r in await conn.execute(stmt2)]
        thread = row_dict(row)
        thread.update(steps=step_rows, elements=element_rows, metadata=thread["metadata"] or {})
        return thread

    async def list_threads(
        self,
        user_id: str,
        first: int,
        cursor: str | None = None,
        search: str | None = None,
        feedback: int | None = None,
    ) -> tuple[list[dict[str, Any]], bool]:
        """One page of a user's threads, most recently active first, without their steps."""
        last = func.max(steps.c.createdAt)
        stmt = (
            select(
                threads.c.id,
                threads.c.name,
                threads.c.userId,
                threads.c.userIdentifier,
                threads.c.tags,
                func.coalesce(last, threads.c.createdAt).label("active"),
            )
            .select_from(threads.outerjoin(steps, steps.c.threadId == threads.c.id))
            .where(threads.c.userId == user_id)
            .group_by(threads.c.id)
            .order_by(func.coalesce(last, threads.c.createdAt).desc(), threads.c.id)
        )
        if search:
            like = f"%{search.lower()}%"
            hit = select(steps.c.threadId).where(
                steps.c.type.in_(SEARCHED_TYPES), func.lower(steps.c.output).like(like)
            )
            stmt = stmt.where(or_(func.lower(threads.c.name).like(like), threads.c.id.in_(hit)))
        if feedback is not None:
            rated = select(feedbacks.c.threadId).where(feedbacks.c.value == feedback)
            stmt = stmt.where(threads.c.id.in_(rated))
        async with self.engine.connect() as conn:
            rows = [row_dict(r) for r in await conn.execute(stmt)]
        start = next((i + 1 for i, r in enumerate(rows) if r["id"] == cursor), 0)
        page = rows[start : start + first]
        out = [
            {
                "id": r["id"],
                "createdAt": r["active"],
                "name": r["name"],
                "userId": r["userId"],
                "userIdentifier": r["userIdentifier"],
                "tags": r["tags"] or [],
                "metadata": {},
                "steps": [],
                "elements": [],
            }
            for r in page
        ]
        return out, len(rows) > start + first

    async def delete_thread(self, thread_id: str) -> list[str]:
        """Delete the thread, its steps, elements and feedback; return the elements' object keys."""
        async with self.write_lock, self.engine.begin() as conn:
            keys = [
                k
                for (k,) in await conn.execute(
                    select(elements.c.objectKey).where(elements.c.threadId == thread_id)
                )
                if k
            ]
            for table in (feedbacks, elements, steps):
                await conn.execute(delete(table).where(table.c.threadId == thread_id))
            await conn.execute(delete(threads).where(threads.c.id == thread_id))
        self._known.discard(thread_id)
        return keys

    async def upsert_step(self, step: dict[str, Any]) -> bool:
        """Write a step; False (nothing written) when its id is a step of another thread."""
        check_id(step.get("id"), "step id")
        check_id(step.get("threadId"))
        values = {k: v for k, v in step.items() if v is not None and k != "feedback"}
        async with self.write_lock, self.engine.begin() as conn:
            return await self.upsert(conn, steps, values, same=("threadId",))

    async def save_step(self, step: dict[str, Any], *, created_at: str) -> bool:
        """A step, and its thread when that does not exist yet, in one transaction.

        Chainlit saves every step creation and update (about ten per agent turn); the thread is
        made at most once per process, not looked up (locked, upserted) in a transaction of its
        own before each of them. Chainlit takes a message's id from the page: an id that is a
        step of another thread is not written (False), never moved into this one.
        """
        check_id(step.get("id"), "step id")
        thread_id = check_id(step.get("threadId"))
        values = {k: v for k, v in step.items() if v is not None and k != "feedback"}
        async with self.write_lock, self.engine.begin() as conn:
            if thread_id not in self._known:
                thread = {"id": thread_id, "createdAt": created_at, "metadata": {}}
                await self.upsert(conn, threads, thread, update=())  # an existing one stays
            saved = await self.upsert(conn, steps, values, same=("threadId",))
        if len(self._known) >= self.KNOWN_MAX:
            self._known.clear()
        self._known.add(thread_id)
        return saved

    async def delete_step(self, step_id: str) -> list[str]:
        """Delete a step and every step of its thread nested under it; return their elements'
        object keys (their files are the caller's to delete)."""
        async with self.write_lock, self.engine.begin() as conn:
            stmt = select(steps.c.threadId).where(steps.c.id == step_id)
            thread_id = (await conn.execute(stmt)).scalar()
            doomed, frontier = [step_id], [step_id]
            while frontier:
                stmt = select(steps.c.id).where(
                    steps.c.parentId.in_(frontier), steps.c.threadId == thread_id
                )
                frontier = [i for (i,) in await conn.execute(stmt) if i not in doomed]
                doomed += frontier
            keys = [
                k
                for (k,) in await conn.execute(
                    select(elements.c.objectKey).where(elements.c.forId.in_(doomed))
                )
                if k
            ]
            await conn.execute(delete(feedbacks).where(feedbacks.c.forId.in_(doomed)))
            await conn.execute(delete(elements).where(elements.c.forId.in_(doomed)))
            await conn.execute(delete(steps).where(steps.c.id.in_(doomed)))
        return keys

    async def get_step(self, step_id: str) -> dict[str, Any] | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(select(steps).where(steps.c.id == step_id))).first()
        return _step_dict(row_dict(row)) if row is not None else None

    async def step_thread(self, step_id: str) -> str | None:
        async with self.engine.connect() as conn:
            stmt = select(steps.c.threadId).where(steps.c.id == step_id)
            return (await conn.execute(stmt)).scalar()

    async def favorite_steps(self, user_id: str) -> list[dict[str, Any]]:
        stmt = (
            select(steps)
            .join(threads, threads.c.id == steps.c.threadId)
            .where(threads.c.userId == user_id, steps.c.metadata.like('%"favorite": true%'))
            .order_by(steps.c.createdAt.desc())
        )
        async with self.engine.connect() as conn:
            rows = [_step_dict(row_dict(r)) for r in await conn.execute(stmt)]
        return [r for r in rows if r["metadata"].get("favorite")]


__all__ = ["ThreadStore", "check_id", "encode"]
