"""`brainchat knowledge add|list|remove|share` (#41), run as the installed command in a fresh
process against the state folder's SQLite file."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from knowledge_pdf import text_page, tiny_pdf

BIN = Path(sys.executable).parent / "brainchat"


def knowledge(tmp_path: Path, *args: str, auth: str = "local") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BRAINCHAT_", "DATABASE_"))}
    env |= {"BRAINCHAT_STATE_DIR": str(tmp_path / "state"), "BRAINCHAT_AUTH": auth}
    env["BRAINCHAT_DATA_DIR"] = str(tmp_path / "data")
    return subprocess.run(
        [str(BIN), "knowledge", *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_add_list_remove(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "protocol.pdf").write_bytes(
        tiny_pdf([text_page("Filtering 8-30 Hz"), text_page("Epochs")], title="MI protocol")
    )
    (docs / "notes.md").write_text("# Lab notes\n\nImpedance below 10 kOhm.")
    out = knowledge(tmp_path, "add", str(docs))
    assert out.returncode == 0, out.stderr
    assert re.search(r"added\s+\w{16}  protocol\.pdf: MI protocol, 2 pages", out.stdout)
    assert "notes.md: Lab notes" in out.stdout
    again = knowledge(tmp_path, "add", str(docs / "notes.md"))
    assert again.returncode == 0 and again.stdout.startswith("unchanged")
    listed = knowledge(tmp_path, "list")
    assert listed.returncode == 0
    rows = listed.stdout.splitlines()
    assert rows[0].split()[:5] == ["ID", "COLLECTION", "PAGES", "SIZE", "ADDED"]
    assert len(rows) == 3 and all("local/personal" in r for r in rows[1:])
    [pdf_row] = [r for r in rows if r.endswith("MI protocol")]
    doc_id = pdf_row.split()[0]
    removed = knowledge(tmp_path, "remove", doc_id)
    assert removed.returncode == 0 and f"removed {doc_id}" in removed.stdout
    assert "MI protocol" not in knowledge(tmp_path, "list").stdout
    gone = knowledge(tmp_path, "remove", doc_id)
    assert gone.returncode == 1 and "no document with id" in gone.stderr
    assert "Traceback" not in gone.stderr


def test_refusals_exit_non_zero_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "scan.pdf").write_bytes(tiny_pdf([b"0 0 m 9 9 l S"]))
    out = knowledge(tmp_path, "add", str(tmp_path / "scan.pdf"), str(tmp_path / "nope.md"))
    assert out.returncode == 1
    assert "refused  scan.pdf: no text layer" in out.stderr
    assert "nope.md" in out.stderr and "does not exist" in out.stderr
    assert "Traceback" not in out.stderr


def test_users_and_sharing(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Shared protocol\n\ntext")
    no_user = knowledge(tmp_path, "list", auth="password")
    assert no_user.returncode == 2 and "--user" in no_user.stderr
    add = knowledge(tmp_path, "--user", "ana", "add", str(tmp_path / "a.md"), "--collection", "lab")
    assert add.returncode == 0, add.stderr
    assert "Shared protocol" not in knowledge(tmp_path, "list", "--user", "bob").stdout
    shared = knowledge(tmp_path, "share", "lab", "bob", "--user", "ana")
    assert shared.returncode == 0 and "ana/lab is readable by: bob" in shared.stdout
    seen = knowledge(tmp_path, "list", "--user", "bob", auth="password")
    assert "ana/lab" in seen.stdout and "Shared protocol" in seen.stdout
    doc_id = seen.stdout.splitlines()[1].split()[0]
    denied = knowledge(tmp_path, "remove", doc_id, "--user", "bob")
    assert denied.returncode == 1 and "only its owner can remove it" in denied.stderr
