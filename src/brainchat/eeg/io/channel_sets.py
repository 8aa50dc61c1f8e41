"""Before several files are loaded together: do they share one channel set?

Files with different channels cannot be epoched or trained on together (epoch_data failed on
them, after the load had said "loaded"). Their headers are read first (no samples), and a load
of files whose channel sets differ is refused with the groups, so the model (or the user) names
the files of one group instead. Nothing is dropped silently: the caller asked for every file.
"""

from __future__ import annotations

import threading
from pathlib import Path

from brainchat.eeg.io.loading import mne_reader
from brainchat.eeg.io.paths import existing_data_file, file_format, relative_name
from brainchat.tools.errors import ToolError, call

CHANNELS_NAMED = 6  # channels named per group in the error
FILES_NAMED = 8  # files named per group


def channel_groups(
    data_dir: Path, names: list[str], stop: threading.Event | None = None
) -> list[tuple[tuple[str, ...], list[str]]]:
    """The files grouped by their channel names (as their headers give them), largest group
    first; a file the reader cannot open is left to the load, which says why."""
    groups: dict[frozenset[str], tuple[tuple[str, ...], list[str]]] = {}
    for name in names:
        if stop is not None and stop.is_set():
            break
        path = existing_data_file(data_dir, name)  # a missing file: "not found", nearest names
        read = mne_reader(file_format(path))
        if read is None:
            continue
        try:
            chans = tuple(read(path, preload=False, verbose="error").ch_names)
        except Exception:  # noqa: BLE001 - the load reads it again and says what is wrong
            continue
        key = frozenset(c.lower() for c in chans)
        groups.setdefault(key, (chans, []))[1].append(relative_name(data_dir, path))
    return sorted(groups.values(), key=lambda g: -len(g[1]))


def check_channel_sets(
    data_dir: Path, names: list[str], stop: threading.Event | None = None
) -> None:
    """Refuse (ToolError) a load of files whose channel sets differ, naming each group."""
    if len(names) < 2:
        return
    groups = channel_groups(data_dir, names, stop)
    if len(groups) < 2:
        return
    lines = []
    for chans, files in groups:
        shown = ", ".join(chans[:CHANNELS_NAMED]) + (", …" if len(chans) > CHANNELS_NAMED else "")
        named = ", ".join(files[:FILES_NAMED])
        more = f" and {len(files) - FILES_NAMED} more" if len(files) > FILES_NAMED else ""
        lines.append(f"- {len(files)} file(s) with {len(chans)} channels ({shown}): {named}{more}")
    raise ToolError(
        f"not loaded: these {len(names)} files do not share one channel set, so they cannot be "
        f"epoched or trained on together ({len(groups)} groups):\n"
        + "\n".join(lines)
        + "\nLoad the files of one group (name them in load_data's files), or ask the user "
        "which recordings they mean; to load them all and keep their common channels "
        "afterwards (select_channels), call load_data again with mixed_channels=true. Nothing "
        "was loaded",
        call("load_data", {"files": groups[0][1]}),
    )
