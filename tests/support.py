"""Helpers shared by tests: model specs pointed at the scripted server, event collection."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from brainchat.events import Event
from brainchat.settings import ModelSpec

SEARCH_RESULTS = [
    {
        "title": "EEGNet: a compact CNN for EEG-based BCIs",
        "url": "https://example.org/eegnet",
        "snippet": "EEGNet uses depthwise and separable convolutions for EEG decoding.",
    },
    {
        "title": "Motor imagery and mu rhythm desynchronisation",
        "url": "https://example.org/mu-erd",
        "snippet": "Imagined hand movement suppresses 8-13 Hz mu power over contralateral C3/C4.",
    },
    {
        "title": "CSP filters for motor imagery",
        "url": "https://example.org/csp",
        "snippet": "Common spatial patterns maximise variance differences between two classes.",
    },
    {
        "title": "MNE-Python documentation",
        "url": "https://example.org/mne",
        "snippet": "MNE-Python reads EDF, BDF, FIF, BrainVision and EEGLAB files.",
    },
]


def spec(server: Any, model: str, **kw: Any) -> ModelSpec:
    return ModelSpec(
        model=model,
        provider="openai-compatible",
        base_url=server.base_url,
        api_key="test-key",
        max_retries=kw.pop("max_retries", 0),
        **kw,
    )


def spec_json(server: Any, model: str, **kw: Any) -> str:
    return json.dumps(
        {
            "provider": "openai-compatible",
            "model": model,
            "base_url": server.base_url,
            "api_key": "test-key",
            **kw,
        }
    )


def write_fixture(path: Path, data: Any = None) -> Path:
    path.write_text(json.dumps(SEARCH_RESULTS if data is None else data), encoding="utf-8")
    return path


def agent_env(server: Any, tmp: Path) -> dict[str, str]:
    """The environment of `brainchat ask --mode agent` against the scripted models "fc" and
    "ans", with the search fixture and a data folder under `tmp`."""
    return {
        "AGENT_FUNCTION_CALL_MODEL": spec_json(server, "fc"),
        "AGENT_ANSWER_MODEL": spec_json(server, "ans"),
        "BRAINCHAT_SEARCH_FIXTURE": str(write_fixture(tmp / "fx.json")),
        "BRAINCHAT_DATA_DIR": str(tmp / "data"),
    }


async def collect(events: AsyncIterator[Event]) -> list[Event]:
    return [e async for e in events]


def of(events: list[Event], kind: str) -> list[Any]:
    return [e for e in events if e.type == kind]


def text(events: list[Event], kind: str = "answer_token") -> str:
    return "".join(e.text for e in of(events, kind))  # type: ignore[attr-defined]


async def wait_until(predicate: Any, timeout: float = 30.0, what: str = "the condition") -> None:
    """Poll `predicate()` until it is true; fail the test after `timeout` seconds, never hang."""
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout:g} s")
        await asyncio.sleep(0.02)


async def wait_for_event(seen: list[Any], kind: str, count: int = 1, timeout: float = 30.0) -> None:
    """Wait until `seen` holds `count` events of type `kind` (bounded)."""
    await wait_until(lambda: sum(e.type == kind for e in seen) >= count, timeout, f"{count} {kind}")


def record(
    steps: list[str] | tuple[str, ...] = (),
    *,
    language: str = "en",
    files: list[str] | tuple[str, ...] = (),
    positions: list[int] | tuple[int, ...] = (),
    fixed: dict[str, dict[str, Any]] | None = None,
    plot: bool = False,
    listing: bool = False,
    comparison: bool = False,
    web: bool = False,
    needs_tools: bool | None = None,
) -> Any:
    """A guided model's record of the request (agent/record.py), as the scripted function-call
    model replies it: the reply a guided run's first request gets. `fixed` by tool and argument."""
    from brainchat.testing.scripted_server import Text

    data = {
        "language": language,
        "steps": list(steps),
        "files": list(files),
        "positions": list(positions),
        "fixed": dict(fixed or {}),
        "plot": plot,
        "listing": listing,
        "comparison": comparison,
        "web": web,
        "needs_tools": bool(steps or web) if needs_tools is None else needs_tools,
    }
    return Text(json.dumps(data))


def is_record(request: Any) -> bool:
    """A recorded request is a guided run's request for its record (agent/record.py): it asks
    for a reply by the record's JSON schema (decide requests of a guided prompt-mode model carry
    their own reply schema, named "reply")."""
    fmt = request.params.get("response_format") or {}
    return (fmt.get("json_schema") or {}).get("name") == "request_record"


def eeg_agent(server: Any, study: Any, limits: Any, **fc_options: Any) -> Any:
    """An agent as the app's session builds it: the EEG tools and domain, the study's summary
    and facts, the tools an empty study cannot use hidden (session/toolbox.eeg_rule); the
    function-call model "fc" in prompt mode unless `fc_options` say otherwise, the answer
    model "ans", both on the scripted `server`."""
    from brainchat.agent.graph import build_agent
    from brainchat.eeg.guidance import EEG
    from brainchat.eeg.tools.tools import build_eeg_tools
    from brainchat.llm import make_chat_model
    from brainchat.session.study_slot import study_facts
    from brainchat.session.toolbox import eeg_rule

    tools = build_eeg_tools(study)
    fc = spec(server, "fc", **{"tool_calling": "prompt", **fc_options})
    ans = spec(server, "ans")
    return build_agent(
        make_chat_model(fc, "function_call"),
        make_chat_model(ans, "answer"),
        tools,
        limits,
        specs={"function_call": fc, "answer": ans},
        context=study.summary,
        facts=lambda: study_facts(study),
        hidden=eeg_rule(study, [t.name for t in tools]),
        domain=EEG,
    )
