"""Checking an uploaded recording with MNE's reader before it is accepted (no data preloaded).

A file is accepted when its reader opens it, its header's length matches what the file holds
(the truncation check of `brainchat.eeg.io.loading`) and its first and last samples can be read.
Companion files are checked here too: a BrainVision header names its data and marker files, an
EEGLAB .set may keep its data in a .fdt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brainchat import i18n
from brainchat.eeg.io.bounds import TooBig, check_markers
from brainchat.eeg.io.fif_split import SplitError, split_parts
from brainchat.eeg.io.loading import (
    _header_seconds,
    class_counts,
    crop_to_whole_records,
    files_outside,
    mne_reader,
)
from brainchat.eeg.io.paths import file_format
from brainchat.eeg.io.vhdr import HEADER_MAX, HeaderError, header_refs, refs_outside

# a DataFile or MarkerFile line as configparser (MNE's header parser) accepts it: any case,
# spaces and '=' or ':'; the line ending ('\r') is kept when the line is rewritten
_VHDR_REF = re.compile(rb"(?im)^[ \t\f\v]*(datafile|markerfile)[ \t\f\v]*[=:][^\r\n]*")


class Refusal(Exception):
    """The recording is refused; the message says why, for the user."""


@dataclass(frozen=True)
class RecordingInfo:
    """What the check read from a recording's header."""

    fmt: str
    channels: tuple[str, ...]
    sfreq: float
    seconds: float
    events: dict[str, int]
    measured: str  # the measurement date, or ''

    def brief(self) -> str:
        return f"{len(self.channels)} ch, {self.sfreq:g} Hz, {self.seconds:.0f} s"


def brainvision_refs(vhdr: Path) -> list[tuple[str, str]]:
    """The files a BrainVision header names, as MNE's parser reads them: [('DataFile', 'x.eeg'),
    ('MarkerFile', 'x.vmrk')]; Refusal for a header MNE would not read (see `header_refs`)."""
    try:
        return header_refs(vhdr)
    except HeaderError as exc:
        raise Refusal(str(exc)) from None


def rewrite_brainvision(vhdr: Path, vmrk: Path | None, eeg_name: str, vmrk_name: str) -> None:
    """Point a BrainVision header (and its marker file) at the set's stored names; a header over
    HEADER_MAX is refused (Refusal) before it is read. Every line configparser would read as a
    DataFile or MarkerFile key is rewritten, whatever its case or spacing; a name spelled so
    that this misses it is caught by `check_recording` before MNE opens anything."""
    if (size := vhdr.stat().st_size) > HEADER_MAX:
        raise Refusal(
            f"its BrainVision header is {size / 2**20:,.1f} MB; a real .vhdr is a few KB, so this "
            "is not one"
        )
    if vmrk is not None:  # read whole below: its markers are counted first, in chunks
        try:
            check_markers(vmrk)
        except TooBig as exc:
            raise Refusal(str(exc)) from None
    names = {b"datafile": b"DataFile=" + eeg_name.encode(),
             b"markerfile": b"MarkerFile=" + vmrk_name.encode()}  # fmt: skip
    for path in (vhdr, vmrk):
        if path is None:
            continue
        data = path.read_bytes()
        new = _VHDR_REF.sub(lambda m: names[m.group(1).lower()], data)
        if new != data:
            path.write_bytes(new)


def check_recording(path: Path) -> RecordingInfo:
    """Open `path` with MNE (preload=False) and read its ends; raise Refusal with the reason."""
    fmt = file_format(path) or "?"
    read = mne_reader(fmt)
    if read is None:
        raise Refusal(f"'{path.name}' is not a supported EEG format")
    if fmt == "set":
        _check_set_data_name(path)
    if fmt == "fif":  # MNE opens the next part a split FIF names, wherever it is
        try:
            split_parts(path)
        except SplitError as exc:
            raise Refusal(str(exc)) from None
    if fmt == "vhdr" and (outside := brainvision_outside(path)):  # MNE opens them on reading
        raise Refusal(
            f"its BrainVision header points at data outside its upload ({', '.join(outside)}); "
            "upload the .vhdr with its .eeg and .vmrk, named without a folder"
        )
    if fmt == "vhdr":  # MNE parses every marker as it opens the header
        _check_markers(path)
    raw = _open(path, fmt, read)
    if outside := files_outside(raw, path.parent):
        raise Refusal(
            f"it points at data outside its upload ({', '.join(outside)}); upload the "
            "recording with its data file beside it"
        )
    if raw.n_times < 1 or not raw.ch_names:
        raise Refusal(f"it holds no samples or no channels ({fmt.upper()} header only)")
    sfreq = float(raw.info["sfreq"])
    held = raw.n_times / sfreq
    if fmt in ("edf", "bdf", "gdf") and (stated := _header_seconds(path)) is not None:
        if held < stated[0] - stated[1] / 2:
            raise Refusal(
                i18n.t("uploads.cut_short")
                + f" ({i18n.t('uploads.cut_short_seconds', stated=f'{stated[0]:.0f}', held=f'{held:.0f}')})"
            )
    try:
        raw.get_data(start=0, stop=1)
        raw.get_data(start=raw.n_times - 1, stop=raw.n_times)
    except Exception as exc:  # noqa: BLE001
        raise Refusal(
            f"its data cannot be read to the end ({_first_line(exc)}): it looks truncated or "
            "damaged; upload the whole file"
        ) from None
    date = raw.info.get("meas_date")
    return RecordingInfo(
        fmt=fmt,
        channels=tuple(raw.ch_names),
        sfreq=sfreq,
        seconds=float(held),
        events={k.removeprefix("Comment/"): v for k, v in class_counts(raw).items()},
        measured=date.strftime("%Y-%m-%d %H:%M") if date else "",
    )


def _open(path: Path, fmt: str, read: Any) -> Any:
    """MNE's reader on the file (no data read); Refusal with the reason in the user's terms."""
    try:
        raw = read(path, preload=False, verbose="error")
        if fmt == "gdf":  # a GDF cut short: its length from the file, as for EDF
            crop_to_whole_records(raw, path)
    except FileNotFoundError as exc:
        raise Refusal(_missing(path, fmt, exc)) from None
    except Exception as exc:  # noqa: BLE001 - any reader error: damaged or not what it claims
        if cut_short(path, fmt):  # the reader's words ("list index out of range") say nothing
            raise Refusal(i18n.t("uploads.cut_short")) from None
        raise Refusal(f"MNE cannot read it as {fmt.upper()}: {_first_line(exc)}") from None
    return raw


EDF_MAGIC = (b"0       ", b"\xffBIOSEMI")  # EDF's and BDF's first 8 bytes


def cut_short(path: Path, fmt: str) -> bool:
    """Whether an EDF/BDF holds fewer bytes than its header says it has (its fixed header, its
    channel headers, or its data records): a file cut off in a copy or an upload."""
    if fmt not in ("edf", "bdf"):
        return False
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            head = f.read(256)
            if not head.startswith(EDF_MAGIC):
                return False
            if len(head) < 256:
                return True
            header_bytes = int(head[184:192].decode("ascii").strip())
            records = int(head[236:244].decode("ascii").strip())
            channels = int(head[252:256].decode("ascii").strip())
            if size < header_bytes or channels <= 0:
                return size < header_bytes
            f.seek(256 + channels * 216)
            per = f.read(channels * 8)
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    try:
        samples = sum(int(per[i * 8 : i * 8 + 8].decode("ascii").strip()) for i in range(channels))
    except (ValueError, UnicodeDecodeError):
        return False
    width = 3 if fmt == "bdf" else 2
    return records > 0 and size < header_bytes + records * samples * width


def _check_markers(vhdr: Path) -> None:
    """Refuse a header whose marker file holds more markers than a recording is read with."""
    for key, name in brainvision_refs(vhdr):
        if key == "MarkerFile" and name:
            try:
                check_markers(vhdr.parent / name)
            except TooBig as exc:
                raise Refusal(str(exc)) from None


def brainvision_outside(path: Path) -> list[str]:
    """The files a BrainVision header names outside its folder; Refusal for a header MNE would
    not read either."""
    try:
        return refs_outside(path)
    except HeaderError as exc:
        raise Refusal(str(exc)) from None
    except OSError as exc:
        raise Refusal(f"its BrainVision header could not be read ({exc.strerror or exc})") from None


def _check_set_data_name(path: Path) -> None:
    """Refuse a .set whose EEG.data names a file in another folder: MNE joins that name to the
    .set's folder, so an absolute or '../' name would read a file outside the upload."""
    from mne.io.eeglab.eeglab import _check_load_mat

    try:
        eeg = _check_load_mat(path, None, preload=False)
    except Exception:  # noqa: BLE001 - unreadable: the reader below says why
        return
    name = eeg.get("data")
    if not isinstance(name, str) or Path(name).resolve() == path.resolve():
        return  # the data is in the .set itself (MNE's reader names the .set then)
    if "/" in name or "\\" in name:
        raise Refusal(
            "its EEG.data names a data file in another folder; an uploaded .set may only "
            "name its .fdt by file name (upload the .set and its .fdt together)"
        )


def _missing(path: Path, fmt: str, exc: FileNotFoundError) -> str:
    if fmt == "set":
        tried = re.search(r"tried (\S+?) and", str(exc))
        name = Path(tried.group(1)).name if tried else path.with_suffix(".fdt").name
        return (
            f"'{path.name}' keeps its data in '{name}', which was not uploaded with it: "
            "upload the .set and its .fdt together (or a .zip of both)"
        )
    name = Path(exc.filename).name if exc.filename else "a companion file"
    return f"'{path.name}' needs '{name}', which was not uploaded with it"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0][:200] if text else "") or type(exc).__name__
