"""The demo answer model's text, written from the tool results in its request (never canned numbers).

The agent's answer request is one user message: `User request: ...`, then `Web sources (cite as
[n], ...):`, `Tool results:` (`- name(args):` and the result) and failures. The answer states what those
results say: the files' subjects, sessions, channels, duration and events; a model's accuracy,
per-class scores and split; the sources, cited [n]. It shows real models the way the answer prompt
asks them to go: the key figures in the text, not "see the step".
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from brainchat import i18n
from brainchat.demo import followups
from brainchat.demo.intents import MODEL_NAMES, intent, language

HEADERS = ("Web sources (cite as [n]", "Tool results:", "Tool calls that failed")
CAPABILITIES = i18n.t("demo.capabilities", "en")
NO_DATA = (
    "There is no EEG recording in the data folder yet. Write the demo set with the welcome's "
    "**Write the demo EEG set** button (or `brainchat demo-data`), then ask again."
)
_TOOL = re.compile(r"^- (\w+)\((.*)\):$")
_SOURCE = re.compile(r"^\[(\d+)\] (.*)$")  # what the source says
_FROM = re.compile(r"^\s+\(from: (.*) — (\S+)\)$")  # its title and address, below
_RECORDING = re.compile(
    r"^- (?P<name>.+?): subject (?P<sub>\S+), session (?P<ses>\S+), (?P<ch>\d+) ch @ "
    r"(?P<sf>[\d.]+) Hz, (?P<dur>\d+) s, events: (?P<events>.*?)(?: \(damaged.*)?$",
    re.MULTILINE,
)
_EVALUATION = re.compile(
    r"(?P<model>\S+) on (?P<n>\d+) test epochs: accuracy (?P<acc>[\d.]+), balanced "
    r"(?P<bal>[\d.]+), kappa (?P<kappa>-?[\d.]+)(?:, ROC AUC (?P<auc>\S+))?"
)
_CLASS = re.compile(
    r"^\s+(\S+): precision ([\d.]+), recall ([\d.]+), F1 ([\d.]+) \(n=(\d+)\)", re.MULTILINE
)
_SPLIT = re.compile(  # split_dataset's "train 57 (29/28), val 19 ..." or the study line's "57/val"
    r"split by (\w+).*?\btrain (\d+).*?\bval (\d+).*?\btest (\d+)"
)


@dataclass
class AnswerInput:
    """The parts of an answer request."""

    question: str = ""
    sources: list[tuple[str, str, str, str]] = field(default_factory=list)  # n, title, url, snip
    results: dict[str, str] = field(default_factory=dict)  # tool name -> its latest result
    failures: list[str] = field(default_factory=list)


def parse(text: str) -> AnswerInput:
    """Split the answer request into the question, the sources, the results and the failures."""
    got, section, name, lines = AnswerInput(), "question", "", list[str]()

    def close() -> None:
        if name:
            got.results[name] = "\n".join(lines).strip()

    for line in text.splitlines():
        header = next((h for h in HEADERS if line.startswith(h)), None)
        if header is not None:
            close()
            section, name, lines = header, "", []
        elif section == "question":
            got.question += line.removeprefix("User request: ") + "\n"
        elif section == HEADERS[0] and (m := _SOURCE.match(line)):
            got.sources.append((m[1], "", "", m[2]))
        elif section == HEADERS[0] and (m := _FROM.match(line)) and got.sources:
            n, _, _, snippet = got.sources[-1]
            got.sources[-1] = (n, m[1], m[2], snippet)
        elif section == HEADERS[1] and (m := _TOOL.match(line)):
            close()
            name, lines = m[1], []
        elif section == HEADERS[1]:
            lines.append(line)
        elif section == HEADERS[2] and line.startswith("- "):
            got.failures.append(line[2:])
    close()
    got.question = got.question.strip()
    return got


def answer_text(request: str) -> str:
    """The demo's answer to an answer request (see the module docstring)."""
    got = parse(request)
    kind = intent(got.question)
    if (text := followups.answer(kind, got.question, got.results)) is not None:
        pass
    elif "evaluate_model" in got.results:
        text = training_answer(got.results)
    elif state := got.results.get("get_study_state") or got.results.get("load_data"):
        text = files_answer(state)
    elif "list_data_files" in got.results and " MB, subject " not in got.results["list_data_files"]:
        text = NO_DATA
    elif got.sources:
        text = sources_answer(got.question, got.sources)
    elif not got.failures:
        return i18n.t("demo.capabilities", language(got.question))
    else:
        text = "The demo could not finish what you asked."
    if got.failures:
        text += "\n\nWhat failed: " + "; ".join(got.failures) + "."
    return text


def files_answer(state: str) -> str:
    """What is in the loaded files, from load_data's or get_study_state's lines."""
    recs = list(_RECORDING.finditer(state))
    if not recs:
        return "The study holds no recording yet:\n\n" + state
    subjects = sorted({r["sub"] for r in recs})
    sessions = sorted({r["ses"] for r in recs})
    events: Counter[str] = Counter()
    for r in recs:
        for part in r["events"].split(", "):
            label, _, count = part.rpartition(" ")
            if count.isdigit():
                events[label] += int(count)
    durations = sorted(int(r["dur"]) for r in recs)
    rows = [
        f"| {r['name']} | {r['sub']} | {r['ses']} | {r['ch']} @ {r['sf']} Hz | {r['dur']} s | "
        f"{r['events']} |"
        for r in recs
    ]
    channels = next((line for line in state.splitlines() if line.startswith("channels: ")), "")
    span = (
        f"{durations[0]}-{durations[-1]} s"
        if durations[0] != durations[-1]
        else f"{durations[0]} s"
    )
    total = ", ".join(f"{k} {v}" for k, v in events.items()) or "none"
    return (
        f"The demo set holds **{len(recs)} recordings: {len(subjects)} subject(s) × "
        f"{len(sessions)} session(s)** (subjects {', '.join(subjects)}; sessions "
        f"{', '.join(sessions)}), each {span} long.\n\n"
        "| File | Subject | Session | Channels | Duration | Events |\n|---|---|---|---|---|---|\n"
        + "\n".join(rows)
        + f"\n\n**Events** in all: {total} (one per motor-imagery cue)."
        + (f"\n\n**Channels** ({channels.count(',') + 1}): {channels[10:]}." if channels else "")
        + "\n\nThey are loaded now: ask to *train a decoder* on them next."
    )


def training_answer(results: dict[str, str]) -> str:
    """The evaluation's figures, the split and the pipeline, from the tools' own results."""
    ev = _EVALUATION.search(results["evaluate_model"])
    if ev is None:
        return "The model was evaluated:\n\n" + results["evaluate_model"]
    key = ev["model"]
    base = MODEL_NAMES.get(key.split("-")[0], key.split("-")[0])
    model = base if "-" not in key else f"{base} (`{key}`)"  # eegnet-2: the second EEGNet
    auc = f", ROC AUC {ev['auc']}" if ev["auc"] else ""
    lines = [
        f"**{model} reached an accuracy of {ev['acc']} on the {ev['n']} held-out test epochs** "
        f"(balanced accuracy {ev['bal']}, Cohen's kappa {ev['kappa']}{auc}).",
        "",
        "| Class | Precision | Recall | F1 | Test epochs |",
        "|---|---|---|---|---|",
        *(f"| {c} | {p} | {r} | {f} | {n} |" for c, p, r, f, n in _CLASS.findall(ev.string)),
    ]
    told = results.get("split_dataset") or results.get("get_study_state", "")
    if split := _SPLIT.search(told):
        by, train, val, test = split.groups()
        lines += [
            "",
            f"**Split** by {by}: {train} epochs to train, {val} to validate, {test} to test.",
        ]
    steps = [_pipeline_step(name, results[name]) for name in PIPELINE if name in results]
    if steps := [s for s in steps if s]:
        lines += ["", "Pipeline: " + "; ".join(steps) + "."]
    lines += [
        "",
        _figures(results["evaluate_model"])
        + "To compare, ask to train "
        + ("EEGNet" if base == "CSP+LDA" else "CSP+LDA")
        + " and compare; to ask about this result, ask *what does this accuracy tell me?*",
    ]
    return "\n".join(lines)


PIPELINE = ("load_data", "bandpass_filter", "epoch_data", "train_model")


def _figures(evaluation: str) -> str:
    """ "Below: <the figures evaluate_model showed>. " ("" when it showed none)."""
    shown = re.findall(r"^image: (.+?) shown to the user", evaluation, flags=re.MULTILINE)
    return f"Below: {', '.join(shown)}. " if shown else ""


def _pipeline_step(name: str, result: str) -> str:
    first = result.splitlines()[0] if result else ""
    if name == "load_data":
        return first  # "loaded 4 file(s)"
    if name == "bandpass_filter":
        return first.split(";")[0]  # "applied band-pass 8-30 Hz to 4 recording(s)"
    if name == "epoch_data":
        return first.split(";")[0].split(", 22 ch")[0]
    return first.split(". Call ")[0]  # "trained 'eegnet' on cpu in 8.3 s: train acc ..."


def sources_answer(question: str, sources: list[tuple[str, str, str, str]]) -> str:
    """An answer that cites every source found, [n] as listed."""
    about_erd = re.search(r"desynchroni|\berd\b|motor imagery", question.lower())
    erd = next((n for n, t, _, s in sources if re.search(r"desynchroni|mu ", (t + s).lower())), "")
    intro = ""
    if about_erd and erd:
        intro = (
            "Event-related desynchronisation (ERD) is a drop in band power while a movement is "
            f"imagined or performed [{erd}]. For motor imagery it is strongest in the mu (8-13 Hz) "
            f"and beta bands over the sensorimotor cortex: C3 for the right hand, C4 for the left "
            f"[{erd}].\n\n"
        )
    found = "\n".join(f"- {s or t} [{n}]" for n, t, _, s in sources)
    return f"{intro}What the {len(sources)} sources found say:\n\n{found}"
