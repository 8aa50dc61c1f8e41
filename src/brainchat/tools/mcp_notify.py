"""What a server tells the client unasked: its lists changed, a log message, a resource updated.

Each configured server's `Notices` is its session's `message_handler` and `logging_callback`;
so is a plug-button server's (mcp_plugged), whose connection tells its conversation (`relisted`).
Both run in the session's receive loop, which also carries the answers to requests: a handler
that waited there for a listing would wait for itself. So a `list_changed` marks the list stale
at once (before the tool result that follows it is read) and re-lists in a task of its own;
`settled()` waits for those re-listings, which the agent does before its next model request, so
a tool a server added during a call is offered in the very next request of that run.

A log message (notifications/message) goes to the app log, masked, and, at or above the level
the user set (BRAINCHAT_MCP_LOG_LEVEL, default warning), to the step of the call that is open
on that server (one run's, as elicitation is routed; with calls of several runs open, to none:
one user's server output is never shown to another).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import os
import weakref
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from mcp import types
from pydantic import AnyUrl

from brainchat import events
from brainchat.redact import get_logger, mask
from brainchat.settings.declared import AppVars
from brainchat.settings.errors import ConfigError
from brainchat.settings.fields import check, default, env_name
from brainchat.tools.mcp_roots import Roots

log = get_logger("brainchat.tools.mcp")
LEVELS: tuple[types.LoggingLevel, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
LEVEL_ENV = env_name(AppVars, "mcp_log_level")
DEFAULT_LEVEL: types.LoggingLevel = default(AppVars, "mcp_log_level")
LIST_TIMEOUT = 30.0  # seconds a re-listing may take
SETTLE_WAIT = 10.0  # the most a model request waits for re-listings in flight
MAX_LOG_CHARS = 500  # of one log message in a step
_PY_LEVEL = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO}
Updated = Callable[[str], Awaitable[None]]  # a subscriber: called with the updated URI


def step_level() -> types.LoggingLevel:
    """The lowest level of a server's log message that a run's step shows (the user's setting;
    a bad value keeps the default, and start-up names it)."""
    raw = os.environ.get(LEVEL_ENV, "").strip()
    if raw:
        with contextlib.suppress(ConfigError):
            return check(AppVars, "mcp_log_level", raw)  # type: ignore[no-any-return]
    return DEFAULT_LEVEL


def at_least(level: str, floor: str) -> bool:
    rank: dict[str, int] = {name: i for i, name in enumerate(LEVELS)}
    return rank.get(level, len(LEVELS)) >= rank.get(floor, 0)


class Notices:
    """One server's notifications (its `connection`: a ServerConnection, or one like it)."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self._stale: set[str] = set()  # "tools", "prompts", "resources": to be listed again
        self._task: asyncio.Task[None] | None = None
        self.refreshes = 0  # listings done (tests read it)
        self._subscribers: dict[str, list[tuple[Updated, contextvars.Context]]] = {}
        self.roots = Roots()  # the session's list_roots_callback, when roots are served
        self.opened = 0  # sessions opened (a restart opens a new one, which knows no subscription)
        self._subscribed: dict[str, int] = {}  # URI -> the session (`opened`) it was made in

    # -- the session's callbacks (both run in its receive loop: never wait there) ------------
    async def on_message(self, message: Any) -> None:
        """The session's message_handler: server notifications (requests are answered elsewhere)."""
        root = getattr(message, "root", None)
        if isinstance(root, types.ToolListChangedNotification):
            self.stale("tools")
        elif isinstance(root, types.PromptListChangedNotification):
            self.stale("prompts")
        elif isinstance(root, types.ResourceListChangedNotification):
            self.stale("resources")
        elif isinstance(root, types.ResourceUpdatedNotification):
            self._updated(str(root.params.uri))

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        """The session's logging_callback: the app log (masked), and the open call's step."""
        name = self.connection.name
        data = params.data
        text = data if isinstance(data, str) else json.dumps(data, default=str, ensure_ascii=False)
        text = mask(text)
        source = f" ({mask(params.logger)})" if params.logger else ""
        log.log(
            _PY_LEVEL.get(params.level, logging.WARNING if params.level == "warning" else 40),
            "MCP server %r log%s [%s]: %s",
            name,
            source,
            params.level,
            text[:4000],
        )
        if at_least(params.level, step_level()):
            note = f"server '{name}' log [{params.level}]{source}: {text[:MAX_LOG_CHARS]}"
            self._to_step(note, params.level)

    # -- list_changed ------------------------------------------------------------------------
    def stale(self, kind: str) -> None:
        """`kind`'s list changed on the server: list it again (in a task of its own)."""
        self._stale.add(kind)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self._relist(), name=f"mcp-relist:{self.connection.name}"
            )

    async def settled(self, wait: float = SETTLE_WAIT) -> None:
        """Wait (at most `wait` s) until the lists marked stale are listed again."""
        task = self._task
        if task is not None and not task.done():
            with contextlib.suppress(TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(task), wait)

    async def roots_changed(self) -> None:
        """Tell the server its roots changed, if they did since it was told them."""
        if self.connection.state == "connected" and self.roots.stale():
            with contextlib.suppress(Exception):
                await self.connection.request(
                    "roots notice", "a roots notice", self.roots.check, LIST_TIMEOUT
                )

    async def _relist(self) -> None:
        while self._stale:
            kinds, self._stale = set(self._stale), set()
            for kind in sorted(kinds):
                try:
                    await self._list(kind)
                    if (relisted := getattr(self.connection, "relisted", None)) is not None:
                        await relisted(kind)  # a plugged server's conversation (mcp_user)
                    self.refreshes += 1
                except Exception as exc:  # noqa: BLE001 - the old list stays; said in the log
                    log.warning(
                        "MCP server %r: its %s could not be listed again: %s",
                        self.connection.name,
                        kind,
                        mask(str(exc))[:300],
                    )

    async def _list(self, kind: str) -> None:
        from brainchat.tools.mcp_prompts import list_all_prompts
        from brainchat.tools.mcp_resources import offers_any_resource
        from brainchat.tools.mcp_tools import list_all_tools

        c = self.connection
        if c.state != "connected":
            return  # a reconnect lists everything anyway
        caps = c.capabilities
        if kind == "tools":
            listed = await c.request("tool listing", "a tool listing", list_all_tools, LIST_TIMEOUT)
            c.tools = kept_same(c.tools, listed)
        elif kind == "prompts":
            listed = await c.request(
                "prompt listing",
                "a prompt listing",
                lambda s: list_all_prompts(s, caps),
                LIST_TIMEOUT,
            )
            c.prompts = kept_same(c.prompts, listed)
        else:
            c.resources_offered = await c.request(
                "resource listing",
                "a resource listing",
                lambda s: offers_any_resource(s, caps),
                LIST_TIMEOUT,
            )
        log.info("MCP server %r: %s listed again after list_changed", c.name, kind)

    # -- resources/updated -------------------------------------------------------------------
    def subscribers(self, uri: str) -> int:
        return len(self._subscribers.get(uri, []))

    async def subscribe(self, uri: str) -> None:
        """resources/subscribe for `uri` on the current session (once per session)."""
        if self._subscribed.get(uri) == self.opened:
            return
        await self.connection.request(
            f"subscription to {mask(uri)!r}",
            "a subscription",
            lambda s: s.subscribe_resource(AnyUrl(uri)),
            LIST_TIMEOUT,
        )
        self._subscribed[uri] = self.opened

    async def resubscribe(self) -> None:
        """After a restart, subscribe again to what is still watched (the new session knows none)."""
        if self.connection.state != "connected":
            return
        for uri in [u for u, at in self._subscribed.items() if at != self.opened]:
            if self.subscribers(uri):
                with contextlib.suppress(Exception):
                    await self.subscribe(uri)

    def watch(self, uri: str, updated: Updated) -> Callable[[], None]:
        """Call `updated(uri)` (in the caller's context: its page) when the server says `uri`
        changed; returns the function that stops it. Subscribing on the server is `subscribe`."""
        entry = (updated, contextvars.copy_context())
        self._subscribers.setdefault(uri, []).append(entry)

        def stop() -> None:
            with contextlib.suppress(ValueError):
                self._subscribers.get(uri, []).remove(entry)

        return stop

    def _updated(self, uri: str) -> None:
        for entry in list(self._subscribers.get(uri, [])):
            updated, context = entry
            asyncio.get_running_loop().create_task(self._tell(entry, uri), context=context)

    async def _tell(self, entry: tuple[Updated, contextvars.Context], uri: str) -> None:
        """One subscriber told; one that fails (its page is gone) is told no more."""
        try:
            await entry[0](uri)
        except Exception as exc:  # noqa: BLE001 - a subscriber's trouble never reaches the session
            log.info("MCP resource update of %s dropped: %s", mask(uri), type(exc).__name__)
            with contextlib.suppress(ValueError):
                self._subscribers.get(uri, []).remove(entry)

    # -- the open call's step ------------------------------------------------------------------
    def _to_step(self, text: str, level: str) -> None:
        caller = self.connection.elicitations.open_call()
        if caller is None:
            return
        call_id, name = caller.context.run(events.current_tool_call)
        event = events.ToolProgress(
            call_id=call_id, name=name or caller.tool, message=text, data={"mcp_log": level}
        )
        caller.context.run(events.emit, event)


def can_subscribe(server: Any) -> bool:
    """Whether the server offers resource subscriptions (resources.subscribe) and its updates
    reach brainchat (a configured server, or one plugged in over a PluggedSession)."""
    caps = getattr(server, "capabilities", None)
    heard = getattr(server, "elicitations", None) is not None  # its Notices hear the server
    return bool(heard and caps and caps.resources and caps.resources.subscribe)


async def subscribe(server: Any, uri: str, updated: Callable[[str], Awaitable[None]]) -> bool:
    """Subscribe to one of the server's resources (resources/subscribe, once per URI however
    many conversations attach it): `updated(uri)` is called, in the caller's context, when the
    server says it changed. False when the server offers no subscriptions."""
    if not can_subscribe(server):
        return False
    notices = notices_of(server)
    notices.watch(uri, updated)
    await notices.subscribe(uri)
    return True


def kept_same(old: list[Any], new: list[Any]) -> list[Any]:
    """`new`, with each item equal to one of `old` (same name, same definition) kept as the old
    object: the LangChain tools built over it, and the agents bound to them, stay valid."""
    before = {item.name: item for item in old}
    return [before[n.name] if before.get(n.name) == n else n for n in new]


_notices: weakref.WeakKeyDictionary[Any, Notices] = weakref.WeakKeyDictionary()


def notices_of(connection: Any) -> Notices:
    """The connection's Notices, the same across its reconnects (its subscriptions last)."""
    found = _notices.get(connection)
    if found is None:
        found = _notices[connection] = Notices(connection)
    return found


async def settled(connections: Iterable[Any], wait: float = SETTLE_WAIT) -> None:
    """Wait until the servers' pending re-listings (after list_changed) are done (bounded);
    tell those whose roots changed (roots/list_changed); subscribe again on a restarted one."""
    found = [n for c in connections if (n := _notices.get(c)) is not None]
    if found:
        await asyncio.gather(
            *(n.settled(wait) for n in found),
            *(n.roots_changed() for n in found),
            *(n.resubscribe() for n in found),
        )
