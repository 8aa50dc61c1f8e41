"""Shared plumbing of the stores: portable upserts, JSON-as-text columns, one writer at a time."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import Table, and_
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

JSON_COLUMNS = frozenset({"metadata", "generation", "modes", "tags", "props", "playerConfig"})


def encode(column: str, value: Any) -> Any:
    """A value as stored: JSON columns become text, `showInput` becomes 'true'/'false'/text."""
    if column in JSON_COLUMNS:
        return None if value is None else json.dumps(value, default=str, ensure_ascii=False)
    if column == "showInput" and value is not None:
        return str(value).lower()
    return value


def decode(column: str, value: Any) -> Any:
    if column in JSON_COLUMNS and isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return None
    return value


def row_dict(row: Any) -> dict[str, Any]:
    return {k: decode(k, v) for k, v in row._mapping.items()}


class Db:
    """An engine plus a per-process write lock.

    Chainlit persists every step update in its own fire-and-forget task; without one writer at a
    time (asyncio.Lock is FIFO) a later update could commit before the step's creation and leave
    an old output in the database.
    """

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.write_lock = asyncio.Lock()

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    async def upsert(
        self,
        conn: AsyncConnection,
        table: Table,
        values: Mapping[str, Any],
        keys: Iterable[str] = ("id",),
        update: Iterable[str] | None = None,
        same: Iterable[str] = (),
    ) -> bool:
        """Insert, or update the given columns (or only `update`) of the row with the same key;
        with `same`, only a row whose `same` columns equal the given values is updated. Returns
        whether a row was written."""
        known = {c.name for c in table.columns}
        row = {k: encode(k, v) for k, v in values.items() if k in known}
        if self.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert  # type: ignore[assignment]
        stmt = insert(table).values(**row)
        keep = set(keys) if update is None else set(row) - set(update)
        changes = {k: stmt.excluded[k] for k in row if k not in keep}
        if changes:
            where = [table.c[k] == stmt.excluded[k] for k in same]
            result = await conn.execute(
                stmt.on_conflict_do_update(
                    index_elements=list(keys), set_=changes, where=and_(*where) if where else None
                )
            )
        else:
            result = await conn.execute(stmt.on_conflict_do_nothing(index_elements=list(keys)))
        return bool(result.rowcount)
