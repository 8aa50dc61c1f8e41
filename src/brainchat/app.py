"""Chainlit hooks only: each reads the conversation, calls one function in `brainchat.ui`."""

from __future__ import annotations

import logging
from typing import Any

import chainlit as cl
from chainlit.config import config

from brainchat.settings import load_settings
from brainchat.ui import (
    connect,
    files_folder,
    headers,
    language,
    local_model,
    mcp_plug,
    mcp_prompts,
    mcp_resources,
    mcp_tasks,
    origin,
    outbound,
    page,
    persistence,
    regenerate,
    runtime,
    servers,
    upload_route,
    uploads,
)
from brainchat.ui import conversation as conv

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
conv.log_config_problems(load_settings())  # bad configuration is logged at start-up
headers.install()  # no remote images in answers, no framing by other sites (CSP)
origin.install()  # only the app's own pages (or BRAINCHAT_ALLOWED_ORIGINS) may drive it
page.install()  # the page's fonts and KaTeX from public/ (no CDN), its own og:image and og:url
store = persistence.install(config.run.host)  # stored threads and login; refuses an exposed host
outbound.install(store.config.auth)  # with accounts, users' URLs reach public addresses only
connect.install()  # a user's keys are masked in their own output, not as an oracle to others
uploads.install(load_settings())  # Chainlit's upload size bound never below brainchat's
upload_route.install(load_settings())  # uploads streamed to disk; size and quota kept as they come
files_folder.install()  # this process's own upload folder: stopping another never deletes it
mcp_plug.install()  # a plug-button server's question mid-call is a form, as a configured one's
language.install()  # brainchat's own text in the user's language (en, zh-CN, zh-TW)
runtime.install()  # C asyncio tasks, a quieter GC: less CPU per turn (bench/concurrency.py)


@cl.on_app_startup
async def startup() -> None:
    await servers.start(load_settings())


@cl.on_app_shutdown
async def shutdown() -> None:
    await servers.stop()
    await local_model.stop_all()  # the local model servers (#42); atexit is the fallback


@cl.on_chat_start
async def chat_start() -> None:
    await conv.welcome(await conv.start(servers.toolset()))


@cl.on_chat_resume
async def chat_resume(thread: Any) -> None:
    await conv.resume_thread(servers.toolset(), thread)


@cl.on_message
async def message(msg: cl.Message) -> None:
    c = conv.current() or await conv.start(servers.toolset())
    await conv.handle_message(c, msg)


@cl.on_stop
async def stop() -> None:
    if c := conv.current():
        await conv.stop(c)


@cl.on_chat_end
async def chat_end() -> None:
    if c := conv.current():
        await conv.end(c)


@cl.on_settings_update
async def settings_update(values: dict[str, Any]) -> None:
    if c := conv.current():
        await conv.settings_update(c, values)


@cl.on_window_message
async def window_message(data: Any) -> None:
    if c := conv.current():
        await conv.window_message(c, data)


@cl.action_callback("show_tools")
async def show_tools(action: cl.Action) -> None:
    if c := conv.current():
        await conv.show_tools(c)


@cl.action_callback("add_connection")
async def add_connection(action: cl.Action) -> None:
    if c := conv.current():
        await conv.add_connection(c)


@cl.action_callback("local_model")
async def local_model_action(action: cl.Action) -> None:
    if c := conv.current():
        await local_model.on_action(c, action.payload)


@cl.action_callback("write_demo_data")
async def write_demo_data(action: cl.Action) -> None:
    if c := conv.current():
        await action.remove()
        await conv.write_demo_data(c)


@cl.action_callback(mcp_tasks.ACTION)
async def cancel_mcp_task(action: cl.Action) -> None:
    if conv.current():
        await mcp_tasks.on_cancel(action.payload)


@cl.action_callback("export_analysis")
async def export_analysis(action: cl.Action) -> None:
    if c := conv.current():
        await conv.export_analysis(c)


@cl.action_callback("regenerate")
async def regenerate_answer(action: cl.Action) -> None:
    if c := conv.current():
        await regenerate.again(c, action.payload, conv.run_turn)


@cl.action_callback("attach_resource")
async def attach_resource(action: cl.Action) -> None:
    if c := conv.current():
        payload = action.payload
        await mcp_resources.attach(c.session, str(payload.get("server")), str(payload.get("uri")))


@cl.action_callback(mcp_prompts.CHOICE)
async def mcp_prompt_choice(action: cl.Action) -> None:
    if c := conv.current():
        await mcp_prompts.choose(c, action.payload, conv.run_turn)


@cl.on_mcp_connect
async def mcp_connect(connection: Any, session: Any) -> None:
    if c := conv.current():
        await mcp_plug.connected(c.session, connection.name, session)


@cl.on_mcp_disconnect
async def mcp_disconnect(name: str, session: Any) -> None:
    if c := conv.current():
        await mcp_plug.disconnected(c.session, name)
