"""Users (Chainlit's table), elements and feedback: the rows around threads and steps."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import delete, select

from brainchat.store.schema import elements, feedbacks, steps, threads, users
from brainchat.store.sql import row_dict
from brainchat.store.threads import ThreadStore, check_id


class Store(ThreadStore):
    """Everything Chainlit's data layer reads and writes, for one database."""

    # -- users ----------------------------------------------------------------------------
    async def get_user(self, identifier: str) -> dict[str, Any] | None:
        async with self.engine.connect() as conn:
            row = (
                await conn.execute(select(users).where(users.c.identifier == identifier))
            ).first()
        if row is None:
            return None
        user = row_dict(row)
        user["metadata"] = user["metadata"] if isinstance(user["metadata"], dict) else {}
        return user

    async def create_user(
        self, identifier: str, metadata: dict[str, Any], now: str
    ) -> dict[str, Any]:
        """Create the user, or replace the metadata of an existing one; return the row."""
        async with self.write_lock, self.engine.begin() as conn:
            await self.upsert(
                conn,
                users,
                {
                    "id": str(uuid.uuid4()),
                    "identifier": identifier,
                    "metadata": metadata,
                    "createdAt": now,
                },
                keys=("identifier",),
                update=("metadata",),
            )
        found = await self.get_user(identifier)
        assert found is not None
        return found

    async def user_thread_ids(self, identifier: str) -> list[str]:
        stmt = select(threads.c.id).where(threads.c.userIdentifier == identifier)
        async with self.engine.connect() as conn:
            return [i for (i,) in await conn.execute(stmt)]

    async def delete_user(self, identifier: str) -> None:
        async with self.write_lock, self.engine.begin() as conn:
            await conn.execute(delete(users).where(users.c.identifier == identifier))

    # -- elements -------------------------------------------------------------------------
    async def upsert_element(self, element: dict[str, Any]) -> bool:
        """Write an element; False (nothing written) when its id is an element of another thread."""
        check_id(element.get("id"), "element id")
        values = {k: v for k, v in element.items() if v is not None}
        async with self.write_lock, self.engine.begin() as conn:
            return await self.upsert(conn, elements, values, same=("threadId",))

    async def element_thread(self, element_id: str) -> str | None:
        stmt = select(elements.c.threadId).where(elements.c.id == element_id)
        async with self.engine.connect() as conn:
            return (await conn.execute(stmt)).scalar()

    async def get_element(self, thread_id: str, element_id: str) -> dict[str, Any] | None:
        stmt = select(elements).where(elements.c.threadId == thread_id, elements.c.id == element_id)
        async with self.engine.connect() as conn:
            row = (await conn.execute(stmt)).first()
        return row_dict(row) if row is not None else None

    async def delete_element(self, element_id: str) -> str | None:
        """Delete one element; return its object key (its file is the caller's to delete)."""
        async with self.write_lock, self.engine.begin() as conn:
            stmt = select(elements.c.objectKey).where(elements.c.id == element_id)
            key = (await conn.execute(stmt)).scalar()
            await conn.execute(delete(elements).where(elements.c.id == element_id))
        return key

    async def object_owner(self, object_key: str) -> tuple[str, str | None] | None:
        """(owner identifier, mime) of the element stored under `object_key`, or None."""
        stmt = (
            select(threads.c.userIdentifier, elements.c.mime)
            .join(elements, elements.c.threadId == threads.c.id)
            .where(elements.c.objectKey == object_key)
        )
        async with self.engine.connect() as conn:
            row = (await conn.execute(stmt)).first()
        return None if row is None or row[0] is None else (row[0], row[1])

    # -- feedback -------------------------------------------------------------------------
    async def upsert_feedback(self, feedback: dict[str, Any]) -> str:
        """Store a rating of a step; its thread is taken from the step, never from the caller."""
        feedback_id = feedback.get("id") or str(uuid.uuid4())
        thread_id = await self.step_thread(feedback["forId"])
        if thread_id is None:
            raise ValueError("no such message to rate")
        values = {
            "id": feedback_id,
            "forId": feedback["forId"],
            "threadId": thread_id,
            "value": int(feedback["value"]),
            "comment": feedback.get("comment"),
        }
        async with self.write_lock, self.engine.begin() as conn:
            await self.upsert(conn, feedbacks, values)
        return feedback_id

    async def feedback_author(self, feedback_id: str) -> str | None:
        stmt = (
            select(threads.c.userIdentifier)
            .join(feedbacks, feedbacks.c.threadId == threads.c.id)
            .where(feedbacks.c.id == feedback_id)
        )
        async with self.engine.connect() as conn:
            return (await conn.execute(stmt)).scalar()

    async def step_author(self, step_id: str) -> str | None:
        stmt = (
            select(threads.c.userIdentifier)
            .join(steps, steps.c.threadId == threads.c.id)
            .where(steps.c.id == step_id)
        )
        async with self.engine.connect() as conn:
            return (await conn.execute(stmt)).scalar()

    async def delete_feedback(self, feedback_id: str) -> None:
        async with self.write_lock, self.engine.begin() as conn:
            await conn.execute(delete(feedbacks).where(feedbacks.c.id == feedback_id))
