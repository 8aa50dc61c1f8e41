"""Shared pytest fixtures. Keep each fixture small; add yours below with a one-line docstring."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from brainchat.testing.scripted_server import ScriptedServer


@pytest.fixture
def scripted_server() -> Iterator[ScriptedServer]:
    """A started ScriptedServer on 127.0.0.1 (ephemeral port); point models at `.base_url`."""
    with ScriptedServer() as server:
        yield server
