"""Model connections: add one, list its models, keep its key for the user; remove one.

The connection form (ui/connect_form.py) hands over a provider name, a base URL and an API key;
the server's `/models` is asked, and on success the connection joins the session (its models
become choices in the panel's model pickers) and the user's stored connections (key encrypted).
The key never goes back to the page: messages name the connection and its masked URL only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import chainlit as cl
from chainlit.utils import utc_now

from brainchat import i18n, redact
from brainchat.connections import Connection, ConnectionFailed, checked, probe
from brainchat.redact import get_logger, mask
from brainchat.ui import panel, persistence
from brainchat.ui.render import AUTHOR

if TYPE_CHECKING:
    from brainchat.session import Session

log = get_logger("brainchat.ui")
NAME, URL = "connection_name", "connection_base_url"  # the form's fields (ui/connect_form.py)


def _user() -> str | None:
    try:
        user = cl.context.session.user
    except Exception:  # noqa: BLE001
        return None
    return str(user.identifier) if user is not None else None


def install() -> None:
    """Masking per user: a key is hidden in its owner's output (and logs), not in anyone else's."""
    redact.serve(_user)


async def restore(session: Session) -> None:
    """Give a new or resumed chat the connections its user saved (keys decrypted here only)."""
    p, user = persistence.active(), _user()
    if p is None or user is None:
        return
    try:
        saved = await p.connections.load(user)
    except Exception as exc:  # noqa: BLE001 - a chat starts even if the store cannot be read
        log.warning("saved connections not loaded: %s: %s", type(exc).__name__, mask(str(exc)))
        return
    for conn in saved:
        redact.remember(conn.api_key, user)
        session.add_connection(conn)
    if not saved:
        return
    try:
        picks = await p.connections.load_picks(user)
        known = session.connection_models()
        session.apply_settings({k: v for k, v in picks.items() if v in known})
    except Exception as exc:  # noqa: BLE001 - a bad saved pick leaves the base settings
        log.warning("saved model picks not applied: %s: %s", type(exc).__name__, mask(str(exc)))


async def keep_picks(session: Session) -> None:
    """Remember which connection models the user picked per role, for their next chats."""
    p, user = persistence.active(), _user()
    if p is None or user is None or not session.connections:
        return
    known = session.connection_models()
    picks = {
        f"{role}_model": str(session.overrides[f"{role}_model"])
        for role, _ in panel.ROLES
        if str(session.overrides.get(f"{role}_model")) in known
    }
    try:
        await p.connections.save_picks(user, picks, utc_now())
    except Exception as exc:  # noqa: BLE001 - the picks still apply to this chat
        log.warning("model picks not stored: %s: %s", type(exc).__name__, mask(str(exc)))


async def _keep(conn: Connection) -> bool:
    """Store the connection for the user; False when it is kept for this chat only."""
    p, user = persistence.active(), _user()
    if p is None or user is None:
        return False
    try:
        await p.connections.save(user, conn, utc_now())
    except Exception as exc:  # noqa: BLE001 - the connection still works in this chat
        log.warning(
            "connection %r not stored: %s: %s", conn.name, type(exc).__name__, mask(str(exc))
        )
        return False
    return True


async def add(s: Session, values: dict[str, Any], key: str | None) -> bool:
    """Connect with the panel's fields; say what the server lists, or why it failed (and then
    change nothing)."""
    try:
        conn = await probe(checked(str(values.get(NAME) or ""), str(values.get(URL) or ""), key))
    except ConnectionFailed as exc:
        log.info("connection refused: %s", exc)
        await cl.Message(
            content=i18n.t(
                "connect.not_added",
                reason=mask(str(exc)),
                summary=panel.summary(s) or i18n.t("connect.none"),
            ),
            author=AUTHOR,
        ).send()
        return False
    s.add_connection(conn)
    stored = await _keep(conn)
    log.info("connection %r added (%s): %d model(s)", conn.name, conn.shown_url, len(conn.models))
    listed = ", ".join(f"`{m}`" for m in conn.models[:20])
    more = i18n.t("connect.more", n=len(conn.models) - 20) if len(conn.models) > 20 else ""
    where = i18n.t("connect.kept_stored" if stored else "connect.kept_chat")
    await cl.Message(
        content=i18n.t(
            f"connect.connected.{'one' if len(conn.models) == 1 else 'many'}",
            name=conn.name,
            url=conn.shown_url,
            count=len(conn.models),
            listed=listed,
            more=more,
            example=conn.label(conn.models[0]),
            where=where,
        ),
        author=AUTHOR,
    ).send()
    return True


def removal(values: dict[str, Any]) -> str | None:
    """The connection the panel asks to remove (taken out of the values), if any."""
    name = str(values.pop(panel.REMOVE_FIELD, None) or "")
    return None if name in ("", panel.KEEP_ALL) else name


async def remove(s: Session, name: str) -> bool:
    """Ask, then forget the connection in this chat and delete it (and its key) from the store."""
    conn = s.connections.get(name)
    if conn is None:
        return False
    reply = await cl.AskActionMessage(
        content=i18n.t("connect.remove_ask", name=conn.name, url=conn.shown_url),
        actions=[
            cl.Action(
                name="remove",
                payload={"remove": True},
                label=i18n.t("common.remove"),
                icon="trash-2",
            ),
            cl.Action(
                name="keep", payload={"remove": False}, label=i18n.t("connect.keep_it"), icon="x"
            ),
        ],
        author=AUTHOR,
        timeout=300,
    ).send()
    await cl.context.emitter.task_end()  # no task was running: keep the message bar idle
    if not reply or reply.get("name") != "remove":
        await cl.Message(content=i18n.t("connect.kept", name=conn.name), author=AUTHOR).send()
        return False
    s.remove_connection(name)
    p, user = persistence.active(), _user()
    forgotten = i18n.t("connect.forgotten_chat")
    if p is not None and user is not None:
        try:
            await p.connections.remove(user, name)
            forgotten = i18n.t("connect.forgotten_store")
        except Exception as exc:  # noqa: BLE001 - it is gone from this chat either way
            log.warning("connection %r not removed from the store: %s", name, mask(str(exc)))
    await keep_picks(s)
    log.info("connection %r removed", name)
    await cl.Message(
        content=i18n.t(
            "connect.removed",
            name=conn.name,
            where=forgotten,
            summary=panel.summary(s) or i18n.t("connect.none_left"),
        ),
        author=AUTHOR,
    ).send()
    return True
