"""Every kind of event has a renderer in the browser and in the terminal.

Both renderers `match` over events.AnyEvent and end in `assert_never` (mypy names a kind without a
case); these tests catch what a type check cannot: an Event subclass left out of the union, and a
kind that reaches no renderer at run time (the old `getattr(f"on_{event.type}")` dispatch dropped
an event silently once its wire name changed).
"""

from __future__ import annotations

import asyncio
import dataclasses
import types
import typing
from typing import Any, Literal

import pytest

from brainchat import events as ev
from brainchat.cli import event_text
from brainchat.ui.render import RunRenderer

# The kinds the terminal deliberately leaves out (cli.event_text says why); every other kind
# prints something.
CLI_IGNORED = {ev.RunStarted, ev.ThinkingToken, ev.StudyChanged, ev.RunFinished}


def _subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_subclasses(sub)}
    return found


def _value(hint: Any) -> Any:
    """A plain value of the annotated type ("x" for str, the first choice of a Literal...)."""
    origin = typing.get_origin(hint)
    if origin is Literal:
        return typing.get_args(hint)[0]
    if origin in (typing.Union, types.UnionType):
        return _value(next(a for a in typing.get_args(hint) if a is not type(None)))
    simple = {str: "x", int: 1, float: 1.0, bytes: b"x", bool: True}
    if hint in simple:
        return simple[hint]
    return (origin or hint)()  # list, dict: empty


def sample(cls: type[ev.Event]) -> ev.Event:
    """An instance of `cls` with every required field filled."""
    hints = typing.get_type_hints(cls)
    required = {
        f.name: _value(hints[f.name])
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    return cls(**required)


KINDS = sorted(typing.get_args(ev.AnyEvent), key=lambda cls: cls.__name__)


def test_the_union_lists_every_event_kind() -> None:
    assert set(KINDS) == _subclasses(ev.Event), (
        "add the new Event subclass to events.AnyEvent, then give it a case in "
        "ui/render.py RunRenderer.handle and cli.event_text"
    )


def _recording_renderer() -> tuple[RunRenderer, list[tuple[str, ev.Event]]]:
    """A RunRenderer whose on_* handlers only record what reached them (no Chainlit needed)."""
    renderer = RunRenderer("agent")
    calls: list[tuple[str, ev.Event]] = []
    for name in dir(RunRenderer):
        if name.startswith("on_"):

            async def record(event: ev.Event, name: str = name) -> None:
                calls.append((name, event))

            setattr(renderer, name, record)
    return renderer, calls


@pytest.mark.parametrize("kind", KINDS, ids=lambda cls: cls.__name__)
def test_the_ui_renders_every_event_kind(kind: type[ev.Event]) -> None:
    renderer, calls = _recording_renderer()
    event = sample(kind)
    asyncio.run(renderer.handle(event))
    assert [e for _, e in calls] == [event], f"{kind.__name__} reached {calls} in the UI"


@pytest.mark.parametrize("kind", KINDS, ids=lambda cls: cls.__name__)
def test_the_ui_renders_an_event_whose_wire_name_changed(
    kind: type[ev.Event], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Renaming an event's `type` (its name in JSON lines) must not make the UI drop it."""
    monkeypatch.setattr(kind, "type", f"renamed_{kind.type}")
    renderer, calls = _recording_renderer()
    event = sample(kind)
    asyncio.run(renderer.handle(event))
    assert [e for _, e in calls] == [event], f"renamed {kind.__name__} was not rendered"


@pytest.mark.parametrize("kind", KINDS, ids=lambda cls: cls.__name__)
def test_the_cli_renders_every_event_kind(kind: type[ev.Event]) -> None:
    text = event_text(sample(kind))  # a kind without a case fails here (assert_never)
    if kind in CLI_IGNORED:
        assert text == ""
    else:
        assert text, f"{kind.__name__} prints nothing: give it a line or list it as ignored"
