"""One browser conversation: its Session, the mode picker, the panel, runs, stop, demo data.

`app.py` calls one function here per Chainlit hook. The live state (`Conversation`) and what is
kept with the thread are ui/state.py's; the helpers this module wires (modes, connect,
connect_form, resume, titles, uploads) take the session or the `Conversation` of ui/state.py
and never import this module.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import chainlit as cl

from brainchat import demo, i18n
from brainchat.events import RunFinished, Stats
from brainchat.redact import get_logger, mask
from brainchat.session import Session
from brainchat.settings import Settings, load_settings
from brainchat.tools.mcp_elicit_route import answering
from brainchat.tools.mcp_sampling import approving
from brainchat.tools.registry import ToolSet
from brainchat.ui import (
    commands,
    connect,
    connect_form,
    knowledge,
    live,
    local_model,
    mcp_tasks,
    modes,
    panel,
    recordings,
    regenerate,
    resume,
    runtime,
    servers,
    titles,
    uploads,
)
from brainchat.ui import format as fmt
from brainchat.ui import mcp_prompts as mcp_prm
from brainchat.ui import mcp_resources as mcp_res
from brainchat.ui.confirm import make_confirm
from brainchat.ui.mcp_elicit import make_asker
from brainchat.ui.mcp_sampling import make_approver
from brainchat.ui.message_limit import too_long_notice
from brainchat.ui.render import AUTHOR, RunRenderer
from brainchat.ui.state import KEY, SNAPSHOT_KEY, Conversation, current, keep, restore_ui, save

__all__ = ["Conversation", "current"]  # app.py reaches them here

log = get_logger("brainchat.ui")  # masks secrets in records
CHAINLIT_STOPPED = "Task manually stopped."  # chainlit/socket.py sends it on every stop
EEG_SUFFIXES = {".edf", ".fif", ".bdf", ".gdf", ".set", ".vhdr", ".gz"}


def log_config_problems(settings: Settings) -> None:
    for err in settings.errors:
        log.error("configuration: %s", err)
    if not settings.configured and not settings.errors:
        log.warning("no model configured: the app starts, and says what to set")


# -- start ----------------------------------------------------------------------------------
async def start(shared_tools: ToolSet | None, thread: dict[str, Any] | None = None) -> Conversation:
    """A new conversation, or a stored `thread` opened again: mode, settings, model history,
    usage, and the study (replayed at its first use)."""
    settings = load_settings()
    conv = Conversation(Session(settings, extra_tools=shared_tools))
    resume.attach(conv.session)
    knowledge.attach(conv.session)  # the user's documents as search_knowledge (#41)
    await connect.restore(conv.session)  # the user's connections before the saved picks
    if thread is not None:
        state = resume.thread_state(thread, SNAPSHOT_KEY)
        resume.restore(conv.session, thread, state)
        restore_ui(conv, state)
        resume.offer_export(conv.session, resume.add_note(conv.session, conv.usage, thread))
    await show(conv)
    return conv


async def show(conv: Conversation) -> None:
    """This page holds `conv`: its modes, commands and settings panel."""
    cl.user_session.set(KEY, conv)
    keep(conv)
    await modes.send_modes(conv.session.mode)
    conv.session.use_configured_servers(servers.configured_servers, servers.toolset)
    await commands.send(conv.session)
    await panel.send_panel(conv.session, conv.custom_ids)


async def resume_thread(shared_tools: ToolSet | None, thread: dict[str, Any]) -> Conversation:
    """Open a stored thread (Chainlit's on_chat_resume); a turn of it that still runs (the page
    was reloaded, or opened in another tab) goes on in this page."""
    if (running := await live.take_over(str(thread.get("id") or ""))) is not None:
        await show(running)
        return running  # type: ignore[no-any-return]
    return await start(shared_tools, thread)


EMPTY_CHECK_ENTRIES = 1_000  # entries the welcome's empty-folder check looks at, at most


def data_folder_empty(path: Path, limit: int = EMPTY_CHECK_ENTRIES) -> bool:
    """No EEG recording in the data folder (the welcome then offers the demo set).

    Bounded: it runs for every new chat, and a large folder must not slow that down; a folder
    with more than `limit` entries counts as not empty (it holds something worth listing)."""
    if not path.is_dir():
        return True
    seen = 0
    for _folder, dirs, files in os.walk(path):
        seen += len(dirs) + len(files)
        if any(Path(f).suffix.lower() in EEG_SUFFIXES for f in files):
            return False
        if seen >= limit:
            return False
    return True


def shown_error(session: Session, exc: BaseException) -> str:
    """An error as a message shows it: secrets masked, paths relative to the data folder."""
    from brainchat.eeg.io.paths import without_server_paths

    return mask(without_server_paths(str(exc), session.settings.data_dir))


async def welcome(conv: Conversation) -> None:
    """The first screen: what to configure when nothing works, else what the app can do."""
    s = conv.session
    problem = s.config_problem()
    if problem:
        local, buttons = await local_model.offer()  # "Use a local model" (#42)
        await cl.Message(
            content=f"{i18n.t('welcome.not_ready')}\n\n{problem}\n\n"
            f"{i18n.t('welcome.add_connection')}\n\n{local}{i18n.t('welcome.try_offline')}",
            actions=[connect_form.button(), *buttons],
            author=AUTHOR,
        ).send()
        return
    chat = s.settings.model_for("chat")
    lines = [
        i18n.t("welcome.ready", mode=i18n.t(f"welcome.mode.{s.mode}")),
        i18n.t("welcome.chat_model", name=chat.name if chat else "?") + fmt.roles_text(s.roles()),
        i18n.t("welcome.help"),
    ]
    if demo.active():
        lines.insert(1, demo.welcome())
    actions = [
        cl.Action(name="show_tools", payload={}, label=i18n.t("welcome.show_tools"), icon="wrench"),
        connect_form.button(),
    ]
    if await asyncio.to_thread(data_folder_empty, s.settings.data_dir):
        from brainchat.eeg.io.synthetic import demo_folder

        where = fmt.shown_folder(s.settings.data_dir, demo_folder(s.settings.data_dir))
        # named relative to the data folder: the server's folders are its own
        lines.append(i18n.t("welcome.empty_folder", where=where))
        label = i18n.t("welcome.write_demo")
        actions.append(cl.Action(name="write_demo_data", payload={}, label=label, icon="database"))
    await cl.Message(content="\n\n".join(lines), actions=actions, author=AUTHOR).send()


# -- messages -------------------------------------------------------------------------------
async def show_tools(conv: Conversation) -> None:
    try:
        toolset = conv.session.toolset()
    except Exception as exc:  # noqa: BLE001 - listing tools never breaks the chat
        notice = i18n.t("notices.tools_failed", error=exc)
        await cl.Message(content=notice, author=AUTHOR).send()
        return
    listing = fmt.toolset_text(toolset, i18n.t("format.agent_tools"))
    await cl.Message(content=listing, author=AUTHOR).send()


async def window_message(conv: Conversation, data: Any) -> None:
    """brainchat.js reports the Mode picker's choice as soon as it changes."""
    if mode := modes.picked_mode(data):
        await modes.on_pick(conv, mode, restore=modes.remembered(data))


async def handle_message(conv: Conversation, message: cl.Message) -> None:
    if notice := too_long_notice(message.content or ""):
        await cl.Message(content=notice, author=AUTHOR).send()
        return
    text = (message.content or "").strip()
    mode = (message.modes or {}).get("mode")
    switch = mode in ("chat", "agent") and mode != conv.session.mode
    if switch:
        # the picker changed without brainchat.js noticing; the turn's own save persists it
        await modes.switched(conv, str(mode), before_turn=True)
    note = await uploads.receive_attached(conv.session, message) if message.elements else None
    if message.elements and not text:
        await save(conv)
        return  # attachments only: the files are in; the user's next question uses them
    # /resource lists or attaches an MCP server's resource
    resource_args = text if message.command == "resource" else mcp_res.typed(text)
    if resource_args is not None:
        await mcp_res.command(conv.session, resource_args)
        return
    if (prompt := mcp_prm.match(message.command, text)) is not None:
        if (turn := await mcp_prm.render(conv.session, *prompt)) is not None:
            await run_turn(conv, turn, message.id, (note or "") + mcp_res.take_attached())
        return
    command = message.command or typed_command(text)
    if command == "files":  # one's recordings, with Remove (#40)
        await recordings.command(conv.session)
        return
    if command == "knowledge":  # one's documents, with Remove (#41)
        await knowledge.command(conv.session)
        return
    if command == "tasks":  # one's MCP server tasks still running, with Cancel (#43)
        await mcp_tasks.command()
        return
    if command in ("tools", "connect"):
        if switch:
            await conv.save()  # no turn follows to save it
        await (show_tools(conv) if command == "tools" else connect_form.ask(conv))
        return
    await run_turn(conv, text, message.id, (note or "") + mcp_res.take_attached())


def typed_command(text: str) -> str | None:
    """`/tools`, `/connect`, `/files`, `/knowledge` or `/tasks` typed as text, without the
    command menu."""
    word = text.split(maxsplit=1)[:1]
    typed = ("/tools", "/connect", "/files", "/knowledge", "/tasks")
    return word[0][1:] if word and word[0] in typed else None


async def run_turn(
    conv: Conversation, question: str, parent_id: str | None, note: str = ""
) -> None:
    """One turn; `note` (what was uploaded, for Chat mode) goes to the model after the question."""
    s = conv.session
    step = cl.context.current_step
    renderer = RunRenderer(s.mode, step.id if step else parent_id)
    thread = live.begin(conv)  # a page that comes back takes the turn over
    conv.renderer = renderer
    confirm = make_confirm(s.settings.limits.confirm_timeout, renderer.awaiting)
    if s.mode == "agent":
        s.use_configured_tools(await servers.refreshed_toolset())
    await local_model.before_turn(conv)  # a local model restarted on another port (#42)
    counted = False
    try:
        # an MCP server's question is a form here; its request for the model, a dialog
        with (
            answering(make_asker()),
            approving(make_approver(renderer.awaiting)),
            mcp_tasks.owning(),
        ):  # the tasks its MCP calls start are this user's
            async for event in s.ask(question + note, confirm=confirm, message_id=parent_id):
                if isinstance(event, RunFinished):
                    resume.mark_answer(renderer, event, parent_id)
                    if event.answer and event.reason != "error" and not conv.titled:
                        conv.titled = titles.title_once(s.settings, question)
                elif isinstance(event, Stats) and not counted:
                    conv.usage.add(event.rows)
                    counted = True
                await renderer.handle(event)
        await renderer.finish()
        if mcp_prm.stale(s):  # a server's prompts changed during the run: the menu follows
            await commands.send(s)
        await regenerate.offer(renderer, parent_id)  # under the last answer only
        await mcp_tasks.after_turn()  # a server task its cancel left running
        runtime.settle()
    except asyncio.CancelledError:
        if not counted:
            conv.usage.add(s.usage_so_far())
            counted = True
        await renderer.stop(s.usage_so_far())
        await mcp_tasks.after_turn()  # Stop's tasks/cancel that a server did not confirm
        raise
    except Exception as exc:  # noqa: BLE001 - no traceback reaches a user
        log.exception("run failed")
        await renderer.finish()
        await cl.Message(
            content=i18n.t(
                "notices.run_failed",
                kind=type(exc).__name__,
                error=shown_error(conv.session, exc),
            ),
            author=AUTHOR,
        ).send()
    finally:
        live.end(thread)
        await save(conv)


async def stop(conv: Conversation) -> None:
    if conv.renderer is not None:
        await conv.renderer.stop(conv.session.usage_so_far(), _chainlit_stop_message())


async def end(conv: Conversation) -> None:
    """The browser tab has gone: free the study's memory (replayed if the tab comes back)."""
    if conv.session.has_study:
        await conv.session.study.release()


def _chainlit_stop_message() -> cl.Message | None:
    """Chainlit's own "Task manually stopped." message, sent just before on_stop: brainchat's
    stop notice replaces its text, so a stop leaves one message, not two."""
    for message in reversed(cl.chat_context.get()):
        if message.content == CHAINLIT_STOPPED:
            return message
    return None


async def settings_update(conv: Conversation, values: dict[str, Any]) -> None:
    """A panel save: a connection to remove first (it asks), else the values."""
    values = dict(values)
    relabel = panel.take_language(values)  # brainchat's own text from now on in that language
    if (doomed := connect.removal(values)) and await connect.remove(conv.session, doomed):
        await save(conv)
        await panel.send_panel(conv.session, conv.custom_ids)  # its models leave the pickers
        return
    if await panel.apply(conv.session, values, conv.custom_ids):
        await connect.keep_picks(conv.session)
        await save(conv)
        if relabel:  # the panel and the mode picker in the chosen language
            await panel.send_panel(conv.session, conv.custom_ids)
            await modes.send_modes(conv.session.mode)


# -- export ---------------------------------------------------------------------------------
async def export_analysis(conv: Conversation) -> None:
    """The export button: the study as it is now, as a script and a report, offered for download."""
    from langchain_core.tools import ToolException

    from brainchat.eeg.export.export import EXPORTS
    from brainchat.eeg.kernel import export_study

    study = conv.session.study
    note = await cl.Message(content=i18n.t("notices.exporting"), author=AUTHOR).send()
    try:
        done = await export_study(study)
    except ToolException as exc:
        note.content = i18n.t(
            "notices.export_refused", error=f"{str(exc)[0].upper()}{str(exc)[1:]}"
        )
    except Exception as exc:  # noqa: BLE001 - no traceback reaches a user
        log.exception("export failed")
        note.content = i18n.t(
            "notices.export_failed", kind=type(exc).__name__, error=shown_error(conv.session, exc)
        )
    else:
        models = ", ".join(done.models)
        note.content = i18n.t(
            "notices.exported",
            steps=done.steps,
            models=i18n.t("notices.exported_models", models=models) if models else "",
            folder=EXPORTS,
            script=done.script.name,
            packages=", ".join(done.packages),
            report=done.report.name,
        )
        note.elements = [
            cl.File(path=str(done.script), name=done.script.name, display="inline"),
            cl.File(path=str(done.report), name=done.report.name, display="inline"),
        ]
    await note.update()


# -- demo data and connections -------------------------------------------------------------
async def write_demo_data(conv: Conversation) -> None:
    from brainchat.eeg.io.synthetic import demo_folder

    data_dir = conv.session.settings.data_dir
    folder = demo_folder(data_dir)  # where `brainchat demo-data` writes
    where = fmt.shown_folder(data_dir, folder)
    writing = i18n.t("welcome.writing_demo", where=where)
    note = await cl.Message(content=writing, author=AUTHOR).send()
    try:
        from brainchat.eeg.io.synthetic import write_demo_set

        paths = await asyncio.to_thread(write_demo_set, folder)
    except Exception as exc:  # noqa: BLE001
        note.content = i18n.t(
            "welcome.demo_failed", kind=type(exc).__name__, error=shown_error(conv.session, exc)
        )
    else:
        files = ", ".join(f"`{p.name}`" for p in paths)
        note.content = i18n.t("welcome.demo_written", count=len(paths), where=where, files=files)
    await note.update()


async def add_connection(conv: Conversation) -> None:
    connect_form.start(conv)
