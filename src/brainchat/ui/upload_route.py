"""POST /project/file in front of Chainlit's: an upload streamed to disk, its limits kept as it arrives.

Chainlit's route read the whole upload into memory (`await file.read()`) after Starlette had
already spooled all of it to a temporary file, and compared its size with the limit only then:
two 900 MB uploads took the process from 0.93 to 2.78 GB. This route parses the multipart body
as it arrives and writes the file part straight into the session's files folder, in blocks, so
at most one block of an upload is ever in memory. A declared Content-Length over the limits is
refused before any of the body is read; without one, the upload is refused (HTTP 413) at the
first block past BRAINCHAT_UPLOAD_MAX_MB or past the user's quota (BRAINCHAT_USER_QUOTA_MB),
and nothing of it is kept. What arrives is registered in the session exactly as Chainlit does,
so the message that sends it works unchanged.
"""

from __future__ import annotations

import asyncio
import mimetypes
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from fastapi import Request
from fastapi.responses import JSONResponse

from brainchat.eeg.uploads.quota import MB, over_quota, used_bytes
from brainchat.eeg.uploads.uploads import too_big
from brainchat.settings import Settings

BLOCK = 1 << 20  # written to disk once this much has arrived
SLACK = 64 * 1024  # multipart headers and boundaries around the file
_arriving: dict[str, int] = {}  # user -> bytes of their uploads still arriving (this process)


class Refused(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status, self.detail = status, detail


def pending_bytes(identifier: str, skip: set[str] | None = None) -> int:
    """Bytes of the files this user has uploaded in this process's open sessions and not yet
    had checked (their copies under Chainlit's files folder), less those in `skip` (ids)."""
    from chainlit.session import ws_sessions_id

    total = 0
    for session in list(ws_sessions_id.values()):
        if not session.user or session.user.identifier != identifier:
            continue
        for fid, f in list(session.files.items()):
            if skip and fid in skip:
                continue
            try:
                total += Path(f["path"]).stat().st_size
            except (OSError, KeyError, TypeError):
                continue
    return total


def quota_used(identifier: str, data_dir: Path, skip: set[str] | None = None) -> int:
    """What counts against the user's quota now (blocking: walks the data folder): the files
    brainchat wrote for the user, the uploads not yet sent or still arriving, and the user's
    documents in the knowledge store."""
    from brainchat.ui.knowledge_store import documents_bytes

    arriving = pending_bytes(identifier, skip) + _arriving.get(identifier, 0)
    return used_bytes(data_dir) + arriving + documents_bytes(identifier)


@dataclass
class Part:
    """The multipart body's file part as it is parsed: its headers, then its bytes."""

    headers: dict[str, str] = field(default_factory=dict)
    name: str = ""
    content_type: str = ""
    is_file: bool = False


def install(settings: Settings) -> None:
    """Put the route before Chainlit's own POST /project/file."""
    from chainlit.server import app

    if getattr(app.state, "brainchat_upload_route", False):
        return

    async def upload(request: Request) -> JSONResponse:
        try:
            return await receive(request, settings)
        except Refused as exc:
            return JSONResponse({"detail": exc.detail}, status_code=exc.status)

    app.add_api_route("/project/file", upload, methods=["POST"], include_in_schema=False)
    app.router.routes.insert(0, app.router.routes.pop())
    app.state.brainchat_upload_route = True


async def receive(request: Request, settings: Settings) -> JSONResponse:
    """Check who uploads to which session, then stream the file into the session's folder."""
    from chainlit.config import config
    from chainlit.session import WebsocketSession

    from brainchat.ui.routes import current_identifier

    who = await current_identifier(request)
    session = WebsocketSession.get_by_id(request.query_params.get("session_id", ""))
    if not session:
        raise Refused(404, "Session not found")
    if not session.user or session.user.identifier != who:
        raise Refused(401, "You are not authorized to upload files for this session")
    feature = config.features.spontaneous_file_upload
    if request.query_params.get("ask_parent_id") or (feature is not None and not feature.enabled):
        raise Refused(400, "File upload is not enabled here")
    limit = Limit(settings, who, _data_dir(who, settings))
    declared = int(request.headers.get("content-length") or 0)
    await asyncio.to_thread(limit.admit, declared)
    _arriving[who] = _arriving.get(who, 0) + limit.reserved
    try:
        return await _stream(request, session, limit)
    finally:
        _arriving[who] -= limit.reserved
        if not _arriving[who]:
            del _arriving[who]


def _data_dir(identifier: str, settings: Settings) -> Path:
    from brainchat.ui import persistence

    p = persistence.active()
    return p.data_dir(identifier) if p else Path(settings.data_dir)


class Limit:
    """The size limit and the user's quota for one upload, checked as its bytes arrive."""

    def __init__(self, settings: Settings, who: str, data_dir: Path) -> None:
        self.max_mb, self.quota_mb = settings.upload_max_mb, settings.user_quota_mb
        self.who, self.data_dir = who, data_dir
        self.reserved = 0  # bytes counted as arriving for this upload
        self.room = 2**62

    def admit(self, declared: int) -> None:
        """Refuse a declared size over the limits before reading; reserve it (blocking)."""
        if declared > self.max_mb * MB + SLACK:
            raise Refused(413, too_big(declared, self.max_mb))
        if self.quota_mb:
            used = quota_used(self.who, self.data_dir)
            self.room = self.quota_mb * MB - used
            if declared - SLACK > self.room:
                raise Refused(413, over_quota(self.quota_mb, used))
        self.reserved = min(declared, max(self.room, 0))

    def check(self, size: int) -> None:
        """`size` bytes of the file have arrived: refuse past either limit."""
        if size > self.max_mb * MB:
            raise Refused(413, too_big(None, self.max_mb))
        if size > self.room:
            raise Refused(413, over_quota(self.quota_mb, self.quota_mb * MB - self.room))
        if size > self.reserved:  # no (or a short) Content-Length: reserve as it arrives
            _arriving[self.who] = _arriving.get(self.who, 0) + size - self.reserved
            self.reserved = size


async def _stream(request: Request, session: Any, limit: Limit) -> JSONResponse:
    """Parse the body as it arrives; the file part goes to disk block by block."""
    from python_multipart.exceptions import MultipartParseError
    from python_multipart.multipart import MultipartParser, parse_options_header

    ctype, params = parse_options_header(request.headers.get("content-type", ""))
    boundary = params.get(b"boundary")
    if ctype != b"multipart/form-data" or not boundary:
        raise Refused(400, "expected a multipart/form-data upload with a file part")
    writer = _Writer(session, limit)
    parser = MultipartParser(boundary, writer.callbacks())  # type: ignore[arg-type]
    try:
        async for chunk in request.stream():
            parser.write(chunk)
            await writer.flush()
        parser.finalize()
        await writer.flush(final=True)
    except MultipartParseError as exc:  # its own bounds too: 8 headers of 4 kB a part
        writer.discard()
        raise Refused(400, f"the upload is not valid multipart data ({exc})") from None
    except BaseException:
        writer.discard()
        raise
    return JSONResponse({"id": writer.register()})


def check_type(name: str, content_type: str) -> None:
    """Refuse (Refused) a type the configured `accept` map does not allow, before any of the file
    is read. An empty map (brainchat's config.toml) lets every file in: brainchat itself names
    what it cannot read and lists the formats it reads, where a filter dropped it unsaid."""
    from chainlit.config import config
    from chainlit.server import validate_file_upload

    feature = config.features.spontaneous_file_upload
    if feature is not None and feature.accept == {}:
        return
    try:
        validate_file_upload(_Checked(name, content_type, 0))  # type: ignore[arg-type]
    except ValueError as exc:
        raise Refused(400, str(exc)) from None


class _Writer:
    """The parser's callbacks: keeps the file part's headers, writes its bytes in blocks."""

    def __init__(self, session: Any, limit: Limit) -> None:
        self.session, self.limit = session, limit
        self.part = Part()
        self.field = b""
        self.value = b""
        self.buffer = bytearray()
        self.size = 0
        self.file: IO[bytes] | None = None
        self.path: Path | None = None
        self.done: Part | None = None

    def callbacks(self) -> dict[str, Any]:
        return {
            "on_part_begin": self._begin,
            "on_header_field": lambda d, s, e: setattr(self, "field", self.field + d[s:e]),
            "on_header_value": lambda d, s, e: setattr(self, "value", self.value + d[s:e]),
            "on_header_end": self._header,
            "on_headers_finished": self._headers_done,
            "on_part_data": self._data,
            "on_part_end": self._end,
        }

    def _begin(self) -> None:
        self.part = Part()

    def _header(self) -> None:
        self.part.headers[self.field.decode("latin-1").lower()] = self.value.decode(
            "utf-8", "replace"
        )
        self.field = self.value = b""

    def _headers_done(self) -> None:
        from python_multipart.multipart import parse_options_header

        _, params = parse_options_header(self.part.headers.get("content-disposition", ""))
        filename = params.get(b"filename")
        if params.get(b"name") == b"file" and filename is not None and self.done is None:
            self.part.is_file = True
            self.part.name = filename.decode("utf-8", "replace")
            self.part.content_type = self.part.headers.get("content-type", "")
            check_type(self.part.name, self.part.content_type)

    def _data(self, data: bytes, start: int, end: int) -> None:
        if self.part.is_file:
            self.buffer += data[start:end]
            self.size += end - start
            self.limit.check(self.size)

    def _end(self) -> None:
        if self.part.is_file:
            self.done = self.part
            self.part = Part()

    async def flush(self, final: bool = False) -> None:
        if len(self.buffer) < BLOCK and not (final and self.buffer):
            return
        data, self.buffer = bytes(self.buffer), bytearray()
        if self.file is None:
            folder = self.session.files_dir
            await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
            self.path = folder / f".arriving-{uuid.uuid4()}"
            self.file = await asyncio.to_thread(open, self.path, "xb")
        await asyncio.to_thread(self.file.write, data)

    def discard(self) -> None:
        if self.file is not None:
            self.file.close()
        if self.path is not None:
            self.path.unlink(missing_ok=True)

    def register(self) -> str:
        """Record the file in the session as Chainlit's route does; return its id."""
        part = self.done
        if part is None or not part.name or not part.content_type:
            self.discard()
            raise Refused(400, "the upload has no file part with a name and a type")
        if self.file is None:  # an empty file
            self.session.files_dir.mkdir(parents=True, exist_ok=True)
            self.path = self.session.files_dir / f".arriving-{uuid.uuid4()}"
            self.file = open(self.path, "xb")  # noqa: SIM115 - closed at once
        self.file.close()
        assert self.path is not None
        file_id = str(uuid.uuid4())
        final = self.path.with_name(file_id + (mimetypes.guess_extension(part.content_type) or ""))
        self.path.rename(final)
        self.session.files[file_id] = {"id": file_id, "path": final, "name": part.name,
                                       "type": part.content_type, "size": self.size}  # fmt: skip
        return file_id


@dataclass
class _Checked:
    """What Chainlit's validate_file_upload reads of an UploadFile."""

    filename: str
    content_type: str
    size: int
