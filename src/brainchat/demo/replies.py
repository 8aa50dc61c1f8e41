"""The `--demo` models' replies, chosen per request from what it asks, never from a tour order.

The scripted server asks `respond(request)` for every request (`ScriptedServer(responder=...)`).
A reply depends only on the request: the question of this turn, the tools already run in it and
their results (the messages after the question), and the study line of the system prompt. So two
conversations, a New chat or the same question asked twice all get the same kind of answer.

Agent mode ("demo-agent" calls tools, "demo-answer" writes the answer):

- what is in the demo files: list_data_files, then load_data of every file (get_study_state
  when the study already holds data); the answer lists subjects, sessions, channels, duration and
  events from those results;
- train a decoder: list_data_files, load/filter/epoch/split, train_model + evaluate_model; the
  answer states the accuracy, per-class scores and the split that evaluate_model and
  split_dataset returned;
- train EEGNet / CSP+LDA / "do the same with EEGNet" / "split by session and train again": the
  decoder named, on the split asked (a new split when it names another);
- a question about a result ("why is the accuracy so high?"): get_study_state only, nothing
  retrained; the answer states the scores, the split and what the split's note says of them;
- compare: the decoders named that are not trained yet are trained, then get_study_state; the
  answer compares every result the study holds, or asks which decoder to compare with;
- plot the PSD: plot_psd (the files loaded first when the study is empty);
- a question for the literature: web_search, then an answer that cites the sources found;
- anything else: a short answer, in the question's language, saying that this is a scripted
  demo and what it can do.

The question's words are read in English and Chinese (demo/intents.py).

Chat mode ("demo-chat") has no tools: it answers EEG questions with a short overview and points
file and training requests to Agent mode.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from brainchat import i18n
from brainchat.demo.answers import answer_text
from brainchat.demo.intents import (
    EEG_WORDS,
    intent,
    language,
    models_named,
    split_named,
)
from brainchat.testing.replies import Call, Reply, Text, ToolCalls, message_text

AGENT, ANSWER, CHAT = "demo-agent", "demo-answer", "demo-chat"
PACE: dict[str, Any] = {"ttft": 0.3, "token_delay": 0.02}
_TRAINED = re.compile(r"(?:models: |, )([\w-]+) (?:test acc|\(val acc|\(not evaluated)")
_SPLIT_BY = re.compile(r"split by (\w+):")

CHAT_OVERVIEW = (
    "EEG records the brain's electrical activity from the scalp. Motor imagery shows up as a drop "
    "in mu (8-12 Hz) and beta (13-30 Hz) power over the motor cortex: over C3 for the right hand "
    "and over C4 for the left. That event-related desynchronisation is what decoders such as "
    "CSP+LDA or EEGNet learn to detect."
)
CHAT_NEEDS_TOOLS = i18n.t("demo.chat_needs_tools", "en")


@dataclass
class Turn:
    """What a request says about its turn: the question and the tools already run in it."""

    question: str = ""
    system: str = ""
    ran: list[tuple[str, str]] = field(default_factory=list)  # (tool name, result), in order
    last_round: list[tuple[str, str]] = field(default_factory=list)

    @property
    def stage(self) -> str:
        """The study's stage from the system prompt's study line (`EEG study: stage=split; ...`)."""
        found = re.search(r"EEG study: stage=(\w+)", self.system)
        return found[1] if found else "empty"

    def has(self, name: str) -> bool:
        return any(n == name for n, _ in self.ran)

    def result(self, name: str) -> str:
        return next((r for n, r in reversed(self.ran) if n == name), "")


def read_turn(messages: list[dict[str, Any]]) -> Turn:
    """The current turn: messages after the last answer (an assistant message without calls)."""
    start = 0
    for i, m in enumerate(messages):
        if m.get("role") == "assistant" and not m.get("tool_calls"):
            start = i + 1
    turn = Turn(system=next((message_text(m) for m in messages if m.get("role") == "system"), ""))
    names: dict[str, str] = {}
    for m in messages[start:]:
        role = m.get("role")
        if role == "user" and not turn.question:
            turn.question = message_text(m)
        elif role == "assistant":
            calls = m.get("tool_calls") or []
            names.update({c.get("id", ""): c.get("function", {}).get("name", "") for c in calls})
            turn.last_round = []
        elif role == "tool":
            done = (names.get(m.get("tool_call_id", ""), "?"), message_text(m))
            turn.ran.append(done)
            turn.last_round.append(done)
    return turn


def respond(request: Any) -> Reply | None:
    """The reply to one request of the scripted server (None: a model the demo does not know)."""
    messages: list[dict[str, Any]] = list(request.messages)
    tools = {t.get("function", {}).get("name") for t in request.tools or []}
    if request.model == CHAT:
        return chat_reply(read_turn(messages).question)
    if request.model == AGENT:
        if "submit_plan" in tools:  # plan mode: the demo works step by step
            return ToolCalls([Call("submit_plan", {"needs_plan": False, "steps": []})], **PACE)
        return agent_reply(read_turn(messages))
    if request.model == ANSWER:
        asked: dict[str, Any] = next((m for m in reversed(messages) if m.get("role") == "user"), {})
        return Text(answer_text(message_text(asked)), ttft=0.4, token_delay=0.02)
    return None


def chat_reply(question: str) -> Reply:
    kind, lang = intent(question), language(question)
    if kind in ("train", "files", "compare", "result", "plot"):
        text = i18n.t("demo.chat_needs_tools", lang)
    elif kind == "search" or EEG_WORDS.search(question):
        text = CHAT_OVERVIEW
    else:
        text = i18n.t("demo.capabilities", lang)
    return Text(text, reasoning="The user asked something; I answer briefly.", **PACE)


def agent_reply(turn: Turn) -> Reply:
    """The function-call model's next move in this turn."""
    if any(result.startswith("Error:") for _, result in turn.last_round):
        return done("A step failed; the answer says what is missing.")
    kind = intent(turn.question)
    if kind == "search":
        if turn.has("web_search"):
            return done("The sources found are enough to answer.")
        query = " ".join(turn.question.split())[:200] or "EEG"
        return calls("This asks for sources; I search first.", Call("web_search", {"query": query}))
    steps = {
        "files": files_step,
        "train": train_step,
        "result": result_step,
        "compare": compare_step,
        "plot": plot_step,
    }
    if kind in steps:
        return steps[kind](turn)
    return done("Nothing to look up: I say what the demo can do.")


def files_step(turn: Turn) -> Reply:
    if turn.has("load_data") or turn.has("get_study_state"):
        return done("The loaded files' details are enough to describe them.")
    if turn.stage != "empty" and not turn.has("list_data_files"):  # loaded earlier
        return calls("The study holds data already; I read its state.", Call("get_study_state"))
    return load_step(turn) or done("The loaded files' details are enough to describe them.")


# A recording's path as a request writes it (data/sub-99_ses-07.edf, "my file.vhdr"): a file the
# request names is loaded as named, so one that does not exist is reported as not found.
NAMED = re.compile(r"[\w./\\-]+\.(?:edf|bdf|gdf|fif|fif\.gz|set|vhdr|zip)\b", flags=re.IGNORECASE)


def load_step(turn: Turn) -> Reply | None:
    """Load the files the request names; else list the data folder, then load every recording in
    it (None: loaded in this turn)."""
    if (named := NAMED.findall(turn.question)) and not turn.has("load_data"):
        return calls(
            f"The request names {len(named)} file(s); I load them.",
            Call("load_data", {"files": named}),
        )
    if not turn.has("list_data_files"):
        return calls("First I check which recordings are in the data folder.", LIST)
    if turn.has("load_data"):
        return None
    files = listed_files(turn.result("list_data_files"))
    if not files:
        return done("No recording in the data folder: the answer says how to write the demo set.")
    return calls(
        f"{len(files)} recording(s). I load them all to read their details.",
        Call("load_data", {"files": files}),
    )


def plot_step(turn: Turn) -> Reply:
    """The power spectrum of the loaded recordings (loaded first when the study is empty)."""
    if turn.has("plot_psd"):
        return done("The spectrum is shown; the answer says what it shows.")
    if turn.stage == "empty" and (loading := load_step(turn)) is not None:
        return loading
    return calls("I plot the spectrum of the loaded recordings.", PSD)


def trained(system: str) -> list[str]:
    """The models the study line names (`models: eegnet test acc 0.95 (...), csp_lda ...`)."""
    line = (
        system.split("models: ", 1)[1].split(";")[0].split("\n")[0] if "models: " in system else ""
    )
    return _TRAINED.findall("models: " + line) if line else []


def result_step(turn: Turn) -> Reply:
    """A question about a result is answered from the study's results: read, never retrained."""
    if "test acc" not in turn.system:  # nothing evaluated yet: evaluating is the work asked
        if turn.stage == "trained" and not turn.has("evaluate_model"):
            return calls("A model is trained but not evaluated: I evaluate it.", EVALUATE)
        return train_step(turn)
    if turn.has("get_study_state"):
        return done("The study's results answer the question; nothing was retrained.")
    return calls(
        "This asks about a result the study already holds: I read it (its scores, split and "
        "notes) and retrain nothing.",
        Call("get_study_state"),
    )


def compare_step(turn: Turn) -> Reply:
    """Train the named decoders not trained yet, then read every result of the study."""
    have = {name.split("-")[0] for name in trained(turn.system)}
    todo = [m for m in models_named(turn.question) if m not in have]
    if todo:
        return train_step(turn, todo[0], finish=False)
    if not have:
        return done("Nothing is trained: the answer asks which decoders to compare.")
    if read_after(turn, "get_study_state", "evaluate_model"):
        return done("Every result of the study is read: the answer compares them.")
    return calls("I read every result the study holds to compare them.", Call("get_study_state"))


def read_after(turn: Turn, name: str, other: str) -> bool:
    """Whether `name` ran in this turn after the last `other` (or `other` never ran)."""
    ran = [n for n, _ in turn.ran]
    if name not in ran:
        return False
    return other not in ran or ran[::-1].index(name) < ran[::-1].index(other)


def train_step(turn: Turn, model: str | None = None, finish: bool = True) -> Reply:
    """Train from where the study is (the system prompt's study line is fresh every round)."""
    if finish and turn.has("evaluate_model"):
        return done("Trained and evaluated; the figures are shown. Time to summarise.")
    model = model or next(iter(models_named(turn.question)), "eegnet")
    stage, by = turn.stage, split_named(turn.question)
    now = _SPLIT_BY.search(turn.system)
    split = Call("split_dataset", {"by": by or "trial", "test_ratio": 0.2, "val_ratio": 0.2})
    if stage in ("split", "trained") and (by is None or (now is not None and now[1] == by)):
        return calls(
            f"The epochs are split already. I read the study's split, train {model}, then "
            "evaluate it on the held-out test trials.",
            Call("get_study_state"),
            Call("train_model", {"model": model, "epochs": 12}),
            EVALUATE,
        )
    if stage in ("epoched", "split", "trained"):
        return calls(f"I hold out test data by {by or 'trial'} as asked, then train.", split)
    prepare = [Call("epoch_data", {"tmin": 0.5, "tmax": 2.5}), split]
    if "band-pass" not in turn.system:
        prepare.insert(0, Call("bandpass_filter", {"l_freq": 8, "h_freq": 30}))
    if stage == "loaded":
        return calls("The recordings are loaded; I filter, epoch and split them.", *prepare)
    if not turn.has("list_data_files"):
        return calls("First I check which recordings are in the data folder.", LIST)
    files = listed_files(turn.result("list_data_files"))
    if not files:
        return done("No recording to train on: the answer says how to write the demo set.")
    return calls(
        f"{len(files)} recording(s). I load them all, band-pass 8-30 Hz (mu and beta), cut "
        "0.5-2.5 s epochs after each cue and hold out trials for validation and test.",
        Call("load_data", {"files": files}),
        *prepare,
    )


LIST = Call("list_data_files", {})
EVALUATE = Call("evaluate_model", {})
PSD = Call("plot_psd", {"fmin": 1, "fmax": 45})


def listed_files(result: str) -> list[str]:
    """The file paths in a list_data_files result (`path (1.7 MB, subject 01, session 01)`)."""
    return re.findall(r"^(\S.*?) \([\d.]+ MB\b", result, flags=re.MULTILINE)


def calls(reasoning: str, *chosen: Call) -> Reply:
    return ToolCalls(list(chosen), reasoning=reasoning, **PACE)


def done(reasoning: str) -> Reply:
    return Text("I have what I need to answer.", reasoning=reasoning, **PACE)
