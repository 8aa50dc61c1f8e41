"""cross_validate on real EEG files (the synthetic generator's EDFs read back by MNE): the three
protocols' folds, every fitted step inside the training fold, statistics, leakage, bad input."""

from __future__ import annotations

import asyncio
import hashlib
import threading
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from langchain_core.tools import ToolException
from pydantic import ValidationError

from brainchat import events
from brainchat.eeg.guidance import EEG
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.protocols import pipelines
from brainchat.eeg.protocols.crossval import CVConfig, cross_validate_arrays
from brainchat.eeg.protocols.splits import ProtocolError, make_folds
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.crossval_tool import crossval_op
from brainchat.eeg.tools.tools import build_eeg_tools
from brainchat.grounding import check_answer

FILES = [f"sub-0{s}_ses-0{k}_task-mi_eeg.edf" for s in (1, 2, 3) for k in (1, 2)]
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("eeg-cv")
    write_demo_set(root, subjects=3, sessions=2, trials=40, effect_size=0.5, seed=3)
    return root


class Harness:
    def __init__(self, data_dir: Path) -> None:
        self.study = Study(data_dir)
        self.tools = {t.name: t for t in build_eeg_tools(self.study)}
        self.events: list[events.Event] = []
        self._token = events._sink.set(self.events.append)

    async def call(self, name: str, args: dict | None = None) -> str:
        events.set_tool_call(f"call-{name}", name)
        result = await self.tools[name].ainvoke(args or {})
        await asyncio.sleep(0)
        return result


async def _epoch(data_dir: Path) -> Harness:
    h = Harness(data_dir)
    await h.call("load_data", {"files": FILES})
    await h.call("bandpass_filter", {"l_freq": 8, "h_freq": 30})
    await h.call("resample_data", {"sfreq": 125})  # half the samples: the folds fit faster
    await h.call("epoch_data", {"tmin": 0.5, "tmax": 2.5})
    return h


@pytest.fixture(scope="module")
def epoched_state(data_dir: Path) -> object:
    """The six recordings loaded, filtered and epoched once per module (3-6 s a test before):
    the tests below only read the epochs (cross_validate commits nothing to the study)."""
    return asyncio.run(_epoch(data_dir)).study.state


@pytest.fixture
def epoched(data_dir: Path, epoched_state: object) -> Harness:
    h = Harness(data_dir)
    h.study.state = epoched_state  # type: ignore[assignment]
    return h


async def test_within_session_through_the_tool(epoched: Harness) -> None:
    h = epoched
    text = await h.call(
        "cross_validate", {"pipelines": ["csp_lda", "ts_lr"], "folds": 3, "permutations": 4}
    )
    assert text.startswith("cross_validate within_session (3 folds per session, seed 0)")
    assert "240 epochs (left_hand/right_hand)" in text and "score ROC AUC" in text
    assert "3 subject(s), 6 subject-session group(s)" in text
    rows = {line.split(" | ")[0]: line for line in text.splitlines() if " | " in line}
    for name in ("csp_lda", "ts_lr"):
        mean = float(rows[name].split(" | ")[1].split(" ± ")[0])
        assert mean > 0.75, rows[name]  # the ERD is there: both pipelines find it
        assert "(4 perms)" in rows[name] and "p=0.200" in rows[name]  # the best p with 4
    # a row copied into an answer under the table's own headers is grounded as written: each
    # figure in the cell carries its label, so the chance level never reads as a p-value
    header = next(line for line in text.splitlines() if line.startswith("pipeline | "))
    cells = rows["csp_lda"].split(" | ")
    copied = "\n".join(
        f"- {k.capitalize()}: {c}" for k, c in zip(header.split(" | "), cells, strict=True)
    )
    ran = SimpleNamespace(name="cross_validate", status="success", result=text, error=None,
                          args={}, reused=None)  # fmt: skip
    ledger = SimpleNamespace(entries=[ran], sources=[])
    assert check_answer(copied, ledger, [], ["cross_validate"], vocabulary=EEG.vocabulary) == []
    assert "csp_lda per subject/session: 01/01 " in text
    assert "Wilcoxon signed-rank csp_lda vs ts_lr over 3 subjects" in text
    assert "3 non-zero difference(s): the smallest possible p is 0.250" in text
    image = [e for e in h.events if isinstance(e, events.ToolImage)][-1]
    assert image.png.startswith(PNG) and image.title == "within_session scores per subject"
    progress = [
        e for e in h.events if isinstance(e, events.ToolProgress) and e.name == "cross_validate"
    ]
    assert progress[-1].message == "fold 36/36"  # 2 pipelines x 6 sessions x 3 folds
    assert h.study.state.stage == "epoched"  # nothing changed: no split, no model


def _arrays(h: Harness):
    e = h.study.state.eps
    return e.X, e.y, e.subjects, e.sessions, float(e.info["sfreq"])


async def test_protocol_folds_hold_out_what_they_name(epoched: Harness) -> None:
    X, y, subjects, sessions, _ = _arrays(epoched)
    within, _ = make_folds("within_session", y, subjects, sessions, 5, 0)
    assert len(within) == 6 * 5
    for f in within:  # train and test: the same session, disjoint, together the whole session
        group = np.flatnonzero((subjects == f.subject) & (sessions == f.session))
        assert set(f.train).isdisjoint(f.test)
        assert sorted([*f.train, *f.test]) == group.tolist()
    cross_session, _ = make_folds("cross_session", y, subjects, sessions)
    assert [(f.subject, f.session) for f in cross_session] == [
        (s, k) for s in ("01", "02", "03") for k in ("01", "02")
    ]
    for f in cross_session:
        assert set(sessions[f.test]) == {f.session} and set(subjects[f.test]) == {f.subject}
        assert set(sessions[f.train]) == {"01", "02"} - {f.session}
        assert set(subjects[f.train]) == {f.subject}
    few = np.array([0, 1] * 4)  # four trials a class: not enough for 5 stratified folds
    with pytest.raises(ProtocolError, match="no session has every class 5 times or more"):
        make_folds("within_session", few, np.array(["1"] * 8), np.array(["1"] * 8), 5, 0)
    cross_subject, _ = make_folds("cross_subject", y, subjects, sessions)
    assert [f.subject for f in cross_subject] == ["01", "02", "03"]
    for f in cross_subject:
        assert set(subjects[f.test]) == {f.subject} and f.subject not in set(subjects[f.train])
        assert len(f.train) + len(f.test) == len(y)


def _digest(trial: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(trial).tobytes()).hexdigest()


@pytest.mark.parametrize("protocol", ["within_session", "cross_session", "cross_subject"])
async def test_nothing_is_fitted_on_test_trials(epoched, monkeypatch, protocol) -> None:
    """Every estimator's fit (observed and permuted labels) records the trials it saw: none is a
    test trial of its fold, and it saw every training trial."""
    X, y, subjects, sessions, sfreq = _arrays(epoched)
    seen: list[tuple[str, set[str]]] = []
    real_build = pipelines.build

    class Recording:
        def __init__(self, inner) -> None:
            self.inner = inner

        def fit(self, Xf, yf):
            seen.append((self.inner.__class__.__name__, {_digest(t) for t in Xf}))
            self.inner.fit(Xf, yf)
            self.classes_ = self.inner.classes_
            return self

        def __getattr__(self, name):
            return getattr(self.inner, name)

    def recording_build(name, *args, **kwargs):
        return Recording(real_build(name, *args, **kwargs))

    monkeypatch.setattr(pipelines, "build", recording_build)
    cfg = CVConfig(protocol, ("csp_lda",), 3, permutations=2)
    res = cross_validate_arrays(cfg, X, y, subjects, sessions, sfreq)
    folds, _ = make_folds(protocol, y, subjects, sessions, 3, 0)
    assert len(seen) == len(folds) * 3  # observed + 2 permutations per fold
    for k, f in enumerate(folds):
        train = {_digest(X[i]) for i in f.train}
        test = {_digest(X[i]) for i in f.test}
        for _, fitted in seen[3 * k : 3 * k + 3]:
            assert fitted == train and fitted.isdisjoint(test)
    assert all(np.isfinite(r.score) for r in res.records)


async def test_same_seed_same_scores_other_seed_other_folds(epoched: Harness) -> None:
    X, y, subjects, sessions, sfreq = _arrays(epoched)
    one = subjects == "02"  # one subject, two sessions: 2 x 3 folds

    def run(seed: int):
        cfg = CVConfig(pipelines=("csp_lda",), folds=3, permutations=3, seed=seed)
        return cross_validate_arrays(cfg, X[one], y[one], subjects[one], sessions[one], sfreq)

    a, b, c = run(0), run(0), run(1)
    assert [(r.score, r.null) for r in a.records] == [(r.score, r.null) for r in b.records]
    assert [r.score for r in a.records] != [r.score for r in c.records]
    s = a.summaries[0]
    assert s.chance is not None and abs(s.chance - 0.5) < 0.2  # shuffled labels: near chance
    assert s.p_value == 0.25  # 1 / (3 + 1): no permutation reached the observed score


async def test_mdm_and_filter_bank_csp_decode(epoched: Harness) -> None:
    X, y, subjects, sessions, sfreq = _arrays(epoched)
    one = (subjects == "01") & (sessions == "01")
    cfg = CVConfig(pipelines=("mdm", "fbcsp"), folds=3)
    res = cross_validate_arrays(cfg, X[one], y[one], subjects[one], sessions[one], sfreq)
    assert [s.pipeline for s in res.summaries] == ["mdm", "fbcsp"]
    assert all(s.mean > 0.7 for s in res.summaries), [(s.pipeline, s.mean) for s in res.summaries]


async def test_cross_session_and_cross_subject_through_the_tool(epoched: Harness) -> None:
    text = await epoched.call(
        "cross_validate", {"protocol": "cross_session", "pipelines": ["ts_lr"], "permutations": 0}
    )
    assert "cross_validate cross_session (leave-one-out" in text
    assert "ts_lr per subject/session: 01/01" in text and "not run (permutations=0)" in text
    # one pipeline: said to have no paired test, so an answer model is not left to invent one
    assert "paired test: none (one pipeline" in text and "Wilcoxon signed-rank ts_lr" not in text
    text = await epoched.call(
        "cross_validate",
        {"protocol": "cross_subject", "pipelines": ["csp_lda", "mdm"], "permutations": 2},
    )
    assert "cross_validate cross_subject" in text and "(2 perms)" in text
    assert "Wilcoxon signed-rank csp_lda vs mdm over 3 subjects" in text
    assert "paired test: none" not in text


async def test_a_network_is_trained_inside_each_fold(epoched: Harness) -> None:
    text = await epoched.call(
        "cross_validate",
        {"protocol": "cross_subject", "pipelines": ["eegnet"], "permutations": 0, "epochs": 2},
    )
    row = next(line for line in text.splitlines() if line.startswith("eegnet | "))
    scores = [float(v) for v in row.split(" | ")[3].split()]
    assert len(scores) == 3 and all(0.0 <= v <= 1.0 for v in scores)


async def test_ica_on_all_trials_is_named_as_leakage(data_dir: Path) -> None:
    h = Harness(data_dir)
    await h.call("load_data", {"files": FILES[:2]})
    await h.call("bandpass_filter", {"l_freq": 1, "h_freq": 30})
    await h.call("ica_fit", {"n_components": 5})
    await h.call("ica_apply", {"exclude": [0]})
    await h.call("epoch_data", {})
    text = await h.call("cross_validate", {"pipelines": ["csp_lda"], "permutations": 0})
    assert "leakage risk: 'ICA minus [0]' was fitted on all trials" in text


async def test_bad_arguments_name_the_allowed_values(epoched: Harness) -> None:
    tool = epoched.tools["cross_validate"]
    with pytest.raises(ValidationError) as err:
        await tool.ainvoke({"protocol": "loso"})
    assert "'within_session', 'cross_session' or 'cross_subject'" in str(err.value)
    with pytest.raises(ValidationError) as err:
        await tool.ainvoke({"pipelines": ["svm"]})
    assert "'csp_lda', 'ts_lr', 'mdm', 'fbcsp', 'eegnet', 'shallowconvnet' or 'sccnet'" in str(
        err.value
    )
    with pytest.raises(ValidationError, match="greater than or equal to 2"):
        await tool.ainvoke({"folds": 1})


async def test_protocols_the_data_cannot_support_say_why(data_dir: Path) -> None:
    h = Harness(data_dir)
    with pytest.raises(ToolException, match="no data loaded"):
        await h.call("cross_validate", {})
    await h.call("load_data", {"files": FILES[:1]})
    with pytest.raises(ToolException, match="no epochs yet"):
        await h.call("cross_validate", {})
    await h.call("epoch_data", {})
    with pytest.raises(ToolException, match="cross_session needs a subject with two or more"):
        await h.call("cross_validate", {"protocol": "cross_session"})
    with pytest.raises(ToolException, match="cross_subject needs two or more subjects"):
        await h.call("cross_validate", {"protocol": "cross_subject"})


async def test_stop_cancels_the_outstanding_folds(epoched: Harness) -> None:
    stop = threading.Event()
    stop.set()
    with pytest.raises(ToolException, match="stopped after 0 of 24 folds; nothing kept"):
        crossval_op(CVConfig(pipelines=("csp_lda", "ts_lr"), folds=2))(epoched.study.state, stop)
