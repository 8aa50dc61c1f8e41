"""A session's state travels as one value: `snapshot()` from one Session, `restore()` into a fresh
one, and the same conversation goes on. Outside the session package nothing writes a Session's
fields: the UI, the CLI and evals go through its methods and this pair."""

from __future__ import annotations

import ast
from pathlib import Path

from brainchat.session import Session, Snapshot
from brainchat.settings import Settings
from brainchat.testing.scripted_server import Text

from support import collect, spec

SRC = Path(__file__).resolve().parents[1] / "src" / "brainchat"
LOG = [{"op": "load", "params": {"files": ["demo/sub-01_ses-01.edf"]}}]


def settings_for(server, tmp_path: Path) -> Settings:
    return Settings(
        chat_model=spec(server, "chat"),
        function_call_model=spec(server, "fc"),
        answer_model=spec(server, "ans"),
        data_dir=tmp_path / "data",
    )


async def test_a_snapshot_restored_into_a_fresh_session_goes_on_the_same(
    scripted_server, tmp_path
) -> None:
    settings = settings_for(scripted_server, tmp_path)
    first = Session(settings)
    scripted_server.queue("chat", Text("Alpha is 8 to 13 Hz."), Text("Beta is 13 to 30 Hz."))
    await collect(first.ask("What is alpha?", message_id="m1"))
    await collect(first.ask("And beta?", message_id="m2"))
    first.apply_settings({"max_iterations": 3, "answer_temperature": 0.5})
    first.set_mode("agent")
    # what only a live conversation produces: a replay queued, an upload, an approval
    first.restore(
        Snapshot(
            mode="agent",
            overrides=first.overrides,
            history=first.history,
            turns=first.turns,
            study=LOG,
            uploads=["sub-01.edf (EDF, 64 channels)"],
            approved=frozenset({("lab", "delete_run")}),
        )
    )
    snap = first.snapshot()

    second = Session(settings)
    assert second.restore(snap) == []
    assert second.snapshot() == snap
    assert second.mode == "agent" and second.settings == first.settings
    assert second.settings.limits.max_iterations == 3
    assert [m.content for m in second.history] == [
        "What is alpha?",
        "Alpha is 8 to 13 Hz.",
        "And beta?",
        "Beta is 13 to 30 Hz.",
    ]
    assert [(t.message_id, t.history_len) for t in second.turns] == [("m1", 0), ("m2", 2)]
    assert second.study.pending == LOG and second.study.uploads == list(snap.uploads)
    assert second.approved == {("lab", "delete_run")}
    # the restored turns behave as the first session's: an edit of m2 rewinds to before it
    second.set_mode("chat")
    scripted_server.queue("chat", Text("Beta: 13 to 30 Hz, motor."))
    await collect(second.ask("And beta, in short?", message_id="m2"))
    sent = scripted_server.requests_for("chat")[-1].messages
    assert [m["content"] for m in sent if m["role"] != "system"] == [
        "What is alpha?",
        "Alpha is 8 to 13 Hz.",
        "And beta, in short?",
    ]


def test_a_restored_snapshot_never_shares_lists_with_its_source(scripted_server, tmp_path):
    """Restoring copies: a turn in one session never shows in the other."""
    first = Session(settings_for(scripted_server, tmp_path))
    second = Session(settings_for(scripted_server, tmp_path))
    second.restore(first.snapshot())
    second.rewind("nothing")
    assert second.history is not first.history and second.turns is not first.turns
    assert second.approved is not first.approved


def test_a_stored_state_of_the_wrong_shape_restores_what_fits(scripted_server, tmp_path):
    """A thread saved by an older version, or damaged: bad values are left out, never fatal."""
    session = Session(settings_for(scripted_server, tmp_path))
    saved = {
        "mode": "sideways",
        "overrides": {"max_iterations": 42},
        "study": [{"x": 1}],
        "uploads": 7,
    }
    problems = session.restore(Snapshot.from_saved(saved))
    assert problems and "sideways" in problems[0]
    assert session.mode == session.base_settings.default_mode and session.overrides == {}
    assert session.study.pending is None and session.study.uploads == []
    # the part of a snapshot kept with a thread reads back as it was written
    snap = Snapshot(mode="agent", overrides={"max_iterations": 3}, study=LOG, uploads=["a.edf"])
    assert Snapshot.from_saved(snap.saved()) == snap


# -- nobody outside the session package writes a Session's fields --------------------------
MUTATORS = {"append", "extend", "insert", "pop", "remove", "clear", "update", "add", "discard"}


def _session_names(tree: ast.AST) -> set[str]:
    """Names a module binds to a Session: `x = Session(...)`, `x = ....session`, `x: Session`."""
    names = {"session"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _is_session(node.value, names):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.arg | ast.AnnAssign) and _annotated_session(node.annotation):
            target = node.arg if isinstance(node, ast.arg) else getattr(node.target, "id", None)
            if target:
                names.add(target)
    return names


def _annotated_session(annotation: ast.AST | None) -> bool:
    text = ast.unparse(annotation) if annotation is not None else ""
    return text.strip("'\"").split(" | ")[0] in ("Session", "brainchat.session.Session")


def _is_session(node: ast.AST, names: set[str]) -> bool:
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and node.func.id == "Session"
    if isinstance(node, ast.Attribute) and node.attr == "session":
        return not _is_chainlit(node)
    return isinstance(node, ast.Name) and node.id in names


def _is_chainlit(node: ast.AST) -> bool:
    """`cl.context.session`, `cl.user_session`, `self.session` of a Chainlit object: not ours."""
    text = ast.unparse(node)
    return text.startswith(("cl.", "context.", "self.session"))


def _reaches_session(node: ast.AST, names: set[str]) -> bool:
    """`s.x`, `conv.session.x.y`: an attribute chain that starts at a Session."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
        if _is_session(node, names):
            return True
    return False


def session_writes(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = _session_names(tree)
    found = []
    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MUTATORS
        ):
            targets = [node.func.value] if _reaches_session(node.func, names) else []
            targets = [t for t in targets if isinstance(t, ast.Attribute)]
        for target in targets:
            if isinstance(target, ast.Attribute | ast.Subscript) and _reaches_session(
                target, names
            ):
                found.append(f"{path.relative_to(SRC.parent)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_outside_the_session_package_writes_session_fields() -> None:
    outside = [p for p in SRC.rglob("*.py") if "session" not in p.relative_to(SRC).parts[:1]]
    assert len(outside) > 50
    found = [line for path in sorted(outside) for line in session_writes(path)]
    assert found == [], "write through Session's methods or restore(snapshot):\n" + "\n".join(found)


def test_the_write_check_sees_the_writes_it_forbids(tmp_path) -> None:
    """The check above is no blind eye: each way of writing a Session's field is found."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "def f(conv, s: Session, cl):\n"
        "    conv.session.history = []\n"
        "    s.settings = None\n"
        "    session = Session(x)\n"
        "    session.study.pending = []\n"
        "    t = conv.session\n"
        "    t.turns.append(1)\n"
        "    conv.session.overrides['a'] = 1\n"
        "    cl.context.session.files = {}\n"  # Chainlit's session: allowed
        "    conv.titled = True\n"  # the UI's own state: allowed
    )
    global SRC
    saved, SRC = SRC, tmp_path
    try:
        found = session_writes(bad)
    finally:
        SRC = saved
    assert sorted(int(line.split(":")[1]) for line in found) == [2, 3, 5, 7, 8]


def test_a_removed_recording_leaves_the_conversations_upload_list(scripted_server, tmp_path):
    """/files' Remove calls Session.forget_upload: the file's line leaves the study context, so
    the agent is no longer told of a file that is gone; other uploads, and look-alike names, stay."""
    session = Session(settings_for(scripted_server, tmp_path))
    session.study.uploads[:] = ["uploads/a.edf (8 ch, 10 s)", "uploads/a.edf.bak (1 ch)",
                                "uploads/b.edf (8 ch, 10 s)"]  # fmt: skip
    session.forget_upload("uploads/a.edf")
    assert session.study.uploads == ["uploads/a.edf.bak (1 ch)", "uploads/b.edf (8 ch, 10 s)"]
    assert list(session.snapshot().uploads) == session.study.uploads  # what a reload restores
