"""`brainchat users add|passwd|list|remove`: the accounts of password login (BRAINCHAT_AUTH=password).

They work on the same database the app uses (DATABASE_URL, or the SQLite file in the state
folder), whether or not the app is running. A password comes from a prompt (asked twice), or
from the first line of standard input when it is not a terminal (or with --password-stdin).
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import shutil
import sys
from datetime import UTC, datetime
from typing import Any

from brainchat.redact import mask
from brainchat.store.accounts import AccountError, Accounts, check_name
from brainchat.store.config import StoreConfig, load_store_config


def now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="brainchat users", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (("add", "add an account"), ("passwd", "change an account's password")):
        p = sub.add_parser(name, help=text)
        p.add_argument("name")
        p.add_argument("--password-stdin", action="store_true", help="read the password from stdin")
    sub.add_parser("list", help="list the accounts")
    rm = sub.add_parser("remove", help="remove an account (its conversations are kept)")
    rm.add_argument("name")
    rm.add_argument(
        "--purge", action="store_true", help="also delete its conversations and saved models"
    )
    opts = parser.parse_args(argv)
    cfg = load_store_config()
    if cfg.errors:
        for error in cfg.errors:
            print(f"configuration: {error}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_run(opts, cfg))
    except AccountError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - an unreachable database: one line, not a traceback
        print(
            f"error: cannot use the database {cfg.shown_url}: {type(exc).__name__}: "
            f"{mask(str(exc))[:300]}",
            file=sys.stderr,
        )
        return 1


def read_password(from_stdin: bool) -> str:
    if from_stdin or not sys.stdin.isatty():
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass("Password: ")
    if getpass.getpass("Again: ") != first:
        raise AccountError("the two passwords differ; nothing was changed")
    return first


async def _run(opts: argparse.Namespace, cfg: StoreConfig) -> int:
    from brainchat.store.database import make_engine, migrate
    from brainchat.store.records import Store
    from brainchat.store.state import ensure_state_dir

    ensure_state_dir(cfg.state_dir)
    engine = make_engine(cfg.database_url)
    try:
        await migrate(engine)
        store = Store(engine)
        return await _command(opts, cfg, store, Accounts(store))
    finally:
        await engine.dispose()


async def _command(
    opts: argparse.Namespace, cfg: StoreConfig, store: Any, accounts: Accounts
) -> int:
    note = (
        "" if cfg.auth == "password" else " (login is off: set BRAINCHAT_AUTH=password to use it)"
    )
    if opts.command == "add":
        check_name(opts.name)
        await accounts.add(opts.name, read_password(opts.password_stdin), now())
        print(f"added {opts.name}{note}")
    elif opts.command == "passwd":
        await accounts.set_password(opts.name, read_password(opts.password_stdin))
        print(f"password of {opts.name} changed; every session of {opts.name} has ended")
    elif opts.command == "list":
        rows = await accounts.list()
        for row in rows:
            print(
                f"{row['identifier']}\tcreated {row['createdAt']}\tlast login {row['lastLoginAt'] or 'never'}"
            )
        print(f"{len(rows)} account(s) in {cfg.shown_url}{note}", file=sys.stderr)
    elif opts.command == "remove":
        return await _remove(opts, cfg, store, accounts)
    return 0


async def _remove(
    opts: argparse.Namespace, cfg: StoreConfig, store: Any, accounts: Accounts
) -> int:
    from brainchat.store.files import LocalFiles
    from brainchat.store.state import user_data_dir

    if not await accounts.remove(opts.name):
        print(f"error: no account {opts.name!r}", file=sys.stderr)
        return 1
    threads = await store.user_thread_ids(opts.name)
    if not opts.purge:
        print(
            f"removed {opts.name} (every session ended); their {len(threads)} conversation(s) are "
            "kept (adding the name again gives them back; --purge deletes them)"
        )
        return 0
    files = LocalFiles(cfg.files_dir)
    for thread_id in threads:
        for key in await store.delete_thread(thread_id):
            files.delete(key)
    await store.delete_user(opts.name)
    models = user_data_dir(cfg.data_dir, opts.name, "password") / "models"
    shutil.rmtree(models, ignore_errors=True)
    print(
        f"removed {opts.name} and their {len(threads)} conversation(s) and saved models "
        "(their EEG files are left in the data folder)"
    )
    return 0
