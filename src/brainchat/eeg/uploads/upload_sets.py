"""Grouping staged upload files into recordings: a reader's file with the companions it needs.

A BrainVision header (.vhdr) needs the data and marker files it names; an EEGLAB .set may keep
its data in a .fdt (same name, or the one .fdt left over). A companion without its header, or a
header without a companion it names, is refused with the missing file named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from brainchat.eeg.uploads.upload_check import Refusal, brainvision_refs
from brainchat.eeg.uploads.upload_names import (
    COMPANION_EXTENSIONS,
    RECORDING_EXTENSIONS,
    extension,
    safe_name,
    stem,
)

_FOLDERS = re.compile(r"[/\\]")  # a name with a folder part, in a header written anywhere


@dataclass
class StagedSet:
    """One recording in the staging folder."""

    shown: str  # the uploaded name, for messages
    main: Path
    companions: list[Path]
    dest: str  # folder under uploads/ ('' or '<zip>/<folders>')


def group_sets(
    folder: Path, dest: str, originals: dict[str, str]
) -> tuple[list[StagedSet], list[tuple[str, str]]]:
    """The recordings in one staged folder, and (name, reason) for the files refused."""
    names = {p.name: p for p in sorted(folder.iterdir()) if p.is_file()}

    def shown(name: str) -> str:
        return (originals.get(name) or name) if not dest else f"{dest}/{name}"

    claimed: set[str] = set()
    sets: list[StagedSet] = []
    refused: list[tuple[str, str]] = []
    for name, path in names.items():
        ext = extension(name)
        if ext not in RECORDING_EXTENSIONS:
            continue
        companions: list[Path] = []
        if ext == ".vhdr":
            missing = []
            # its .eeg and .vmrk go with a refused header, not on as companions without one
            own = {n for n in names if stem(n) == stem(name) and extension(n) in (".eeg", ".vmrk")}
            try:
                refs = brainvision_refs(path)
            except Refusal as exc:
                refused.append((shown(name), str(exc)))
                claimed.update(own)
                continue
            if twice := sorted({k for k, _ in refs if sum(k == j for j, _ in refs) > 1}):
                refused.append((shown(name), _twice_text(twice)))
                claimed.update(own)
                continue
            # a name with a folder whose file was uploaded too is rewritten to the stored name
            elsewhere = [(k, r) for k, r in refs if _FOLDERS.search(r)
                         and names.get(safe_name(r)) is None]  # fmt: skip
            if elsewhere:
                refused.append((shown(name), _elsewhere_text(elsewhere)))
                claimed.update(own)
                continue
            for key, ref in refs:
                found = names.get(ref) or names.get(safe_name(ref))
                if found is None:
                    missing.append(f"'{ref}' (its {key})")
                elif found not in companions:
                    companions.append(found)
            claimed.update(p.name for p in companions)
            if missing:
                refused.append((shown(name), _missing_text(missing)))
                continue
        elif ext == ".set" and (fdt := names.get(stem(name) + ".fdt")) is not None:
            companions.append(fdt)
            claimed.add(fdt.name)
        sets.append(StagedSet(shown(name), path, companions, dest))
    _pair_lone_fdt(sets, names, claimed)
    for name in names:
        if extension(name) in COMPANION_EXTENSIONS and name not in claimed:
            refused.append((shown(name), _lone_companion(name)))
    return sets, refused


def _elsewhere_text(refs: list[tuple[str, str]]) -> str:
    named = " and ".join(f"its {k} at '{_FOLDERS.split(r)[-1]}'" for k, r in refs)
    return (
        f"its BrainVision header points {named} in another folder, outside its upload; a .vhdr "
        "may only name files uploaded with it: upload the .vhdr with its .eeg and .vmrk, "
        "named without a folder"
    )


def _twice_text(keys: list[str]) -> str:
    return (
        f"its BrainVision header names more than one {' and '.join(keys)}; a .vhdr names one "
        "data file and one marker file: upload it as BrainVision Recorder wrote it"
    )


def _missing_text(missing: list[str]) -> str:
    return (
        f"the BrainVision header needs {' and '.join(missing)}, which was not uploaded with it: "
        "upload the .vhdr, .vmrk and .eeg together (or a .zip of them)"
    )


def _pair_lone_fdt(sets: list[StagedSet], names: dict[str, Path], claimed: set[str]) -> None:
    """One .set without a same-named .fdt, one unclaimed .fdt: they belong together."""
    lone_sets = [r for r in sets if extension(r.main.name) == ".set" and not r.companions]
    lone_fdts = [p for n, p in names.items() if extension(n) == ".fdt" and n not in claimed]
    if len(lone_sets) == 1 and len(lone_fdts) == 1:
        lone_sets[0].companions.append(lone_fdts[0])
        claimed.add(lone_fdts[0].name)


def _lone_companion(name: str) -> str:
    header = ".set" if extension(name) == ".fdt" else ".vhdr"
    return (
        f"a companion data file without its {header} header: upload it together with its "
        f"{header} (BrainVision: .vhdr, .vmrk and .eeg; EEGLAB: .set and .fdt)"
    )
