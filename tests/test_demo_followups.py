"""Follow-ups in the demo and for any model (#40): a question about a result is answered from the
result (nothing retrained), a comparison compares what the conversation trained (or asks which),
a plot is plotted, a Chinese request does the same work, and every follow-up the demo's answers
suggest is one it handles. The real agent and EEG tools against the scripted server over HTTP."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from brainchat import demo, i18n
from brainchat.agent.graph import build_agent
from brainchat.demo.intents import intent
from brainchat.demo.replies import respond
from brainchat.eeg.io.synthetic import write_demo_set
from brainchat.eeg.study.study import Study
from brainchat.eeg.tools.tools import build_eeg_tools
from brainchat.llm import make_chat_model
from brainchat.settings import AgentLimits
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools.search import FixtureBackend, make_search_tool

from support import collect, of, spec, text

LIMITS = AgentLimits(max_iterations=12, max_auto_rounds=12, max_execution_time=300)
SCORES = re.compile(r"(\w+) on (\d+) test epochs: accuracy ([\d.]+), balanced ([\d.]+)")
SUGGESTED = re.compile(r"(?<!\*)\*([^*]+)\*(?!\*)")  # the demo's suggestions are in italics


class Conversation:
    """One chat thread of the demo: its own study and history, as a New chat has."""

    def __init__(self, server, data: Path) -> None:
        self.study = Study(data)
        fc = make_chat_model(
            spec(server, demo.MODELS["AGENT_FUNCTION_CALL_MODEL"]), "function_call"
        )
        ans = make_chat_model(spec(server, demo.MODELS["AGENT_ANSWER_MODEL"]), "answer")
        tools = [
            *build_eeg_tools(self.study),
            make_search_tool(FixtureBackend(demo.SEARCH_FIXTURE)),
        ]
        self.agent = build_agent(fc, ans, tools, LIMITS, context=self.study.summary)
        self.history: list[BaseMessage] = []

    async def ask(self, question: str) -> tuple[str, dict[str, str]]:
        """(the answer, {tool: its latest successful result}) of one turn."""
        events = await collect(self.agent.run(question, self.history))
        answer = text(events)
        self.history += [HumanMessage(question), AIMessage(answer)]
        ran = {e.name: e.content for e in of(events, "tool_finished") if e.status == "success"}
        # the demo's answers say only what the run shows: the answer check flags nothing
        assert not [f for e in of(events, "answer_checked") for f in e.flags], answer
        return answer, ran


@pytest.fixture
def demo_server(scripted_server):
    scripted_server.responder = respond
    scripted_server.pace = 0
    return scripted_server


@pytest.fixture
def data(tmp_path: Path) -> Path:
    write_demo_set(tmp_path / "data" / "demo", subjects=2, sessions=2, trials=24, seed=0)
    return tmp_path / "data"


def suggestions(answer: str) -> list[str]:
    return [s for s in SUGGESTED.findall(answer) if len(s.split()) > 1 or not s.isascii()]


@pytest.mark.slow  # trains two models
async def test_follow_ups_read_the_results_compare_them_and_plot(demo_server, data) -> None:
    conv = Conversation(demo_server, data)
    answer, ran = await conv.ask("Train CSP+LDA on the demo files")
    model, n, acc, balanced = SCORES.search(ran["evaluate_model"]).groups()  # type: ignore[union-attr]
    assert model == "csp_lda"
    # the evaluation says what a split by trial can show: the same sessions in training and test
    assert (
        "note: split note: split by trial: the test trials come from the same 4 session(s)"
        in (ran["evaluate_model"])
    )

    # the next turn's model request carries the result: a question about it needs no tool
    asked = len(demo_server.requests_for("demo-agent"))
    answer, ran = await conv.ask("Why is the accuracy so high?")
    first = demo_server.requests_for("demo-agent")[asked].messages[0]["content"]
    assert f"csp_lda test acc {float(acc):.2f} (balanced {float(balanced):.2f}" in first, first
    assert "(test shares 4 session(s) with training" in first
    assert set(ran) == {"get_study_state"}  # read, never retrained
    assert f"**CSP+LDA: test accuracy {float(acc):.2f}**" in answer, answer
    assert "nothing was retrained" in answer
    assert "same 4 session(s) as the training trials" in answer and "optimistic" in answer
    assert f"moves the accuracy by one {n}th" in answer

    answer, ran = await conv.ask("为什么准确率这么高？")  # the same question in Chinese
    assert set(ran) == {"get_study_state"} and "nothing was retrained" in answer

    answer, ran = await conv.ask("Compare them")  # one model: it asks which
    assert "train_model" not in ran
    assert (
        answer.startswith("Only CSP+LDA has been trained") and "train CSP+LDA and compare" in answer
    )

    answer, ran = await conv.ask("now do the same with EEGNet")
    assert "eegnet on" in ran["evaluate_model"] and "split_dataset" not in ran
    answer, ran = await conv.ask("Compare them")
    assert "train_model" not in ran and "2 decoders trained and evaluated" in answer, answer
    assert re.search(r"\| CSP\+LDA \| [\d.]+ \|", answer) and re.search(r"\| EEGNet \| ", answer)

    answer, ran = await conv.ask("plot the PSD")
    assert set(ran) == {"plot_psd"} and "PSD per channel group 1-45 Hz" in answer

    answer, ran = await conv.ask("按会话划分再训练")  # split by session, in Chinese
    assert "split by session" in ran["split_dataset"] and "evaluate_model" in ran
    assert "split note" not in ran["evaluate_model"]  # whole sessions held out: no shared ones


@pytest.mark.slow  # trains a model
async def test_train_and_compare_compares_with_what_the_thread_trained(demo_server, data) -> None:
    conv = Conversation(demo_server, data)
    await conv.ask("训练 CSP+LDA")  # Chinese: the same work
    assert "csp_lda test acc" in conv.study.summary()
    answer, ran = await conv.ask("train EEGNet and compare")
    assert {"train_model", "evaluate_model", "get_study_state"} <= set(ran)
    assert "2 decoders trained and evaluated" in answer and "| CSP+LDA |" in answer, answer


async def test_a_request_the_demo_cannot_do_says_so_in_its_language(demo_server, data) -> None:
    conv = Conversation(demo_server, data)
    for question, lang in (
        ("Tell me a joke", "en"),
        ("讲个笑话", "zh-CN"),
        ("講個笑話吧", "zh-TW"),
    ):
        answer, ran = await conv.ask(question)
        assert ran == {} and answer == i18n.t("demo.capabilities", lang)
    answer, ran = await conv.ask("Compare them")  # nothing trained: it asks which
    assert "train_model" not in ran and answer == i18n.t("demo.compare_none", "en")


def test_every_follow_up_the_demo_suggests_is_one_it_handles() -> None:
    """The suggestions in the demo's own texts (answers, capabilities in every language) each
    read as a request the demo does something for, never as 'other'."""
    from brainchat.demo import answers, followups

    sources = [
        *(i18n.every("demo.capabilities")),
        *(i18n.every("demo.welcome")),
        *(i18n.every("demo.compare_which")),
        *(i18n.every("demo.compare_none")),
        answers.NO_DATA,
        followups.plot_answer("image: PSD shown to the user", ""),
        answers.files_answer("- a.edf: subject 01, session 01, 22 ch @ 250 Hz, 60 s, events: x 1"),
        followups.result_answer("", followups.scored(STATE), STATE),
        followups.compare_answer("", STATE),
        answers.training_answer({"evaluate_model": EVALUATED}),
    ]
    said = [s for text_ in sources for s in suggestions(text_)]
    assert len(said) >= 30, said
    for suggestion in said:
        assert intent(suggestion) != "other", suggestion


STATE = (
    "stage: trained\npreprocessing: band-pass 8-30 Hz\n"
    "epochs: left_hand 48, right_hand 48; split by trial: train 57/val 19/test 20; models: "
    "eegnet test acc 0.95 (balanced 0.95, kappa 0.90, 20 test epochs), csp_lda test acc 0.90 "
    "(balanced 0.90, kappa 0.80, 20 test epochs)\n"
)
EVALUATED = "eegnet on 20 test epochs: accuracy 0.950, balanced 0.950, kappa 0.900, ROC AUC 0.99"


def test_any_model_is_steered_to_read_a_result_and_to_state_the_split_note() -> None:
    """For real models: a question about a result is shown worked examples that read the study
    (never train), in English and Chinese; an evaluation whose split shares sessions asks the
    answer to say what that means."""
    from brainchat.eeg.guidance.answers import state_line
    from brainchat.eeg.guidance.examples import nearest

    for question in (
        "Why is the accuracy so high?",
        "为什么准确率这么高？",
        "比较一下训练过的模型",
    ):
        shown = nearest(question, 2)
        assert shown and "get_study_state" in shown[0].calls, (question, shown)
        assert not any("train_model" in e.calls for e in shown)
    said = state_line("evaluate_model", "x\nnote: split note: split by trial: the test trials ...")
    assert said is not None and "'split note:' says the test scores can show" in said


def test_chat_mode_sends_work_to_agent_mode_in_the_question_s_language() -> None:
    from brainchat.demo.replies import chat_reply

    for question, lang in (
        ("训练一个解码器", "zh-CN"),
        ("訓練一個解碼器", "zh-TW"),
        ("Train one", "en"),
    ):
        assert chat_reply(question).content == i18n.t("demo.chat_needs_tools", lang)


@pytest.mark.slow  # trains CSP+LDA
async def test_any_model_s_follow_up_request_carries_the_earlier_result(demo_server, data) -> None:
    """Not the demo's models: a follow-up turn of models scripted by hand, after a training. The
    function-call model's request has every model's scores and the split's shared sessions in
    its study line; the answer request, after it read the study, has the scores, the split note
    and the line asking to state it."""
    conv = Conversation(demo_server, data)
    await conv.ask("Train CSP+LDA on the demo files")
    s = demo_server
    fc = make_chat_model(spec(s, "fc"), "function_call")
    ans = make_chat_model(spec(s, "ans"), "answer")
    from brainchat.eeg.guidance import EEG  # as the session builds it: the EEG domain's guidance

    tools = build_eeg_tools(conv.study)
    agent = build_agent(fc, ans, tools, LIMITS, context=conv.study.summary, domain=EEG)
    s.queue("fc", ToolCalls([Call("get_study_state", {})]), Text("I read the study's results."))
    s.queue("ans", Text("The result stands as evaluated."))
    events = await collect(agent.run("Why is the accuracy so high?", conv.history))
    assert [e.name for e in of(events, "tool_call_started")] == ["get_study_state"]
    system = s.requests_for("fc")[0].messages[0]["content"]
    assert re.search(r"csp_lda test acc [\d.]+ \(balanced [\d.]+, kappa -?[\d.]+, 20 test", system)
    assert "split by trial: train" in system and "(test shares 4 session(s) with training" in system
    answer_request = s.requests_for("ans")[-1].messages[-1]["content"]
    assert "csp_lda test acc" in answer_request
    assert "split note: split by trial: the test trials come from the same 4 session(s)" in (
        answer_request
    )
    assert "what its 'split note:' says the test scores can show" in answer_request


async def test_a_within_session_cross_validation_says_its_sessions_were_seen(data) -> None:
    """The same knowledge for cross_validate: within_session folds share sessions (a note that
    says so), cross_session holds them out (no note)."""
    from brainchat import events

    study = Study(data)
    tools = {t.name: t for t in build_eeg_tools(study)}
    token = events._sink.set(lambda _e: None)
    try:
        for name, args in (
            (
                "load_data",
                {"files": [p.relative_to(data).as_posix() for p in sorted(data.rglob("*.edf"))]},
            ),
            ("epoch_data", {"tmin": 0.5, "tmax": 2.5}),
        ):
            events.set_tool_call(f"call-{name}", name)
            await tools[name].ainvoke(args)
        said = {}
        for protocol in ("within_session", "cross_session"):
            events.set_tool_call(f"call-{protocol}", "cross_validate")
            said[protocol] = await tools["cross_validate"].ainvoke(
                {"pipelines": ["csp_lda"], "protocol": protocol, "folds": 2, "permutations": 0}
            )
    finally:
        events._sink.reset(token)
    assert (
        "note: split note: within_session trains and tests each fold on trials of the same"
        in (said["within_session"])
    )
    assert "split note" not in said["cross_session"], said["cross_session"]


@pytest.mark.parametrize(
    "question", ["Load the file data/sub-99_ses-07.edf", "加载 sub-99_ses-07.edf"]
)
async def test_a_named_file_that_does_not_exist_is_called_missing(demo_server, data, question):
    """The demo loads the file a request names, not the whole folder: a missing one is reported
    as not found, with the nearest names, and no demo file is described as if it were it."""
    conv = Conversation(demo_server, data)
    events = await collect(conv.agent.run(question, []))
    calls = [e.args for e in of(events, "tool_call_started") if e.name == "load_data"]
    assert calls and all("sub-99_ses-07.edf" in " ".join(c["files"]) for c in calls), calls
    answer = text(events)
    assert "sub-99_ses-07.edf" in answer and "sub-01" in answer, answer  # missing, and the nearest
    assert not of(events, "tool_finished") or all(
        e.status != "success" for e in of(events, "tool_finished") if e.name == "load_data"
    )


@pytest.mark.slow  # trains CSP+LDA
async def test_a_follow_up_answered_with_no_tool_call_reads_the_study(demo_server, data) -> None:
    """A model that answers a question about an earlier result straight away (no tool call): the
    answer model's request carries the study as the function-call model saw it, with the scores
    and the split's shared sessions, so the answer rests on them, not on the model's memory."""
    conv = Conversation(demo_server, data)
    await conv.ask("Train CSP+LDA on the demo files")
    s = demo_server
    fc = make_chat_model(spec(s, "fc"), "function_call")
    ans = make_chat_model(spec(s, "ans"), "answer")
    from brainchat.eeg.guidance import EEG

    agent = build_agent(
        fc, ans, build_eeg_tools(conv.study), LIMITS, context=conv.study.summary, domain=EEG
    )
    s.queue("fc", Text("The study's line has the scores: no tool is needed."))
    s.queue("ans", Text("The result stands as evaluated."))
    events = await collect(agent.run("准确率为什么这么高？", conv.history))
    assert not of(events, "tool_call_started")
    answer_request = s.requests_for("ans")[-1].messages[-1]["content"]
    assert re.search(r"csp_lda test acc [\d.]+ \(balanced", answer_request), answer_request
    assert "(test shares 4 session(s) with training" in answer_request
