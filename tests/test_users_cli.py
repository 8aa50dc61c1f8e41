"""`brainchat users` and the host guard, as a user runs them: real processes on a real SQLite
file in a state folder (Postgres is covered by the store's and the browser tests)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent / "brainchat"
PASSWORD = "correct horse battery staple"


def users(home: Path, *args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("BRAINCHAT_", "DATABASE_"))}
    return subprocess.run(
        [str(BIN), *args],
        input=stdin,
        env={**clean, "BRAINCHAT_DATA_DIR": str(home / "data"), **env},
        cwd=home,
        capture_output=True,
        text=True,
        timeout=120,
    )


def stored_hash(home: Path, name: str) -> str:
    with sqlite3.connect(home / "state" / "brainchat.db") as db:
        row = db.execute(
            "SELECT * FROM brainchat_accounts WHERE identifier = ?", (name,)
        ).fetchone()
    assert row is not None
    return next(str(v) for v in row if isinstance(v, str) and v.startswith("$argon2"))


@pytest.mark.slow  # ten CLI processes (the fast lane leaves heavy subprocess tests out)
def test_add_list_passwd_remove_an_account(tmp_path: Path) -> None:
    added = users(tmp_path, "users", "add", "ana", stdin=PASSWORD + "\n")
    assert added.returncode == 0 and "added ana" in added.stdout
    assert "BRAINCHAT_AUTH=password" in added.stdout  # login is off until that is set
    first = stored_hash(tmp_path, "ana")
    assert PASSWORD not in first and PASSWORD not in added.stdout + added.stderr
    short = users(tmp_path, "users", "add", "bo", stdin="short\n")
    assert short.returncode == 1 and "8 to 1024 characters" in short.stderr
    again = users(tmp_path, "users", "add", "ana", stdin="another password\n")
    assert again.returncode == 1 and "ana" in again.stderr
    listed = users(tmp_path, "users", "list", BRAINCHAT_AUTH="password")
    assert listed.stdout.split("\t")[0] == "ana" and "1 account(s)" in listed.stderr
    changed = users(tmp_path, "users", "passwd", "ana", stdin="a new password\n")
    assert changed.returncode == 0 and stored_hash(tmp_path, "ana") != first
    removed = users(tmp_path, "users", "remove", "ana")
    assert removed.returncode == 0 and "removed ana" in removed.stdout
    assert users(tmp_path, "users", "list").stdout == ""
    gone = users(tmp_path, "users", "remove", "ana")
    assert gone.returncode == 1 and "no account 'ana'" in gone.stderr


def test_a_name_that_could_climb_out_of_the_data_folder_is_refused(tmp_path: Path) -> None:
    bad = users(tmp_path, "users", "add", "../ana", stdin=PASSWORD + "\n")
    assert bad.returncode != 0 and not (tmp_path / "ana").exists()


def test_the_state_folder_and_its_auth_secret_are_private(tmp_path: Path) -> None:
    assert users(tmp_path, "users", "list").returncode == 0
    state = tmp_path / "state"
    assert state.is_dir() and state.stat().st_mode & 0o077 == 0


def test_a_non_loopback_host_without_login_is_refused_and_names_the_setting(tmp_path) -> None:
    refused = users(tmp_path, "--host", "0.0.0.0", "--port", "9", "--headless")
    assert refused.returncode == 2
    assert "BRAINCHAT_AUTH=password" in refused.stderr and "brainchat users add" in refused.stderr


def test_a_bad_database_url_is_named_without_its_password(tmp_path: Path) -> None:
    bad = users(tmp_path, "users", "list", DATABASE_URL="mysql://bob:hunter2@db/x")
    assert bad.returncode == 2 and "DATABASE_URL" in bad.stderr and "hunter2" not in bad.stderr


def test_the_documented_sqlite_urls_open_where_they_say(tmp_path: Path) -> None:
    absolute = tmp_path / "elsewhere" / "a.db"
    done = users(tmp_path, "users", "list", DATABASE_URL=f"sqlite:///{absolute}")
    assert done.returncode == 0, done.stderr
    assert absolute.is_file()
    done = users(tmp_path, "users", "list", DATABASE_URL="sqlite:///rel/b.db")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "rel" / "b.db").is_file()


def test_a_database_url_with_a_bad_port_is_named_without_a_traceback(tmp_path: Path) -> None:
    bad = users(tmp_path, "users", "list", DATABASE_URL="postgresql://u:hunter2x@db:notaport/x")
    assert bad.returncode == 2 and "DATABASE_URL" in bad.stderr and "port" in bad.stderr
    assert "hunter2x" not in bad.stderr and "Traceback" not in bad.stderr


def test_an_unreachable_database_is_one_line_without_a_traceback(tmp_path: Path) -> None:
    down = users(tmp_path, "users", "list", DATABASE_URL="postgresql://u:hunter3x@127.0.0.1:9/x")
    assert down.returncode == 1 and "cannot use the database" in down.stderr
    assert "hunter3x" not in down.stderr and "Traceback" not in down.stderr
