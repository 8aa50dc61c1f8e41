"""The `--demo` models (brainchat.demo.replies) answer by what is asked, in any conversation, as often
as asked: the real agent and EEG tools against the scripted server over HTTP, demo responder on."""

from __future__ import annotations

import re
from pathlib import Path

import openai
import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from brainchat import demo
from brainchat.agent.graph import build_agent
from brainchat.demo.answers import CAPABILITIES
from brainchat.demo.replies import CHAT_NEEDS_TOOLS, CHAT_OVERVIEW, respond
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools
from brainchat.llm import make_chat_model
from brainchat.settings import AgentLimits
from brainchat.store.config import load_store_config
from brainchat.tools.search import FixtureBackend, make_search_tool

from support import collect, of, spec, text

LIMITS = AgentLimits(max_iterations=12, max_auto_rounds=12, max_execution_time=300)
ACC = re.compile(r"on (\d+) test epochs: accuracy ([\d.]+), balanced ([\d.]+), kappa (-?[\d.]+)")
CLASS = re.compile(r"^\s+(\w+): precision ([\d.]+), recall ([\d.]+), F1 ([\d.]+)", re.MULTILINE)
SPLIT = re.compile(r"train (\d+)\D.*?val (\d+)\D.*?test (\d+)")  # split_dataset or study line


class Conversation:
    """One chat thread of the demo: its own study and history, as a New chat has."""

    def __init__(self, server, data: Path) -> None:
        self.study = Study(data)
        fc = make_chat_model(
            spec(server, demo.MODELS["AGENT_FUNCTION_CALL_MODEL"]), "function_call"
        )
        ans = make_chat_model(spec(server, demo.MODELS["AGENT_ANSWER_MODEL"]), "answer")
        search = make_search_tool(FixtureBackend(demo.SEARCH_FIXTURE))
        tools = [*build_eeg_tools(self.study), search]
        self.agent = build_agent(fc, ans, tools, LIMITS, context=self.study.summary)
        self.history: list[BaseMessage] = []

    async def ask(self, question: str) -> tuple[str, dict[str, str], list]:
        """(the answer, {tool: its latest successful result}, the events) of one turn."""
        events = await collect(self.agent.run(question, self.history))
        answer = text(events)
        self.history += [HumanMessage(question), AIMessage(answer)]
        done = {e.name: e.content for e in of(events, "tool_finished") if e.status == "success"}
        return answer, done, events


def test_the_demo_pace_is_read_from_its_variable_and_checked() -> None:
    from brainchat.settings.errors import ConfigError

    assert demo.pace({}) == 1.0  # like a served model
    assert demo.pace({"BRAINCHAT_DEMO_PACE": "0"}) == 0.0
    assert demo.pace({"BRAINCHAT_DEMO_PACE": " 2.5 "}) == 2.5
    for bad in ("fast", "-1", "11"):
        with pytest.raises(ConfigError, match="BRAINCHAT_DEMO_PACE"):
            demo.pace({"BRAINCHAT_DEMO_PACE": bad})


def test_the_demo_server_runs_at_the_pace_asked(tmp_path: Path) -> None:
    server = demo.start({"BRAINCHAT_DEMO_PACE": "0", "BRAINCHAT_STATE_DIR": str(tmp_path)})
    try:
        assert server.pace == 0.0
    finally:
        server.stop()


@pytest.fixture
def demo_server(scripted_server):
    scripted_server.responder = respond
    scripted_server.pace = 0  # the demo's replies at once: these tests read what they say
    return scripted_server


@pytest.fixture
def data(tmp_path: Path) -> Path:
    write_demo_set(tmp_path / "data" / "demo", subjects=2, sessions=2, trials=24, seed=0)
    return tmp_path / "data"


def assert_states_the_evaluation(answer: str, results: dict[str, str], split: str) -> None:
    """The answer's text carries the accuracy, every class's scores and the split, as computed."""
    n, acc, balanced, kappa = ACC.search(results["evaluate_model"]).groups()  # type: ignore[union-attr]
    assert f"accuracy of {acc} on the {n} held-out test epochs" in answer, answer
    assert f"balanced accuracy {balanced}, Cohen's kappa {kappa}" in answer, answer
    classes = CLASS.findall(results["evaluate_model"])
    assert len(classes) == 2
    for label, precision, recall, f1 in classes:
        assert f"| {label} | {precision} | {recall} | {f1} |" in answer, answer
    train, val, test = SPLIT.search(split).groups()  # type: ignore[union-attr]
    assert f"{train} epochs to train, {val} to validate, {test} to test" in answer, answer
    assert "evaluate_model step" not in answer  # the figures are here, not behind a step


@pytest.mark.slow  # trains a model
async def test_files_question_describes_the_files_and_training_is_asked_for_apart(
    demo_server, data
) -> None:
    conv = Conversation(demo_server, data)
    answer, ran, _ = await conv.ask("Load all the demo files and tell me what is in them")
    assert set(ran) == {"list_data_files", "load_data"}  # no training behind the user's back
    assert "4 recordings: 2 subject(s) × 2 session(s)" in answer, answer
    assert "subjects 01, 02; sessions 01, 02" in answer
    for name in sorted(p.relative_to(data).as_posix() for p in data.rglob("*.edf")):
        assert re.search(rf"\| {name} \| \d\d \| \d\d \| 22 @ 250 Hz \| \d+ s \|", answer), name
    assert "left_hand 48, right_hand 48" in answer and "**Channels** (22): Fz, FC3" in answer

    answer, ran, _ = await conv.ask("Train a decoder on it")
    assert {"bandpass_filter", "epoch_data", "split_dataset", "train_model"} <= set(ran)
    assert "load_data" not in ran  # the files were loaded in the turn before
    assert_states_the_evaluation(answer, ran, ran["split_dataset"])
    assert answer.startswith("**EEGNet reached an accuracy of")

    answer, ran, _ = await conv.ask("Train a decoder again")  # asked twice: trained twice
    assert {"train_model", "evaluate_model"} <= set(ran) and "split_dataset" not in ran
    assert "EEGNet (`eegnet-2`) reached an accuracy of" in answer
    assert_states_the_evaluation(answer, ran, ran["get_study_state"])
    answer, ran, _ = await conv.ask("Now train CSP+LDA on the same split")  # the model named
    assert "CSP+LDA reached an accuracy of" in answer and "ask to train EEGNet" in answer
    assert_states_the_evaluation(answer, ran, ran["get_study_state"])
    # the answer model was asked, by its prompt, for the figures in the text (real models too)
    system = demo_server.requests_for("demo-answer")[-1].messages[0]["content"]
    assert "State the key figures from the tool results in the answer itself" in system


@pytest.mark.slow  # trains a model
async def test_a_new_conversation_trains_from_scratch_and_anything_else_names_the_demo(
    demo_server, data
) -> None:
    first = Conversation(demo_server, data)
    await first.ask("what is in the demo files?")
    conv = Conversation(demo_server, data)  # New chat: an empty study, no history
    answer, ran, _ = await conv.ask("Train a decoder on the demo EEG set")
    assert {"list_data_files", "load_data", "train_model", "evaluate_model"} <= set(ran)
    assert_states_the_evaluation(answer, ran, ran["split_dataset"])
    assert "This is the end of the scripted tour" not in answer
    answer, ran, _ = await conv.ask("Tell me a joke")
    assert ran == {} and answer == CAPABILITIES
    answer, ran, _ = await conv.ask("Tell me a joke")  # as often as asked
    assert ran == {} and answer == CAPABILITIES


async def test_without_demo_files_the_answer_says_how_to_write_them(demo_server, tmp_path) -> None:
    conv = Conversation(demo_server, tmp_path)
    answer, ran, _ = await conv.ask("What is in the demo files?")
    assert set(ran) == {"list_data_files"} and "Write the demo EEG set" in answer
    answer, ran, _ = await conv.ask("Train a decoder")
    assert "train_model" not in ran and "Write the demo EEG set" in answer


async def test_a_literature_question_searches_and_cites_every_source_the_step_counts(
    demo_server, tmp_path
) -> None:
    from brainchat.ui import step_text

    conv = Conversation(demo_server, tmp_path)
    for _ in range(2):  # the same question twice gets the same kind of answer
        answer, ran, events = await conv.ask("What is event-related desynchronisation?")
        finished = of(events, "tool_finished")[0]
        listed = re.findall(r"^\d+\. \[(.+?)\]\(", step_text.result_text(finished), re.MULTILINE)
        assert len(listed) == 4 and "MNE-Python documentation" in listed
        assert step_text.finished_title(finished).startswith("web_search · 4 results")
        assert "found 4 source(s)" in of(events, "evaluation")[0].reason
        assert "What the 4 sources found say" in answer and "[4]" in answer
        assert "Event-related desynchronisation (ERD) is a drop in band power" in answer
    answer, ran, _ = await conv.ask("What is EEGNet?")  # about a model: read, do not train
    assert set(ran) == {"web_search"} and "What the 4 sources found say" in answer


def test_chat_mode_answers_eeg_questions_and_sends_tool_work_to_agent_mode(demo_server) -> None:
    with openai.OpenAI(base_url=demo_server.base_url, api_key="x", max_retries=0) as sdk:

        def ask(question: str) -> str:
            reply = sdk.chat.completions.create(
                model="demo-chat", messages=[{"role": "user", "content": question}]
            )
            return str(reply.choices[0].message.content)

        assert ask("What is the mu rhythm?") == CHAT_OVERVIEW
        assert ask("Train a decoder on the demo set") == CHAT_NEEDS_TOOLS
        assert ask("What is in the demo files?") == CHAT_NEEDS_TOOLS
        assert ask("Tell me a joke") == CAPABILITIES


def test_the_demo_keeps_its_threads_in_its_own_state_folder(tmp_path) -> None:
    env = {
        "BRAINCHAT_DATA_DIR": str(tmp_path / "data"),
        "DATABASE_URL": "postgresql://u:p@db.example/brainchat",  # the real app's shared database
        "BRAINCHAT_AUTH": "password",  # its accounts are not in the demo's database
    }
    real = load_store_config(env)
    folder = demo.keep_apart(env)
    cfg = load_store_config(env)
    assert folder == real.state_dir / "demo" == cfg.state_dir
    assert cfg.database_url == f"sqlite+aiosqlite:///{(folder / 'brainchat.db').resolve()}"
    assert cfg.auth == "local" and cfg.data_dir == real.data_dir  # the same EEG files
    assert demo.keep_apart(env) == folder  # twice (command line, then start): not demo/demo
