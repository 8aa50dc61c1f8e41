"""Chainlit's SQLAlchemy data layer on brainchat's store, and a local-folder storage client.

The base class builds SQL from ids by string concatenation, reads every step of every thread to
list the sidebar, and cannot bind the `modes` of a user message; this subclass keeps its
interface and constructor and does each operation with the store's bound queries instead.

Chainlit takes message, element and thread ids from the page, and its `/project/element` routes
check only that the session is the caller's: every step and element write or deletion here checks
that the thread is the session's user's (a thread with no owner yet: the session's own), and an
id that is a step or element of another thread is refused, never moved.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from chainlit.data.sql_alchemy import SQLAlchemyDataLayer
from chainlit.data.storage_clients.base import BaseStorageClient
from chainlit.data.utils import queue_until_user_message
from chainlit.types import PageInfo, PaginatedResponse, Pagination, ThreadFilter
from chainlit.user import PersistedUser, User
from chainlit.utils import utc_now
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import sessionmaker

from brainchat.redact import get_logger, mask
from brainchat.store.files import LocalFiles
from brainchat.store.records import Store
from brainchat.store.threads import check_id
from brainchat.ui import thread_names as titles
from brainchat.ui.thread_names import attached

log = get_logger("brainchat.store")
FILES_ROUTE = "/brainchat/files/"
TITLE_CHARS, RENAME_CHARS = 60, 200


# Chainlit names a thread after its first interaction: besides a question, that may be a button
# of a message (its action callback's name), an answer to a question the app asked (the chosen
# action's name: the mode switch, a tool approval, a connection removal), a voice input or a
# custom element. None of these is a title; nor are files sent with no text (""), nor a slash
# command typed as text ("/tools"): the first real question titles the thread.
ASKED_ANSWERS = frozenset(
    {"agent", "chat", "once", "always", "reject", "remove", "keep", "audio", "custom_element"}
)
SLASH_COMMAND = re.compile(r"^/[A-Za-z][\w-]*(\s|$)")


def _not_a_title(name: str) -> bool:
    from chainlit.config import config

    return (
        not name.strip()
        or name in ASKED_ANSWERS
        or name in config.code.action_callbacks
        or bool(SLASH_COMMAND.match(name.strip()))
    )


def short_title(text: str, limit: int = TITLE_CHARS) -> str:
    """A thread title from a question: one line, cut at a word boundary."""
    line = re.sub(r"\s+", " ", text or "").strip()
    if len(line) <= limit:
        return line or "New conversation"
    cut = line[:limit].rsplit(" ", 1)[0] if " " in line[:limit] else line[:limit]
    return cut.rstrip(" ,;:.-") + "…"


class LocalStorageClient(BaseStorageClient):
    """Elements kept as files in the state folder, served back by brainchat's owner-checked route."""

    def __init__(self, root: Path) -> None:
        self.files = LocalFiles(root)

    async def upload_file(
        self,
        object_key: str,
        data: bytes | str,
        mime: str = "application/octet-stream",
        overwrite: bool = True,
        content_disposition: str | None = None,
    ) -> dict[str, Any]:
        raw = data.encode() if isinstance(data, str) else data
        await asyncio.to_thread(self.files.write, object_key, raw)
        return {"object_key": object_key, "url": await self.get_read_url(object_key)}

    async def delete_file(self, object_key: str) -> bool:
        return await asyncio.to_thread(self.files.delete, object_key)

    async def get_read_url(self, object_key: str) -> str:
        import os

        root = os.environ.get("CHAINLIT_ROOT_PATH", "").rstrip("/")
        return root + FILES_ROUTE + quote(object_key, safe="/")

    async def close(self) -> None:
        return None


def _uploaded_recording(element: Any) -> bool:
    """An EEG file or zip the user attached (Chainlit's copy in its session files folder)."""
    from brainchat.eeg.uploads.upload_names import ACCEPTED, extension

    return attached(element) and extension(element.name or "") in ACCEPTED


OnDelete = Callable[[str, str | None], Awaitable[None]]


def _session() -> Any:
    """The Chainlit session this write comes from, or None (the app's own work outside one)."""
    from chainlit.context import ChainlitContextException, get_context

    try:
        return get_context().session
    except ChainlitContextException:
        return None


def _shown_id(value: Any) -> str:
    return ascii(str(value)[:64])


class BrainchatDataLayer(SQLAlchemyDataLayer):
    def __init__(
        self, store: Store, storage: LocalStorageClient, on_delete: OnDelete | None = None
    ) -> None:
        super().__init__(conninfo=str(store.engine.url), storage_provider=storage)
        # the base made its own engine (never connected): use the store's, with its pragmas
        self.engine = store.engine
        self.async_session = sessionmaker(
            bind=self.engine, expire_on_commit=False, class_=AsyncSession
        )  # type: ignore[call-overload]
        self.store = store
        self.storage = storage
        self.on_delete = on_delete  # (thread id, owner identifier): drops the thread's models
        # threads whose first interaction was no question: titled by their first user message
        self._untitled: set[str] = set()
        self._owners: dict[str, str] = {}  # thread id -> owner's identifier (an owner stays)

    async def _writable(self, thread_id: str | None, what: str) -> bool:
        """Whether the current session may write `what` into the thread; logs a refusal."""
        session = _session()
        if session is None or not thread_id:
            return True
        user = getattr(session, "user", None)
        who = getattr(user, "identifier", None)
        owner = self._owners.get(thread_id) or await self.store.thread_author(thread_id)
        if owner is not None:
            if len(self._owners) >= 10_000:
                self._owners.clear()
            self._owners[thread_id] = owner
            allowed = owner == who
        else:
            allowed = thread_id == getattr(session, "thread_id", None)
        if not allowed:
            log.warning(
                "refused %s for thread %s from %r: the thread is not theirs",
                what,
                _shown_id(thread_id),
                str(who)[:64],
            )
        return allowed

    # -- users -------------------------------------------------------------------------
    async def get_user(self, identifier: str) -> PersistedUser | None:
        row = await self.store.get_user(identifier)
        return (
            None
            if row is None
            else PersistedUser(
                id=row["id"],
                identifier=row["identifier"],
                createdAt=row["createdAt"],
                metadata=row["metadata"],
            )
        )

    async def create_user(self, user: User) -> PersistedUser | None:
        from brainchat.ui.sessions import CLAIM, SINCE

        # the session key and login time belong to the cookie, not to the stored user
        metadata = {k: v for k, v in (user.metadata or {}).items() if k not in (CLAIM, SINCE)}
        await self.store.create_user(user.identifier, metadata, utc_now())
        return await self.get_user(user.identifier)

    # -- threads -----------------------------------------------------------------------
    async def get_thread_author(self, thread_id: str) -> str:
        return await self.store.thread_author(thread_id) or ""  # "": Chainlit answers 404

    async def get_thread(self, thread_id: str) -> Any:
        thread = await self.store.get_thread(thread_id)
        if thread is not None:
            for element in thread["elements"]:
                if element.get("objectKey"):
                    element["url"] = await self.storage.get_read_url(element["objectKey"])
        return thread

    async def update_thread(
        self,
        thread_id: str,
        name: str | None = None,
        user_id: str | None = None,
        metadata: dict | None = None,
        tags: list[str] | None = None,
    ) -> None:
        identifier = await self._identifier_of(user_id) if user_id else None
        if name is not None and user_id and _not_a_title(name):
            self._untitled.add(thread_id)
            name = None
        elif name is not None and not user_id:
            self._untitled.discard(thread_id)  # the user renamed it
        if name is not None:  # with a user: the first question; without: a rename
            name = short_title(name) if user_id else short_title(name, RENAME_CHARS)
        try:
            await self.store.upsert_thread(
                thread_id,
                user_id=user_id,
                user_identifier=identifier,
                tags=tags,
                metadata=metadata,
                created_at=utc_now(),
            )
            if name is not None and user_id:  # unique among the user's threads
                await titles.name_thread(self.store, thread_id, name)
            elif name is not None:
                await titles.rename_thread(self.store, thread_id, name)
        except Exception as exc:  # noqa: BLE001 - Chainlit calls this from fire-and-forget tasks
            log.warning("thread %s not saved: %s", thread_id[:40], mask(str(exc)))

    async def _identifier_of(self, user_id: str) -> str | None:
        from sqlalchemy import select

        from brainchat.store.schema import users

        async with self.engine.connect() as conn:
            return (
                await conn.execute(select(users.c.identifier).where(users.c.id == user_id))
            ).scalar()

    async def delete_thread(self, thread_id: str) -> None:
        owner = await self.store.thread_author(thread_id)
        self._owners.pop(thread_id, None)
        for key in await self.store.delete_thread(thread_id):
            await self.storage.delete_file(key)
        if self.on_delete is not None:
            await self.on_delete(thread_id, owner)

    async def list_threads(
        self, pagination: Pagination, filters: ThreadFilter
    ) -> PaginatedResponse:
        if not filters.userId:
            raise ValueError("userId is required")
        feedback = int(filters.feedback) if filters.feedback is not None else None
        rows, more = await self.store.list_threads(
            filters.userId, pagination.first, pagination.cursor, filters.search, feedback
        )
        info = PageInfo(
            hasNextPage=more,
            startCursor=rows[0]["id"] if rows else None,
            endCursor=rows[-1]["id"] if rows else None,
        )
        return PaginatedResponse(pageInfo=info, data=rows)  # type: ignore[arg-type]

    # -- steps -------------------------------------------------------------------------
    @queue_until_user_message()
    async def create_step(self, step_dict: Any) -> None:
        await self._save_step(step_dict)

    @queue_until_user_message()
    async def update_step(self, step_dict: Any) -> None:
        await self._save_step(step_dict)

    async def _save_step(self, step_dict: Any) -> None:
        thread_id = step_dict["threadId"]
        if not await self._writable(thread_id, f"step {_shown_id(step_dict.get('id'))}"):
            return
        question = str(step_dict.get("output") or "")
        try:
            if not await self.store.save_step(dict(step_dict), created_at=utc_now()):
                log.warning(
                    "refused step %s for thread %s: the id is a step of another thread",
                    _shown_id(step_dict.get("id")),
                    _shown_id(thread_id),
                )
                return
            if (
                step_dict.get("type") == "user_message"
                and not step_dict.get("command")  # a command picked from the menu, with text or not
                and not _not_a_title(question)
            ):
                # the first real question of a thread that began with a button or files names it;
                # any other thread without a name (one restarted in between) gets it too
                first = thread_id in self._untitled
                self._untitled.discard(thread_id)
                await titles.name_thread(
                    self.store, thread_id, short_title(question), unnamed_only=not first
                )
        except Exception as exc:  # noqa: BLE001 - Chainlit calls this from fire-and-forget tasks
            log.warning("step not saved: %s", mask(str(exc)))

    @queue_until_user_message()
    async def delete_step(self, step_id: str) -> None:
        thread_id = await self.store.step_thread(step_id)
        if thread_id is None or not await self._writable(
            thread_id, f"deleting step {_shown_id(step_id)}"
        ):
            return
        for key in await self.store.delete_step(step_id):
            await self.storage.delete_file(key)

    async def get_step(self, step_id: str) -> Any:
        return await self.store.get_step(step_id)

    async def get_favorite_steps(self, user_id: str) -> list[Any]:
        return await self.store.favorite_steps(user_id)

    # -- feedback ----------------------------------------------------------------------
    async def upsert_feedback(self, feedback: Any) -> str:
        return await self.store.upsert_feedback(
            {
                "id": feedback.id,
                "forId": feedback.forId,
                "value": feedback.value,
                "comment": feedback.comment,
            }
        )

    async def delete_feedback(self, feedback_id: str) -> bool:
        await self.store.delete_feedback(feedback_id)
        return True

    # -- elements ----------------------------------------------------------------------
    async def get_element(self, thread_id: str, element_id: str) -> Any:
        element = await self.store.get_element(thread_id, element_id)
        if element is not None and element.get("objectKey"):
            element["url"] = await self.storage.get_read_url(element["objectKey"])
        return element

    @queue_until_user_message()
    async def create_element(self, element: Any) -> None:
        if not element.for_id:
            return
        try:
            await self._create_element(element)
        except Exception as exc:  # noqa: BLE001
            log.warning("element %r not saved: %s", element.name[:60], mask(str(exc)))

    async def _create_element(self, element: Any) -> None:
        check_id(element.id, "element id")
        what = f"element {_shown_id(element.id)}"
        if not await self._writable(element.thread_id, what):
            return
        if await self.store.element_thread(element.id) not in (None, element.thread_id):
            log.warning("refused %s: the id is an element of another thread", what)
            return
        content = element.content
        if content is None and element.path and _uploaded_recording(element):
            pass  # kept once, in the user's data folder (ui/uploads.py); the thread keeps its name
        elif content is None and element.path:
            content = await asyncio.to_thread(Path(element.path).read_bytes)
        row = element.to_dict()
        if content is not None:  # an element with only a URL keeps the URL (no fetching here)
            user_id = await self._thread_user_id(element.thread_id) or "unknown"
            key = f"{user_id}/{element.id}/{element.name or 'file'}"
            await self.storage.upload_file(key, content, element.mime or "application/octet-stream")
            row.update(objectKey=key, url=None)
        row.pop("path", None)
        await self.store.upsert_thread(element.thread_id, created_at=utc_now())
        if not await self.store.upsert_element(row):
            log.warning("refused %s: the id is an element of another thread", what)
        elif element.path and attached(element):  # files sent with no text: named by a file,
            tid = element.thread_id  # until the first question names the thread
            if await titles.name_thread(self.store, tid, element.name, unnamed_only=True):
                self._untitled.add(tid)

    async def _thread_user_id(self, thread_id: str) -> str | None:
        return await self.store.thread_user_id(thread_id)

    @queue_until_user_message()
    async def delete_element(self, element_id: str, thread_id: str | None = None) -> None:
        found = await self.store.element_thread(element_id)  # not the thread the page named
        what = f"deleting element {_shown_id(element_id)}"
        if found is None or not await self._writable(found, what):
            return
        if key := await self.store.delete_element(element_id):
            await self.storage.delete_file(key)

    async def close(self) -> None:
        await self.engine.dispose()
