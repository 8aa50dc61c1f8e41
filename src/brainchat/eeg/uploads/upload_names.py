"""Names of uploaded files: what counts as an EEG file, and safe names for the data folder."""

from __future__ import annotations

import re
import unicodedata

# the file of a recording that a reader opens, and the files that travel with it
RECORDING_EXTENSIONS = (".fif.gz", ".edf", ".bdf", ".gdf", ".fif", ".set", ".vhdr")
COMPANION_EXTENSIONS = (".fdt", ".vmrk", ".eeg")
EEG_EXTENSIONS = RECORDING_EXTENSIONS + COMPANION_EXTENSIONS
ACCEPTED = (*EEG_EXTENSIONS, ".zip")
MAX_NAME = 120  # characters of a stored file name
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_OTHER_EXT = re.compile(r"\.[a-z0-9]{1,10}$")


def extension(name: str) -> str:
    """The known extension of `name` ('.fif.gz', '.edf', ...), lower case, or its last suffix."""
    low = name.lower()
    for ext in (*ACCEPTED,):
        if low.endswith(ext):
            return ext
    other = _OTHER_EXT.search(low)
    return other.group(0) if other and other.start() > 0 else ""


def stem(name: str) -> str:
    """`name` without its known extension."""
    ext = extension(name)
    return name[: len(name) - len(ext)] if ext else name


def safe_name(name: str) -> str:
    """A file name that is safe in the data folder: no folder parts, ASCII letters, digits, '.',
    '_' and '-' only, no leading dot, at most MAX_NAME characters, its extension kept (lower case).

    'C:\\Users\\me\\my rec (1).EDF' -> 'my_rec_1.edf'; '../../etc/x.edf' -> 'x.edf'.
    """
    base = re.split(r"[/\\]", name)[-1]
    base = _plain(base)
    ext = extension(base)
    body = base[: len(base) - len(ext)] if ext else base
    body = _UNSAFE.sub("_", body).strip("._-") or "upload"
    ext = _UNSAFE.sub("", ext)
    return body[: MAX_NAME - len(ext)] + ext


def safe_folder(name: str) -> str:
    """One folder name made safe the same way (a zip's name, or a folder inside it)."""
    return _UNSAFE.sub("_", _plain(name)).strip("._-")[:MAX_NAME] or "upload"


def _plain(text: str) -> str:
    """Accents dropped (Müller -> Muller); other non-ASCII characters are left for _UNSAFE."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def numbered(stem_: str, n: int) -> str:
    """The n-th name tried when `stem_` is taken by a different file: sub01, sub01-2, sub01-3."""
    return stem_ if n == 1 else f"{stem_}-{n}"
