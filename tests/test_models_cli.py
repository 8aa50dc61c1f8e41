"""`brainchat models pull|list|remove` as a user runs it: the `brainchat` command in a subprocess,
its state folder in a temporary directory, catalog models served by a real HTTP server on loopback
(BRAINCHAT_MODELS_HUB_URL) from a lab catalog file (BRAINCHAT_MODELS_CATALOG)."""

from __future__ import annotations

import dataclasses
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from brainchat.localmodels.catalog import CatalogModel
from gguf_server import GGUFServer, sha256, synthetic_gguf

SMALL = synthetic_gguf(2_000_000, seed=2)
ENTRY = CatalogModel(
    id="lab-small-q4",
    name="Lab Small (Q4)",
    repo="lab/small-GGUF",
    revision="89abcdef0123456789abcdef0123456789abcdef",
    filename="lab-small-q4.gguf",
    sha256=sha256(SMALL),
    size_bytes=len(SMALL),
    params="2M",
    license="MIT",
    ram_bytes=50_000_000,
    context=2048,
    tool_calling="prompt",
    guidance="guided",
)
HUGE = dataclasses.replace(
    ENTRY,
    id="lab-huge",
    filename="lab-huge.gguf",
    sha256=sha256(b"huge"),
    ram_bytes=2**50,
    default=True,
)
COMMAND = [sys.executable, "-c", "import sys; from brainchat.cli import main; sys.exit(main())"]


@pytest.fixture
def env(tmp_path: Path):
    catalog_file = tmp_path / "catalog.json"
    catalog_file.write_text(json.dumps([dataclasses.asdict(m) for m in (ENTRY, HUGE)]))
    with GGUFServer({f"/{ENTRY.url_path}": SMALL}) as server:
        yield {
            **os.environ,
            "BRAINCHAT_STATE_DIR": str(tmp_path / "state"),
            "BRAINCHAT_MODELS_HUB_URL": server.url,
            "BRAINCHAT_MODELS_CATALOG": str(catalog_file),
            "_server": server,  # type: ignore[dict-item]
        }


def brainchat(env: dict, *args: str, stdin: int | None = subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:  # fmt: skip
    clean = {k: v for k, v in env.items() if isinstance(v, str)}
    return subprocess.run(
        [*COMMAND, "models", *args], env=clean, stdin=stdin, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip


def models(env: dict) -> Path:
    return Path(env["BRAINCHAT_STATE_DIR"]) / "models"


def test_pull_without_a_name_installs_the_recommended_model_with_progress(env) -> None:
    done = brainchat(env, "pull")
    assert done.returncode == 0, done.stderr
    # the default does not fit this machine (2**50 bytes of memory): the largest that fits is taken
    assert "recommended for this machine" in done.stdout and "Lab Small (Q4)" in done.stdout
    assert f"at commit {ENTRY.revision[:12]}" in done.stdout
    assert "100%" in done.stderr and "MB/s" in done.stderr  # the progress lines (no terminal)
    assert f"installed: {models(env) / ENTRY.filename}" in done.stdout
    assert (models(env) / ENTRY.filename).read_bytes() == SMALL
    assert [r["path"] for r in env["_server"].requests] == [f"/{ENTRY.url_path}"]


def test_list_marks_installed_fit_and_recommended(env) -> None:
    assert brainchat(env, "pull", ENTRY.id).returncode == 0
    shown = brainchat(env, "list")
    assert shown.returncode == 0, shown.stderr
    rows = {line.split()[0]: line for line in shown.stdout.splitlines() if line.startswith("  lab")}
    assert "yes" in rows["lab-small-q4"] and "installed, recommended" in rows["lab-small-q4"]
    assert " no " in rows["lab-huge"] and "installed" not in rows["lab-huge"]
    assert "default" in rows["lab-huge"]
    data = json.loads(brainchat(env, "list", "--json").stdout)
    assert data["recommended"] == ENTRY.id
    small = next(m for m in data["catalog"] if m["id"] == ENTRY.id)
    assert small["installed"] == str(models(env) / ENTRY.filename) and small["fits"] is True


def test_remove_asks_first_and_without_a_terminal_needs_yes(env) -> None:
    assert brainchat(env, "pull", ENTRY.id).returncode == 0
    path = models(env) / ENTRY.filename
    refused = brainchat(env, "remove", ENTRY.id)
    assert refused.returncode == 2 and "add --yes" in refused.stderr and path.exists()
    assert _in_a_terminal(env, ["remove", ENTRY.id], "n\n")[0] == 1 and path.exists()
    code, out = _in_a_terminal(env, ["remove", ENTRY.id], "y\n")
    assert code == 0 and "? [y/N]" in out and not path.exists()
    assert brainchat(env, "pull", ENTRY.id).returncode == 0
    removed = brainchat(env, "remove", ENTRY.filename, "--yes")
    assert removed.returncode == 0 and f"removed {path}" in removed.stdout and not path.exists()
    missing = brainchat(env, "remove", "nothing-here", "--yes")
    assert missing.returncode == 1 and "no installed model named 'nothing-here'" in missing.stderr


def _in_a_terminal(env: dict, args: list[str], answer: str) -> tuple[int, str]:
    """Run with a pseudo-terminal as stdin (so it asks), answer, return (exit code, output)."""
    leader, follower = pty.openpty()
    clean = {k: v for k, v in env.items() if isinstance(v, str)}
    proc = subprocess.Popen(
        [*COMMAND, "models", *args], env=clean, stdin=follower, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    os.close(follower)
    os.write(leader, answer.encode())
    out, _ = proc.communicate(timeout=120)
    os.close(leader)
    return proc.returncode, out


def test_a_wrong_sha256_fails_with_a_message_and_installs_nothing(env, tmp_path) -> None:
    bad = dataclasses.replace(ENTRY, sha256="f" * 64, default=True)
    Path(env["BRAINCHAT_MODELS_CATALOG"]).write_text(json.dumps([dataclasses.asdict(bad)]))
    done = brainchat(env, "pull", ENTRY.id)
    assert done.returncode == 1
    assert "error: the file downloaded for Lab Small (Q4) has sha256" in done.stderr
    assert "Traceback" not in done.stderr
    assert [p for p in models(env).iterdir() if not p.name.startswith(".")] == []


def test_offline_and_unknown_names_are_one_line_errors(env) -> None:
    env["BRAINCHAT_MODELS_HUB_URL"] = "http://no-such-host.invalid"
    offline = brainchat(env, "pull", ENTRY.id)
    assert offline.returncode == 1 and "cannot reach http://no-such-host.invalid" in offline.stderr
    unknown = brainchat(env, "pull", "not-a-model")
    assert unknown.returncode == 1 and "is not a catalog model" in unknown.stderr
    assert "Traceback" not in offline.stderr + unknown.stderr


def test_a_bad_catalog_file_is_a_configuration_error(env) -> None:
    Path(env["BRAINCHAT_MODELS_CATALOG"]).write_text("[{")
    done = brainchat(env, "list")
    assert done.returncode == 2 and "BRAINCHAT_MODELS_CATALOG=" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_progress_bar_on_a_terminal_shows_percent_speed_and_time_left() -> None:
    import io

    from brainchat.localmodels.download import Progress
    from brainchat.models_cli import ProgressBar

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Terminal()
    bar = ProgressBar(out)
    bar(Progress(0, 1_000_000_000, 0.0, None))
    bar(Progress(500_000_000, 1_000_000_000, 10_000_000.0, 50.0))
    bar(Progress(1_000_000_000, 1_000_000_000, 10_000_000.0, 0.0))
    bar.end()
    frames = out.getvalue().split("\r")[1:]
    assert frames[1].startswith("[" + "#" * 12 + "." * 12 + "]  50%  500.0 MB / 1.0 GB")
    assert "10.0 MB/s, 0:50 left" in frames[1]
    assert frames[2].startswith("[" + "#" * 24 + "] 100%") and "left" not in frames[2]
    assert out.getvalue().endswith("\n")


def test_ctrl_c_keeps_the_part_and_the_next_pull_resumes_it(env) -> None:
    import signal
    import time

    server = env["_server"]
    server.pace = 0.02  # 64 KB every 20 ms: the pull is still running when Ctrl-C comes
    clean = {k: v for k, v in env.items() if isinstance(v, str)}
    proc = subprocess.Popen(
        [*COMMAND, "models", "pull", ENTRY.id], env=clean, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not any(p.stat().st_size for p in models(env).glob("*.part")):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "cancelled: run the same command again to resume" in err and "Traceback" not in err
    (part,) = models(env).glob("*.part")
    kept = part.stat().st_size
    assert 0 < kept < len(SMALL)
    server.pace = 0.0
    again = brainchat(env, "pull", ENTRY.id)
    assert again.returncode == 0, again.stderr
    assert server.requests[-1]["range"] == f"bytes={kept}-"
    assert (models(env) / ENTRY.filename).read_bytes() == SMALL
