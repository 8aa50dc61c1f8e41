"""The UI's text pieces and panel parsing, without a browser."""

from __future__ import annotations

from brainchat.events import Evaluation, RoleStats, Stats, ToolFinished
from brainchat.settings import load_settings
from brainchat.ui import format as fmt
from brainchat.ui import step_text as st
from brainchat.ui.panel import overrides_from, widgets


def _stats(estimated: bool, ttft: float | None = 1.9) -> Stats:
    rows = [RoleStats(role="function_call", model="fc", calls=2, input_tokens=100, output_tokens=20,
                      estimated=estimated, seconds=1.5, cost=0.001),
            RoleStats(role="answer", model="ans", calls=1, input_tokens=50, output_tokens=30, seconds=0.5)]  # fmt: skip
    return Stats(rows=rows, total_seconds=2.5, ttft=ttft, total_cost=0.001, tool_seconds=0.4)


def test_agent_stats_table_marks_estimates_totals_and_unknown_prices() -> None:
    table = fmt.agent_stats_table(_stats(estimated=True))
    assert "| function call | fc | 2 | 100 est. | 20 est. | 1.50 s | $0.0010 |" in table
    unknown = '[—](#brainchat-tip "No price is known for ans: set input_price and output_price'
    assert f"| answer | ans | 1 | 50 | 30 | 500 ms | {unknown}" in table
    # a partial total says so: one model has no price
    assert '| **Total** | | 3 | 150 est. | 50 est. | 2.50 s | [≥ $0.0010](#brainchat-tip "' in table
    assert "| tools | | | | | 400 ms | |" in table
    assert "First answer token after 1.90 s." in table


def test_no_first_token_line_without_an_answer_token() -> None:
    assert "First answer token" not in fmt.agent_stats_table(_stats(False, ttft=None))
    chat = Stats(rows=[RoleStats(role="chat", model="m", input_tokens=7, output_tokens=0)],
                 total_seconds=0.25)  # fmt: skip
    assert "First token" not in fmt.chat_stats_table(chat)


def test_chat_stats_is_a_table_footer_like_the_agents() -> None:
    stats = Stats(rows=[RoleStats(role="chat", model="m", input_tokens=7, output_tokens=3, estimated=True,
                                  cost=0.00002)], total_seconds=0.25, ttft=0.05)  # fmt: skip
    footer = fmt.stats_footer("chat", stats)
    assert footer.startswith(
        "\n\n---\n| Model | In tokens | Out tokens | First token | Time | Cost |"
    )
    assert "| m | 7 est. | 3 est. | 50 ms | 250 ms | $0.000020 |" in footer
    assert "`" not in footer  # not an inline-code debug line


def test_the_chat_usage_line_says_model_tokens_time_and_cost() -> None:
    stats = Stats(rows=[RoleStats(role="chat", model="m*[x]", input_tokens=7, output_tokens=3,
                                  cost=0.00002)], total_seconds=0.25, ttft=0.05,
                  total_cost=0.00002)  # fmt: skip
    assert fmt.usage_line(stats) == "mx · 7 in / 3 out tokens · 250 ms · $0.000020"
    stats.rows[0].cost, stats.total_cost = None, None
    assert fmt.usage_line(stats).endswith("· cost unknown")


def test_citation_markers_link_to_sources_outside_code() -> None:
    sources = [{"n": 1, "title": 'EEGNet "paper"', "url": "https://x.org/a_(b)"},
               {"n": 2, "title": "bad", "url": "javascript:alert(1)"}]  # fmt: skip
    text = "A [1], B [2], C [3].\n`x[1]` \\[1] ![1](i.png) [1](http://y)\n```\n[1]\n```\n[1]: z\n"
    out = fmt.link_citations(text, sources)
    one = "[\\[1\\]](<https://x.org/a_(b)> \"EEGNet 'paper'\")"
    assert out.splitlines()[0] == f"A {one}, B [2], C [3]."  # no source or no web link: as is
    assert out.splitlines()[1:] == text.splitlines()[1:]  # code, escapes, links, definitions
    assert fmt.link_citations(text, []) == text


def test_search_result_step_lists_every_result_its_title_counts_as_links() -> None:
    top = [{"title": f"T{i}", "url": f"https://x/{i}", "snippet": f"s{i}"} for i in range(5)]
    event = ToolFinished(call_id="c", name="web_search", status="success", duration=0.12,
                         summary="5 results", result_count=5, top=top)  # fmt: skip
    text = st.result_text(event)
    assert "1. [T0](https://x/0) — s0" in text and "5. [T4](https://x/4) — s4" in text
    assert st.finished_title(event) == "web_search · 5 results · 120 ms"


def test_eeg_result_step_says_what_changed_without_model_notes_or_code_blocks() -> None:
    content = ("eegnet on 77 test epochs: accuracy 0.935\n  left: precision 0.92\n"
               "image: eegnet confusion matrix shown to the user")  # fmt: skip
    event = ToolFinished(call_id="c", name="evaluate_model", status="success", duration=0.7,
                         summary="eegnet on 77 test epochs: accuracy 0.935", content=content)  # fmt: skip
    text = st.result_text(event, "eegnet test accuracy 0.94", ["eegnet confusion matrix"])
    assert text.count("accuracy 0.935") == 1  # the summary is not repeated
    assert "shown to the user" not in text and "```" not in text
    assert "left: precision 0.92" in text
    assert "**Study:** eegnet test accuracy 0.94" in text
    assert "**Figures** (shown under the answer): eegnet confusion matrix" in text
    assert st.finished_title(event) == "evaluate_model · done · 700 ms"


def test_titles_carry_progress_decisions_and_the_run_total() -> None:
    data = {"epoch": 3, "epochs": 12, "loss": 0.669, "acc": 0.64, "val_acc": 0.64, "eta": 13.2}
    title = st.progress_title("train_model", "epoch 3/12", data)
    assert title == "train_model · epoch 3/12 · loss 0.669 · val acc 0.64 · ETA 13 s"
    enough = Evaluation(verdict="enough", reason="web_search found 4 source(s)")
    assert st.decision_title(enough, "ans") == "Decision · enough to answer · answering with ans"
    assert st.run_title(1, 3, 3.41) == "Agent run · 1 round · 3 tool calls · 3.41 s"
    assert st.run_title(2, 1, 3.41) == f"Agent run · 2 rounds · 1 tool call · {fmt.seconds(3.41)}"


def test_panel_values_become_overrides_custom_id_wins() -> None:
    values = {"function_call_model": "a", "function_call_model_custom": " b ",
              "function_call_temperature": "", "answer_model": "c", "answer_temperature": "0.2",
              "max_iterations": 3, "execution_mode": "single_step"}  # fmt: skip
    assert overrides_from(values) == {"function_call_model": "b", "answer_model": "c",
                                      "answer_temperature": "0.2", "max_iterations": 3,
                                      "execution_mode": "single_step"}  # fmt: skip


def test_panel_builds_without_models_and_numbers_carry_their_range() -> None:
    settings = load_settings({}, dotenv=False)
    from brainchat.session import Session

    shown = {w.id: w.to_dict() for w in widgets(Session(settings))}
    assert {"function_call_model", "answer_model", "max_iterations", "execution_mode"} <= set(shown)
    assert (shown["max_iterations"]["min"], shown["max_iterations"]["max"]) == (1, 30)
    assert (shown["max_execution_time"]["min"], shown["max_execution_time"]["max"]) == (10, 300)


def test_panel_reports_every_bad_value_at_once() -> None:
    from brainchat.session import Session
    from brainchat.ui.panel import problems

    spec = '{"provider": "openai-compatible", "model": "m", "base_url": "http://127.0.0.1:9/v1"}'
    session = Session(load_settings({"CHAT_MODEL": spec}, dotenv=False))
    bad = {"max_iterations": "50", "answer_temperature": "hot", "chat_model": "two words"}
    found = [str(e) for e in problems(session, bad)]
    assert len(found) == 3
    assert any("Max iterations" in e for e in found) and any(
        "answer temperature" in e for e in found
    )
    assert any("chat model" in e for e in found)
