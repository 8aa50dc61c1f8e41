"""Stored conversations and login, wired into Chainlit: the data layer, auth callbacks, routes.

`install(host)` runs when the app module is imported (before Chainlit checks its auth secret):
it reads the store configuration, refuses a non-loopback host without login, sets the auth
secret from the state folder, and registers the data layer and the login callback.
it also migrates the schema and checks that password login has accounts. A step that fails stops
the app with a message saying what to set.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import chainlit as cl

from brainchat.redact import get_logger, mask
from brainchat.store.accounts import Accounts
from brainchat.store.config import LOCAL_USER, StoreConfig, exposure_problem, load_store_config
from brainchat.store.connections import ConnectionStore
from brainchat.store.mcp_tokens import McpTokenStore
from brainchat.store.state import auth_secret, ensure_state_dir, models_dir, user_data_dir
from brainchat.store.throttle import LoginThrottle
from brainchat.ui import page

log = get_logger("brainchat.store")
FORWARDED = ("x-forwarded-for", "forwarded", "x-real-ip")


@dataclass
class Persistence:
    config: StoreConfig
    store: Any  # brainchat.store.records.Store
    accounts: Accounts
    key: bytes  # signs saved models that can only be pickled
    throttle: LoginThrottle
    connections: ConnectionStore  # each user's model connections, keys encrypted
    # each user's sign-ins to MCP servers, tokens encrypted
    mcp_tokens: McpTokenStore | None = None

    def data_dir(self, identifier: str) -> Path:
        return user_data_dir(self.config.data_dir, identifier, self.config.auth)

    def models_dir(self, identifier: str, thread_id: str) -> Path:
        return models_dir(self.data_dir(identifier), thread_id)


_active: Persistence | None = None


def active() -> Persistence | None:
    return _active


def _stop(message: str) -> NoReturn:
    print(f"brainchat: {message}", file=sys.stderr, flush=True)
    raise SystemExit(2)


def install(host: str) -> Persistence:
    """Configure storage and login for an app listening on `host`; exit with a reason if unsafe."""
    global _active
    cfg = load_store_config()
    for error in cfg.errors:
        _stop(f"configuration: {error}")
    if problem := exposure_problem(host, cfg):
        _stop(problem)
    ensure_state_dir(cfg.state_dir)
    from brainchat.agent import habits  # what auto mode learns per model is kept here

    habits.use_folder(cfg.state_dir)
    if not os.environ.get("CHAINLIT_AUTH_SECRET"):
        os.environ["CHAINLIT_AUTH_SECRET"] = auth_secret(cfg.state_dir)
    key = hashlib.sha256(
        b"brainchat saved models\0" + os.environ["CHAINLIT_AUTH_SECRET"].encode()
    ).digest()
    from brainchat.store.database import make_engine
    from brainchat.store.records import Store
    from brainchat.ui import routes
    from brainchat.ui.datalayer import BrainchatDataLayer, LocalStorageClient

    _prepare(cfg)
    store = Store(make_engine(cfg.database_url))
    storage = LocalStorageClient(cfg.files_dir)
    secret = hashlib.sha256(
        b"brainchat connection keys\0" + os.environ["CHAINLIT_AUTH_SECRET"].encode()
    ).digest()
    throttle = LoginThrottle(base=cfg.login_backoff)
    _active = p = Persistence(
        cfg,
        store,
        Accounts(store),
        key,
        throttle,
        ConnectionStore(store, secret),
        McpTokenStore(store, secret),  # same key per user as connection keys
    )
    cl.data_layer(lambda: BrainchatDataLayer(store, storage, on_delete=_delete_models))
    _install_login(p)
    routes.install(store, storage)
    from brainchat.ui import mcp_signin  # MCP sign-ins kept in the store, callback route

    mcp_signin.install(p.mcp_tokens)
    return p


def _prepare(cfg: StoreConfig) -> None:
    """Migrate the schema and check the accounts before the server starts (own loop, own thread:
    the app module may be imported inside a running loop, on `chainlit run -w` reloads)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        problem = pool.submit(asyncio.run, _check_database(cfg)).result()
    if problem:
        _stop(problem)


async def _check_database(cfg: StoreConfig) -> str | None:
    from brainchat.store.database import SchemaError, make_engine, migrate
    from brainchat.store.records import Store

    engine = None
    try:
        engine = make_engine(cfg.database_url)  # in the try: a URL it refuses is named, not raised
        before, after = await migrate(engine)
        if before != after:
            log.info("database %s: schema version %s -> %s", cfg.shown_url, before, after)
        if cfg.auth == "password" and not await Accounts(Store(engine)).list():
            return (
                "BRAINCHAT_AUTH=password but there are no accounts yet: add one with `brainchat "
                "users add NAME` (same DATABASE_URL / BRAINCHAT_STATE_DIR), then start again"
            )
    except SchemaError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - an unreachable database is named, then we stop
        return f"cannot open the database {cfg.shown_url}: {type(exc).__name__}: {mask(str(exc))[:200]}"
    finally:
        if engine is not None:
            await engine.dispose()
    return None


def _install_login(p: Persistence) -> None:
    from brainchat.ui import login, sessions

    password = p.config.auth == "password"
    sessions.install(
        p.accounts if password else None, p.config.session_hours, p.config.secure_cookies
    )
    if password:
        login.install(p.accounts, p.throttle)
        return

    async def local_user(headers: Any) -> cl.User | None:
        # the local user is for this machine only: a request through a proxy is someone else
        if any(h in headers for h in FORWARDED):
            log.warning("refused the local user to a proxied request; set BRAINCHAT_AUTH=password")
            return None
        return cl.User(identifier=LOCAL_USER, display_name="You", metadata={"provider": "local"})

    cl.header_auth_callback(local_user)
    page.install_local_user(local_user)  # the page's first GET /user: no 401 in its console


async def _delete_models(thread_id: str, owner: str | None) -> None:
    """A deleted thread takes its saved models with it."""
    p = _active
    if p is None or not owner:
        return
    try:
        folder = p.models_dir(owner, thread_id)
    except ValueError:
        return
    await asyncio.to_thread(shutil.rmtree, folder, True)
