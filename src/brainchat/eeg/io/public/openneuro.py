"""OpenNeuro BIDS data sets by accession, through OpenNeuro's public S3 bucket.

Why the bucket and not the GraphQL API: one host serves both the listing (ListObjectsV2: each
file's key, size and ETag, 1,000 a page, continued by a token) and the files, with no redirect
and no second host whose URLs come from a reply; the ETag of a file uploaded in one part is its
MD5, so it is checked; and an operator mirrors it with any static server that answers the same
listing (BRAINCHAT_OPENNEURO_URL). What it lacks: the bucket holds each data set's latest
snapshot only, so an older version is refused (with where to get it) rather than faked.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode
from xml.etree import ElementTree

from langchain_core.tools import ToolException

from brainchat.eeg.io.public.download import (
    MB,
    Broken,
    Meter,
    Offline,
    Progress,
    Remote,
    Room,
    check_room,
    fetch_file,
    have,
    mb,
    partial,
)

BUCKET = "https://s3.amazonaws.com/openneuro.org"
MAX_PAGES = 100  # 100,000 files: past it the listing is refused
MAX_PAGE_BYTES = 20 * MB
LABEL = re.compile(r"^[A-Za-z0-9]{1,64}$")
VERSION = re.compile(r"^\d{1,4}\.\d{1,4}\.\d{1,4}$")
# characters a file of a data set may have in its name; anything else refuses the listing
SAFE = re.compile(r"^[A-Za-z0-9 ._+,()=@~-]{1,255}$")


def folder_of(data_dir: Path, accession: str) -> Path:
    return Path(data_dir) / "public" / "openneuro" / accession


def copy_hint(accession: str) -> str:
    return (
        f"download {accession} on a machine with a network (https://openneuro.org/datasets/"
        f"{accession}) and copy its folder into the data folder as public/openneuro/{accession}/"
    )


def host_of(base: str) -> str:
    import httpx

    url = httpx.URL(base)
    return f"{url.host}:{url.port}" if url.port else url.host


def _get(client: Any, url: str, what: str, limit: int = MAX_PAGE_BYTES) -> tuple[int, bytes]:
    """(status, body) of a small GET, its body bounded."""
    import httpx

    try:
        with client.stream("GET", url) as response:
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size > limit:
                    raise ToolException(f"{what} is larger than {mb(limit)}: refused")
            return response.status_code, b"".join(chunks)
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        raise Offline(str(exc)) from None
    except httpx.TransportError as exc:
        raise ToolException(f"{what} could not be read ({type(exc).__name__})") from None


def listing(client: Any, base: str, accession: str) -> list[tuple[str, int, str | None]]:
    """Every (key, size, md5) under the accession's prefix, page by page."""
    files: list[tuple[str, int, str | None]] = []
    token: str | None = None
    for _ in range(MAX_PAGES):
        query = {"list-type": "2", "prefix": f"{accession}/"}
        if token:
            query["continuation-token"] = token
        status, body = _get(client, f"{base}?{urlencode(query)}", f"the listing of {accession}")
        if status == 404:
            break
        if status != 200:
            raise ToolException(f"OpenNeuro's listing of {accession} answered HTTP {status}")
        page, token = _parse(body, accession)
        files += page
        if not token:
            break
    else:
        raise ToolException(f"{accession} holds more than {MAX_PAGES * 1000:,} files: refused")
    if not files:
        raise ToolException(
            f"OpenNeuro has no data set {accession} (its listing is empty): check the accession "
            "on https://openneuro.org (ds followed by 6 digits)"
        )
    return files


def _parse(body: bytes, accession: str) -> tuple[list[tuple[str, int, str | None]], str | None]:
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError:
        raise ToolException(f"the listing of {accession} is not valid XML") from None
    for el in root.iter():  # S3's namespace, dropped
        el.tag = el.tag.rsplit("}", 1)[-1]
    page = []
    for item in root.iter("Contents"):
        key, size = item.findtext("Key") or "", item.findtext("Size") or ""
        if not size.isdigit():
            raise ToolException(f"the listing of {accession} gives no size for a file")
        etag = (item.findtext("ETag") or "").strip('"').lower()
        md5 = etag if re.fullmatch(r"[0-9a-f]{32}", etag) else None  # multipart: not an MD5
        page.append((key, int(size), md5))
    truncated = (root.findtext("IsTruncated") or "").lower() == "true"
    return page, (root.findtext("NextContinuationToken") or None) if truncated else None


def safe_rel(key: str, accession: str) -> str:
    """The key's path inside the data set's folder; a key that would leave it, or has characters
    a file name should not, refuses the whole listing."""
    prefix = f"{accession}/"
    rel = key[len(prefix) :] if key.startswith(prefix) else None
    parts = rel.split("/") if rel else []
    if not parts or any(p in ("", ".", "..") or not SAFE.match(p) for p in parts):
        raise ToolException(
            f"refused: the listing of {accession} names a file {json.dumps(key[:120])} that is "
            "not a plain path inside the data set's folder; nothing was downloaded"
        )
    return rel or ""


def select(files: list[tuple[str, int, str | None]], accession: str,
           subjects: list[str] | None) -> tuple[list[tuple[str, int, str | None]], list[str]]:  # fmt: skip
    """The raw data's files: the top-level files and the chosen subjects' folders (derivatives,
    sourcedata and hidden files are left out); and every subject of the set."""
    chosen, every = [], set()
    wanted = {s.removeprefix("sub-") for s in subjects} if subjects else None
    for key, size, md5 in files:
        rel = safe_rel(key, accession)
        parts = rel.split("/")
        if any(p.startswith(".") for p in parts):
            continue
        top = parts[0]
        if top.startswith("sub-") and len(parts) > 1:
            every.add(top[4:])
            if wanted is None or top[4:] in wanted:
                chosen.append((rel, size, md5))
        elif len(parts) == 1:
            chosen.append((rel, size, md5))
    if wanted is not None and (missing := sorted(wanted - every)):
        shown = ", ".join(sorted(every)[:40]) + (" ..." if len(every) > 40 else "")
        raise ToolException(
            f"{accession} has no subject {', '.join(missing)}; its subjects: {shown}"
        )
    return chosen, sorted(every)


def check_version(client: Any, base: str, accession: str, version: str,
                  files: list[tuple[str, int, str | None]]) -> None:  # fmt: skip
    """The bucket holds the latest snapshot: its CHANGES must name `version` first."""
    if not VERSION.match(version):
        raise ToolException(f"version must look like 1.0.2 (a snapshot of {accession})")
    latest = None
    if any(key == f"{accession}/CHANGES" for key, _, _ in files):
        status, body = _get(client, f"{base}/{accession}/CHANGES", "CHANGES", MB)
        found = re.search(rb"^\s*v?(\d+\.\d+\.\d+)", body, re.M) if status == 200 else None
        latest = found.group(1).decode() if found else None
    if latest != version:
        now = f"its latest snapshot is {latest}" if latest else "its latest cannot be told"
        raise ToolException(
            f"OpenNeuro's bucket holds only the latest snapshot of {accession} ({now}), not "
            f"{version}: fetch without version for the latest, or {copy_hint(accession)} "
            "(openneuro.org offers every snapshot)"
        )


def fetch_openneuro(data_dir: Path, accession: str, subjects: list[str] | None,
                    version: str | None, room: Room, base: str, progress: Progress,
                    stop: threading.Event) -> str:  # fmt: skip
    """Fetch the chosen subjects of an OpenNeuro data set into public/openneuro/<accession>/."""
    import httpx

    for s in subjects or []:
        if not LABEL.match(s.removeprefix("sub-")):
            raise ToolException(f"{s!r} is not a BIDS subject label (letters and digits)")
    base = base.rstrip("/")
    timeout = httpx.Timeout(60.0, connect=5.0)
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False) as client:
            files = listing(client, base, accession)
            if version:
                check_version(client, base, accession, version, files)
            chosen, every = select(files, accession, subjects)
            text = _download(client, base, accession, chosen, every, data_dir, room, progress, stop)
            return text.replace("(latest snapshot)", f"(snapshot {version})") if version else text
    except Offline:
        raise Offline(
            f"cannot reach {host_of(base)}: no network? Copy the data set into the data folder "
            f"instead ({copy_hint(accession)})"
        ) from None


def _download(client: Any, base: str, accession: str, chosen: list[tuple[str, int, str | None]],
              every: list[str], data_dir: Path, room: Room, progress: Progress,
              stop: threading.Event) -> str:  # fmt: skip
    root = folder_of(data_dir, accession)
    top = Path(data_dir).resolve()
    remotes = [Remote(rel, f"{base}/{quote(f'{accession}/{rel}')}", size, md5)
               for rel, size, md5 in chosen]  # fmt: skip
    for r in remotes:  # a last check on the path itself (a link in the way, say)
        if not (root / r.rel).resolve().is_relative_to(top):
            raise ToolException(f"refused: '{r.rel}' would be written outside the data folder")
    todo = [r for r in remotes if not have(root / r.rel, r.size)]
    subjects = sorted({r.rel.split("/")[0] for r in remotes if r.rel.startswith("sub-")})
    where = f"public/openneuro/{accession}/"
    total = sum(r.size for r in remotes)
    load = f"load it with load_data(files=['public/openneuro/{accession}'])"
    if not todo:
        return (
            f"{accession}: all {len(remotes)} selected files ({mb(total)}, {len(subjects)} "
            f"subject(s)) are already in {where}: nothing downloaded (cached); {load}"
        )
    done = sum(partial(root / r.rel, r.size) for r in todo)
    need = sum(r.size for r in todo) - done
    check_room(root, need, room, f"{accession} ({len(todo)} files)")
    meter = Meter(sum(r.size for r in todo), progress, done)
    for n, r in enumerate(todo):
        try:
            finished = fetch_file(client, r, root / r.rel, meter, stop)
        except Broken:
            raise ToolException(
                f"the connection broke while '{r.rel}' arrived ({n} of {len(todo)} files done); "
                "the partial file is kept: call fetch_dataset again to resume it"
            ) from None
        if not finished or stop.is_set():
            return (
                f"stopped: {n + finished} of {len(todo)} files of {accession} downloaded; the partial file "
                "is kept and the next fetch_dataset call resumes it"
            )
    cached = len(remotes) - len(todo)
    return (
        f"fetched OpenNeuro {accession} (latest snapshot) into {where}: {len(subjects)} of "
        f"{len(every)} subject(s), {len(todo)} file(s), {mb(meter.done - meter.start_done)} "
        f"downloaded"
        + (f" ({cached} file(s) already there)" if cached else "")
        + "; "
        + _about(root)
        + load
    )


def _about(root: Path) -> str:
    """The data set's name, licence and how to cite it, from its dataset_description.json."""
    try:
        desc = json.loads((root / "dataset_description.json").read_text(encoding="utf-8")[:200_000])
    except (OSError, ValueError):
        return ""
    if not isinstance(desc, dict):
        return ""
    parts = [f"{k.lower()}: {str(desc[k])[:200]}" for k in ("Name", "License", "DatasetDOI")
             if desc.get(k)]  # fmt: skip
    return "; ".join(parts) + ("; " if parts else "")
