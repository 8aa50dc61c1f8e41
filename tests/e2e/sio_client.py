"""A python-socketio client that speaks Chainlit's protocol, for tests that bypass the browser."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime
from typing import Any

import socketio

SOCKET_PATH = "/ws/socket.io"


class ChainlitSocket:
    """One Chainlit conversation over socket.io; every event received is kept as JSON text."""

    def __init__(self) -> None:
        self.sio = socketio.AsyncClient(reconnection=False)
        self.events: list[tuple[str, str]] = []
        self.replies: list[dict[str, Any]] = []  # answers to the app's next questions (forms)
        self.sio.on("*", self._record)

    async def _record(self, event: str, data: Any = None) -> Any:
        self.events.append((event, json.dumps(data, default=str)))
        if event == "ask":  # a form (AskElementMessage): answered as the page would, or left
            return self.replies.pop(0) if self.replies else None
        return None

    async def add_connection(self, name: str, url: str, key: str = "") -> None:
        """Fill and submit the "Add a model connection" form (typed `/connect`)."""
        self.replies.append({"submitted": True, "name": name, "base_url": url, "api_key": key})
        await self.send("/connect")

    async def connect(self, url: str, *, origin: str | None, transport: str = "websocket",
                      cookie: str | None = None, thread_id: str = "") -> None:  # fmt: skip
        """Open the socket (raises socketio.exceptions.ConnectionError when refused).

        Without `cookie`, logs in as the local user first (the app's default login).
        """
        if cookie is None:
            cookie = await local_login(url)
        headers = {"Origin": origin} if origin else {}
        if cookie:
            headers["Cookie"] = cookie
        self.session_id = str(uuid.uuid4())
        auth = {"clientType": "webapp", "sessionId": self.session_id, "threadId": thread_id,
                "userEnv": "{}", "chatProfile": None}  # fmt: skip
        await self.sio.connect(url, headers=headers, auth=auth, transports=[transport],
                               socketio_path=SOCKET_PATH, wait_timeout=60)  # fmt: skip

    @property
    def thread_id(self) -> str | None:
        """The thread of this conversation, once its first message made it (first_interaction)."""
        for event, data in self.events:
            if event == "first_interaction":
                return str(json.loads(data)["thread_id"])
        return None

    async def wait_thread_id(self, timeout: float = 60) -> str:
        """The thread id; Chainlit sends first_interaction after its own thread write, which on a
        loaded machine can come after the turn's answer."""
        async with asyncio.timeout(timeout):
            while (tid := self.thread_id) is None:
                await asyncio.sleep(0.05)
        return tid

    def text(self) -> str:
        return "\n".join(data for _, data in self.events)

    async def wait_for(self, needle: str, timeout: float = 60) -> None:
        """Wait until some received event contains `needle`."""
        async with asyncio.timeout(timeout):
            while needle not in self.text():
                await asyncio.sleep(0.05)

    async def start_chat(self) -> None:
        """Tell the server the socket is ready (on_chat_start runs) and wait for the welcome."""
        await self.sio.emit("connection_successful")
        await self.wait_for("ready")  # the welcome: "brainchat is (not) ready"

    async def send(
        self,
        text: str,
        modes: dict[str, str] | None = None,
        message_id: str = "",
        files: list[str] | None = None,
    ) -> None:
        """A message as the browser sends it; `modes`: the message bar's pickers (Mode: chat/agent);
        `message_id`: the id the page would have made (a fresh uuid4 unless given); `files`: ids
        of files uploaded to /project/file for this session, attached to it."""
        message = {"threadId": "", "id": message_id or str(uuid.uuid4()), "name": "User", "type": "user_message",
                   "output": text, "createdAt": datetime.now(UTC).isoformat()}  # fmt: skip
        if modes:
            message["modes"] = modes
        refs = [{"id": f} for f in files or []]
        await self.sio.emit("client_message", {"message": message, "fileReferences": refs})

    async def close(self) -> None:
        if self.sio.connected:  # abort: a polling client would wait out its long poll (~25 s)
            await self.sio.eio.disconnect(abort=True)


async def local_login(url: str) -> str:
    """The auth cookie of the local user ("" when the app needs no login or refuses it)."""
    import httpx

    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        r = await http.post("/auth/header")
    token = r.cookies.get("access_token")
    return f"access_token={token}" if r.status_code == 200 and token else ""


async def password_login(url: str, name: str, password: str) -> str:
    """The auth cookie after a password login ("" when refused)."""
    import httpx

    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        r = await http.post("/login", data={"username": name, "password": password})
    token = r.cookies.get("access_token")
    return f"access_token={token}" if r.status_code == 200 and token else ""
