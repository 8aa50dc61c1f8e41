"""Taking the analysis home: the study as a standalone script and an HTML report, written together.

Both files go into the `exports/` folder of the data folder (the user's own when accounts are
on), named by the UTC time of the export (`analysis-20260101-120000.py` and `.html`, a `-2`
suffix when that name is taken); nothing existing is ever overwritten, and when one file cannot
be written neither is left. The export runs as a study operation (under the study's lock, in a
worker thread), so it sees one consistent study and never changes it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.tools import ToolException

from brainchat.eeg.core.leakage import leakage_notes
from brainchat.eeg.core.state import Op, StudyState
from brainchat.eeg.io.paths import relative_name, resolve_in_data_dir
from brainchat.events import ToolFile, current_tool_call, emit

if TYPE_CHECKING:
    from brainchat.eeg.study.study import Study

EXPORTS = "exports"
NOTHING = (
    "nothing to export: the study has no steps yet. Load recordings first (list_data_files, "
    "then load_data), preprocess, epoch and train; then export"
)


@dataclass(frozen=True)
class Exported:
    script: Path
    report: Path
    steps: int
    models: tuple[str, ...]
    packages: tuple[str, ...] = ("scikit-learn", "PyTorch")  # what the script needs besides MNE

    def text(self, data_dir: Path) -> str:
        """The tool's result: what was written, where, and how to rerun it."""
        script, report = relative_name(data_dir, self.script), relative_name(data_dir, self.report)
        models = f", {len(self.models)} model(s): {', '.join(self.models)}" if self.models else ""
        return (
            f"exported the analysis ({self.steps} step(s){models}) to the data folder: "
            f"script {script} (rerun: python {self.script.name} DATA_DIR; it needs only "
            f"MNE-Python, NumPy, {', '.join(self.packages)}) and report {report} (self-contained HTML). "
            "Both are offered to the user for download"
        )


def _metrics(state: StudyState) -> dict[str, dict[str, Any]]:
    """Test-set metrics of every trained model (evaluate_model's, computed where not yet asked)."""
    if not state.models:
        return {}
    from brainchat.eeg.decoding import training
    from brainchat.eeg.decoding.decoding import split_arrays

    data = split_arrays(state)
    out = {}
    for name, model in state.models.items():
        res = state.results.get(name)
        if res is None:
            proba = model.predictor.predict_proba(data["X_test"])
            res = training.metrics(data["y_test"], proba, state.eps.classes)
        out[name] = res
    return out


def _free_stem(folder: Path, when: datetime) -> str:
    base = f"analysis-{when:%Y%m%d-%H%M%S}"
    stem, n = base, 1
    while (folder / f"{stem}.py").exists() or (folder / f"{stem}.html").exists():
        n += 1
        stem = f"{base}-{n}"
    return stem


def _write_new(texts: dict[Path, str]) -> None:
    """Create every file (none may exist); on any failure remove the ones already written."""
    written: list[Path] = []
    try:
        for path, text in texts.items():
            with path.open("x", encoding="utf-8") as f:  # "x": never overwrite
                written.append(path)
                f.write(text)
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise


CANCELLED = "export cancelled; nothing was written"


def write_export(
    state: StudyState,
    log: list[dict[str, Any]],
    data_dir: Path,
    settings: dict[str, Any],
    stop: threading.Event | None = None,
) -> Exported:
    """Build the script and the report of `state` (described by `log`) and write both; a `stop`
    set meanwhile (the user's Stop, the tool's timeout) writes nothing."""
    from brainchat.eeg.export.export_report import build_report, figures, versions
    from brainchat.eeg.export.export_script import build_script, packages

    if not log:
        raise ToolException(NOTHING)
    now = datetime.now(UTC)
    when = f"{now:%Y-%m-%d %H:%M:%S} UTC"
    folder = resolve_in_data_dir(data_dir, EXPORTS)  # a link pointing out is refused
    folder.mkdir(parents=True, exist_ok=True)
    stem = _free_stem(folder, now)
    recordings = [
        {"file": Path(r.name).as_posix(), "subject": r.subject, "session": r.session,
         "format": r.fmt, **({"damage": r.damage} if r.damage else {})} for r in state.recordings
    ]  # fmt: skip
    notes = {"test": leakage_notes(state.history, "test"),
             "crossval": leakage_notes(state.history, "crossval")}  # fmt: skip
    script = build_script(  # no server path in it: recordings are named relative to DATA_DIR
        log, recordings, version=versions()["brainchat"], when=when, name=f"{stem}.py", notes=notes
    )
    metrics = _metrics(state)
    report = build_report(
        state, log, metrics, figures(state, metrics), settings,
        when=when, script_name=f"{stem}.py", script=script,
    )  # fmt: skip
    if stop is not None and stop.is_set():  # building took a while: the user may have left
        raise ToolException(CANCELLED)
    for _ in range(20):  # another export may take the name between the check and the write
        paths = (folder / f"{stem}.py", folder / f"{stem}.html")
        try:
            _write_new({paths[0]: script, paths[1]: report})
        except FileExistsError:
            stem = _free_stem(folder, now)
            continue
        return Exported(paths[0], paths[1], len(log), tuple(state.models), tuple(packages(log)))
    raise ToolException("could not find a free file name in exports/; try again")


def export_op(study: Study, out: list[Exported]) -> Op:
    """An op that exports the study (unchanged) and appends the result to `out`."""

    def op(state: StudyState, stop: threading.Event) -> tuple[StudyState, str]:
        info = study.settings_info() if study.settings_info is not None else {}
        done = write_export(state, list(study.log), study.data_dir, info, stop)
        out.append(done)
        call_id, name = current_tool_call()
        for path, mime in ((done.script, "text/x-python"), (done.report, "text/html")):
            emit(ToolFile(call_id=call_id, name=name, path=str(path), title=path.name, mime=mime))
        return state, done.text(study.data_dir)

    return op
