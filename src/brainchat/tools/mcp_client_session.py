"""The ClientSession brainchat opens to a configured server: it tells the server when a request
is given up, answers a server's questions (elicitation) beside its receive loop, and declares
form-mode elicitation only."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from mcp import ClientSession, types

from brainchat.tools.mcp_elicit_route import elicit_aside


class CancellingSession(ClientSession):
    """A ClientSession that tells the server when a request is given up (Stop, a timeout): the
    MCP specification's `notifications/cancelled`, which the SDK's client does not send."""

    async def _received_request(self, responder: Any) -> None:
        if not elicit_aside(self, responder, self._elicitation_callback):  # #25 elicit
            await super()._received_request(responder)

    async def send_request(self, request: Any, result_type: Any, *args: Any, **kwargs: Any) -> Any:
        _form_elicitation_only(request)  # #25 elicit
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
