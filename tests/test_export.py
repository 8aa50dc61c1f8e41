"""Exporting the analysis, tested for honesty: the script reruns without brainchat and gets the
study's numbers; the report opens in chromium with every figure; nothing is overwritten or left out.

Tolerance for a network: the exported script seeds the initial weights, dropout and batch order
exactly as brainchat does, so on the same CPU, torch build and thread count its EEGNet accuracy
has been identical to the study's in every run. The test still allows one test epoch of
difference (1 / n_test): float32 sums may be reduced in another order under another thread
split, which can flip a single borderline prediction. CSP+LDA and the epochs are deterministic
and must match exactly.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest
from langchain_core.tools import ToolException

from brainchat import events
from brainchat.eeg.export.export_script import build_script
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools
from brainchat.session import Session
from brainchat.settings import ModelSpec, Settings

FILES = [f"sub-0{s}_ses-0{k}_task-mi_eeg.edf" for s in (1, 2) for k in (1, 2)]
KEY = "sk-exportsecret0123456789abcdef"
SERVER = "http://alice:hunter2pass@models.example.org:8080/v1?token=qq77zz88yy99"
# Runs the script in a fresh interpreter (-I: no PYTHONPATH, no user site) in which any import
# of brainchat fails: the editable install keeps brainchat on sys.path, so hiding it is not enough.
RUNNER = """
import importlib.abc, runpy, sys
class NoBrainchat(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "brainchat":
            raise ImportError("the exported script imported " + name)
sys.meta_path.insert(0, NoBrainchat())
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("eeg")
    write_demo_set(root, subjects=2, sessions=2, trials=24, seed=1)
    return root


class Harness:
    """A session's study, its tools by name, and the events they emit."""

    def __init__(self, session: Session | None, data_dir: Path) -> None:
        self.study = session.study if session is not None else Study(data_dir)
        self.tools = {t.name: t for t in build_eeg_tools(self.study)}
        self.events: list[events.Event] = []
        events._sink.set(self.events.append)

    async def call(self, name: str, args: dict | None = None) -> str:
        events.set_tool_call(f"call-{name}", name)
        return str(await self.tools[name].ainvoke(args or {}))

    async def invoke(self, name: str, args: dict | None = None) -> Any:
        """The tool called as the agent calls it (a ToolCall): its ToolMessage, whose `artifact`
        holds an analysis's structured result."""
        events.set_tool_call(f"call-{name}", name)
        call = {"name": name, "args": args or {}, "id": "1", "type": "tool_call"}
        return await self.tools[name].ainvoke(call)

    def images(self) -> list[events.ToolImage]:
        return [e for e in self.events if isinstance(e, events.ToolImage)]

    def files(self) -> list[Path]:
        return [Path(e.path) for e in self.events if isinstance(e, events.ToolFile)]


def run_script(script: Path, cwd: Path, *args: str) -> dict[str, Any]:
    """Run an exported script in a fresh subprocess without brainchat; its last JSON line."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", RUNNER, str(script), *args],
        cwd=cwd, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def exports(folder: Path) -> list[Path]:
    """The files in a data folder's exports/ (none when the folder does not exist)."""
    return sorted((folder / "exports").glob("*"))


def imports(script: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(script)):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.fixture(scope="module")
def exported(data_dir: Path) -> dict[str, Any]:
    """A whole study through the real tools (session settings with a key and a URL that holds
    credentials), evaluated and exported."""
    spec = ModelSpec(model="fc-model-x", provider="openai-compatible", base_url=SERVER, api_key=KEY)
    session = Session(Settings(function_call_model=spec, data_dir=data_dir))
    session.set_mode("agent")

    async def build() -> dict[str, Any]:
        with mock.patch.dict(os.environ, {"BRAINCHAT_KERNELS": "inline"}):
            h = Harness(session, data_dir)  # its study in this process: the test reads its state
        await h.call("load_data", {"files": FILES})
        await h.call("bandpass_filter", {"l_freq": 8, "h_freq": 30})
        await h.call("notch_filter", {"freqs": [50]})
        await h.call("resample_data", {"sfreq": 125})
        await h.call("set_reference", {"ref": "average"})
        await h.call("select_channels", {"drop": ["fz"]})  # any case, as the tool accepts
        await h.call("set_montage", {"name": "standard_1005"})
        # the classes named in another order than the recordings': the script keeps theirs too
        epochs = {
            "tmin": 0.5,
            "tmax": 2.5,
            "baseline": [0.5, 0.7],
            "events": ["right_hand", "left_hand"],
        }
        await h.call("epoch_data", epochs)
        split = {"by": "session", "test_ratio": 0.25, "val_ratio": 0.2, "seed": 3}
        await h.call("split_dataset", split)
        await h.call("train_model", {"model": "csp_lda"})
        await h.call(
            "train_model", {"model": "eegnet", "epochs": 4, "seed": 2, "learning_rate": 0.01}
        )
        for model in ("csp_lda", "eegnet"):
            await h.call("evaluate_model", {"model": model})
        text = await h.call("export_analysis")
        state = h.study.state
        return {
            "text": text,
            "files": h.files(),
            "results": state.results,
            "epochs": (len(state.eps.y), state.eps.counts(), float(np.abs(state.eps.X).sum())),
            "split": (len(state.split.train), len(state.split.val), len(state.split.test)),  # type: ignore[union-attr]
        }

    return asyncio.run(build())


def test_the_export_writes_a_script_and_a_report_offered_for_download(
    exported: dict[str, Any], data_dir: Path
) -> None:
    script, report = exported["files"]
    assert script.parent == report.parent == data_dir / "exports"
    assert script.suffix == ".py" and report.suffix == ".html" and script.stem == report.stem
    assert (
        f"exports/{script.name}" in exported["text"]
        and f"exports/{report.name}" in exported["text"]
    )
    text = script.read_text()
    assert "brainchat" not in imports(text)  # and the run below refuses any import of it
    assert {"mne", "numpy", "torch", "sklearn"} <= imports(text)
    for piece in ("raw.filter(8.0, 30.0", "raw.notch_filter([50.0]", "raw.resample(125.0",
                  "set_eeg_reference('average'", "drop_channels(canonical(raw, ['fz']))",
                  "montage_name('standard_1005')", "baseline=(0.5, 0.7)", "by='session'",
                  "seed=3", "'model': 'eegnet', 'epochs': 4", "'seed': 2", "class EEGNet"):  # fmt: skip
        assert piece in text, piece


@pytest.mark.slow  # reruns the exported script in a process of its own
def test_the_script_reruns_the_study_without_brainchat(
    exported: dict[str, Any], tmp_path: Path
) -> None:
    script = exported["files"][0]
    out = run_script(script, tmp_path)  # DATA_DIR: the default written into the script
    n, counts, fingerprint = exported["epochs"]
    assert out["epochs"]["n"] == n and out["epochs"]["per_class"] == counts
    assert out["epochs"]["fingerprint"] == pytest.approx(fingerprint, rel=1e-9)
    assert tuple(out["split"][k] for k in ("train", "val", "test")) == exported["split"]
    study, rerun = exported["results"], out["models"]
    assert rerun["csp_lda"]["accuracy"] == study["csp_lda"]["accuracy"]
    assert rerun["csp_lda"]["confusion"] == study["csp_lda"]["confusion"]
    n_test = study["eegnet"]["n_test"]
    assert rerun["eegnet"]["n_test"] == n_test
    print("EEGNet: study", {k: study["eegnet"][k] for k in ("accuracy", "roc_auc", "confusion")},
          "script", {k: rerun["eegnet"][k] for k in ("accuracy", "roc_auc", "confusion")})  # fmt: skip
    assert abs(rerun["eegnet"]["accuracy"] - study["eegnet"]["accuracy"]) <= 1 / n_test + 1e-9
    assert rerun["eegnet"]["roc_auc"] == pytest.approx(study["eegnet"]["roc_auc"], abs=0.05)
    assert {"python", "mne", "numpy", "sklearn", "torch"} <= set(out["software"])


def test_the_report_opens_in_chromium_with_every_figure(exported: dict[str, Any]) -> None:
    from playwright.sync_api import sync_playwright

    report = exported["files"][1]
    html = report.read_text()
    assert KEY not in html and "hunter2pass" not in html and "qq77zz88yy99" not in html
    assert "fc-model-x" in html and "models.example.org:8080" in html
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox", "--headless=new"]
        )
        page = browser.new_page()
        page.goto(report.as_uri())
        page.wait_for_load_state("load")
        images = page.evaluate(
            "() => [...document.images].map(i => ({alt: i.alt, ok: i.complete && i.naturalWidth > 0}))"
        )
        metrics = page.locator("table.metrics tbody tr").all_inner_texts()
        confusion = page.locator("table.confusion").count()
        headings = page.locator("h2").all_inner_texts()
        browser.close()
    alts = [i["alt"] for i in images]
    assert all(i["ok"] for i in images), images
    assert "csp_lda confusion matrix" in alts and "eegnet training curves" in alts
    assert any(a.startswith("PSD per channel group") for a in alts) and len(alts) == 5, alts
    csp = exported["results"]["csp_lda"]["accuracy"]
    assert len(metrics) == 2 and metrics[0].startswith("csp_lda") and f"{csp:.3f}" in metrics[0]
    assert confusion == 2
    for section in ("Recordings", "Steps", "Model and agent settings", "Software"):
        assert section in headings, headings


@pytest.mark.slow  # reruns the exported script in a process of its own
async def test_a_later_export_reflects_new_steps_and_reruns_from_another_folder(
    data_dir: Path, tmp_path: Path
) -> None:
    h = Harness(None, data_dir)
    await h.call("load_data", {"files": FILES[:2]})
    await h.call("bandpass_filter", {"l_freq": 1, "h_freq": 40})
    await h.call("export_analysis")
    first_script, first_report = h.files()
    first = first_script.read_text()
    assert "raw.filter(1.0, 40.0" in first and "make_epochs(" not in first.split("# ---- the")[-1]

    await h.call("ica_fit", {"n_components": 8, "seed": 4})
    await h.call("ica_apply", {"exclude": [0]})
    await h.call("epoch_data", {"tmin": 0.5, "tmax": 2.5})
    await h.call("split_dataset", {"by": "trial", "test_ratio": 0.3, "seed": 5})
    await h.call("train_model", {"model": "csp_lda"})
    await h.call("export_analysis")
    second_script, second_report = h.files()[2:]
    assert second_script != first_script and first_script.read_text() == first  # never overwritten
    second = second_script.read_text()
    for piece in ("fit_ica(raws, n_components=8, method='fastica', seed=4)", "exclude=[0]",
                  "tmin=0.5, tmax=2.5", "by='trial'", "seed=5", "'model': 'csp_lda'"):  # fmt: skip
        assert piece in second, piece
    assert "class EEGNet" not in second and "import torch" not in second  # CSP+LDA needs no torch
    assert "No model was trained" in first_report.read_text()
    assert '<table class="metrics">' in second_report.read_text()

    moved = tmp_path / "elsewhere"  # the recordings in another folder, given as DATA_DIR
    moved.mkdir()
    for name in FILES[:2]:
        shutil.copy(data_dir / name, moved / name)
    out = await asyncio.to_thread(run_script, second_script, tmp_path, str(moved))
    study = h.study.state
    assert out["epochs"]["per_class"] == study.eps.counts()
    assert out["epochs"]["fingerprint"] == pytest.approx(float(np.abs(study.eps.X).sum()), rel=1e-9)
    proba = study.models["csp_lda"].predictor.predict_proba(study.eps.X[study.split.test])  # type: ignore[union-attr]
    accuracy = float((proba.argmax(1) == study.eps.y[study.split.test]).mean())  # type: ignore[union-attr]
    assert out["models"]["csp_lda"]["accuracy"] == accuracy


async def test_an_empty_study_has_nothing_to_export(data_dir: Path, tmp_path: Path) -> None:
    h = Harness(None, tmp_path)
    with pytest.raises(ToolException, match="nothing to export: the study has no steps yet"):
        await h.call("export_analysis")
    shutil.copy(data_dir / FILES[0], tmp_path / FILES[0])
    await h.call("load_data", {"files": FILES[:1]})
    await h.call("clear_study")
    with pytest.raises(ToolException, match="nothing to export"):
        await h.call("export_analysis")
    assert h.files() == [] and not exports(tmp_path)


async def test_a_step_without_a_template_is_refused_and_nothing_is_written(
    data_dir: Path, tmp_path: Path
) -> None:
    shutil.copy(data_dir / FILES[0], tmp_path / FILES[0])
    h = Harness(None, tmp_path)
    await h.call("load_data", {"files": FILES[:1]})
    # a step some later version records, and this exporter has no code for
    h.study.log.append(
        {"op": "step", "step": {"op": "wavelet", "params": {}, "label": "wavelet denoise"}}
    )
    with pytest.raises(ToolException, match="'wavelet denoise' .*has no code template"):
        await h.call("export_analysis")
    assert not exports(tmp_path)
    with pytest.raises(ToolException, match="operation 'upload'"):
        build_script([{"op": "upload"}], [], version="x", when="now", name="a.py")


async def test_a_saved_study_is_replayed_before_it_is_exported(
    data_dir: Path, tmp_path: Path
) -> None:
    shutil.copy(data_dir / FILES[0], tmp_path / FILES[0])
    h = Harness(None, tmp_path)
    h.study.pending = [
        {"op": "load", "files": FILES[:1]},
        {
            "op": "step",
            "step": {"op": "notch", "params": {"freqs": [60.0]}, "label": "notch 60 Hz"},
        },
    ]  # a resumed conversation's log, not replayed yet
    await h.call("export_analysis")
    script, _ = h.files()
    assert "raw.notch_filter([60.0]" in script.read_text() and h.study.stage == "loaded"


async def test_the_same_seed_trains_the_same_network(data_dir: Path) -> None:
    """The initial weights come from the training seed (before, they did not): what makes an
    exported script's network, and a retrain in brainchat, the same model."""
    h = Harness(None, data_dir)
    await h.call("load_data", {"files": FILES[:1]})
    await h.call("epoch_data", {"tmin": 0.5, "tmax": 2.5})
    await h.call("split_dataset", {"seed": 0})
    for _ in range(2):
        await h.call("train_model", {"model": "eegnet", "epochs": 2, "seed": 7})
    first, second = h.study.state.models.values()
    assert first.history == second.history
    params = zip(
        first.predictor.module.parameters(), second.predictor.module.parameters(), strict=True
    )
    assert all(a.detach().equal(b.detach()) for a, b in params)


async def test_an_exports_link_out_of_the_data_folder_is_refused(
    data_dir: Path, tmp_path: Path
) -> None:
    folder, outside = tmp_path / "data", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    shutil.copy(data_dir / FILES[0], folder / FILES[0])
    (folder / "exports").symlink_to(outside)
    h = Harness(None, folder)
    await h.call("load_data", {"files": FILES[:1]})
    with pytest.raises(ToolException, match="'exports' is a link that points outside the data"):
        await h.call("export_analysis")
    assert h.files() == [] and not any(outside.iterdir())


@pytest.mark.slow  # reruns the exported script in a process of its own
async def test_shallowconvnet_and_sccnet_rerun_too(data_dir: Path, tmp_path: Path) -> None:
    h = Harness(None, data_dir)
    keep = ["FC3", "FC4", "C5", "C3", "C1", "cz", "C2", "C4", "C6", "CP3", "CP4"]
    await h.call("load_data", {"files": FILES[:1]})
    await h.call("select_channels", {"keep": keep})
    await h.call("set_reference", {"ref": ["Cz"]})
    await h.call("resample_data", {"sfreq": 100})
    await h.call("epoch_data", {"tmin": 0.5, "tmax": 2.5})
    await h.call("split_dataset", {"by": "trial", "test_ratio": 0.3, "val_ratio": 0.2, "seed": 1})
    for model in ("shallowconvnet", "sccnet"):
        await h.call("train_model", {"model": model, "epochs": 2, "seed": 3, "optimizer": "adamw"})
        await h.call("evaluate_model", {"model": model})
    await h.call("export_analysis")
    script = h.files()[0]
    assert "class ShallowConvNet" in script.read_text() and "class EEGNet" not in script.read_text()
    out = await asyncio.to_thread(run_script, script, tmp_path)
    for model in ("shallowconvnet", "sccnet"):
        study = h.study.state.results[model]
        rerun = out["models"][model]
        print(model, "study", study["accuracy"], study["roc_auc"], "script", rerun["accuracy"],
              rerun["roc_auc"])  # fmt: skip
        assert rerun["n_test"] == study["n_test"]
        assert abs(rerun["accuracy"] - study["accuracy"]) <= 1 / study["n_test"]
        assert rerun["roc_auc"] == pytest.approx(study["roc_auc"], abs=0.05)  # the probabilities


# Channel names a recording may hold, which end up in the step labels: a line break that would
# start a statement, a docstring's closing quotes, and a backslash that is no valid escape.
HOSTILE = ['C3\nprint("PWNED")\n#', 'C4"""\nimport os\n#', "Cz\\x"]


def statements(script: str) -> list[str]:
    """The script's top-level statements, as source (comments are not statements)."""
    return [ast.unparse(node) for node in ast.parse(script).body[1:]]  # after the docstring


async def test_channel_and_file_names_cannot_add_code_to_the_script(tmp_path: Path) -> None:
    from brainchat.eeg.io.synthetic import make_recording, write_raw

    raw = make_recording(trials=24, seed=1)
    raw.rename_channels(dict(zip(("C3", "C4", "Cz"), HOSTILE, strict=True)))
    write_raw(raw, tmp_path / "sub-01_ses-01_task-mi_eeg.fif")
    h = Harness(None, tmp_path)
    await h.call("load_data", {"files": ["sub-01_ses-01_task-mi_eeg.fif"]})
    await h.call("set_reference", {"ref": [HOSTILE[0]]})  # label "reference C3\nprint(...)"
    await h.call("select_channels", {"drop": HOSTILE[1:]})  # label "drop C4\"\"\"..., Cz\x"
    await h.call("export_analysis")
    script = h.files()[0].read_text(encoding="utf-8")
    tree = ast.parse(script)  # a stray \x or closed docstring would be a SyntaxError
    # the names reach the code only as literals, and round-trip exactly
    names = [
        ast.literal_eval(n)
        for n in ast.walk(tree)
        if isinstance(n, ast.List) and all(isinstance(e, ast.Constant) for e in n.elts)
    ]
    assert [HOSTILE[0]] in names and HOSTILE[1:] in names
    assert not [
        n
        for n in ast.walk(tree)
        if (isinstance(n, ast.Call) and any(ast.unparse(a) == "'PWNED'" for a in n.args))
        or (isinstance(n, ast.Import) and [a.name for a in n.names] == ["os"])
    ]
    one = [{"file": "a.fif", "subject": "01", "session": "01", "format": "fif"}]
    clean = build_script(h.study.log, one, version="x", when="now", name="a.py")
    assert len(statements(script)) == len(statements(clean))
    assert ast.get_docstring(tree) is not None and "PWNED" in ast.get_docstring(tree)  # as text

    # a damaged file's note (file name and damage from the data) is a comment, whatever it holds
    recording = {"file": 'a\nprint("PWNED")\n"""\\x.fif', "subject": "01", "session": "01",
                 "format": "fif", "damage": 'cut\rimport os\u2028"""'}  # fmt: skip
    log = [{"op": "load", "files": [recording["file"]]}]
    noted = build_script(log, [recording], version="x", when="now", name="a.py")
    plain = build_script(log, one, version="x", when="now", name="a.py")
    assert len(statements(noted)) == len(statements(plain))
    assert "# note: brainchat found" in noted
    (rows,) = [
        ast.literal_eval(n.value)
        for n in ast.parse(noted).body
        if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "RECORDINGS"
    ]
    assert rows[0]["file"] == recording["file"]


async def test_a_stopped_export_writes_nothing(data_dir: Path, tmp_path: Path) -> None:
    """The Stop (or the tool's timeout) sets the op's stop event while the report is built; the
    export then leaves no file behind, and offers none."""
    import threading

    from brainchat.eeg.export.export import export_op

    shutil.copy(data_dir / FILES[0], tmp_path / FILES[0])
    h = Harness(None, tmp_path)
    await h.call("load_data", {"files": FILES[:1]})
    stop = threading.Event()
    stop.set()
    op = export_op(h.study, [])
    with pytest.raises(ToolException, match="export cancelled; nothing was written"):
        await asyncio.to_thread(op, h.study.state, stop)
    assert not exports(tmp_path) and h.files() == []
    await h.call("export_analysis")  # not stopped: written as ever
    assert len(exports(tmp_path)) == 2


async def test_when_the_report_cannot_be_written_the_script_is_not_left_either(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The script is written first; a report that then fails (a full disk) takes it away again:
    an export is both files or none."""
    import errno

    shutil.copy(data_dir / FILES[0], tmp_path / FILES[0])
    h = Harness(None, tmp_path)
    await h.call("load_data", {"files": FILES[:1]})
    real_open = Path.open

    def open_(self: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if self.suffix == ".html" and "x" in mode:
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real_open(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", open_)
    with pytest.raises(ToolException, match="No space left on device"):
        await h.call("export_analysis")
    assert (tmp_path / "exports").is_dir() and not exports(tmp_path) and h.files() == []
    monkeypatch.undo()
    await h.call("export_analysis")  # room again: both are written
    assert [p.suffix for p in exports(tmp_path)] == [".html", ".py"]
