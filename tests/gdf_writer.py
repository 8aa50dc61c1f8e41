"""A small GDF writer for tests: nothing installed writes GDF (MNE only reads it), yet BCI
Competition IV and other BCI data sets come as GDF, so the tests need real files in that format.

Layout (GDF 2.x, Schloegl's spec, as `mne.io.edf.edf._read_gdf_header` reads it): a 256-byte
fixed header, a 256-byte variable header per channel, then the data records (each holds every
channel's samples of one record, channel after channel), then an event table (mode 1: positions
and codes), which MNE turns into annotations whose descriptions are the codes ('769', ...).
GDF 1.x (e.g. '1.25') is written too: its header differs (ASCII date, byte count of the header,
text units, int64 digital range), its records and event table do not.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

UV = 4275  # GDF 2 physical dimension code of microvolts (biosig units.csv)
DTYPES = {"int16": (3, np.dtype("<i2")), "float32": (16, np.dtype("<f4"))}  # GDF type codes


def write_gdf(
    path: Path,
    data: np.ndarray,
    sfreq: float,
    ch_names: Sequence[str],
    events: Sequence[tuple[int, int]] = (),
    version: str = "2.20",
    dtype: str = "int16",
    record_samples: int | None = None,
) -> Path:
    """Write `data` (channels x samples, volts) to a GDF file at `path`.

    `events`: (onset sample from 0, code) pairs. `dtype` 'int16' quantises each channel over its
    own range (as acquisition systems store it); 'float32' stores microvolts as they are.
    `record_samples` (default: one second) sets the record length; the last record is padded with
    zeros, as GDF holds whole records only.
    """
    data = np.asarray(data, dtype=np.float64)
    n_ch, n_samples = data.shape
    if len(ch_names) != n_ch:
        raise ValueError(f"{len(ch_names)} names for {n_ch} channels")
    spr = record_samples or round(sfreq)
    duration = Fraction(spr) / Fraction(str(sfreq))
    n_records = -(-n_samples // spr)
    uv = np.zeros((n_ch, n_records * spr))
    uv[:, :n_samples] = data * 1e6
    type_code, np_dtype = DTYPES[dtype]
    if dtype == "int16":
        phys_max = np.maximum(np.abs(uv).max(axis=1), 1e-3)  # symmetric range, never zero
        phys_min, dig_min, dig_max = -phys_max, -32768.0, 32767.0
        cal = (phys_max - phys_min) / (dig_max - dig_min)
        offset = phys_min - dig_min * cal
        stored = np.clip(np.round((uv - offset[:, None]) / cal[:, None]), dig_min, dig_max)
        dig_lo, dig_hi = np.full(n_ch, dig_min), np.full(n_ch, dig_max)
    else:  # float32 holds physical values: digital range = physical range, no scaling
        phys_max = np.ceil(np.abs(uv).max(axis=1)) + 1  # whole: GDF 1 stores it as int64
        phys_min, dig_lo, dig_hi = -phys_max, -phys_max, phys_max
        stored = uv
    records = stored.astype(np_dtype).reshape(n_ch, n_records, spr).transpose(1, 0, 2)

    major = float(version)
    header = (_header_v1 if major < 1.9 else _header_v2)(
        version, n_ch, n_records, duration, ch_names, spr, type_code,
        phys_min, phys_max, dig_lo, dig_hi,
    )  # fmt: skip
    with Path(path).open("wb") as f:
        f.write(header)
        f.write(records.tobytes())
        f.write(_event_table(events, sfreq, major))
    return Path(path)


def _text(value: str, size: int) -> bytes:
    return value.encode("latin-1")[:size].ljust(size, b" ")


def _header_v2(version, n_ch, n_records, duration, names, spr, type_code,
               phys_min, phys_max, dig_min, dig_max) -> bytes:  # fmt: skip
    fixed = b"".join([
        _text(f"GDF {version}", 8),
        _text("X X", 66),  # patient id and name: unknown
        bytes(10),  # reserved
        bytes(4),  # smoking/alcohol, weight, height, sex/handedness: unknown
        _text("brainchat test", 64),  # recording id
        bytes(16),  # location: none
        struct.pack("<QQ", 0, 0),  # start of recording and birthday: unknown
        struct.pack("<H", 1 + n_ch),  # header length in 256-byte blocks
        bytes(6 + 8 + 6 + 6 + 12 + 12),  # reserved, equipment, IP, head size, ref, ground
        struct.pack("<qII", n_records, duration.numerator, duration.denominator),
        struct.pack("<HH", n_ch, 0),
    ])  # fmt: skip
    assert len(fixed) == 256
    n = n_ch
    variable = b"".join([
        b"".join(_text(name, 16) for name in names),
        _text("", 80) * n,  # transducer
        _text("uV", 6) * n,  # physical dimension (obsolete in 2.x, kept for old readers)
        struct.pack(f"<{n}H", *[UV] * n),
        struct.pack(f"<{n}d", *phys_min), struct.pack(f"<{n}d", *phys_max),
        struct.pack(f"<{n}d", *dig_min), struct.pack(f"<{n}d", *dig_max),
        bytes(68 * n),  # prefiltering text (obsolete)
        struct.pack(f"<{3 * n}f", *[0.0] * (3 * n)),  # low pass, high pass, notch: not given
        struct.pack(f"<{n}I", *[spr] * n),
        struct.pack(f"<{n}I", *[type_code] * n),
        bytes(12 * n),  # sensor positions
        bytes(20 * n),  # impedance and reserved
    ])  # fmt: skip
    assert len(variable) == 256 * n
    return fixed + variable


def _header_v1(version, n_ch, n_records, duration, names, spr, type_code,
               phys_min, phys_max, dig_min, dig_max) -> bytes:  # fmt: skip
    fixed = b"".join([
        _text(f"GDF {version}", 8),
        _text("X X", 80),  # patient
        _text("brainchat test", 80),  # recording id
        _text("20240101120000" + "00", 16),  # start: YYYYMMDDhhmmsscc
        struct.pack("<q", 256 * (1 + n_ch)),  # header length in bytes
        bytes(8 + 8 + 8 + 20),  # equipment, hospital, technician, reserved
        struct.pack("<qII", n_records, duration.numerator, duration.denominator),
        struct.pack("<I", n_ch),
    ])  # fmt: skip
    assert len(fixed) == 256
    n = n_ch
    variable = b"".join([
        b"".join(_text(name, 16) for name in names),
        _text("", 80) * n,
        _text("uV", 8) * n,
        struct.pack(f"<{n}d", *phys_min), struct.pack(f"<{n}d", *phys_max),
        struct.pack(f"<{n}q", *np.round(dig_min).astype(np.int64)),
        struct.pack(f"<{n}q", *np.round(dig_max).astype(np.int64)),
        _text("", 80) * n,  # prefiltering
        struct.pack(f"<{n}I", *[spr] * n),
        struct.pack(f"<{n}I", *[type_code] * n),
        bytes(32 * n),
    ])  # fmt: skip
    assert len(variable) == 256 * n
    return fixed + variable


def _event_table(events: Sequence[tuple[int, int]], sfreq: float, major: float) -> bytes:
    """Mode 1: positions (1-based samples, uint32) then codes (uint16)."""
    n = len(events)
    if major < 1.94:  # event rate in 3 bytes, then the count as uint32
        head = struct.pack("<B", 1) + round(sfreq).to_bytes(3, "little") + struct.pack("<I", n)
    else:  # the count in 3 bytes, then the event rate as float32
        head = struct.pack("<B", 1) + n.to_bytes(3, "little") + struct.pack("<f", sfreq)
    pos = struct.pack(f"<{n}I", *[onset + 1 for onset, _ in events])
    typ = struct.pack(f"<{n}H", *[code for _, code in events])
    return head + pos + typ


BCI_IV_CODES = {"left_hand": 769, "right_hand": 770, "feet": 771, "tongue": 772}  # BCI IV 2a


def write_raw_gdf(raw: Any, path: Path, codes: dict[str, int] = BCI_IV_CODES, **kw: Any) -> Path:
    """`raw` (an mne Raw) as GDF, its annotations as event codes (left_hand: 769, as in BCI IV)."""
    sfreq = raw.info["sfreq"]
    ann = raw.annotations
    events = [(round(t * sfreq), codes[d]) for t, d in zip(ann.onset, ann.description, strict=True)]
    return write_gdf(path, raw.get_data(), sfreq, raw.ch_names, events=events, **kw)
