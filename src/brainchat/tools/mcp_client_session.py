"""The ClientSession brainchat opens to a configured server: it tells the server when a request
is given up, answers a server's questions (elicitation) beside its receive loop, and declares
form-mode elicitation only. A server the user plugs in gets the same session (`PluggedSession`),
though Chainlit opens it."""

from __future__ import annotations

import asyncio
import contextlib
from importlib import metadata
from typing import Any

import mcp
from mcp import types

# the class itself, not `mcp.ClientSession`, which `use_for_plugged_servers` replaces
from mcp.client.session import ClientSession

from brainchat.tools import mcp_roots
from brainchat.tools.mcp_elicit_route import Elicitations, elicit_aside
from brainchat.tools.mcp_notify import notices_of, step_level
from brainchat.tools.mcp_sampling import Sampler, sample_aside


def session_options(connection: Any) -> dict[str, Any]:
    """The ClientSession keyword arguments for one configured server's session (its callbacks:
    who answers the server's questions, who hears its notifications and log messages);
    `connection` is its ServerConnection."""
    notices = notices_of(connection)
    notices.opened += 1  # a new session: subscriptions are made again (Notices.resubscribe)
    options = {
        "elicitation_callback": connection.elicitations,
        "message_handler": notices.on_message,
        "logging_callback": notices.on_log,
        "sampling_callback": Sampler(connection.elicitations),
        "client_info": client_info(),
    }
    if mcp_roots.served():  # else the roots capability is not declared
        options["list_roots_callback"] = notices.roots
    return options


def client_info() -> types.Implementation:
    """clientInfo: brainchat and its installed version (the SDK would say "mcp 0.1.0")."""
    try:
        version = metadata.version("brainchat")
    except metadata.PackageNotFoundError:
        import brainchat

        version = str(getattr(brainchat, "__version__", "0"))
    return types.Implementation(name="brainchat", version=version)


class CancellingSession(ClientSession):
    """A ClientSession that tells the server when a request is given up (Stop, a timeout): the
    MCP specification's `notifications/cancelled`, which the SDK's client does not send."""

    async def initialize(self) -> types.InitializeResult:
        """Initialize; then ask a server that logs to send only what the user wants to see
        (logging/setLevel, BRAINCHAT_MCP_LOG_LEVEL), as VS Code sets a server's level."""
        result = await super().initialize()
        if result.capabilities.logging is not None:
            with contextlib.suppress(Exception):  # a server that refuses it logs as it likes
                await self.set_logging_level(step_level())
        return result

    async def _received_request(self, responder: Any) -> None:
        if elicit_aside(self, responder, self._elicitation_callback):
            return
        if not sample_aside(self, responder, self._sampling_callback):
            await super()._received_request(responder)

    async def send_request(self, request: Any, result_type: Any, *args: Any, **kwargs: Any) -> Any:
        _form_elicitation_only(request)
        request_id = self._request_id  # the id super() gives this request (taken synchronously)
        try:
            return await super().send_request(request, result_type, *args, **kwargs)
        except asyncio.CancelledError:
            note = types.ClientNotification(
                types.CancelledNotification(
                    params=types.CancelledNotificationParams(
                        requestId=request_id, reason="cancelled by the client (stop or timeout)"
                    )
                )
            )
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(self.send_notification(note)), 2.0)
            raise


def _form_elicitation_only(request: Any) -> None:
    """Declare form-mode elicitation only: the SDK also declares URL mode, which brainchat does
    not offer (a server would send the user to a link the chat does not show)."""
    root = getattr(request, "root", None)
    if isinstance(root, types.InitializeRequest) and root.params.capabilities.elicitation:
        form = types.ElicitationCapability(form=types.FormElicitationCapability())
        root.params.capabilities.elicitation = form


class PluggedSession(CancellingSession):
    """The session of a server the user connects with the plug button.

    Chainlit opens it (`chainlit.server.connect_mcp` builds `mcp.ClientSession(...,
    sampling_callback=None)`, looked up at each connect) and passes no elicitation callback, so
    the server would be told the client cannot ask the user. Made with none, this session
    declares form elicitation and routes a question, like a configured server's, to the run
    whose call is open (`elicitations`; brainchat names the server at connect). Until a call is
    open, a question gets `cancel`. Likewise it declares sampling, served (with the user's
    approval) by the calling run's model, and hears the server as a configured one is heard
    (mcp_plugged): list_changed, log lines, resource updates, and roots/list (the folder of the
    conversation it is connected to).
    """

    def __init__(  # ClientSession's own order: a positional caller gets the same meaning
        self,
        read_stream: Any,
        write_stream: Any,
        read_timeout_seconds: Any = None,
        sampling_callback: Any = None,
        elicitation_callback: Any = None,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        self.elicitations: Elicitations | None = None
        self.plugged_server: Any = None  # mcp_user.UserServer: what Notices re-lists
        self.plugged_roots: Any = None  # mcp_roots.PluggedRoots, when roots are offered
        if elicitation_callback is None:
            from brainchat.tools.mcp_plugged import hear

            self.elicitations = elicitation_callback = Elicitations("(plugged)")
            # as a configured server's (#43): its request for the model goes to the calling
            # run's user and model, its notifications to its Notices
            if sampling_callback is None:
                sampling_callback = Sampler(self.elicitations)
            if not args:
                server, notices, options = hear(self, self.elicitations)
                for key, value in {**options, "client_info": client_info()}.items():
                    kwargs.setdefault(key, value)
                if kwargs["message_handler"] == notices.on_message:  # else it hears nothing
                    self.plugged_server = server
                if kwargs.get("list_roots_callback") is notices.roots:
                    self.plugged_roots = notices.roots
        super().__init__(read_stream, write_stream, read_timeout_seconds, sampling_callback,
                         elicitation_callback, *args, **kwargs)  # fmt: skip

    async def initialize(self) -> types.InitializeResult:
        result = await super().initialize()
        if self.plugged_server is not None:  # a list_changed before connect lists by them
            self.plugged_server.capabilities = result.capabilities
        return result

    async def _received_request(self, responder: Any) -> None:
        from brainchat.tools.mcp_plugged import roots_aside

        if not roots_aside(self, responder):
            await super()._received_request(responder)


def use_for_plugged_servers() -> None:
    """From now on `mcp.ClientSession` (the name Chainlit's plug button looks up when it
    connects) is PluggedSession. A library attribute is replaced because Chainlit offers no hook
    for the session it builds; the subclass changes nothing for a caller that passes its own
    elicitation callback."""
    mcp.ClientSession = PluggedSession  # type: ignore[misc]
