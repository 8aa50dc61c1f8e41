"""Shared pytest fixtures. Keep each fixture small; add yours below with a one-line docstring."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from brainchat.testing.scripted_server import ScriptedServer


@pytest.fixture
def scripted_server() -> Iterator[ScriptedServer]:
    """A started ScriptedServer on 127.0.0.1 (ephemeral port); point models at `.base_url`."""
    with ScriptedServer() as server:
        yield server


@pytest.fixture(scope="session")
def embedded_pg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One embedded Postgres server per test session (`.new_database(name)` gives a fresh URL)."""
    from brainchat.testing.postgres import EmbeddedPostgres

    with EmbeddedPostgres(tmp_path_factory.mktemp("pg") / "data") as pg:
        yield pg
