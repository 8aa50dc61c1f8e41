"""A strong model is never refused, rewritten or flagged; a false claim in its answer always is.

evals/strong holds realistic requests (English, Chinese, German and mixed; some naming no step
at all: "Is this separable?", "我的数据干净吗？"), each scripted with the calls a strong model makes
and an answer stating what the tools really produced. Through the scripted server over HTTP and
the app's session with real EEG tools, every run must complete with each call run as sent and
nothing flagged; and the same run with one false claim planted in its answer (an invented
figure, a step or a tool that never ran, a verdict about a pipeline never run, a citation with
no source, a figure of the wrong kind) must have exactly that claim flagged.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from brainchat.evals.harness import run_suite
from brainchat.evals.pairs import SCRIPTED, ModelPair
from brainchat.evals.scenario import load_suite

SUITE = Path(__file__).resolve().parents[1] / "evals" / "strong"


def test_the_suite_is_what_the_issue_asks_for() -> None:
    scenarios = load_suite(SUITE)
    langs = Counter(next(t for t in s.tags if t != "strong") for s in scenarios)
    assert len(scenarios) >= 40
    assert sum(n for lang, n in langs.items() if lang.startswith("zh")) >= 15
    assert any(s.name.startswith("mixed-") for s in scenarios)
    assert all(s.planted for s in scenarios)
    for s in scenarios:  # every run is held to: nothing refused or changed, nothing flagged
        assert s.checks["tools"]["clean"] and s.checks["answer"]["grounded"], s.name
        assert s.checks["limits"]["stop_reason"] == "answered", s.name


@pytest.mark.slow  # ~90 runs with real EEG tools (cross-validations among them)
# ~140 s alone on 2 cores; beside two other workers of the full suite it passed 300 s
@pytest.mark.timeout(900)
async def test_sound_calls_run_as_sent_and_every_planted_claim_is_flagged(scripted_server) -> None:
    scenarios = load_suite(SUITE)
    pair = ModelPair(SCRIPTED)
    results = await run_suite(scenarios, [pair], concurrency=2, server=scripted_server)
    failed = {r.scenario: r.failures for r in results if not r.passed}
    assert not failed, failed
    planted = [s.with_planted() for s in scenarios]
    results = await run_suite(planted, [pair], concurrency=2, server=scripted_server)
    missed = {r.scenario: r.failures for r in results if not r.passed}
    assert not missed, missed
    claims = {s.name: s.planted for s in planted}
    for r in results:  # each copy is flagged for its planted claim, and for nothing else
        flags = r.trace["flags"]
        assert flags and all(f["sentence"] in claims[r.scenario] for f in flags), (
            r.scenario,
            flags,
        )
    assert not scripted_server.unused(), scripted_server.unused()
