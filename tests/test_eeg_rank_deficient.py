"""Rank-deficient trials decode: after MNE's ICA removed a component, or an average reference,
the channels span one dimension fewer, and every classical pipeline (and train_model's CSP+LDA)
fits and scores, its CSP restricted to the rank the training trials have (issue #38).

"Rounded" adds noise 1e-12 of the signal to the ICA-cleaned trials, as storage or arithmetic
rounding does: MNE's own rank estimate then counts the removed dimension, and a CSP taking the
trials as full rank failed with LinAlgError ("leading minor ... of B is not positive definite").
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from brainchat.eeg.decoding.csp import rank_of
from brainchat.eeg.io.synthetic import make_recording, write_demo_set
from brainchat.eeg.protocols.pipelines import CLASSICAL, build

N_CH = 22


def _epochs(raw) -> tuple[np.ndarray, np.ndarray]:
    import mne

    raw = raw.copy().filter(8, 30, verbose="error")
    events, ids = mne.events_from_annotations(raw, verbose="error")
    ep = mne.Epochs(raw, events, ids, tmin=0.5, tmax=2.5, baseline=None, verbose="error")
    return ep.get_data(), events[:, 2]


@pytest.fixture(scope="module")
def variants() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    import mne

    raw = make_recording(trials=60, effect_size=0.6, seed=1)
    ica = mne.preprocessing.ICA(n_components=15, random_state=0, max_iter="auto")
    ica.fit(raw.copy().filter(1, None, verbose="error"), verbose="error")
    ica.exclude = [0]
    cleaned = ica.apply(raw.copy(), verbose="error")
    out = {
        "full": _epochs(raw),
        "ica": _epochs(cleaned),
        "average": _epochs(raw.copy().set_eeg_reference("average", verbose="error")),
        "ica_average": _epochs(cleaned.copy().set_eeg_reference("average", verbose="error")),
    }
    X, y = out["ica"]
    noise = np.random.default_rng(0).standard_normal(X.shape)
    out["ica_rounded"] = (X + 1e-12 * X.std() * noise, y)
    return out


def test_the_rank_is_what_ica_and_the_reference_removed(variants: dict) -> None:
    ranks = {k: rank_of(X) for k, (X, _) in variants.items()}
    assert ranks == {"full": 22, "ica": 21, "average": 21, "ica_average": 21, "ica_rounded": 21}
    assert rank_of(variants["ica"][0].astype(np.float32)) == 21


def _auc(model, X: np.ndarray, y: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    train = np.arange(len(y)) % 3 != 0  # 40 training trials, 20 held out
    proba = model.fit(X[train], y[train]).predict_proba(X[~train])
    assert np.isfinite(proba).all()
    return float(roc_auc_score(y[~train], proba[:, 1]))


@pytest.mark.parametrize("variant", ["ica", "average", "ica_average", "ica_rounded"])
@pytest.mark.parametrize("pipeline", CLASSICAL)
def test_every_classical_pipeline_decodes_rank_deficient_trials(
    variants: dict, variant: str, pipeline: str
) -> None:
    X, y = variants[variant]
    assert _auc(build(pipeline, N_CH, 250.0), X, y) >= 0.8


@pytest.mark.parametrize("pipeline", ["csp_lda", "fbcsp"])
def test_each_csp_is_restricted_to_the_training_trials_rank(variants: dict, pipeline: str) -> None:
    X, y = variants["ica_average"]
    csps = build(pipeline, N_CH, 250.0).fit(X, y).steps[0][1].csps_
    assert {c.rank_ for c in csps} == {21} and {len(c.filters_) for c in csps} <= {4, 8}
    full = build(pipeline, N_CH, 250.0).fit(*variants["full"]).steps[0][1].csps_
    assert {c.rank_ for c in full} == {N_CH}  # full rank: MNE's CSP as MOABB runs it


def test_fbcsp_keeps_the_most_informative_features_with_their_pairs(variants: dict) -> None:
    X, y = variants["full"]
    step = build("fbcsp", N_CH, 250.0).fit(X, y).steps[0][1]
    chosen = step.selected_
    assert 4 <= len(chosen) <= 8 and step.transform(X).shape == (len(y), len(chosen))
    assert all((j ^ 1) in chosen for j in chosen)  # 4 components per band: pairs 0-1, 2-3


def test_train_csp_lda_fits_rounded_rank_deficient_trials(variants: dict) -> None:
    from brainchat.eeg.decoding.training import train_csp_lda

    X, y = variants["ica_rounded"]
    data = {"X_train": X[:40], "y_train": y[:40], "X_val": X[40:], "y_val": y[40:]}
    fit = train_csp_lda(data, threading.Event(), lambda *_: None)
    assert fit.history["val_acc"][0] >= 0.8
    assert np.isfinite(fit.predictor.predict_proba(X)).all()


@pytest.mark.slow  # ICA on a recording, then train_model as the agent calls it
async def test_train_model_csp_lda_after_ica_and_an_average_reference(tmp_path: Path) -> None:
    from brainchat.eeg.study.study import Study
    from brainchat.eeg.tools.tools import build_eeg_tools

    paths = write_demo_set(tmp_path, subjects=1, sessions=1, trials=60, effect_size=0.6, seed=1)
    study = Study(tmp_path)
    tools = {t.name: t for t in build_eeg_tools(study)}
    await tools["load_data"].ainvoke({"files": [p.name for p in paths]})
    await tools["ica_fit"].ainvoke({"n_components": 15})
    await tools["ica_apply"].ainvoke({"exclude": [0]})
    await tools["set_reference"].ainvoke({"ref": "average"})
    await tools["bandpass_filter"].ainvoke({"l_freq": 8, "h_freq": 30})
    await tools["epoch_data"].ainvoke({"tmin": 0.5, "tmax": 2.5})
    await tools["split_dataset"].ainvoke({"by": "trial", "test_ratio": 0.25, "val_ratio": 0.15})
    assert "trained 'csp_lda'" in await tools["train_model"].ainvoke({"model": "csp_lda"})
    await tools["evaluate_model"].ainvoke({"model": "csp_lda"})
    assert study.state.results["csp_lda"]["accuracy"] >= 0.75
