"""What a plug-button server's session hears, set up when the session is made (Chainlit
initializes it before brainchat knows whose it is): its Notices (list_changed, log messages,
resource updates) over the session's own UserServer, and its roots, the conversation's folder
once `connect_user_server` hands it over (`bind`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import types

from brainchat.tools import mcp_roots
from brainchat.tools.mcp_notify import Notices, notices_of
from brainchat.tools.mcp_user import UserServer


def hear(session: Any, elicitations: Any) -> tuple[UserServer, Notices, dict[str, Any]]:
    """The session's server and Notices, and the ClientSession callbacks that reach them (the
    roots capability only when plugged servers are offered roots)."""
    server = UserServer(name=elicitations.server, session=session, elicitations=elicitations)
    notices = notices_of(server)
    notices.opened = 1  # one session: Chainlit makes a new one (a new server) to reconnect
    notices.roots = mcp_roots.PluggedRoots()
    options: dict[str, Any] = {
        "message_handler": notices.on_message,
        "logging_callback": notices.on_log,
    }
    if mcp_roots.plugged_served():
        options["list_roots_callback"] = notices.roots
    return server, notices, options


def roots_aside(session: Any, responder: Any) -> bool:
    """Answer the server's `roots/list` in a task of its own (True): it may wait for the
    conversation's folder, and the session's receive loop must not wait with it."""
    roots = getattr(session, "plugged_roots", None)
    if roots is None or not isinstance(responder.request.root, types.ListRootsRequest):
        return False
    from brainchat.tools.mcp_elicit_route import answer_aside

    async def answer(context: Any, params: Any) -> types.ListRootsResult:
        return await roots(context)

    failed = types.ListRootsResult(roots=[])
    session._task_group.start_soon(answer_aside, session, responder, answer, "roots", failed)
    return True


async def bind(session: Any, folder: Path) -> None:
    """The plugged session serves the conversation whose data folder is `folder`: its roots
    are that folder (a server told none so far gets roots/list_changed)."""
    roots = getattr(session, "plugged_roots", None)
    server = getattr(session, "plugged_server", None)
    if roots is None or server is None:
        return  # a session brainchat did not make (it declared no roots)
    roots.use(folder)
    await notices_of(server).roots_changed()
