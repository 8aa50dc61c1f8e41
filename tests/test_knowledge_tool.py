"""search_knowledge through the real agent and the scripted model server: a passage of the user's
own documents is a source [n] with its document's title and page, held by the same answer check
as web results; an invented [n] is flagged; no match says so and gives nothing to cite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import ToolException

from brainchat.agent.graph import build_agent
from brainchat.knowledge.model import Chunk, Passage
from brainchat.knowledge.tool import NOTHING, make_knowledge_tool, passage_title
from brainchat.llm import make_chat_model
from brainchat.settings import AgentLimits
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools.registry import flags_of

from support import collect, of, spec

EEGNET = "EEGNet: a compact convolutional network"
PROTOCOL = "Lab motor-imagery protocol"


class StandIn:
    """The knowledge service's search as the tool sees it (its own tests cover the real one):
    the passages of the user's collections sharing a word with the query."""

    def __init__(self, passages: dict[str, list[Passage]]) -> None:
        self.passages = passages
        self.asked: list[tuple[str, str, int]] = []

    def search(self, user: str, query: str, k: int) -> list[Passage]:
        self.asked.append((user, query, k))
        words = set(query.lower().split())
        own = self.passages.get(user, [])
        return [p for p in own if words & set(p.chunk.text.lower().split())][:k]


def passage(doc: str, ordinal: int, text: str, title: str, page: int = 0, heading: str = ""):
    chunk = Chunk(doc_id=doc, ordinal=ordinal, text=text, page=page, heading=heading)
    return Passage(chunk=chunk, title=title, collection="ana/personal", score=1.0)


LIBRARY = {
    "ana": [
        passage(
            "d1", 7, "EEGNet reached 0.68 mean accuracy on BCI IV 2a within-subject", EEGNET, 4
        ),
        passage("d2", 0, "Band-pass 8-30 Hz before CSP in the protocol", PROTOCOL, 0, "Filtering"),
    ],
    "bo": [passage("d9", 0, "Bo's private notes on EEGNet accuracy", "Bo's notes", 1)],
}


def agent(server: Any, tool: Any) -> Any:
    return build_agent(
        make_chat_model(spec(server, "fc"), "function_call"),
        make_chat_model(spec(server, "ans"), "answer"),
        [tool],
        AgentLimits(evaluation="model"),
    )


def answer_request(server: Any) -> str:
    return json.dumps(server.requests_for("ans")[-1].messages, ensure_ascii=False)


async def test_a_passage_is_cited_with_its_document_and_page(scripted_server) -> None:
    s = scripted_server
    knowledge = StandIn(LIBRARY)
    tool = make_knowledge_tool(knowledge, "ana")
    s.queue("fc", ToolCalls([Call("search_knowledge", {"query": "EEGNet accuracy"})]), Text("ok"))
    s.queue("ans", Text("EEGNet reached 0.68 on BCI IV 2a [1]."))
    events = await collect(agent(s, tool).run("What did the EEGNet paper report on 2a?"))
    assert knowledge.asked == [("ana", "EEGNet accuracy", 5)]  # the user's own, never another's
    (cited,) = of(events, "citations")
    assert [(x["n"], x["title"], x["url"]) for x in cited.sources] == [
        (1, f"{EEGNET}, p. 4", "knowledge://d1?chunk=7#page=4")
    ]
    sent = answer_request(s)
    # the passage next to its number, the document and page it is from after it
    assert f"(from: {EEGNET}, p. 4 — knowledge://d1?chunk=7#page=4)" in sent
    assert "0.68 mean accuracy" in sent.split("[1] ", 1)[1].split("(from: ", 1)[0]
    assert "Bo's" not in sent
    assert not of(events, "answer_checked")  # [1] is a source the run found


async def test_an_invented_citation_is_flagged(scripted_server) -> None:
    s = scripted_server
    tool = make_knowledge_tool(StandIn(LIBRARY), "ana")
    s.queue("fc", ToolCalls([Call("search_knowledge", {"query": "EEGNet"})]), Text("ok"))
    s.queue("ans", Text("EEGNet reached 0.68 [1]. It beat every other model [3]."))
    events = await collect(agent(s, tool).run("What did EEGNet report?"))
    (checked,) = of(events, "answer_checked")
    why = {f["why"] for f in checked.flags if f["kind"] == "citation"}
    assert why == {"[3] cites nothing: this run found 1 source(s)"}
    assert all("[1]" not in f["sentence"] for f in checked.flags)  # the found one holds


async def test_no_match_says_so_and_gives_nothing_to_cite(scripted_server) -> None:
    s = scripted_server
    tool = make_knowledge_tool(StandIn(LIBRARY), "ana")
    s.queue("fc", ToolCalls([Call("search_knowledge", {"query": "ketamine dosage"})]), Text("ok"))
    s.queue("ans", Text("Your documents say nothing about ketamine dosage [1]."))
    events = await collect(agent(s, tool).run("What ketamine dosage does our protocol use?"))
    (finished,) = [e for e in of(events, "tool_finished") if e.name == "search_knowledge"]
    assert finished.status == "success" and finished.content == NOTHING
    assert not of(events, "citations")
    assert "Nothing in your documents matches" in answer_request(s)
    (checked,) = of(events, "answer_checked")
    assert "[1] cites nothing: this run found no source" in checked.flags[0]["why"]


async def test_flags_arguments_and_failures() -> None:
    knowledge = StandIn(LIBRARY)
    tool = make_knowledge_tool(knowledge, "ana")
    flags = flags_of(tool)
    assert tool.name == "search_knowledge" and flags.read_only and not flags.web
    schema = tool.args_schema.model_json_schema()  # type: ignore[union-attr]
    assert schema["properties"]["k"]["maximum"] == 10 and schema["properties"]["k"]["default"] == 5
    with pytest.raises(Exception, match="less than or equal to 10"):
        await tool.ainvoke({"query": "EEGNet", "k": 11})

    class Broken:
        def search(self, user: str, query: str, k: int) -> list[Passage]:
            raise OSError("database is locked")

    with pytest.raises(ToolException, match="database is locked"):
        await make_knowledge_tool(Broken(), "ana").coroutine("EEGNet")  # type: ignore[attr-defined]


async def test_an_async_service_and_a_document_without_pages() -> None:
    class Async(StandIn):
        async def search(self, user: str, query: str, k: int) -> list[Passage]:  # type: ignore[override]
            return StandIn.search(self, user, query, k)

    tool = make_knowledge_tool(Async(LIBRARY), "ana")
    text, artifact = await tool.coroutine("CSP protocol", 2)  # type: ignore[attr-defined]
    (row,) = artifact["sources"]
    assert row["title"] == f"{PROTOCOL}, Filtering" and row["url"] == "knowledge://d2?chunk=0"
    assert text.startswith(f"[1] {PROTOCOL}, Filtering")
    untitled = passage("d3", 2, "text", "  ", 0, "")
    assert passage_title(untitled) == "untitled document"


def test_the_page_lists_a_passage_as_text_and_copy_keeps_its_number() -> None:
    """A knowledge:// locator is no address a browser opens: the answer's source list names the
    document and page as text, and its [n] stays plain "[n]" (what Copy gives)."""
    from brainchat.ui import format as fmt

    source = {"n": 1, "title": f"{EEGNET}, p. 4", "url": "knowledge://d1?chunk=7#page=4"}
    web = {"n": 2, "title": "Web page", "url": "https://example.org/a"}
    listed = fmt.citations_text([source, web]).splitlines()
    assert listed[-2:] == [f"1. {EEGNET}, p. 4", "2. [Web page](https://example.org/a)"]
    linked = fmt.link_citations("Reported [1], confirmed [2].", [source, web])
    assert linked.startswith("Reported [1], confirmed [\\[2\\]](<https://example.org/a>")


async def test_the_session_offers_it_only_while_the_user_has_a_document(
    scripted_server, tmp_path
) -> None:
    """No document: the model is not offered a search with nothing behind it; once one is
    readable, the next turn offers search_knowledge (the same tool, so the agent is reused), and
    an empty EEG study hides it no more than web_search."""
    from brainchat.session import Session
    from brainchat.settings import Settings

    from support import write_fixture

    s = scripted_server
    session = Session(
        Settings(
            function_call_model=spec(s, "fc"),
            answer_model=spec(s, "ans"),
            default_mode="agent",
            data_dir=tmp_path / "data",
            search_backend="fixture",
            search_fixture=write_fixture(tmp_path / "fx.json"),
        )
    )
    library: dict[str, list[Passage]] = {"ana": []}
    tool = make_knowledge_tool(StandIn(library), "ana")
    session.toolbox.use_knowledge(lambda: tool if library["ana"] else None)

    def offered() -> set[str]:
        return {t["function"]["name"] for t in s.requests_for("fc")[-1].tools or []}

    s.queue("fc", Text("No tools needed."))
    s.queue("ans", Text("Hello."))
    await collect(session.ask("Hello"))
    assert "search_knowledge" not in offered() and "web_search" in offered()

    library["ana"] = list(LIBRARY["ana"])
    s.queue("fc", ToolCalls([Call("search_knowledge", {"query": "EEGNet"})]))
    s.queue("ans", Text("EEGNet reached 0.68 [1]."))
    events = await collect(session.ask("What did the EEGNet paper report?"))
    assert "search_knowledge" in offered()
    (cited,) = of(events, "citations")
    assert cited.sources[0]["title"] == f"{EEGNET}, p. 4"


ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = [("scripted", "knowledge-protocol-page"), ("scripted", "knowledge-not-in-collection"),
             ("golden-zh", "knowledge-protocol-page")]  # fmt: skip


def scenario(suite: str, name: str) -> Any:
    from brainchat.evals.scenario import load_suite

    [found] = [s for s in load_suite(ROOT / "evals" / suite) if s.name == name]
    return found


async def test_the_knowledge_scenarios_pass_with_their_scripts() -> None:
    """The golden scenarios (#41), English and Chinese, over a real store of the fixture PDF:
    the page is cited, and a question the documents cannot answer is said so, citing nothing."""
    from brainchat.evals.harness import run_suite
    from brainchat.evals.pairs import ModelPair

    found = [scenario(suite, name) for suite, name in SCENARIOS]
    results = await run_suite(found, [ModelPair("scripted")])
    assert [(r.passed, r.failures) for r in results] == [(True, [])] * len(SCENARIOS)


async def test_the_oracle_fails_an_invented_citation_and_a_wrong_filter(scripted_server) -> None:
    """A model that answers the unanswerable with a made-up source, or gives the protocol the
    wrong band, is failed (the checks judge outcomes, not the script)."""
    from brainchat.evals.harness import run_suite
    from brainchat.evals.pairs import ModelPair

    def pair(name: str, query: str, answer: str) -> ModelPair:
        call = {"type": "tool_calls", "calls": [{"name": "search_knowledge", "args": {"query": query}}]}  # fmt: skip
        scripted_server.queue(f"{name}-fc", call)
        scripted_server.set_default(f"{name}-fc", {"type": "text", "content": "Done."})
        scripted_server.queue(f"{name}-ans", {"type": "text", "content": answer})
        return ModelPair(name, spec(scripted_server, f"{name}-fc"), spec(scripted_server, f"{name}-ans"))  # fmt: skip

    invented = pair("a", "ketamine dose", "The protocol uses 1 mg/kg ketamine [1].")
    [result] = await run_suite([scenario("scripted", "knowledge-not-in-collection")], [invented],
                               server=scripted_server)  # fmt: skip
    assert not result.passed and any("\\[" in f["message"] for f in result.failures)
    wrong = pair("b", "band-pass filter", "The protocol band-passes from 1 to 40 Hz [1].")
    [result] = await run_suite([scenario("scripted", "knowledge-protocol-page")], [wrong],
                               server=scripted_server)  # fmt: skip
    assert not result.passed and any("30" in f["message"] for f in result.failures)


def test_dropped_files_are_routed_by_what_they_are(tmp_path) -> None:
    """Documents (and a zip holding only documents) go to the user's collection; recordings, a
    zip with a recording in it, and what is neither stay with the recordings' check."""
    import zipfile
    from types import SimpleNamespace

    from brainchat.ui.knowledge import split

    def element(name: str, entries: tuple[str, ...] = ()) -> Any:
        path = tmp_path / name
        if entries:
            with zipfile.ZipFile(path, "w") as zf:
                for entry in entries:
                    zf.writestr(entry, "x")
        else:
            path.write_text("x")
        return SimpleNamespace(name=name, path=str(path))

    files = [element("paper.PDF"), element("notes.md"), element("page.html"), element("a.txt"),
             element("rec.edf"), element("report.docx"),
             element("papers.zip", ("p/one.pdf", "p/two.md", "__MACOSX/._one.pdf", ".DS_Store")),
             element("study.zip", ("sub-01.edf", "README.txt")), element("empty.zip", ("d/.x",))]  # fmt: skip
    others, docs = split(files)
    assert [e.name for e in docs] == ["paper.PDF", "notes.md", "page.html", "a.txt", "papers.zip"]
    assert [e.name for e in others] == ["rec.edf", "report.docx", "study.zip", "empty.zip"]


def test_what_the_page_says_of_each_added_file() -> None:
    from brainchat import i18n
    from brainchat.knowledge.model import Document
    from brainchat.knowledge.service import AddResult
    from brainchat.ui.knowledge import _said

    doc = Document("d1", "local/personal", "local", "p.pdf", EEGNET, 12, 2048, "s", 0.0, 30)
    md = Document("d2", "local/personal", "local", "n.md", "Lab notes", 0, 100, "t", 0.0, 2)
    i18n.use("en")
    try:
        assert _said(AddResult("p.pdf", "added", document=doc)) == (
            f"Added **{EEGNET}** (`p.pdf`) to your personal collection: 12 page(s), 30 passage(s)."
        )
        assert _said(AddResult("n.md", "added", document=md, notes=["cut at 2 MB"])) == (
            "Added **Lab notes** (`n.md`) to your personal collection: 2 passage(s).\n"
            "Note: cut at 2 MB"
        )
        assert "already in your collection" in _said(AddResult("p.pdf", "unchanged", document=doc))
        assert "replaces the old one" in _said(AddResult("p.pdf", "updated", document=doc))
        refused = AddResult("scan.pdf", "refused", "it has no text layer (a scanned PDF)")
        assert _said(refused) == "**scan.pdf** was not added: it has no text layer (a scanned PDF)"
        i18n.use("zh-CN")
        assert _said(refused).startswith("**scan.pdf** 未添加")
    finally:
        i18n.use(None)
