"""Install a model file into `<state folder>/models/`: a catalog model from its pinned Hugging Face
commit (`{hub}/{repo}/resolve/{revision}/{filename}`, hub = BRAINCHAT_MODELS_HUB_URL), a GGUF URL,
or a GGUF file the user already has. Disk space is checked first, the transfer resumes a `.part`
file, a catalog file must match its sha256 (else it is removed), a user's file must be a GGUF.
Blocking: the page runs it in a thread, with `cancel` and `progress`.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlsplit

from brainchat.localmodels.catalog import CatalogModel, find
from brainchat.localmodels.store import (
    PART,
    SAFE_NAME,
    InstalledModel,
    installed,
    models_folder,
    path_of,
    present,
    record,
    remove,
    verified,
)
from brainchat.localmodels.transfer import (
    CHUNK,
    MAGIC,
    DownloadCancelled,
    DownloadError,
    Meter,
    Progress,
    Target,
    cancelled,
    check_space,
    claimed,
    disk_free,
    fetch,
    not_gguf,
)
from brainchat.settings.fields import default, env_name
from brainchat.settings.localmodels import LocalModelVars

__all__ = [
    "DownloadCancelled",
    "DownloadError",
    "InstalledModel",
    "explain",
    "Progress",
    "hub_url",
    "installed",
    "path_of",
    "pull",
    "remove",
]

ATTEMPTS = 4  # tries of one transfer (each resumes where the last stopped)
HUB_ENV = env_name(LocalModelVars, "models_hub_url")


def hub_url(env: dict[str, str] | None = None) -> str:
    """The hub catalog models come from (BRAINCHAT_MODELS_HUB_URL), checked."""
    raw = ((os.environ if env is None else env).get(HUB_ENV) or "").strip()
    url = (raw or str(default(LocalModelVars, "models_hub_url"))).rstrip("/")
    if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
        raise DownloadError(
            f"{HUB_ENV} must be an http(s) URL such as https://huggingface.co",
            "hub_url",
            var=HUB_ENV,
        )
    return url


def pull(
    source: CatalogModel | str,
    *,
    folder: Path | None = None,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    free_bytes: Callable[[Path], int] | None = None,
    attempts: int = ATTEMPTS,
) -> Path:
    """Install a catalog model (an entry or its id), a GGUF URL or a local GGUF file; the path of
    the verified file. A model already installed and verified is returned at once."""
    where = models_folder(folder)
    space = free_bytes or disk_free
    if isinstance(source, CatalogModel):
        return _catalog(source, where, progress, cancel, space, attempts)
    text = str(source).strip()
    if re.match(r"^https?://", text, re.I):
        return _url(text, where, progress, cancel, space, attempts)
    path = Path(text).expanduser()
    if path.is_file():  # a file here wins over a catalog name it may share (no network needed)
        return _local(path, where, progress, cancel, space)
    if (model := find(text)) is not None:
        return _catalog(model, where, progress, cancel, space, attempts)
    raise DownloadError(
        f"{text!r} is not a catalog model, an http(s) URL of a .gguf file, nor a file that "
        "exists; `brainchat models list` shows the catalog",
        "unknown",
        source=text,
    )


def _catalog(
    model: CatalogModel,
    where: Path,
    progress: Callable[[Progress], None] | None,
    cancel: threading.Event | None,
    space: Callable[[Path], int],
    attempts: int,
) -> Path:
    if (ready := present(model, where)) is not None:
        return ready
    _prepare(where)
    with claimed(where / model.filename, model.name):
        if (ready := present(model, where)) is not None:  # another process just finished it
            return ready
        return _fetch_catalog(model, where, progress, cancel, space, attempts)


def _fetch_catalog(
    model: CatalogModel,
    where: Path,
    progress: Callable[[Progress], None] | None,
    cancel: threading.Event | None,
    space: Callable[[Path], int],
    attempts: int,
) -> Path:
    final = where / model.filename
    part = where / f"{model.filename}.{model.sha256[:12]}{PART}"
    have = part.stat().st_size if part.exists() else 0
    check_space(where, max(0, model.size_bytes - have), space, model.name)  # before any request
    url = f"{hub_url()}/{model.url_path}"
    target = Target(url, part, model.name, model.size_bytes, model.sha256)
    sha = fetch(target, progress=progress, cancel=cancel, free_bytes=space, attempts=attempts)
    if sha != model.sha256:
        part.unlink(missing_ok=True)
        raise DownloadError(
            f"the file downloaded for {model.name} has sha256 {sha}, but the catalog pins "
            f"{model.sha256} ({model.repo} at {model.revision[:12]}): it is not the vetted file "
            "(a changed mirror or a damaged transfer), so it was removed. Try again; if it "
            f"repeats, {hub_url()} serves other bytes",
            "sha256",
            name=model.name, got=sha, want=model.sha256,
        )  # fmt: skip
    return _install(part, final, sha, url)


def _url(
    url: str,
    where: Path,
    progress: Callable[[Progress], None] | None,
    cancel: threading.Event | None,
    space: Callable[[Path], int],
    attempts: int,
) -> Path:
    name = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    if not SAFE_NAME.match(name):
        raise DownloadError(
            f"the URL's file name {name[:80]!r} is not a .gguf file name (letters, digits, "
            ". _ + -); give the URL of the .gguf file itself",
            "bad_name",
            name=name[:80],
        )
    final = where / name
    if final.exists():
        if verified(final) is not None:
            return final
        raise DownloadError(
            f"a file named {name} is already in {where}; `brainchat models remove {name}` first",
            "exists",
            name=name,
        )
    _prepare(where)
    part = where / f"{name}.{hashlib.sha256(url.encode()).hexdigest()[:12]}{PART}"
    with claimed(final, name):
        target = Target(url, part, name)
        sha = fetch(target, progress=progress, cancel=cancel, free_bytes=space, attempts=attempts)
        if target.hub_sha256 is not None and sha != target.hub_sha256:  # the hub said which
            part.unlink(missing_ok=True)
            raise DownloadError(
                f"the file downloaded from {url} has sha256 {sha}, but the hub states "
                f"{target.hub_sha256} for it: a damaged transfer, so it was removed; try again",
                "sha256",
                name=name, got=sha, want=target.hub_sha256,
            )  # fmt: skip
        return _install(part, final, sha, url)


def _local(
    path: Path,
    where: Path,
    progress: Callable[[Progress], None] | None,
    cancel: threading.Event | None,
    space: Callable[[Path], int],
) -> Path:
    """A GGUF the user has: hard-linked (same disk) or copied into the folder, hashed."""
    with path.open("rb") as f:
        head = f.read(4)
    if head != MAGIC:
        raise not_gguf(str(path), head)
    name = path.name if path.name.endswith(".gguf") else path.name + ".gguf"
    if not SAFE_NAME.match(name):
        raise DownloadError(
            f"{name[:80]!r}: rename the file to letters, digits, . _ + - first",
            "bad_name",
            name=name[:80],
        )
    _prepare(where)
    final = where / name
    if final.exists() and not final.samefile(path):
        raise DownloadError(
            f"a file named {name} is already in {where}; `brainchat models remove {name}` first",
            "exists",
            name=name,
        )
    part = where / f"{name}.local{PART}"
    part.unlink(missing_ok=True)
    size = path.stat().st_size
    try:
        if final.exists():
            part = final
        else:
            os.link(path, part)
    except OSError:  # another disk (or no hard links there): a copy
        check_space(where, size, space, name)
        _copy(path, part, size, progress, cancel)
    sha = _hash(part, size, progress, cancel)
    return _install(part, final, sha, str(path.resolve()))


def _copy(
    src: Path,
    dst: Path,
    size: int,
    progress: Callable[[Progress], None] | None,
    cancel: threading.Event | None,
) -> None:
    meter = Meter(progress, size)
    done = 0
    with src.open("rb") as fin, dst.open("wb") as fout:
        for block in iter(lambda: fin.read(CHUNK * 4), b""):
            fout.write(block)
            done += len(block)
            meter(done)
            if cancel is not None and cancel.is_set():
                fout.close()
                dst.unlink(missing_ok=True)
                raise cancelled(src.name)
    meter(done, force=True)


def _hash(
    path: Path,
    size: int,
    progress: Callable[[Progress], None] | None,
    cancel: threading.Event | None,
) -> str:
    sha, done, meter = hashlib.sha256(), 0, Meter(progress, size)
    with path.open("rb") as f:
        for block in iter(lambda: f.read(CHUNK * 4), b""):
            sha.update(block)
            done += len(block)
            meter(done)
            if cancel is not None and cancel.is_set():
                raise cancelled(path.name)
    meter(done, force=True)
    return sha.hexdigest()


def _install(part: Path, final: Path, sha: str, source: str) -> Path:
    """Move the checked file into place and note its hash."""
    if part != final:
        os.replace(part, final)
    record(final, sha, source)
    return final


def _prepare(where: Path) -> None:
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DownloadError(
            f"cannot create the models folder {where}: {exc.strerror}", "folder", folder=where
        ) from None
    if not os.access(where, os.W_OK):
        raise DownloadError(
            f"the models folder {where} is not writable by this user", "folder", folder=where
        )


def explain(exc: DownloadError) -> str:
    """The reason in the user's language (the page's), from the error's kind and values."""
    from brainchat import i18n

    key = f"models.error.{exc.kind}"
    return i18n.t(key, **exc.values) if key in i18n.table() else str(exc)
