"""The process's knowledge service (#41), opened on first use, and what a user's documents
weigh: the page, the share dialog and the upload quota's count all use it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from brainchat.redact import get_logger, mask

if TYPE_CHECKING:
    from brainchat.knowledge.service import Knowledge

log = get_logger("brainchat.ui")
_service: Knowledge | None = None


def service() -> Knowledge:
    """The process's knowledge service over the configured store (opened on first use)."""
    global _service
    if _service is None:
        from brainchat.knowledge.embed import embedder_from_env
        from brainchat.knowledge.service import Knowledge, open_default

        _service = Knowledge(open_default(), embedder_from_env())
    return _service


def owner(identifier: str) -> str:
    from brainchat.store.config import LOCAL_USER

    return identifier or LOCAL_USER


def documents_bytes(identifier: str) -> int:
    """The bytes of the documents a user owns (blocking); 0 where no store can be opened, which
    the page says when the user next adds or lists documents."""
    try:
        return service().used_bytes(owner(identifier))
    except Exception as exc:  # noqa: BLE001 - the quota count goes on without
        log.warning("knowledge unavailable: %s", mask(str(exc)))
        return 0
