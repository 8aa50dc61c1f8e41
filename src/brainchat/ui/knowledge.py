"""The user's documents on the page (#41): /knowledge lists them with a Remove button each (asking
first), a PDF, Markdown, HTML or text file dropped on the chat is added to the user's personal
collection with a step that says what became of it, and the session is handed the user's
search_knowledge tool.

Every call names the signed-in user (the local user without accounts): the service
(`brainchat.knowledge.service.Knowledge`) decides what that user may read, so a page never
lists or removes another user's documents. A Remove button carries the row's number in the
list this page was shown, never a document id the page could forge.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

import chainlit as cl

from brainchat import i18n
from brainchat.knowledge.model import PERSONAL, Document
from brainchat.redact import get_logger, mask
from brainchat.ui.confirm import ask_remove
from brainchat.ui.format import seconds
from brainchat.ui.knowledge_store import documents_bytes, owner, service
from brainchat.ui.recordings import size_text
from brainchat.ui.render import AUTHOR

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from brainchat.knowledge.service import AddResult, Knowledge, Room
    from brainchat.session import Session
    from brainchat.settings import Settings

log = get_logger("brainchat.ui")
COMMAND = {
    "id": "knowledge",
    "description": "Your documents: title, pages, size, collection; remove them",
    "icon": "book-open",
    "button": False,
    "persistent": False,
}
BUTTONS = 20  # Remove buttons in one list (the table names every document)


def who() -> str:
    """The signed-in user; the local user where there are no accounts."""
    return owner(_identifier())


def _identifier() -> str:
    """The signed-in user's identifier as the upload quota keys it ("" without accounts)."""
    user = getattr(cl.context.session, "user", None)
    return str(user.identifier) if user is not None else ""


def quota_room(settings: Settings, identifier: str) -> Room | None:
    """The user's disk quota as the service's `room` check: documents count with the files
    brainchat wrote for the user (uploads, models, exports); None where there is no quota."""
    if not settings.user_quota_mb:
        return None
    from brainchat.eeg.uploads.quota import MB, over_quota
    from brainchat.ui.upload_route import quota_used

    quota_mb, user = settings.user_quota_mb, owner(identifier)
    # the data folder is walked once; the documents are counted again before each file,
    # so a folder or zip of documents stops at the quota
    files = quota_used(identifier, Path(settings.data_dir)) - documents_bytes(user)

    def room(name: str, extra: int) -> str | None:
        used = files + documents_bytes(user)
        return over_quota(quota_mb, used, f"'{name}'") if used + extra > quota_mb * MB else None

    return room


def attach(session: Session) -> None:
    """Hand the session the user's search_knowledge tool, offered while they can read a
    document (one tool for the conversation: the agent built for it is reused)."""
    user = who()
    made: list[BaseTool] = []

    def offer() -> BaseTool | None:
        try:
            knowledge = service()
            if not knowledge.documents(user):
                return None
        except Exception as exc:  # noqa: BLE001 - no knowledge store: the agent goes on without
            log.warning("knowledge unavailable: %s", mask(str(exc)))
            return None
        if not made:
            from brainchat.knowledge.tool import make_knowledge_tool

            made.append(make_knowledge_tool(knowledge, user))
        return made[0]

    session.toolbox.use_knowledge(offer)


# -- adding a dropped document ----------------------------------------------------------------
def is_document(name: str) -> bool:
    from brainchat.knowledge.parse import KINDS

    return PurePath(name).suffix.lower() in KINDS


def documents_zip(name: str, path: str) -> bool:
    """A zip whose files (hidden ones aside) are all documents: the user's, not recordings. Only
    its directory is read; the service bounds what it unpacks."""
    import zipfile

    if PurePath(name).suffix.lower() != ".zip":
        return False
    try:
        with zipfile.ZipFile(path) as zf:
            names = [i.filename for i in zf.infolist() if not i.is_dir()]
    except (OSError, zipfile.BadZipFile):
        return False  # the recordings' check names what is wrong with it
    shown = [n for n in names if not any(p.startswith((".", "__MACOSX")) for p in n.split("/"))]
    return bool(shown) and all(is_document(n) for n in shown)


def split(elements: list[Any]) -> tuple[list[Any], list[Any]]:
    """(the other files, the documents) of a message's attached files."""

    def document(e: Any) -> bool:
        name = str(getattr(e, "name", "") or "")
        return is_document(name) or documents_zip(name, str(e.path))

    docs = [e for e in elements if document(e)]
    return [e for e in elements if e not in docs], docs


async def receive(elements: list[Any], settings: Settings) -> None:
    """Add the dropped documents to the user's personal collection: a step, then a message.
    They count against the user's disk quota, as uploads do."""
    identifier, started = _identifier(), time.perf_counter()
    user = owner(identifier)
    step = cl.Step(name=i18n.t("knowledge.adding", n=len(elements)), type="tool")
    async with step:
        try:
            room = await asyncio.to_thread(quota_room, settings, identifier)
            results = await asyncio.to_thread(_add, service(), user, elements, room)
        except Exception as exc:  # noqa: BLE001 - a document never breaks the conversation
            log.exception("adding documents failed")
            reason = mask(f"{type(exc).__name__}: {exc}")
            results = []
            step.output = i18n.t("knowledge.unavailable", reason=reason)
        else:
            step.output = "\n\n".join(_said(r) for r in results)
        finally:  # Chainlit's copies go: what was added is in the store
            _drop(elements)
        step.name = _title(results, time.perf_counter() - started)
    lines = [_said(r) for r in results] or [step.output]
    if any(r.status in ("added", "updated", "unchanged") for r in results):
        lines.append(i18n.t("knowledge.next"))
    await cl.Message(content="\n\n".join(lines), author=AUTHOR).send()


def _drop(elements: list[Any]) -> None:
    for e in elements:
        cl.context.session.files.pop(getattr(e, "id", ""), None)
        Path(str(e.path)).unlink(missing_ok=True)


def _add(
    knowledge: Knowledge, user: str, elements: list[Any], room: Room | None
) -> list[AddResult]:
    """Each file added under its own name (Chainlit's copy has a random one)."""
    results: list[AddResult] = []
    with tempfile.TemporaryDirectory(prefix="brainchat-doc-") as tmp:
        for e in elements:
            target = Path(tmp) / PurePath(str(e.name or "document")).name
            shutil.copyfile(str(e.path), target)
            results += knowledge.add(user, target, PERSONAL, room)
            target.unlink(missing_ok=True)
    return results


def _said(r: AddResult) -> str:
    doc = r.document
    if r.status == "refused" or doc is None:
        return i18n.t("knowledge.refused", name=r.name, reason=r.reason or r.status)
    if r.status == "unchanged":
        return i18n.t("knowledge.unchanged", title=doc.title, name=r.name)
    key = "knowledge.added" if doc.pages else "knowledge.added_no_pages"
    said = i18n.t(key, title=doc.title, name=r.name, pages=doc.pages, chunks=doc.chunks)
    if r.status == "updated":
        said = i18n.t("knowledge.updated", said=said)
    return "\n".join([said, *(i18n.t("knowledge.note", note=n) for n in r.notes)])


def _title(results: list[AddResult], took: float) -> str:
    added = sum(r.status != "refused" for r in results)
    refused = len(results) - added
    parts = [i18n.t("knowledge.n_added", n=added)] if added else []
    parts += [i18n.t("knowledge.n_refused", n=refused)] if refused else []
    shown = ", ".join(parts) or i18n.t("knowledge.nothing")
    return i18n.t("knowledge.step_title", parts=shown, took=seconds(took))


# -- /knowledge -----------------------------------------------------------------------------
def _cell(text: str) -> str:
    return " ".join(str(text).replace("|", "/").split())[:80]


def _collection(doc: Document, user: str) -> str:
    own = f"{user}/{PERSONAL}"
    return i18n.t("knowledge.personal") if doc.collection == own else _cell(doc.collection)


def table(docs: list[Document], user: str, readers: dict[str, list[str]]) -> str:
    """The documents as a Markdown table: title, pages, size, when added, collection, readers."""
    if not docs:
        return i18n.t("knowledge.none")
    cols = ("title", "pages", "size", "added", "collection", "shared")
    head = "| " + " | ".join(i18n.t(f"knowledge.col_{c}") for c in cols) + " |"
    rows = [head, "|---|---:|---:|---|---|---|"]
    for d in docs:
        pages = str(d.pages) if d.pages else i18n.t("knowledge.no_pages")
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(d.added))
        shared = ", ".join(readers.get(d.collection, [])) or i18n.t("knowledge.nobody")
        if d.owner != user:
            shared = i18n.t("knowledge.no_pages")
        cells = (
            _cell(d.title),
            pages,
            size_text(d.size),
            when,
            _collection(d, user),
            _cell(shared),
        )
        rows.append("| " + " | ".join(cells) + " |")
    mine = sum(d.owner == user for d in docs)
    more = "\n\n" + i18n.t("knowledge.more_buttons", n=BUTTONS) if mine > BUTTONS else ""
    return i18n.t("knowledge.title", n=len(docs)) + "\n\n" + "\n".join(rows) + more


def _listing(knowledge: Knowledge, user: str) -> tuple[list[Document], dict[str, list[str]]]:
    docs = knowledge.documents(user)
    own = {d.collection for d in docs if d.owner == user}
    readers = {c: knowledge.readers(user, c.rsplit("/", 1)[-1]) for c in own}
    return docs, readers


async def command(s: Session) -> None:
    """Show the list; each Remove asks first, each Share (with accounts) asks who may read the
    collection, then the list is shown again; Done ends it."""
    from brainchat.ui import knowledge_share

    user = who()
    timeout = int(max(30, s.settings.limits.confirm_timeout))
    while True:
        try:
            docs, readers = await asyncio.to_thread(_listing, service(), user)
        except Exception as exc:  # noqa: BLE001 - a broken store is said, never raised
            reason = mask(f"{type(exc).__name__}: {exc}")
            await _say(i18n.t("knowledge.unavailable", reason=reason))
            return
        text = table(docs, user, readers)
        mine = [d for d in docs if d.owner == user][:BUTTONS]
        own = sorted(readers) if knowledge_share.accounts_on() else []
        if not mine:
            await _say(text)
            return
        reply = await _ask(text, mine, knowledge_share.actions(own), timeout)
        if reply.get("name") == "share":
            if collection := knowledge_share.chosen(reply, own):
                await knowledge_share.share(service(), user, collection, timeout)
                continue
            return
        chosen = _chosen(reply, mine)
        if chosen is None:
            return
        if await _confirmed(chosen, user, timeout):
            await _remove(user, chosen)


async def _say(text: str) -> None:
    await cl.Message(content=text, author=AUTHOR).send()


async def _ask(
    text: str, mine: list[Document], more: list[cl.Action], wait_s: int
) -> dict[str, Any]:
    """The button the user chose ({} for none: no answer in time)."""
    actions = [
        cl.Action(
            name="remove",
            payload={"row": i},
            label=i18n.t("knowledge.remove_button", title=_cell(d.title)[:40]),
            icon="trash-2",
        )
        for i, d in enumerate(mine)
    ]
    done = cl.Action(name="done", payload={}, label=i18n.t("knowledge.done_button"), icon="check")
    dialog = cl.AskActionMessage(
        content=text, actions=[*actions, *more, done], author=AUTHOR, timeout=wait_s
    )
    reply: Any = await dialog.send()
    return dict(reply) if isinstance(reply, dict) else {}


def _chosen(reply: dict[str, Any], mine: list[Document]) -> Document | None:
    """The document a Remove reply names, or None (Done, or no answer in time)."""
    if reply.get("name") != "remove":
        return None
    row = (reply.get("payload") or {}).get("row")
    # a number from this list only: anything else (a forged reply) chooses nothing
    if isinstance(row, int) and not isinstance(row, bool) and 0 <= row < len(mine):
        return mine[row]
    return None


async def _confirmed(doc: Document, user: str, wait_s: int) -> bool:
    question = i18n.t(
        "knowledge.confirm",
        title=_cell(doc.title),
        size=size_text(doc.size),
        collection=_collection(doc, user),
    )
    return await ask_remove(question, i18n.t("knowledge.keep_button"), wait_s)


async def _remove(user: str, doc: Document) -> None:
    from brainchat.knowledge.limits import KnowledgeError

    try:
        await asyncio.to_thread(service().remove, user, doc.id)
    except KnowledgeError as exc:
        await _say(i18n.t("knowledge.not_removed", title=_cell(doc.title), reason=str(exc)))
        return
    await _say(i18n.t("knowledge.removed", title=_cell(doc.title)))
