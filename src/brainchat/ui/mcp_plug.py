"""Servers the user connects with Chainlit's plug button: their tools, prompts and resources
join this conversation, and leave with the server; their questions (elicitation) are forms;
when their prompts change (prompts/list_changed), the slash-command menu follows."""

from __future__ import annotations

from typing import Any

import chainlit as cl

from brainchat import i18n
from brainchat.tools.mcp_client_session import use_for_plugged_servers
from brainchat.ui import commands, mcp_prompts
from brainchat.ui.render import AUTHOR


def install() -> None:
    """A plug-button server may ask the user mid-call (elicitation), as a configured one does:
    Chainlit opens its session as brainchat's PluggedSession."""
    use_for_plugged_servers()


async def connected(session: Any, name: str, client: Any) -> None:
    """Chainlit's on_mcp_connect: list the server's tools and say what it offers."""
    try:
        tools = await session.connect_user_server(name, client, follow=_lists_changed(session))
    except ImportError as exc:
        await _say(i18n.t("mcp.unavailable", error=exc))
        return
    except Exception as exc:  # noqa: BLE001
        session.with_failure(f"mcp:{name}", str(exc))
        await _say(i18n.t("mcp.list_tools_failed", name=name, error=exc))
        return
    names = ", ".join(f"`{t.name}`" for t in tools) or i18n.t("mcp.no_tools")
    await _say(i18n.t("mcp.connected", name=name, names=names) + features_note(session, name))
    await commands.send(session)


def _lists_changed(session: Any) -> Any:
    """What follows a plugged server's list_changed on this page (run in its context): the
    slash-command menu, when the server's prompts changed."""

    async def changed(kind: str) -> None:
        if kind == "prompts" and mcp_prompts.stale(session):
            await commands.send(session)

    return changed


def features_note(session: Any, name: str) -> str:
    """What a plug-button server offers besides tools: prompts and resources ("" if neither)."""
    server = session.mcp_servers().get(name)
    if server is None:
        return ""
    parts = []
    if server.prompts:
        ids = [f"`/{c.id}`" for c in session.mcp_prompt_commands() if c.server == name]
        parts.append(i18n.t("mcp.prompts_note", ids=", ".join(ids)))
    if server.resources_offered:
        parts.append(i18n.t("mcp.resources_note"))
    if not parts:
        return ""
    text = i18n.t("mcp.note_join").join(parts)
    return i18n.t("mcp.note", text=f"{text[0].upper()}{text[1:]}")


async def disconnected(session: Any, name: str) -> None:
    """Chainlit's on_mcp_disconnect: the server's tools, prompts and resources leave."""
    from brainchat.ui import mcp_signin  # removing the server signs the user out of it

    session.remove_user_tools(name)
    signed_out = await mcp_signin.sign_out(cl.context.session.id, name)
    await _say(
        i18n.t("mcp.disconnected_signed_out" if signed_out else "mcp.disconnected", name=name)
    )
    await commands.send(session)


async def _say(text: str) -> None:
    await cl.Message(content=text, author=AUTHOR).send()
