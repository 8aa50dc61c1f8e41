"""The async engine for a store URL, and the migration of its schema to SCHEMA_VERSION."""

from __future__ import annotations

import asyncio
import fcntl
from pathlib import Path
from typing import IO, Any

from sqlalchemy import Connection, event, func, insert, inspect, make_url, select, text, update
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from brainchat.store import schema

PG_MIGRATION_LOCK = 727_1010  # pg_advisory_xact_lock key: one process migrates at a time


class SchemaError(RuntimeError):
    """The database cannot be used by this version of brainchat (said why, and what to do)."""


def make_engine(url: str, **kw: Any) -> AsyncEngine:
    """An engine for an async URL; SQLite gets WAL, foreign keys and a busy timeout."""
    if url.startswith("sqlite"):
        # SQLAlchemy's own reading of the URL, the one it will open: `sqlite://` (memory) and
        # `sqlite:///rel.db` have no ":///" + absolute path to split on
        path = make_url(url).database
        if path and path != ":memory:" and not path.startswith("file:"):
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(url, connect_args={"timeout": 30}, **kw)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    return create_async_engine(url, pool_pre_ping=True, **kw)


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")  # readers do not block the writer
    cursor.execute("PRAGMA foreign_keys=ON")  # deleting a thread deletes its steps
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable across process kills
    cursor.close()


async def migrate(engine: AsyncEngine, target: int = schema.SCHEMA_VERSION) -> tuple[int, int]:
    """Bring the schema to `target`; return (version before, version after). Safe to race."""
    if engine.dialect.name == "postgresql":
        async with engine.begin() as conn:
            await conn.execute(text(f"SELECT pg_advisory_xact_lock({PG_MIGRATION_LOCK})"))
            return await conn.run_sync(_migrate, target)
    path = str(engine.url.database or "")
    lock = await asyncio.to_thread(_file_lock, path + ".migrate-lock") if path else None
    try:
        async with engine.begin() as conn:
            return await conn.run_sync(_migrate, target)
    finally:
        if lock is not None:
            lock.close()  # releases the flock


def _file_lock(path: str) -> IO[bytes]:
    """An exclusive lock on a file beside the SQLite database (SQLite's own starts too late)."""
    handle = open(path, "ab")  # noqa: SIM115 - closed by the caller
    fcntl.flock(handle, fcntl.LOCK_EX)
    return handle


def _migrate(conn: Connection, target: int) -> tuple[int, int]:
    before = current_version(conn)
    if before > schema.SCHEMA_VERSION:
        raise SchemaError(
            f"the database schema is version {before}, newer than this brainchat knows "
            f"({schema.SCHEMA_VERSION}): upgrade brainchat, or point DATABASE_URL elsewhere"
        )
    if before == 0 and _has_foreign_tables(conn):
        before = 1  # tables made from Chainlit's docs: adopt them, then add what they lack
        _add_missing_step_columns(conn)
    for version in range(before + 1, target + 1):
        schema.MIGRATIONS[version](conn)
    if target != before:
        _set_version(conn, target)
    return before, max(before, target)


def current_version(conn: Connection) -> int:
    if not inspect(conn).has_table(schema.version_table.name):
        schema.version_table.create(conn)
        return 0
    value = conn.execute(select(func.max(schema.version_table.c.version))).scalar()
    return int(value or 0)


def _set_version(conn: Connection, version: int) -> None:
    table = schema.version_table
    if conn.execute(select(func.count()).select_from(table)).scalar():
        conn.execute(update(table).values(version=version))
    else:
        conn.execute(insert(table).values(version=version))


def _has_foreign_tables(conn: Connection) -> bool:
    return inspect(conn).has_table("steps")


def _add_missing_step_columns(conn: Connection) -> None:
    """A schema from Chainlit's docs lacks some step columns; add them (all nullable)."""
    have = {c["name"] for c in inspect(conn).get_columns("steps")}
    for column in schema.steps.columns:
        if column.name not in have:
            kind = column.type.compile(dialect=conn.dialect)
            conn.execute(text(f'ALTER TABLE steps ADD COLUMN "{column.name}" {kind}'))
