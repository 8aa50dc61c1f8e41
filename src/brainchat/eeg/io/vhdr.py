"""The files a BrainVision header makes MNE open, found the way MNE finds them.

MNE's reader joins the header's DataFile and MarkerFile to the header's folder and opens both
when the file is opened (the marker file too, even with preload=False), so an absolute or '../'
name reads any file on the machine. What counts is what MNE's parser sees, not what a simple
pattern sees: MNE decodes the text with the header's own Codepage (UTF-7 spells '/' as '+AC8-')
and reads it with configparser, whose keys are case-insensitive, may have spaces and ':' around
the delimiter, and fall back to a [DEFAULT] section. So the header is parsed here as MNE 1.13
parses it (`mne/io/brainvision/brainvision.py`, `_aux_hdr_info`), every DataFile and MarkerFile
key of every section is taken, and so is every line a looser pattern finds in the whole text: a
superset of the files MNE can open, checked before MNE opens any of them.
"""

from __future__ import annotations

import configparser
import os
import re
from io import StringIO
from pathlib import Path

HEADER_MAX = 2**20  # a real header is a few KB; a larger "header" is refused, never parsed
KEYS = {"datafile": "DataFile", "markerfile": "MarkerFile"}  # configparser's key -> MNE's
# a key line as configparser reads it (no '\n' inside: a value never runs into the next line)
_REF = re.compile(r"(?im)^[^\S\n]*(datafile|markerfile)[^\S\n]*[=:][^\S\n]*(.*?)[^\S\n]*$")


class HeaderError(ValueError):
    """The header cannot be read as MNE would read it; the message says why."""


def header_refs(vhdr: Path, *, loose: bool = False) -> list[tuple[str, str]]:
    """(key, file name) for every DataFile and MarkerFile the header names, sorted, no repeats.

    `loose` adds the names read from the text taken as Latin-1 too, in case a reader decodes
    it otherwise: for the check of where they point, not for finding the files (a UTF-8 name
    read as Latin-1 is a name that no file has).

    The whole header is read, as MNE reads it (a name after any bound would be missed): one
    over HEADER_MAX bytes is refused unread (HeaderError), and so is one whose Codepage or
    layout MNE's reader would fail on too.
    """
    with vhdr.open("rb") as f:
        size = os.fstat(f.fileno()).st_size
        data = f.read(HEADER_MAX + 1) if size <= HEADER_MAX else b""
    if size > HEADER_MAX or len(data) > HEADER_MAX:  # refused unread: MNE would read it all
        raise HeaderError(
            f"its BrainVision header is {max(size, len(data)) / 2**20:,.1f} MB; a real .vhdr is "
            "a few KB, so this is not one"
        )
    settings = data.partition(b"\n")[2]  # MNE reads the version line on its own
    text = _decode(settings)
    refs = {(KEYS[k.lower()], v) for k, v in _REF.findall(text)}  # any section, [Comment] too
    if loose:
        refs |= {(KEYS[k.lower()], v) for k, v in _REF.findall(settings.decode("latin-1"))}
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read_file(StringIO(text.split("[Comment]")[0]))
    except configparser.Error as exc:
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
        raise HeaderError(f"its BrainVision header cannot be parsed ({first})") from None
    for section in (cfg.default_section, *cfg.sections()):
        for key, name in KEYS.items():
            value = cfg[section].get(key)
            if value is not None:
                refs.add((name, value))
    return sorted(refs)


def refs_outside(vhdr: Path) -> list[str]:
    """The names of the files the header points at outside its own folder (after resolving
    links and '..'), as MNE would join them; a name that cannot be a path counts as outside."""
    folder = os.path.dirname(os.path.abspath(vhdr))
    root = Path(folder).resolve()
    out: list[str] = []
    for _, ref in header_refs(vhdr, loose=True):
        if not ref:
            continue  # MNE skips an empty MarkerFile; an empty DataFile names the folder
        try:
            inside = Path(os.path.join(folder, ref)).resolve().is_relative_to(root)
        except (ValueError, OSError):  # a null byte, a name too long: never opened
            inside = False
        if not inside:
            shown = re.split(r"[/\\]", ref.strip())[-1].replace("\x00", "") or ref[:40]
            if shown not in out:
                out.append(shown)
    return out


def _decode(settings: bytes) -> str:
    """The header's text decoded as MNE decodes it: its Codepage (ANSI is cp1252), else UTF-8,
    falling back to Latin-1 when that fails (MNE's search for Codepage is case-sensitive)."""
    found = re.search("Codepage=(.+)", settings.decode("ascii", "ignore"))
    codepage = found.group(1).strip() if found else "utf-8"
    if codepage == "ANSI":
        codepage = "cp1252"
    try:
        return settings.decode(codepage)
    except UnicodeDecodeError:
        return settings.decode("latin-1")
    except Exception:  # noqa: BLE001 - unknown or not a text codec: MNE fails on it as well
        raise HeaderError(
            f"its BrainVision header names a text encoding Python does not know "
            f"(Codepage={codepage[:40]}); save it with Codepage=UTF-8"
        ) from None
