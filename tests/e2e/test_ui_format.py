"""The UI's text pieces and panel parsing, without a browser."""

from __future__ import annotations

from brainchat.events import RoleStats, Stats, ToolFinished
from brainchat.settings import load_settings
from brainchat.ui import format as fmt
from brainchat.ui.panel import overrides_from, widgets


def _stats(estimated: bool) -> Stats:
    rows = [RoleStats(role="function_call", model="fc", calls=2, input_tokens=100, output_tokens=20,
                      estimated=estimated, seconds=1.5, cost=0.001),
            RoleStats(role="answer", model="ans", calls=1, input_tokens=50, output_tokens=30, seconds=0.5)]  # fmt: skip
    return Stats(rows=rows, total_seconds=2.5, ttft=1.9, total_cost=0.001, tool_seconds=0.4)


def test_agent_stats_table_marks_estimates_and_totals() -> None:
    table = fmt.agent_stats_table(_stats(estimated=True))
    assert "| function call | fc | 2 | 100 est. | 20 est. | 1.50 s | $0.0010 |" in table
    assert "| answer | ans | 1 | 50 | 30 | 500 ms | — |" in table
    assert "| **Total** | | 3 | 150 est. | 50 est. | 2.50 s | $0.0010 |" in table
    assert "| tools | | | | | 400 ms | |" in table
    assert "First answer token after 1.90 s." in table


def test_chat_stats_line() -> None:
    stats = Stats(rows=[RoleStats(role="chat", model="m", input_tokens=7, output_tokens=3, estimated=True)],
                  total_seconds=0.25, ttft=0.05)  # fmt: skip
    assert (
        fmt.chat_stats_line(stats)
        == "`m · 7 in / 3 out tokens (est.) · first token 50 ms · total 250 ms`"
    )


def test_search_result_shows_top_three_as_links() -> None:
    top = [{"title": f"T{i}", "url": f"https://x/{i}", "snippet": f"s{i}"} for i in range(5)]
    event = ToolFinished(call_id="c", name="web_search", status="success", duration=0.1,
                         summary="5 results", result_count=5, top=top)  # fmt: skip
    text = fmt.tool_result_text(event)
    assert (
        "1. [T0](https://x/0) — s0" in text and "3. [T2](https://x/2)" in text and "T3" not in text
    )
    assert fmt.result_step_name(event) == "Tool result: web_search · 5 result(s)"


def test_panel_values_become_overrides_custom_id_wins() -> None:
    values = {"function_call_model": "a", "function_call_model_custom": " b ",
              "function_call_temperature": "", "answer_model": "c", "answer_temperature": "0.2",
              "max_iterations": 3, "execution_mode": "single_step"}  # fmt: skip
    assert overrides_from(values) == {"function_call_model": "b", "answer_model": "c",
                                      "answer_temperature": "0.2", "max_iterations": 3,
                                      "execution_mode": "single_step"}  # fmt: skip


def test_panel_builds_without_models() -> None:
    settings = load_settings({}, dotenv=False)
    from brainchat.session import Session

    ids = [w.id for w in widgets(Session(settings))]
    assert {"function_call_model", "answer_model", "max_iterations", "execution_mode"} <= set(ids)
