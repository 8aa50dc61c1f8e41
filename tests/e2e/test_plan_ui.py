"""Plan mode in a real browser: the plan as Chainlit's task list beside the chat, each task moving
ready -> running -> done / failed; plan, verified steps and replans in the step tree; the panel."""

from __future__ import annotations

import pytest

from brainchat.testing.scripted_server import Call, Text, ToolCalls
from conftest import (
    expand_all_steps,
    open_chat,
    open_settings,
    save_settings,
    screenshot,
    send,
    show_setting,
    spec,
    wait_idle,
)

pytestmark = pytest.mark.browser

TASKS = "aside.tasklist"  # Chainlit's task list panel (desktop width)


@pytest.fixture(scope="module")
def app(model_server, app_factory):
    return app_factory({
        "AGENT_FUNCTION_CALL_MODEL": spec(model_server, "fc-p"),
        "AGENT_ANSWER_MODEL": spec(model_server, "ans-p"),
        "DEFAULT_MODE": "agent",
        "AGENT_PLAN_MODE": "always",
        "AGENT_MAX_REPLANS": "1",
    })  # fmt: skip


def plan(*steps: tuple[str, str]) -> ToolCalls:
    return ToolCalls([Call("submit_plan", {"steps": [{"title": t, "tool": n} for t, n in steps]})])


def task(page, status: str, title: str):
    """The task list's entry with this title in this status (waits for it)."""
    found = page.locator(f"{TASKS} .task.task-status-{status}", has_text=title)
    found.wait_for(timeout=30_000)
    return found


def test_plan_is_a_task_list_whose_tasks_move_as_the_run_goes(model_server, app, browser):
    model_server.queue(
        "fc-p",
        plan(("Search EEGNet", "web_search"), ("Clear the study", "clear_study")),
        ToolCalls([Call("web_search", {"query": "EEGNet"})]),
        ToolCalls([Call("clear_study", {})]),  # destructive: it waits for approval while running
    )
    model_server.queue("ans-p", Text("EEGNet is compact [1]; the study is cleared."))
    page = open_chat(browser, app)
    send(page, "search EEGNet, then clear my study")
    page.wait_for_selector("text=wants to run clear_study")
    # mid-run: step 1 verified, step 2 running (its call waits for the user), nothing else yet
    task(page, "done", "Search EEGNet")
    task(page, "running", "Clear the study")
    assert page.locator(f"{TASKS} .task").count() == 2
    assert "Step 2: running" in page.inner_text(TASKS)
    screenshot(page, "plan-task-list.png")
    page.get_by_role("button", name="Approve").click()
    page.wait_for_selector("text=EEGNet is compact")
    wait_idle(page)
    task(page, "done", "Clear the study")
    page.locator(TASKS, has_text="Plan done").wait_for()
    expand_all_steps(page)
    body = page.inner_text("body")
    assert "Plan · 2 steps" in body and "Step 1 verified · Search EEGNet" in body
    assert "Step 2 verified · Clear the study" in body and "study shows it (empty)" in body
    page.close()


def test_failed_step_replan_and_stop_show_in_the_list_and_the_steps(model_server, app, browser):
    model_server.queue(
        "fc-p",
        plan(("Epoch the data", "epoch_data")),
        ToolCalls([Call("epoch_data", {"tmin": 0.5, "tmax": 2.5})]),  # nothing loaded: fails
        plan(("Epoch again", "epoch_data")),
        ToolCalls([Call("epoch_data", {"tmin": 0.5, "tmax": 2.5})]),  # fails again: no replans left
    )
    model_server.queue("ans-p", Text("Epoching failed: no data is loaded."))
    page = open_chat(browser, app)
    send(page, "epoch my data")
    page.wait_for_selector("text=Epoching failed")
    wait_idle(page)
    task(page, "failed", "Epoch the data")
    task(page, "failed", "Epoch again")  # the replan's step, added to the same list
    page.locator(TASKS, has_text="Plan stopped: a step failed after the allowed replans").wait_for()
    assert "The plan stopped" in page.inner_text("body")  # the plan_failed notice
    expand_all_steps(page)
    body = page.inner_text("body")
    assert "Replan 1/1" in body and "Step 1 failed · Epoch the data" in body
    assert "Step 2 failed · Epoch again" in body
    page.close()


def test_plan_mode_off_in_the_panel_makes_no_plan(model_server, app, browser):
    page = open_chat(browser, app)
    open_settings(page)
    show_setting(page, "plan_mode")
    page.click("#plan_mode")
    page.get_by_role("option", name="Off").click()
    save_settings(page)
    page.wait_for_selector("text=plan off")  # the settings summary
    model_server.queue("fc-p", ToolCalls([Call("web_search", {"query": "EEGNet"})]))  # rule ends it
    model_server.queue("ans-p", Text("EEGNet is compact [1]."))
    send(page, "what is EEGNet")
    page.wait_for_selector("text=EEGNet is compact")
    wait_idle(page)
    sent_tools = [t["function"]["name"] for r in model_server.requests_for("fc-p") for t in r.tools]
    assert "submit_plan" not in sent_tools and "web_search" in sent_tools
    assert page.locator(TASKS).count() == 0
    page.close()


def test_single_step_mode_asks_before_the_next_planned_step(model_server, app, browser):
    page = open_chat(browser, app)
    open_settings(page)
    show_setting(page, "execution_mode")
    page.click("#execution_mode")
    page.get_by_role("option", name="Single step").click()
    save_settings(page)
    page.wait_for_selector("text=execution mode single-step")
    model_server.queue(
        "fc-p",
        plan(("Search EEGNet", "web_search"), ("Check the study", "get_study_state")),
        ToolCalls([Call("web_search", {"query": "EEGNet"})]),
        ToolCalls([Call("get_study_state", {})]),
    )
    model_server.queue("ans-p", Text("EEGNet is compact [1]; the study is empty."))
    send(page, "search EEGNet, then check my study")
    page.wait_for_selector("text=wants to run plan step 2: Check the study")
    task(page, "done", "Search EEGNet")
    task(page, "ready", "Check the study")  # not started until confirmed
    assert len(model_server.requests_for("fc-p")) == 2  # the planner and step 1 only
    page.get_by_role("button", name="Approve").click()
    page.wait_for_selector("text=EEGNet is compact")
    wait_idle(page)
    task(page, "done", "Check the study")
    assert [r.tools and r.tools[0]["function"]["name"] for r in model_server.requests_for("fc-p")][
        -1
    ] != "submit_plan"
    page.locator(TASKS, has_text="Plan done").wait_for()
    page.close()
