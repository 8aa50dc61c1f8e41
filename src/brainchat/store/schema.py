"""The database schema (SQLAlchemy metadata) with its version, and the migrations between versions.

Version 1 is Chainlit's documented schema (users, threads, steps, elements, feedbacks) plus the
step columns the docs forget (`autoCollapse`, `defaultOpen`, `command`, `modes`, `icon`): without
them Chainlit's step writes fail silently. Version 2 adds brainchat's password table and the
indexes the thread list and the resume need. Version 3 adds the model connections users add in
the browser (their API keys encrypted). Version 4 adds each account's session key: a login's
cookie names it, and logging out, a password change or removal replace it, ending every session.
Version 5 adds each user's OAuth sign-ins to MCP servers (tokens encrypted, store/mcp_tokens.py).
The same metadata serves SQLite and Postgres: identifiers are text, JSON is stored as text,
timestamps as ISO-8601 text (Chainlit's format).

To change the schema: edit the tables below, bump SCHEMA_VERSION, and add a function to
MIGRATIONS that takes a database from the previous version to the new one.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    ForeignKey,
    Integer,
    MetaData,
    Table,
    Text,
    inspect,
    text,
)

SCHEMA_VERSION = 5
metadata = MetaData()


def _c(name: str, type_: object = Text, **kw: object) -> Column:
    return Column(name, type_, **kw)  # type: ignore[arg-type]


users = Table(
    "users",
    metadata,
    _c("id", primary_key=True),
    _c("identifier", nullable=False, unique=True),
    _c("metadata", nullable=False, server_default="{}"),
    _c("createdAt"),
)
threads = Table(
    "threads",
    metadata,
    _c("id", primary_key=True),
    _c("createdAt"),
    _c("name"),
    _c("userId", ForeignKey("users.id", ondelete="CASCADE")),
    _c("userIdentifier"),
    _c("tags"),
    _c("metadata"),
)
steps = Table(
    "steps",
    metadata,
    _c("id", primary_key=True),
    _c("name", nullable=False),
    _c("type", nullable=False),
    _c("threadId", ForeignKey("threads.id", ondelete="CASCADE"), nullable=False),
    _c("parentId"),
    _c("streaming", Boolean, nullable=False, server_default=text("false")),
    _c("waitForAnswer", Boolean),
    _c("isError", Boolean),
    _c("metadata"),
    _c("tags"),
    _c("input"),
    _c("output"),
    _c("createdAt"),
    _c("command"),
    _c("modes"),
    _c("start"),
    _c("end"),
    _c("generation"),
    _c("showInput"),
    _c("language"),
    _c("indent", Integer),
    _c("defaultOpen", Boolean),
    _c("autoCollapse", Boolean),
    _c("icon"),
)
elements = Table(
    "elements",
    metadata,
    _c("id", primary_key=True),
    _c("threadId", ForeignKey("threads.id", ondelete="CASCADE")),
    _c("type"),
    _c("url"),
    _c("chainlitKey"),
    _c("name", nullable=False),
    _c("display"),
    _c("objectKey"),
    _c("size"),
    _c("page", Integer),
    _c("language"),
    _c("forId"),
    _c("mime"),
    _c("props"),
    _c("autoPlay", Boolean),
    _c("playerConfig"),
)
feedbacks = Table(
    "feedbacks",
    metadata,
    _c("id", primary_key=True),
    _c("forId", nullable=False),
    _c("threadId", ForeignKey("threads.id", ondelete="CASCADE"), nullable=False),
    _c("value", Integer, nullable=False),
    _c("comment"),
)
V1_TABLES = (users, threads, steps, elements, feedbacks)

# -- version 2 -------------------------------------------------------------------------------
accounts = Table(
    "brainchat_accounts",
    metadata,
    _c("identifier", primary_key=True),
    _c("password_hash", nullable=False),
    _c("createdAt", nullable=False),
    _c("lastLoginAt"),
    _c("session_key"),  # version 4: random; a cookie naming another one is no longer valid
)
V2_INDEXES = {  # DDL, not Index objects: those would be created with the version-1 tables
    "ix_threads_user": 'threads ("userId")',
    "ix_steps_thread_created": 'steps ("threadId", "createdAt")',
    "ix_steps_parent": 'steps ("parentId")',
    "ix_elements_thread": 'elements ("threadId")',
    "ix_elements_object_key": 'elements ("objectKey")',
    "ix_feedbacks_for": 'feedbacks ("forId")',
}

# -- version 3 -------------------------------------------------------------------------------
connections = Table(
    "brainchat_connections",
    metadata,
    _c("identifier", primary_key=True),  # the user's identifier (users.identifier)
    _c("name", primary_key=True),  # the connection's name, unique per user
    _c("base_url", nullable=False),
    _c("key_token"),  # the API key, Fernet-encrypted with a key per user (store/connections.py)
    _c("models", nullable=False, server_default="[]"),  # JSON list of model ids
    _c("createdAt", nullable=False),
    _c("updatedAt", nullable=False),
)
model_picks = Table(  # which connection model plays each role, so a new chat starts with them
    "brainchat_model_picks",
    metadata,
    _c("identifier", primary_key=True),
    _c("picks", nullable=False, server_default="{}"),  # JSON {"chat_model": label, ...}
    _c("updatedAt", nullable=False),
)

# -- version 5 -------------------------------------------------------------------------------
mcp_tokens = Table(  # a user's OAuth sign-in to one MCP server (store/mcp_tokens.py)
    "brainchat_mcp_tokens",
    metadata,
    _c("identifier", primary_key=True),  # the user's identifier
    _c("server_url", primary_key=True),  # the MCP endpoint signed in to
    _c("sealed", nullable=False),  # tokens, expiry and client registration: Fernet-encrypted JSON
    _c("updatedAt", nullable=False),
)

version_table = Table("brainchat_schema", metadata, _c("version", Integer, nullable=False))


def create_v1(conn: Connection) -> None:
    """The version-1 schema exactly (a fresh database is built through every migration)."""
    for table in V1_TABLES:
        table.create(conn, checkfirst=True)


def v1_to_v2(conn: Connection) -> None:
    accounts.create(conn, checkfirst=True)
    for name, target in V2_INDEXES.items():
        conn.execute(text(f"CREATE INDEX IF NOT EXISTS {name} ON {target}"))


def v2_to_v3(conn: Connection) -> None:
    connections.create(conn, checkfirst=True)
    model_picks.create(conn, checkfirst=True)


def v3_to_v4(conn: Connection) -> None:
    """Accounts get a session key (NULL until the next login: no cookie names one yet)."""
    have = {c["name"] for c in inspect(conn).get_columns(accounts.name)}
    if "session_key" not in have:
        conn.execute(text(f'ALTER TABLE {accounts.name} ADD COLUMN "session_key" TEXT'))


def v4_to_v5(conn: Connection) -> None:
    mcp_tokens.create(conn, checkfirst=True)


MIGRATIONS: dict[int, Callable[[Connection], None]] = {
    1: create_v1,
    2: v1_to_v2,
    3: v2_to_v3,
    4: v3_to_v4,
    5: v4_to_v5,
}
assert sorted(MIGRATIONS) == list(range(1, SCHEMA_VERSION + 1))
