"""The demo's answers to follow-ups: a question about a result, a comparison, a plot.

Each is written from the tool results in the answer request, never from canned numbers: the
study's state (get_study_state) lists every model trained in the conversation with its scores,
the split and the split's note (eeg/core/holdout.py says what a split by trial can show).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from brainchat import i18n
from brainchat.demo.intents import MODEL_NAMES, language, models_named

_SCORES = re.compile(
    r"([\w-]+) test acc ([\d.]+) \(balanced ([\d.]+), kappa (-?[\d.]+), (\d+) test epochs\)"
)
_SPLIT = re.compile(r"split by (\w+): train (\d+)/val (\d+)/test (\d+)")


@dataclass(frozen=True)
class Scored:
    """One evaluated model as the study's state lists it."""

    key: str
    acc: str
    balanced: str
    kappa: str
    n: int

    @property
    def name(self) -> str:
        base = MODEL_NAMES.get(self.key.split("-")[0], self.key)
        return base if "-" not in self.key else f"{base} (`{self.key}`)"


def scored(state: str) -> list[Scored]:
    """The evaluated models in a get_study_state result, in the order trained."""
    return [Scored(k, a, b, kp, int(n)) for k, a, b, kp, n in _SCORES.findall(state)]


def answer(kind: str, question: str, results: dict[str, str]) -> str | None:
    """The follow-up answer for `kind`, or None when the results call for another answer."""
    state = results.get("get_study_state", "")
    if kind == "plot" and "plot_psd" in results:
        return plot_answer(results["plot_psd"], results.get("load_data", ""))
    if kind == "compare" and (state or not results):
        return compare_answer(question, state, results.get("train_model", ""))
    if kind == "result" and "evaluate_model" not in results and (models := scored(state)):
        return result_answer(question, models, state)
    return None


def _split_lines(state: str, n: int) -> list[str]:
    """What the split and the size of the test set say about the scores."""
    note = next((ln for ln in state.splitlines() if ln.startswith("split note: ")), "")
    split = _SPLIT.search(state)
    by = split[1] if split else "trial"
    if note:
        said = note.removeprefix("split note: ").split(". For an estimate")[0]
        first = f"- **The split** ({said.split(': ', 1)[0]}): {said.split(': ', 1)[-1]}."
    else:
        first = (
            f"- **The split** by {by}: the test sessions were never trained on, so the score "
            "estimates how the model does on a session it has not seen."
        )
    return [
        first,
        f"- **The test set is small**: {n} epochs, so each epoch more or less right moves the "
        f"accuracy by one {n}th.",
    ]


def _preprocessing(state: str) -> str:
    line = next((ln for ln in state.splitlines() if ln.startswith("preprocessing: ")), "")
    if not line:
        return ""
    fitted = "ICA" in line
    verdict = (
        "ICA was fitted on all trials, the test trials too: that leaks as well"
        if fitted
        else "none of these steps learns from the data, so none leaks from the test trials"
    )
    return f"- **Preprocessing**: {line.removeprefix('preprocessing: ')}; {verdict}."


def result_answer(question: str, models: list[Scored], state: str) -> str:
    """A question about a result, answered from the result: the scores and what they rest on."""
    named = models_named(question)
    asked = [m for m in models if m.key.split("-")[0] in named] or models[-1:]
    lines = [
        f"**{m.name}: test accuracy {m.acc}** (balanced {m.balanced}, Cohen's kappa {m.kappa}, "
        f"on {m.n} held-out test epochs)"
        for m in asked
    ]
    lines[0] += ", as evaluated earlier in this conversation; nothing was retrained to answer."
    lines += ["", "What this figure rests on:", *_split_lines(state, asked[0].n)]
    if pre := _preprocessing(state):
        lines.append(pre)
    lines += [
        "",
        "To measure it on sessions the model never saw, ask to *split by session and train "
        "again*; to set it beside another decoder, ask to *train CSP+LDA and compare*.",
    ]
    return "\n".join(lines)


def compare_answer(question: str, state: str, trained_now: str = "") -> str:
    """Every evaluated model of the study side by side, or which to compare with; a decoder
    named that was trained before this turn is said to be reused, not trained again."""
    models = scored(state)
    lang = language(question)
    if not models:
        return i18n.t("demo.compare_none", lang)
    if len(models) == 1:
        only = models[0]
        return i18n.t(
            "demo.compare_which", lang, trained=only.name, score=f"test accuracy {only.acc}"
        )
    n = models[0].n
    rows = [f"| {m.name} | {m.acc} | {m.balanced} | {m.kappa} | {m.n} |" for m in models]
    ranked = sorted(models, key=lambda m: float(m.acc), reverse=True)
    best, next_ = ranked[0], ranked[1]
    verdict = (
        f"**{best.name} scores highest** ({best.acc}, against {next_.acc} for {next_.name})."
        if float(best.acc) > float(next_.acc)
        else f"**{best.name} and {next_.name} score the same** ({best.acc})."
    )
    lines = [
        f"**{len(models)} decoders trained and evaluated in this conversation**, all on the same "
        "held-out test epochs (a new split discards the models trained before it):",
        "",
        "| Decoder | Test accuracy | Balanced | Kappa | Test epochs |",
        "|---|---|---|---|---|",
        *rows,
        "",
        verdict,
        "",
        *_split_lines(state, n),
        "",
        "A gap of a few test epochs can come from the split alone: to compare on sessions the "
        "models never saw, ask to *split by session and train again*.",
    ]
    reused = [
        MODEL_NAMES[m]
        for m in models_named(question)
        if f"'{m}'" not in trained_now and any(s.key.split("-")[0] == m for s in models)
    ]
    if reused:
        lines.insert(
            0,
            f"{', '.join(reused)} was trained earlier in this conversation: its "
            "result is used, not trained again (ask to train it again for a new one).\n",
        )
    return "\n".join(lines)


def plot_answer(plotted: str, loaded: str) -> str:
    """What plot_psd showed, from its result."""
    shown = re.findall(r"^image: (.+?) shown to the user", plotted, flags=re.MULTILINE)
    first = loaded.splitlines()[0] if loaded else ""
    what = ", ".join(shown) or "the power spectrum"
    return (
        f"Below: **{what}**"
        + (f" ({first})" if first else "")
        + ". Motor imagery is read from the "
        "mu and beta bands over the motor cortex (C3 and C4): that is where the decoders look. "
        "Next, ask to *train a decoder*."
    )
