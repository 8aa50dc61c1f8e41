"""The `fetch_dataset` agent tool: a public EEG data set by name into the data folder."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Literal

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field, field_validator

from brainchat.eeg.io.public.catalog import DEMO
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.toolkit import make_tool
from brainchat.events import ToolProgress, current_tool_call, emit

DESCRIPTION = (
    "Download a public EEG data set by name into the data folder (then load_data it): a MOABB "
    f"set (BNCI2014_001, PhysionetMI, ...; {DEMO} needs no network) or an OpenNeuro BIDS set "
    "(ds + 6 digits). Checks disk and quota first, resumes, skips files already there."
)


class FetchArgs(BaseModel):
    dataset: str = Field(
        max_length=64,
        description="MOABB name or OpenNeuro accession",
    )
    subjects: list[str] | None = Field(
        None,
        max_length=500,
        description="MOABB: numbers from 1; OpenNeuro: labels ('01'); omit: all",
    )
    sessions: list[str] | None = Field(None, max_length=50, description="MOABB sessions; omit: all")
    paradigm: Literal["imagery", "p300", "ssvep"] | None = Field(
        None, description=f"MOABB paradigm ({DEMO}'s kind)"
    )
    version: str | None = Field(None, max_length=20, description="OpenNeuro snapshot; omit: latest")

    @field_validator("subjects", "sessions", mode="before")
    @classmethod
    def _as_list(cls, value: Any) -> Any:
        """'01' or 1 for ['01']: a small model often gives one label alone."""
        if isinstance(value, str | int):
            value = [value]
        return [str(v) for v in value] if isinstance(value, list) else value


def _room(data_dir: Path) -> Any:
    """What the user's quota leaves (it counts the data sets fetched before, under public/)."""
    from brainchat.eeg.io.public.download import Room
    from brainchat.eeg.uploads.quota import MB, used_bytes
    from brainchat.settings import load_settings

    quota = load_settings().user_quota_mb
    if not quota:
        return Room()
    return Room(quota * MB - used_bytes(Path(data_dir)), quota)


def openneuro_base() -> str:
    """The bucket, or the operator's mirror (an environment variable: no tool argument sets it)."""
    from langchain_core.tools import ToolException

    from brainchat.eeg.io.public.openneuro import BUCKET
    from brainchat.settings.compute import PublicDataVars
    from brainchat.settings.fields import env_name
    from brainchat.settings.load import read_env

    name = env_name(PublicDataVars, "openneuro_url")
    raw = read_env().get(name, "").strip()
    if raw and not raw.startswith(("http://", "https://")):
        raise ToolException(f"{name} must be an http(s) URL (the operator's OpenNeuro mirror)")
    return raw or BUCKET


def _progress(message: str, fraction: float, data: dict[str, Any]) -> None:
    call_id, name = current_tool_call()
    emit(ToolProgress(call_id=call_id, name=name, message=message, fraction=fraction, data=data))


def fetch_dataset_text(study: Study, args: FetchArgs, stop: threading.Event) -> str:
    """Fetch what the arguments name; the tool's text."""
    from langchain_core.tools import ToolException

    from brainchat.eeg.io.public.catalog import lookup
    from brainchat.eeg.io.public.moabb_fetch import fetch_moabb
    from brainchat.eeg.io.public.openneuro import fetch_openneuro

    found = lookup(args.dataset)
    room = _room(study.data_dir)
    if isinstance(found, str):
        if args.sessions or args.paradigm:
            raise ToolException("sessions and paradigm are for MOABB sets; an OpenNeuro set "
                                "takes subjects (and version)")  # fmt: skip
        return fetch_openneuro(study.data_dir, found, args.subjects, args.version, room,
                               openneuro_base(), _progress, stop)  # fmt: skip
    if args.version:
        raise ToolException("version is for OpenNeuro sets; MOABB sets have one version")
    numbers = []
    for s in args.subjects or []:
        if not s.strip().isdigit():
            raise ToolException(f"MOABB subjects are numbers from 1 (e.g. [1, 2]), not {s!r}")
        numbers.append(int(s))
    return fetch_moabb(study.data_dir, found, numbers or None, args.sessions, args.paradigm,
                       room, _progress, stop)  # fmt: skip


def fetch_tools(study: Study) -> list[BaseTool]:
    def fetch_dataset(*, stop: threading.Event, **kwargs: Any) -> str:
        return fetch_dataset_text(study, FetchArgs(**kwargs), stop)

    return [
        make_tool(
            fetch_dataset,
            "fetch_dataset",
            DESCRIPTION,
            FetchArgs,
            long_running=True,
            timeout=3600,
            network=True,
        )
    ]
