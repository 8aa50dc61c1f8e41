"""`brainchat knowledge add|list|remove|share`: a user's documents from a terminal, in the
same store the app uses (the SQLite file in the state folder, or Postgres by DATABASE_URL).

Without accounts (BRAINCHAT_AUTH=local) the documents are the local user's; with accounts,
--user names whose they are."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from typing import Any

from brainchat.knowledge.limits import KnowledgeError
from brainchat.knowledge.model import PERSONAL
from brainchat.knowledge.service import Knowledge, open_default
from brainchat.redact import mask
from brainchat.store.config import LOCAL_USER, load_store_config


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="brainchat knowledge", description=__doc__.splitlines()[0])
    top.add_argument("--user", help=f"whose documents (default: {LOCAL_USER} without accounts)")
    sub = top.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add", help="add documents: PDF, Markdown, HTML, text, folders, zips")
    add.add_argument("paths", nargs="+", metavar="PATH")
    add.add_argument("--collection", default=PERSONAL, help="which of your collections")
    sub.add_parser("list", help="list the documents you can read (yours and shared)")
    rm = sub.add_parser("remove", help="remove one of your documents")
    rm.add_argument("id")
    share = sub.add_parser("share", help="let users read a collection (none: private again)")
    share.add_argument("collection")
    share.add_argument("users", nargs="*", metavar="USER")
    for p in (add, rm, share, sub.choices["list"]):
        p.add_argument("--user", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return top


def main(argv: list[str]) -> int:
    opts = parser().parse_args(argv)
    cfg = load_store_config()
    if cfg.errors:
        for error in cfg.errors:
            print(f"configuration: {error}", file=sys.stderr)
        return 2
    user = opts.user or (LOCAL_USER if cfg.auth == "local" else "")
    if not user:
        print(
            "error: accounts are on (BRAINCHAT_AUTH=password): name one with --user",
            file=sys.stderr,
        )
        return 2
    try:
        store = open_default()
    except Exception as exc:  # noqa: BLE001 - an unreachable database: one line, not a traceback
        print(f"error: cannot open the knowledge store: {type(exc).__name__}: {mask(str(exc))[:300]}",
              file=sys.stderr)  # fmt: skip
        return 1
    try:
        return run(opts, Knowledge(store), user)
    except KnowledgeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()


def run(opts: Any, kb: Knowledge, user: str) -> int:
    if opts.command == "add":
        return add(kb, user, opts.paths, opts.collection)
    if opts.command == "list":
        return listing(kb, user)
    if opts.command == "remove":
        doc = kb.remove(user, opts.id)
        print(f"removed {doc.id}  {doc.title} ({doc.collection})")
        return 0
    readers = kb.share(user, opts.collection, opts.users)
    shown = ", ".join(readers) if readers else "nobody else (private)"
    print(f"{user}/{opts.collection} is readable by: {shown}")
    return 0


def add(kb: Knowledge, user: str, paths: list[str], collection: str) -> int:
    refused = 0
    for path in paths:
        try:
            results = kb.add(user, path, collection)
        except KnowledgeError as exc:
            print(f"refused  {path}: {exc}", file=sys.stderr)
            refused += 1
            continue
        for r in results:
            if r.status == "refused":
                refused += 1
                print(f"refused  {r.name}: {r.reason}", file=sys.stderr)
                continue
            doc = r.document
            assert doc is not None
            pages = f", {doc.pages} pages" if doc.pages else ""
            print(f"{r.status:<9}{doc.id}  {r.name}: {doc.title}{pages}, {doc.chunks} passages")
            for note in r.notes:
                print(f"         note: {note}")
    return 1 if refused else 0


def listing(kb: Knowledge, user: str) -> int:
    docs = kb.documents(user)
    if not docs:
        print("no documents yet: `brainchat knowledge add PATH` adds some")
        return 0
    print(f"{'ID':<17}{'COLLECTION':<24}{'PAGES':>6}{'SIZE':>10}  {'ADDED':<17}TITLE")
    for d in docs:
        added = datetime.fromtimestamp(d.added).strftime("%Y-%m-%d %H:%M")
        print(
            f"{d.id:<17}{d.collection:<24}{d.pages or '-':>6}{size(d.size):>10}  {added:<17}{d.title}"
        )
    return 0


def size(n: int) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024 or unit == "MB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return ""
