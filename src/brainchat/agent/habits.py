"""What brainchat learned about each model (per base URL + model name), kept across restarts.

Three things: the tool calling that works for a model set to `auto` (a model that never
calls tools natively is switched to prompt mode once, and stays there), and the answer model's
measured speed in tokens per second (the answer stage keeps enough time for it), and whether its
server takes a JSON schema for a reply (agent/record.py, agent/decide.py). They are kept in
`<state folder>/model_habits.json` (BRAINCHAT_STATE_DIR), the folder the app names at start
(`use_folder`); a test or a `brainchat ask` without it learns within its agent only (the agent's
own setting switches for the rest of its runs), so a test run never writes to, or reads, the
state folder of an app run in the same checkout. No key, no header, nothing secret is stored: a model is named by its base URL and model name.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from brainchat.settings import ModelSpec

FILE = "model_habits.json"
_LOCK = threading.Lock()


def model_key(spec: ModelSpec | None) -> str | None:
    """A model's name in the memory: its base URL and model name (None: no spec to name it)."""
    if spec is None:
        return None
    url = urlsplit(spec.base_url or "")  # no user:password@, query or fragment: they may hold a key
    where = f"{url.scheme}://{url.hostname or ''}{f':{url.port}' if url.port else ''}{url.path}"
    return f"{(where if spec.base_url else spec.provider or '').rstrip('/')}|{spec.model}"


FOLDER: Path | None = None  # the app's state folder, once it started (use_folder)


def use_folder(folder: Path | None) -> None:
    """Keep what is learned in `folder` (the app's state folder; None: nowhere)."""
    global FOLDER
    FOLDER = folder


def _path() -> Path | None:
    return FOLDER / FILE if FOLDER is not None and FOLDER.is_dir() else None


def _read(path: Path | None) -> dict[str, dict[str, Any]]:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # none yet, or unreadable: learned again
    return (
        {str(k): v for k, v in data.items() if isinstance(v, dict)}
        if isinstance(data, dict)
        else {}
    )


def recall(spec: ModelSpec | None) -> dict[str, Any]:
    """What is known of `spec`'s model: {"tool_calling": "prompt", "answer_tps": 12.5, ...}."""
    key = model_key(spec)
    if key is None:
        return {}
    with _LOCK:
        return dict(_read(_path()).get(key, {}))


def remember(spec: ModelSpec | None, **facts: Any) -> None:
    """Keep `facts` for `spec`'s model in the state folder, when it exists."""
    key = model_key(spec)
    if key is None:
        return
    with _LOCK:
        path = _path()
        if path is None:
            return
        data = _read(path)
        data[key] = {**data.get(key, {}), **facts}
        try:
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".habits-")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=1, sort_keys=True)
            os.replace(tmp, path)  # whole or not at all: a reader never sees half a file
        except OSError:
            pass  # a read-only state folder: learned again next time
