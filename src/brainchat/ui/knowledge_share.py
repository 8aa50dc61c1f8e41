"""Sharing one's documents from the page (#41): with accounts, `/knowledge` offers a Share button
for each collection the user owns; the user types the account names who may read it, and the
service (`Knowledge.share`) replaces that collection's readers with them.

Names are taken as typed (account names: letters, digits, . _ @ -): the page never says whether
an account exists, so sharing cannot be used to learn who has one; a name with no account reads
nothing. Only the owner's own collections get a button, and the button carries the row's number
in the list this page was shown, never a collection name the page could forge.
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

import chainlit as cl

from brainchat import i18n
from brainchat.knowledge.limits import KnowledgeError
from brainchat.ui.render import AUTHOR

if TYPE_CHECKING:
    from brainchat.knowledge.service import Knowledge

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")  # an account name (store/accounts.py)
NOBODY = "-"  # typed alone: the collection is private again
MAX_READERS = 100


def accounts_on() -> bool:
    """Whether the page has signed-in users (sharing means nothing to the one local user)."""
    return getattr(cl.context.session, "user", None) is not None


def actions(own: list[str]) -> list[cl.Action]:
    """A Share button per collection the user owns (its row in `own`)."""
    return [
        cl.Action(
            name="share",
            payload={"row": i},
            label=i18n.t("knowledge.share_button", collection=short(c)),
            icon="users",
        )
        for i, c in enumerate(own)
    ]


def short(collection: str) -> str:
    """The collection's own name ("personal" is said in the page's language)."""
    name = collection.rsplit("/", 1)[-1]
    return i18n.t("knowledge.personal") if name == "personal" else name


def chosen(reply: dict[str, Any], own: list[str]) -> str | None:
    """The collection a Share reply names by its row, or None (anything else: nothing)."""
    row = (reply.get("payload") or {}).get("row")
    if isinstance(row, int) and not isinstance(row, bool) and 0 <= row < len(own):
        return own[row]
    return None


def readers_typed(text: str) -> list[str]:
    """The account names in the user's reply (commas, spaces or 、，; separate them); `-` alone
    for nobody. KnowledgeError names what is not an account name."""
    text = (text or "").strip()
    if text == NOBODY:
        return []
    names = [n for n in re.split(r"[\s,;，、；]+", text) if n]
    if not names:
        raise KnowledgeError(i18n.t("knowledge.share_empty", nobody=NOBODY))
    bad = [n for n in names if not NAME.match(n)]
    if bad:
        raise KnowledgeError(i18n.t("knowledge.share_bad_name", name=bad[0][:40]))
    if len(set(names)) > MAX_READERS:
        raise KnowledgeError(i18n.t("knowledge.share_too_many", n=MAX_READERS))
    return sorted(set(names))


async def share(knowledge: Knowledge, user: str, collection: str, wait_s: int) -> None:
    """Ask who may read `collection` (one of the user's own), set it, and say what it now is."""
    name = collection.rsplit("/", 1)[-1]
    now = await asyncio.to_thread(knowledge.readers, user, name)
    question = i18n.t(
        "knowledge.share_ask",
        collection=short(collection),
        now=", ".join(now) or i18n.t("knowledge.nobody"),
        nobody=NOBODY,
    )
    reply: Any = await cl.AskUserMessage(content=question, author=AUTHOR, timeout=wait_s).send()
    text = str((reply or {}).get("output") or "").strip()
    if not text:
        await _say(i18n.t("knowledge.share_unchanged", collection=short(collection)))
        return
    try:
        readers = await asyncio.to_thread(knowledge.share, user, name, [*readers_typed(text)])
    except KnowledgeError as exc:
        await _say(i18n.t("knowledge.share_refused", reason=str(exc)))
        return
    shown = ", ".join(readers) or i18n.t("knowledge.nobody")
    await _say(i18n.t("knowledge.shared", collection=short(collection), readers=shown))


async def _say(text: str) -> None:
    await cl.Message(content=text, author=AUTHOR).send()
