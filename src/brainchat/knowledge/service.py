"""The knowledge service: a user's documents in, listed, removed, shared and searched.

Collections are "<owner>/<name>" (a user's own is "<user>/personal"). Who may read one is
kept in the store's readers list, the owner always among them, so `shared_with(user)` names
every collection a user may read, on any backend. A document another user cannot read is,
to them, exactly as absent as one that never existed (the same 'not found').

Quota: the bytes of a user's documents are bounded by BRAINCHAT_KNOWLEDGE_MAX_MB (default
500 MB a user), and by the user's disk quota (BRAINCHAT_USER_QUOTA_MB) through the `room`
check the caller passes to `add`: the page counts a user's documents with their uploads, models
and exports (knowledge/ does not import eeg/, where that quota is counted)."""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from brainchat.knowledge.chunk import chunk_sections
from brainchat.knowledge.limits import KnowledgeError, env_int
from brainchat.knowledge.model import PERSONAL, Document, Passage
from brainchat.knowledge.parse import parse_bytes
from brainchat.knowledge.sources import MB, iter_sources
from brainchat.knowledge.store import KnowledgeStore

if TYPE_CHECKING:
    from brainchat.knowledge.embed import Embedder

Room = Callable[[str, int], "str | None"]  # (file name, bytes it adds) -> why it does not fit
COLLECTION_NAME = re.compile(r"^[^\W][\w.\- ]{0,63}$")
NOT_FOUND = "no document with id {id} in your collections; `brainchat knowledge list` shows them"


@dataclass(frozen=True)
class AddResult:
    """What became of one file: added, updated (same name, new bytes: re-indexed), unchanged
    (the same bytes are in the collection: not re-indexed) or refused (with the reason)."""

    name: str
    status: Literal["added", "updated", "unchanged", "refused"]
    reason: str = ""
    document: Document | None = None
    notes: list[str] = field(default_factory=list)


def collection_id(user: str, name: str) -> str:
    """The full name of a user's collection; KnowledgeError for a name that cannot be one."""
    if not COLLECTION_NAME.match(name or ""):
        raise KnowledgeError(
            f"collection name {name[:40]!r} is not valid: use 1-64 letters, digits, spaces, "
            "'.', '_' or '-', starting with a letter or digit"
        )
    return f"{user}/{name}"


def owner_of(collection: str) -> str:
    return collection.rsplit("/", 1)[0]


class Knowledge:
    """The facade the UI, the CLI and the tool use (synchronous: run it in a worker thread)."""

    def __init__(self, store: KnowledgeStore, embedder: Embedder | None = None) -> None:
        self.store = store
        self.embedder = embedder

    # reading
    def collections(self, user: str) -> list[str]:
        """The collections `user` may read: their own and those shared with them."""
        return sorted({f"{user}/{PERSONAL}", *self.store.shared_with(user)})

    def documents(self, user: str) -> list[Document]:
        return self.store.documents(self.collections(user))

    def readable(self, user: str, doc_id: str) -> Document:
        """A document `user` may read; KnowledgeError 'not found' otherwise."""
        for doc in self.documents(user):
            if doc.id == doc_id:
                return doc
        raise KnowledgeError(NOT_FOUND.format(id=repr(doc_id[:40])))

    def search(
        self, user: str, query: str, k: int = 5, collections: Sequence[str] | None = None
    ) -> list[Passage]:
        """The passages `user` may read best matching `query`; `collections` narrows (never
        widens) what is searched."""
        allowed = self.collections(user)
        if collections is not None:
            allowed = [c for c in allowed if c in set(collections)]
        from brainchat.knowledge.retrieve import rank

        return rank(self.store, query, allowed, k, self.embedder)  # a Ranking: keeps its .note

    # writing
    def remove(self, user: str, doc_id: str) -> Document:
        doc = self.readable(user, doc_id)
        if doc.owner != user:
            raise KnowledgeError(
                f"'{doc.title}' belongs to {doc.owner}'s collection, shared with you to read; "
                "only its owner can remove it"
            )
        self.store.remove_document(doc.id)
        return doc

    def share(self, user: str, collection: str, users: Sequence[str]) -> list[str]:
        """Let `users` read `user`'s collection (replacing the list; none: private again)."""
        full = collection_id(user, collection)
        readers = sorted({user, *(u.strip() for u in users if u.strip())})
        self.store.share(full, readers)
        return [r for r in readers if r != user]

    def readers(self, user: str, collection: str) -> list[str]:
        full = collection_id(user, collection)
        return [r for r in self.store.readers(full) if r != user]

    def used_bytes(self, user: str) -> int:
        return sum(d.size for d in self.documents(user) if d.owner == user)

    def add(
        self, user: str, path: Path | str, collection: str = PERSONAL, room: Room | None = None
    ) -> list[AddResult]:
        """Add a file, a folder or a zip of documents to one of `user`'s collections. `room`,
        when given, is asked before each file is stored: `room(name, extra_bytes)` returns why
        the file does not fit the user's quota, or None."""
        full = collection_id(user, collection)
        if user not in self.store.readers(full):
            self.store.share(full, sorted({user, *self.store.readers(full)}))
        results = [self._add_one(user, full, src.name, src.data, src.refused, room)
                   for src in iter_sources(Path(path))]  # fmt: skip
        if self.embedder is not None and any(r.status in ("added", "updated") for r in results):
            self._embed(full, results)
        return results

    def _add_one(
        self, user: str, full: str, name: str, data: bytes, refused: str, room: Room | None
    ) -> AddResult:
        if refused:
            return AddResult(name, "refused", refused)
        sha = hashlib.sha256(data).hexdigest()
        if same := self.store.find_sha(full, sha):
            return AddResult(name, "unchanged", "the same bytes are already indexed", same)
        old = next((d for d in self.store.documents([full]) if d.name == name), None)
        limit = env_int("BRAINCHAT_KNOWLEDGE_MAX_MB", 500) * MB
        used = self.used_bytes(user) - (old.size if old else 0)
        if used + len(data) > limit:
            return AddResult(name, "refused", over_quota(name, limit, used))
        if room is not None and (full_up := room(name, len(data) - (old.size if old else 0))):
            return AddResult(name, "refused", full_up)
        try:
            parsed = parse_bytes(name, data)
        except KnowledgeError as exc:
            return AddResult(name, "refused", str(exc))
        if not parsed.sections:
            return AddResult(name, "refused", "; ".join(parsed.notes), notes=parsed.notes)
        doc_id = old.id if old else secrets.token_hex(8)
        chunks = chunk_sections(doc_id, parsed.sections)
        doc = Document(doc_id, full, user, name, parsed.title, parsed.pages, len(data), sha,
                       time.time(), len(chunks))  # fmt: skip
        self.store.add_document(doc, chunks)
        return AddResult(name, "updated" if old else "added", "", doc, parsed.notes)

    def _embed(self, full: str, results: list[AddResult]) -> None:
        from brainchat.knowledge.embed import EmbeddingError
        from brainchat.knowledge.retrieve import index_vectors

        assert self.embedder is not None
        try:
            index_vectors(self.store, self.embedder, [full])
        except EmbeddingError as exc:
            note = f"embeddings not made ({exc}); text search works, they are retried next time"
            for r in results:
                if r.status in ("added", "updated"):
                    r.notes.append(note)


def over_quota(name: str, limit: int, used: int) -> str:
    return (
        f"'{name}' would take your documents past {limit // MB} MB ({used / MB:,.1f} MB in "
        "use); remove documents you no longer need, or ask the administrator to raise "
        "BRAINCHAT_KNOWLEDGE_MAX_MB"
    )


def open_default(settings: Any = None) -> KnowledgeStore:
    """The store for the configured backend: Postgres when DATABASE_URL is Postgres, else
    SQLite in the state folder (BRAINCHAT_STATE_DIR)."""
    from brainchat.store.config import load_store_config

    cfg = load_store_config()
    state_dir = getattr(settings, "state_dir", None) or cfg.state_dir
    url = getattr(settings, "database_url", None) or cfg.database_url
    if url.startswith(("postgres://", "postgresql")):
        from brainchat.knowledge.pg_store import PgStore

        return PgStore(url)
    from brainchat.knowledge.sqlite_store import DB_FILE, SqliteStore

    return SqliteStore(Path(state_dir) / DB_FILE)
