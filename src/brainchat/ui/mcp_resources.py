"""Attach a configured MCP server's resource to the conversation (`/resource`).

`/resource` lists the resources of the configured servers and of those the user connected with the
plug button as buttons; `/resource SERVER URI`
attaches one directly (a template's URI filled in). An attached resource is shown as a message
with its text (masked, bounded) and goes, as context, with the user's next message.
"""

from __future__ import annotations

from typing import Any

import chainlit as cl

from brainchat import i18n
from brainchat.redact import get_logger, mask
from brainchat.tools import mcp_notify
from brainchat.tools import mcp_resources as resources
from brainchat.ui.render import AUTHOR

log = get_logger("brainchat.ui")
ACTION = "attach_resource"
PENDING_KEY = "mcp_attached_resources"
MAX_BUTTONS = 30
COMMAND = {
    "id": "resource",
    "description": "Attach an MCP server's resource to your next message",
    "icon": "paperclip",
    "button": False,
    "persistent": False,
}


def typed(text: str) -> str | None:
    """The arguments of a typed `/resource ...` ("" without any), else None."""
    word, _, rest = text.strip().partition(" ")
    return rest.strip() if word == "/resource" else None


async def command(session: Any, args: str) -> None:
    """`/resource` (a list of buttons) or `/resource SERVER URI` (attach at once)."""
    if args:
        server, _, uri = args.partition(" ")
        if not uri.strip():
            await _say(i18n.t("mcp.give_both", usage=i18n.t("mcp.usage")))
            return
        await attach(session, server, uri.strip())
        return
    rows: list[tuple[str, Any]] = []
    for name, conn in session.mcp_servers().items():
        if conn.resources_offered:
            try:
                rows += [(name, e) for e in await resources.list_entries(conn)]
            except Exception as exc:  # noqa: BLE001 - one server's trouble never hides the others
                await _say(i18n.t("mcp.list_failed", name=name, error=exc))
    if not rows:
        await _say(i18n.t("mcp.no_resources"))
        return
    lines = [
        f"- **{n}**: `{e.uri}` — {e.name}{i18n.t('mcp.template') if e.template else ''}"
        for n, e in rows
    ]
    actions = [
        cl.Action(
            name=ACTION,
            payload={"server": n, "uri": e.uri},
            label=i18n.t("mcp.attach", uri=e.uri),
            icon="paperclip",
        )
        for n, e in rows
        if not e.template
    ][:MAX_BUTTONS]
    await cl.Message(
        content=i18n.t("mcp.resources") + "\n".join(lines) + "\n\n" + i18n.t("mcp.usage"),
        actions=actions,
        author=AUTHOR,
    ).send()


async def attach(session: Any, server: str, uri: str) -> None:
    """Read one of a server's own resources and keep it for the next message."""
    servers = session.mcp_servers()
    if server not in servers:
        known = ", ".join(sorted(servers)) or i18n.t("mcp.none")
        await _say(i18n.t("mcp.no_server", server=repr(mask(server)), known=known))
        return
    try:
        contents = await resources.read(servers[server], uri)
    except Exception as exc:  # noqa: BLE001 - the reason (masked) is shown, never a traceback
        await _say(i18n.t("mcp.attach_failed", uri=repr(mask(uri)), error=mask(str(exc))))
        return
    text = _keep(server, contents.uri, contents.text)
    said = i18n.t("mcp.attached", uri=mask(contents.uri), server=server, size=f"{len(text):,}")
    conn = servers[server]
    if mcp_notify.can_subscribe(conn):  # the server tells us when it changes (#43)
        try:
            await mcp_notify.subscribe(conn, contents.uri, lambda u: _updated(session, server, u))
            said += "\n\n" + i18n.t("mcp_client.subscribed")
        except Exception as exc:  # noqa: BLE001 - attached all the same; only updates are lost
            log.warning("MCP subscription to %s failed: %s", mask(uri), type(exc).__name__)
    await cl.Message(
        content=said,
        elements=[cl.Text(name=mask(contents.uri), content=text, display="inline")],
        author=AUTHOR,
    ).send()


def _keep(server: str, uri: str, text: str) -> str:
    """The resource's text (masked) goes with the next message, in place of an older copy."""
    text = mask(text)
    pending = [p for p in cl.user_session.get(PENDING_KEY) or [] if (p[0], p[1]) != (server, uri)]
    cl.user_session.set(PENDING_KEY, [*pending, (server, uri, text)])
    return text


async def _updated(session: Any, server: str, uri: str) -> None:
    """The server says an attached resource changed: read it again, show it, and send the new
    text with the next message (called in this conversation's context)."""
    conn = session.mcp_servers().get(server)
    if conn is None:
        return
    try:
        contents = await resources.read(conn, uri)
    except Exception as exc:  # noqa: BLE001 - said in the chat, never raised
        error = mask(str(exc))
        await _say(i18n.t("mcp_client.resource_update_failed", server=server, uri=uri, error=error))
        return
    text = _keep(server, contents.uri, contents.text)
    await cl.Message(
        content=i18n.t(
            "mcp_client.resource_updated", server=server, uri=mask(uri), size=f"{len(text):,}"
        ),
        elements=[cl.Text(name=mask(contents.uri), content=text, display="inline")],
        author=AUTHOR,
    ).send()


def take_attached() -> str:
    """The attached resources as context for the next message ("" if none); forgets them."""
    pending = cl.user_session.get(PENDING_KEY) or []
    if not pending:
        return ""
    cl.user_session.set(PENDING_KEY, [])
    parts = [
        f'<resource server="{server}" uri="{uri}">\n{text}\n</resource>'
        for server, uri, text in pending
    ]
    return "\n\nAttached MCP resources (context the user chose):\n" + "\n".join(parts)


async def _say(text: str) -> None:
    await cl.Message(content=text, author=AUTHOR).send()
