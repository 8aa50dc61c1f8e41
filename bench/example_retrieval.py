"""How often the worked examples shown for a request carry its decisive call, per language.

Every scenario in evals/ (scripted, golden-zh, strong: English, Chinese and mixed requests, each
scripted with the calls a strong model makes) is asked of the retrieval the guided model is
shown (eeg/guidance/examples.py, top 2). A hit: one of the shown examples makes the scenario's
last call (the listing aside), with the same protocol or split kind (a call that names none
has its default). Scenarios whose tools have no worked example (MCP time servers, the lab's own
documents) are left out: no retrieval can show what is not there.

The baseline, built in the same run over the same examples, is BM25 over words and CJK
character pairs alone (no joined words split, no step or choice tokens).

    .venv/bin/python bench/example_retrieval.py [-v]
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
K = 2  # examples shown (agent/guided.py EXAMPLES)
CJK = re.compile(r"[\u3400-\u9fff]")


def scenarios() -> list[tuple[str, str, tuple[str, Any]]]:
    """(suite, question, decisive call) for every scenario with a scripted call."""
    from brainchat.eeg.guidance.worked import EXAMPLES

    known = {name for _, calls in EXAMPLES for name, _ in calls}
    found = []
    for path in sorted(ROOT.glob("evals/*/*.json")):
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or "question" not in data:
            continue
        steps = (data.get("script") or {}).get("function_call") or []
        calls = [
            (c["name"], c.get("args") or {})
            for s in steps
            if s.get("type") == "tool_calls"
            for c in s["calls"]
            if c["name"] != "list_data_files"
        ]
        if calls and calls[-1][0] in known:
            name, args = calls[-1]
            found.append((path.parent.name, data["question"], (name, kind(name, args))))
    return found


DEFAULTS = {"cross_validate": "within_session", "split_dataset": "trial"}


def kind(name: str, args: dict[str, Any]) -> str | None:
    """A call's protocol or split kind, its default when it names none."""
    return args.get("protocol") or args.get("by") or DEFAULTS.get(name)


def baseline() -> Callable[[str, int], list[str]]:
    """The retrieval before step and choice tokens: words and CJK characters and pairs."""
    import bm25s

    from brainchat.eeg.guidance.examples import CJK as RUN
    from brainchat.eeg.guidance.examples import RELATIVE, WORD
    from brainchat.eeg.guidance.worked import EXAMPLES

    def tokens(text: str) -> list[str]:
        out: list[str] = []
        for word in WORD.findall(text.lower()):
            if RUN.match(word):
                out += list(word) + [word[i : i + 2] for i in range(len(word) - 1)]
            elif len(word) > 1 or word.isdigit():
                out.append(word)
        return out

    index = bm25s.BM25()
    index.index([tokens(r) for r, _ in EXAMPLES], show_progress=False)

    def nearest(request: str, k: int) -> list[str]:
        scores = index.get_scores(tokens(request))
        ranked = sorted(range(len(EXAMPLES)), key=lambda i: -scores[i])[:k]
        best = scores[ranked[0]]
        return [EXAMPLES[i][0] for i in ranked if scores[i] > 0 and scores[i] >= RELATIVE * best]

    return nearest


def current() -> Callable[[str, int], list[str]]:
    from brainchat.eeg.guidance.examples import nearest

    return lambda request, k: [ex.request for ex in nearest(request, k)]


def hits(nearest: Callable[[str, int], list[str]], verbose: bool) -> dict[str, list[int]]:
    from brainchat.eeg.guidance.worked import EXAMPLES

    calls_of = dict(EXAMPLES)
    tally: dict[str, list[int]] = {"en": [0, 0], "zh": [0, 0]}
    for suite, question, (name, want) in scenarios():
        shown = [c for r in nearest(question, K) for c in calls_of[r]]
        ok = (name, want) in {(n, kind(n, a)) for n, a in shown}
        lang = "zh" if CJK.search(question) else "en"
        tally[lang][0] += ok
        tally[lang][1] += 1
        if verbose and not ok:
            print(f"  miss [{suite}] {question[:70]} -> {name} {want or ''}")
    return tally


def main() -> None:
    sys.path.insert(0, str(ROOT / "src"))
    verbose = "-v" in sys.argv
    base = hits(baseline(), False)
    now = hits(current(), verbose)
    for lang in ("en", "zh"):
        (b, n), (c, _) = base[lang], now[lang]
        print(f"{lang}: {c}/{n} hits (baseline {b}/{n}), ratio {c / max(b, 1):.2f}")
    total = sum(v[0] for v in now.values()), sum(v[0] for v in base.values())
    print(f"all: {total[0]} vs baseline {total[1]}, ratio {total[0] / max(total[1], 1):.2f}")


if __name__ == "__main__":
    main()
