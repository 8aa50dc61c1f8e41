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
- a question for the literature: web_search, then an answer that cites the sources found;
- anything else: a short answer naming what the demo can do.

Chat mode ("demo-chat") has no tools: it answers EEG questions with a short overview and points
file and training requests to Agent mode.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from brainchat.demo.answers import CAPABILITIES, answer_text
from brainchat.testing.replies import Call, Reply, Text, ToolCalls, message_text

AGENT, ANSWER, CHAT = "demo-agent", "demo-answer", "demo-chat"
PACE: dict[str, Any] = {"ttft": 0.3, "token_delay": 0.02}
Intent = Literal["train", "files", "search", "other"]

# "What is EEGNet?" asks the literature; "train / fit / run EEGNet" or "a decoder" asks for work.
_TRAIN = re.compile(
    r"\b(train\w*|fit\w*|decod\w*|classif\w*|evaluat\w*|accura\w*|pipeline)\b"
    r"|\b(?:run|try|compare|use)\b.*\b(?:eegnet|csp|lda|shallow\w*|sccnet)\b"
)
_MODELS = (
    ("csp", "csp_lda"),
    ("lda", "csp_lda"),
    ("shallow", "shallowconvnet"),
    ("sccnet", "sccnet"),
)
_FILES = re.compile(
    r"\b(files?|recordings?|data ?sets?|demo set|subjects?|sessions?|channels?|load\w*)\b"
    r"|what(?: is|'s) in\b"
)
_SEARCH = re.compile(
    r"\b(search\w*|cite\w*|citations?|sources?|papers?|literature|stud(?:y|ies)|references?"
    r"|what (?:is|are|does)|why|how (?:does|do|is)|explain\w*|erd|ers|desynchroni[sz]\w*"
    r"|rhythms?|motor imagery|mu|beta|alpha|bci)\b"
)
_EEG_WORDS = re.compile(r"\b(eeg|brain\w*|motor|imagery|mu|beta|alpha|erd|cortex|neuro\w*)\b")

CHAT_OVERVIEW = (
    "EEG records the brain's electrical activity from the scalp. Motor imagery shows up as a drop "
    "in mu (8-12 Hz) and beta (13-30 Hz) power over the motor cortex: over C3 for the right hand "
    "and over C4 for the left. That event-related desynchronisation is what decoders such as "
    "CSP+LDA or EEGNet learn to detect."
)
CHAT_NEEDS_TOOLS = (
    "Chat mode has no tools, so it cannot open files or train models. Switch to **Agent** mode "
    "(the mode picker beside the input) and ask again: it lists and loads the demo files, or "
    "trains and evaluates a decoder on them."
)


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


def intent(question: str) -> Intent:
    """What the question asks for; training wins over files, files over the literature."""
    text = question.lower()
    for kind, pattern in (("train", _TRAIN), ("files", _FILES), ("search", _SEARCH)):
        if pattern.search(text):
            return kind  # type: ignore[return-value]
    return "other"


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
    kind = intent(question)
    if kind in ("train", "files"):
        text = CHAT_NEEDS_TOOLS
    elif kind == "search" or _EEG_WORDS.search(question.lower()):
        text = CHAT_OVERVIEW
    else:
        text = CAPABILITIES
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
    if kind == "files":
        return files_step(turn)
    if kind == "train":
        return train_step(turn)
    return done("Nothing to look up: I say what the demo can do.")


def files_step(turn: Turn) -> Reply:
    if turn.has("load_data") or turn.has("get_study_state"):
        return done("The loaded files' details are enough to describe them.")
    if not turn.has("list_data_files"):
        if turn.stage != "empty":  # loaded earlier in this conversation
            return calls("The study holds data already; I read its state.", Call("get_study_state"))
        return calls("First I check which recordings are in the data folder.", LIST)
    files = listed_files(turn.result("list_data_files"))
    if not files:
        return done("No recording in the data folder: the answer says how to write the demo set.")
    return calls(
        f"{len(files)} recording(s). I load them all to read their details.",
        Call("load_data", {"files": files}),
    )


def train_step(turn: Turn) -> Reply:
    """Train from where the study is (the system prompt's study line is fresh every round)."""
    if turn.has("evaluate_model"):
        return done("Trained and evaluated; the figures are shown. Time to summarise.")
    model = model_asked(turn.question)
    stage = turn.stage
    if stage in ("split", "trained"):
        return calls(
            f"The epochs are split already. I read the study's split, train {model}, then "
            "evaluate it on the held-out test trials.",
            Call("get_study_state"),
            Call("train_model", {"model": model, "epochs": 12}),
            Call("evaluate_model", {}),
        )
    prepare = [
        Call("epoch_data", {"tmin": 0.5, "tmax": 2.5}),
        Call("split_dataset", {"by": "trial", "test_ratio": 0.2, "val_ratio": 0.2}),
    ]
    if stage == "epoched":
        return calls("The data is epoched; I hold out trials for validation and test.", prepare[1])
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


def model_asked(question: str) -> str:
    """The decoder the question names (train_model's name for it); EEGNet when it names none."""
    text = question.lower()
    return next((model for word, model in _MODELS if word in text), "eegnet")


def listed_files(result: str) -> list[str]:
    """The file paths in a list_data_files result (`path (1.7 MB, subject 01, session 01)`)."""
    return re.findall(r"^(\S.*?) \([\d.]+ MB\b", result, flags=re.MULTILINE)


def calls(reasoning: str, *chosen: Call) -> Reply:
    return ToolCalls(list(chosen), reasoning=reasoning, **PACE)


def done(reasoning: str) -> Reply:
    return Text("I have what I need to answer.", reasoning=reasoning, **PACE)
