"""The page's "Use a local model": from the first screen to a model running on this machine.

With no model configured the first screen recommends the catalog's model that fits this machine's
memory (`offer`), beside "Add a model connection"; **Other local models** lists the catalog. The
choice (`on_action`, one Chainlit action `local_model` whose payload says what to do) runs in a
task of its own, so the button's request ends at once and Cancel can arrive: the file is
downloaded if absent (`localmodels.download.pull` in a worker thread, its progress shown in one
message updated twice a second, with a Cancel), the runtime is started (`localmodels.runtime`,
its elapsed time shown), and its connection joins the session with its model picked for every
role, so Chat and Agent use it at once.

Who may: without accounts the person at the machine owns it, and may download and start any
catalog model. With accounts (BRAINCHAT_AUTH=password) a user never writes to the server's disk:
only a model the operator already downloaded (`brainchat models pull`) can be started, and only
one that fits the server's memory. The page names catalog ids only; a payload is never a URL or
a path (an action's payload comes from the client and is checked like any input).
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import chainlit as cl

from brainchat import i18n
from brainchat.redact import get_logger, mask
from brainchat.ui import local_model_view as view
from brainchat.ui import panel, persistence
from brainchat.ui.render import AUTHOR

if TYPE_CHECKING:
    from brainchat.ui.state import Conversation

log = get_logger("brainchat.ui")
ACTION = "local_model"  # app.py's callback; payload {"do": "use" | "list" | "cancel", "model": id}
SETUP_KEY = "local_model_setup"  # this page's setup under way (user session)
RUNTIME_KEY = "local_model_runtime"  # the runtime this page's chat is connected to
TICK = 0.5  # seconds between two updates of a progress message
ROLES = ("chat", "function_call", "answer")
_downloads: dict[str, asyncio.Lock] = {}  # one download per model in this process


@dataclass
class Setup:
    """One page's setup under way: its task, and the Cancel its download listens to."""

    model_id: str
    cancel: threading.Event = field(default_factory=threading.Event)
    task: asyncio.Task[None] | None = None


def _catalog() -> Any:
    from brainchat.localmodels import catalog

    return catalog


def _entries() -> tuple[Any, ...]:
    return tuple(_catalog().entries())  # the operator's BRAINCHAT_MODELS_CATALOG, else built in


def _present(model_id: str) -> Path | None:
    from brainchat.localmodels import download

    return download.path_of(model_id)  # type: ignore[no-any-return]


def with_accounts() -> bool:
    p = persistence.active()
    return p is not None and p.config.auth == "password"


def action(do: str, label: str, icon: str, model: str = "") -> cl.Action:
    return cl.Action(name=ACTION, payload={"do": do, "model": model}, label=label, icon=icon)


def recommended(total: int | None) -> Any | None:
    """The catalog's pick for this machine; when none fits, the smallest (shown as not fitting)."""
    entries = _entries()
    if not entries:
        return None
    pick = _catalog().recommend(total)  # unknown memory: the catalog's default
    return pick or min(entries, key=lambda m: m.ram_bytes)


async def offer() -> tuple[str, list[cl.Action]]:
    """The first screen's paragraph (ending in a blank line) and buttons; "" and none when the
    catalog cannot be read."""
    try:
        total = view.machine_memory()
        model = recommended(total)
        if model is None:
            return "", []
        present = await asyncio.to_thread(_present, model.id) is not None
    except Exception as exc:  # noqa: BLE001 - the first screen shows even if this part fails
        log.warning("local models not offered: %s: %s", type(exc).__name__, mask(str(exc)))
        return "", []
    buttons = [
        action("use", i18n.t("local_model.button"), "hard-drive", model.id),
        action("list", i18n.t("local_model.other_button"), "list"),
    ]
    return view.offer_text(model, total, present) + "\n\n", buttons


async def on_action(conv: Conversation, payload: dict[str, Any]) -> None:
    """A click on one of this flow's buttons (its payload is checked: it comes from the page)."""
    do, model_id = str(payload.get("do") or ""), str(payload.get("model") or "")[:200]
    setup: Setup | None = cl.user_session.get(SETUP_KEY)
    if do == "cancel":
        if setup is not None:
            setup.cancel.set()
        return
    if do == "list":
        await show_catalog()
        return
    if do != "use":
        return
    if setup is not None and setup.task is not None and not setup.task.done():
        await say(i18n.t("local_model.busy"))
        return
    setup = Setup(model_id)
    cl.user_session.set(SETUP_KEY, setup)
    setup.task = asyncio.create_task(_from_button(conv, setup))


async def show_catalog() -> None:
    """The catalog as a table, a button per model (or why it cannot be read)."""
    total = view.machine_memory()
    try:
        entries = _entries()
        pick = recommended(total)
        present = {m.id for m in entries if await asyncio.to_thread(_present, m.id) is not None}
    except Exception as exc:  # noqa: BLE001 - an operator's broken catalog file, said
        await say(i18n.t("local_model.catalog_failed", reason=mask(str(exc))))
        return
    text = view.catalog_text(entries, total, pick.id if pick else None, present)
    buttons = [action("use", m.name, "hard-drive", m.id) for m in entries]
    await cl.Message(content=text, actions=buttons, author=AUTHOR).send()


async def say(text: str) -> cl.Message:
    return await cl.Message(content=text, author=AUTHOR).send()


async def _from_button(conv: Conversation, setup: Setup) -> None:
    try:
        await use(conv, setup)
    except Exception as exc:  # noqa: BLE001 - a failed setup never takes the chat down
        log.exception("local model setup failed")
        name = setup.model_id
        reason = f"{type(exc).__name__}: {mask(str(exc))}"
        await say(i18n.t("local_model.start_failed", name=name, reason=reason))
    finally:
        await cl.context.emitter.task_end()  # Chainlit restarts "the task" after each answer


async def use(conv: Conversation, setup: Setup) -> None:
    """Download (when absent and allowed), start, and connect the catalog model `setup` names."""
    model = _catalog().find(setup.model_id)
    if model is None:
        await say(i18n.t("local_model.unknown", model=mask(setup.model_id)[:80]))
        return
    total = view.machine_memory()
    ram, shown_total = view.size(model.ram_bytes), view.size(total)
    if view.fits(model, total) is False:
        if with_accounts():
            await say(i18n.t("local_model.too_big", name=model.name, ram=ram, total=shown_total))
            return
        await say(i18n.t("local_model.may_not_fit", name=model.name, ram=ram, total=shown_total))
    path = await asyncio.to_thread(_present, model.id)
    if path is None:
        if with_accounts():
            await say(i18n.t("local_model.operator_only", name=model.name, model=model.id))
            return
        path = await download(model, setup.cancel)
        if path is None:
            return
    started = await start(model, path)
    if started is not None:
        await connect(conv, model, *started)


async def download(model: Any, cancel: threading.Event) -> Path | None:
    """The verified file, downloaded here with its progress shown; None (said why) if not."""
    from brainchat.localmodels.download import DownloadCancelled, DownloadError, explain, pull

    stop = action("cancel", i18n.t("local_model.cancel_button"), "x", model.id)
    shown = i18n.t("local_model.connecting", name=model.name, size=view.size(model.size_bytes))
    lock = _downloads.setdefault(model.id, asyncio.Lock())
    if lock.locked():
        shown = i18n.t("local_model.waiting_other", name=model.name)
    note = await cl.Message(content=shown, actions=[stop], author=AUTHOR).send()
    path: Path | None = None
    try:
        async with lock:
            path = await asyncio.to_thread(_present, model.id)  # another page's download
            if path is None:
                latest: list[Any] = [None]  # the worker thread's last Progress (one slot)
                work = asyncio.ensure_future(
                    asyncio.to_thread(
                        pull, model, progress=lambda p: latest.__setitem__(0, p), cancel=cancel
                    )
                )
                await _follow(work, note, model.name, latest)
                path = work.result()
        note.content = i18n.t(
            "local_model.downloaded_ok", name=model.name, size=view.size(model.size_bytes)
        )
    except DownloadError as exc:
        key = "cancelled" if isinstance(exc, DownloadCancelled) else "download_failed"
        reason = mask(explain(exc))  # in the user's language
        note.content = i18n.t(f"local_model.{key}", name=model.name, reason=reason)
    finally:
        await stop.remove()
        await note.update()
    return path


async def _follow(
    work: asyncio.Future[Any], note: cl.Message, name: str, latest: list[Any]
) -> None:
    """Show the download's progress until it ends (the message changes only when it does)."""
    shown = note.content
    while not work.done():
        await asyncio.wait({work}, timeout=TICK)
        p = latest[0]
        if p is None:
            continue
        text = view.progress_text(name, p.done, p.total, p.speed_bps, p.eta_s)
        if text != shown:
            note.content = shown = text
            await note.update()


async def start(model: Any, path: Path) -> tuple[Any, float] | None:
    """The model's runtime, started (its elapsed time shown); None (said why) if it cannot."""
    from brainchat.localmodels.runtime import RuntimeUnavailable, runtime_for

    began = time.monotonic()
    note = await say(i18n.t("local_model.starting", name=model.name, elapsed=0))
    runtime = runtime_for(path, model)
    work = asyncio.ensure_future(runtime.start())
    while not work.done():
        await asyncio.wait({work}, timeout=1.0)
        if not work.done():
            note.content = i18n.t(
                "local_model.starting", name=model.name, elapsed=round(time.monotonic() - began)
            )
            await note.update()
    try:
        work.result()
    except RuntimeUnavailable as exc:
        note.content = i18n.t("local_model.start_failed", name=model.name, reason=mask(str(exc)))
        await note.update()
        return None
    await note.remove()
    return runtime, time.monotonic() - began


async def connect(conv: Conversation, model: Any, runtime: Any, elapsed: float) -> None:
    """The runtime as a connection of this session, its model picked for every role."""
    cl.user_session.set(RUNTIME_KEY, runtime)
    conn = runtime.connection()
    s = conv.session
    s.add_connection(conn)
    label = conn.label(conn.models[0])
    picks: dict[str, Any] = {}
    for role in ROLES:
        picks[f"{role}_model"] = label
    for role in ("function_call", "answer"):
        picks[f"{role}_tool_calling"] = model.tool_calling
        picks[f"{role}_guidance"] = model.guidance
    s.apply_settings(picks)
    await panel.send_panel(s, conv.custom_ids)
    await conv.save()
    log.info("local model %s connected for this chat (%s)", model.id, runtime.base_url)
    await say(
        i18n.t("local_model.ready", name=model.name, url=runtime.base_url, elapsed=round(elapsed))
    )


async def before_turn(conv: Conversation) -> None:
    """The chat's local model running, at the address it runs at now: a server the runtime gave
    up on starts again at the next turn, on a new port, and the connection follows it."""
    runtime = cl.user_session.get(RUNTIME_KEY)
    if runtime is None:
        return
    from brainchat.localmodels.runtime import NAME, RuntimeUnavailable

    conn = conv.session.connections.get(NAME)
    if conn is None:  # the user removed it in the panel
        return
    try:
        await runtime.start()  # at once when it runs
    except RuntimeUnavailable as exc:
        name = runtime.model.name if runtime.model is not None else runtime.alias
        await say(i18n.t("local_model.start_failed", name=name, reason=mask(str(exc))))
        return
    if (fresh := runtime.connection()).base_url != conn.base_url:
        conv.session.add_connection(fresh)


async def stop_all() -> None:
    """End every local model server this app started (at the app's shutdown)."""
    from brainchat.localmodels.runtime import stop_all as stop_runtimes

    await stop_runtimes()
