"""/files: one's recordings (name, size, where each came from) with a Remove button each, asking first.

The list is read from the user's own data folder (with accounts, each user has one), so a user
only ever sees and removes their own. A button carries the row's number, never a path: the row is
looked up in the list this page was shown, and removal resolves its name inside the data folder
again (`brainchat.eeg.uploads.recordings.remove_recording`).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import chainlit as cl

from brainchat import i18n
from brainchat.eeg.io.paths import without_server_paths
from brainchat.eeg.uploads.recordings import NotRemoved, Row, list_recordings, remove_recording
from brainchat.ui.confirm import ask_remove
from brainchat.ui.render import AUTHOR

if TYPE_CHECKING:
    from brainchat.session import Session

COMMAND = {
    "id": "files",
    "description": "Your recordings: size, where each came from; remove them",
    "icon": "folder",
    "button": False,
    "persistent": False,
}
BUTTONS = 20  # Remove buttons in one list (the table names every recording)
TITLES = 20  # other conversations looked up by title for one list


def size_text(size: int) -> str:
    return f"{size / 2**20:,.1f} MB" if size >= 2**20 else f"{size / 1024:,.0f} kB"


def origin_text(row: Row, thread: str, titles: dict[str, str] | None = None) -> str:
    """Where a recording came from, in the user's language; another conversation by its title
    where `titles` knows it."""
    if row.kind != "upload":
        return i18n.t(f"uploads.from_{row.kind}")
    if row.origin is None:
        return i18n.t("uploads.from_upload")
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(row.origin.at))
    if thread and row.origin.thread == thread:
        return i18n.t("uploads.from_here", when=when)
    if title := (titles or {}).get(row.origin.thread):
        shown = title.replace("|", "/").replace("\n", " ")[:60]
        return i18n.t("uploads.from_named", title=shown, when=when)
    return i18n.t("uploads.from_other", when=when)


async def thread_titles(rows: list[Row], thread: str) -> dict[str, str]:
    """The titles of the user's own other conversations the uploads came from (stored threads
    only; a thread of someone else, or not stored, stays unnamed)."""
    from brainchat.ui import persistence

    p = persistence.active()
    user = getattr(cl.context.session, "user", None)
    if p is None or user is None:
        return {}
    wanted = {r.origin.thread for r in rows if r.origin and r.origin.thread not in ("", thread)}
    titles: dict[str, str] = {}
    for tid in sorted(wanted)[:TITLES]:
        try:
            if await p.store.thread_author(tid) != user.identifier:
                continue
            found = await p.store.get_thread(tid)
        except Exception:  # noqa: BLE001 - a title is a nicety: the list shows without it
            continue
        if found and found.get("name"):
            titles[tid] = str(found["name"])
    return titles


def table(rows: list[Row], thread: str, titles: dict[str, str] | None = None) -> str:
    if not rows:
        return i18n.t("uploads.files_none")
    head = (
        f"| {i18n.t('uploads.col_name')} | {i18n.t('uploads.col_size')} | "
        f"{i18n.t('uploads.col_from')} |\n|---|---:|---|"
    )
    body = [
        f"| `{r.name}` | {size_text(r.size)} | {origin_text(r, thread, titles)} |" for r in rows
    ]
    more = "\n\n" + i18n.t("uploads.more_buttons", n=BUTTONS) if len(rows) > BUTTONS else ""
    return i18n.t("uploads.files_title", n=len(rows)) + "\n\n" + "\n".join([head, *body]) + more


async def command(s: Session) -> None:
    """Show the list; each Remove asks first, then the list is shown again; Done ends it."""
    data_dir = Path(s.settings.data_dir)
    thread = str(getattr(cl.context.session, "thread_id", "") or "")
    timeout = int(max(30, s.settings.limits.confirm_timeout))
    while True:
        rows = await asyncio.to_thread(list_recordings, data_dir)
        text = table(rows, thread, await thread_titles(rows, thread))
        if not rows:
            await cl.Message(content=text, author=AUTHOR).send()
            return
        chosen = await _ask(text, _buttons(rows), timeout)
        if chosen is None:
            return
        row = rows[chosen]
        if await _confirmed(row, timeout):
            await _remove(s, data_dir, row)


def _buttons(rows: list[Row]) -> list[cl.Action]:
    shown = [
        cl.Action(
            name="remove",
            payload={"row": i},
            label=i18n.t("uploads.remove_button", name=Path(r.name).name),
            icon="trash-2",
        )
        for i, r in enumerate(rows[:BUTTONS])
    ]
    done = cl.Action(name="done", payload={}, label=i18n.t("uploads.done_button"), icon="check")
    return [*shown, done]


async def _ask(text: str, actions: list[cl.Action], wait_s: int) -> int | None:
    """The row the user chose to remove, or None (Done, or no answer in time)."""
    dialog = cl.AskActionMessage(content=text, actions=actions, author=AUTHOR, timeout=wait_s)
    reply: Any = await dialog.send()
    if not reply or reply.get("name") != "remove":
        return None
    row = (reply.get("payload") or {}).get("row")
    # a number from this list only: anything else (a forged reply) chooses nothing
    if isinstance(row, int) and not isinstance(row, bool) and 0 <= row < len(actions) - 1:
        return row
    return None


async def _confirmed(row: Row, wait_s: int) -> bool:
    question = i18n.t("uploads.confirm", name=row.name, size=size_text(row.size))
    return await ask_remove(question, i18n.t("uploads.keep_button"), wait_s)


async def _remove(s: Session, data_dir: Path, row: Row) -> None:
    try:
        gone = await asyncio.to_thread(remove_recording, data_dir, row.name)
    except (NotRemoved, OSError) as exc:
        reason = without_server_paths(str(exc), data_dir)
        await cl.Message(
            content=i18n.t("uploads.not_removed", name=row.name, reason=reason), author=AUTHOR
        ).send()
        return
    s.forget_upload(gone.name)
    files = ", ".join(f"`{f}`" for f in gone.files)
    await cl.Message(content=i18n.t("uploads.removed", files=files), author=AUTHOR).send()
