"""Command line: `brainchat` starts the web app; `ask`, `tools`, `demo-data` and `eval` work headless."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any, assert_never

from brainchat import events as ev
from brainchat.events import Event, as_any

APP = Path(__file__).resolve().parent / "app.py"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = {
        "ask": _ask,
        "tools": _tools,
        "demo-data": _demo_data,
        "users": lambda a: _sub("users_cli", a),
        "knowledge": lambda a: _sub("knowledge_cli", a),
        "models": lambda a: _sub("models_cli", a),
        "eval": _eval,
        "mcp-server": _mcp_server,  # the EEG tools for MCP clients
    }
    if argv and argv[0] in commands:
        return commands[argv[0]](argv[1:])
    if argv and argv[0] in ("-h", "--help"):
        print(
            __doc__
            + "\n\nbrainchat [run] [--demo] [chainlit run options: --host H --port P --headless ...]\n"
            "  --demo: scripted models and a search fixture, offline (no key, no model server)\n"
            "brainchat ask [--mode chat|agent] [--json] [--demo] QUESTION\nbrainchat tools [--json]\n"
            "brainchat demo-data [--subjects N] [--trials N] [--format edf|fif]\n"
            "brainchat users add NAME | passwd NAME | list | remove NAME [--purge]\n"
            "brainchat knowledge [--user NAME] add PATH... [--collection NAME] | list | remove ID"
            " | share COLLECTION USER...\n"
            "brainchat models pull [ID|URL|PATH] | list [--json] | remove NAME [--yes]\n"
            "brainchat eval [--suite NAME] [--models SPEC_OR_NAME ...] [--json] [--scenario-timeout S]\n"
            "brainchat mcp-server [--http [--host H] [--port P]]"
        )
        return 0
    return _run_app(argv[1:] if argv and argv[0] == "run" else argv)


def _run_app(args: list[str]) -> int:
    """`chainlit run` of the app with host/port and other flags passed through.

    A host other than loopback needs login (BRAINCHAT_AUTH=password): refused here, before
    Chainlit starts (the app module refuses too, for a plain `chainlit run`).
    """
    import os

    # Chainlit reads its config, chainlit.md and public/ from CHAINLIT_APP_ROOT (default: the
    # current folder, where it writes defaults when they are missing): point it at the app's own.
    if (root := app_root()) is not None:
        os.environ.setdefault("CHAINLIT_APP_ROOT", str(root))
    from chainlit.cli import cli

    from brainchat.settings.errors import ConfigError
    from brainchat.store.config import exposure_problem, is_loopback, load_store_config

    host = _option(args, "--host") or os.environ.get("CHAINLIT_HOST") or "127.0.0.1"
    if "--demo" in args:  # its own state folder, without login: loopback only
        from brainchat import demo

        if not is_loopback(host):
            print(f"brainchat: {demo.LOOPBACK_ONLY} (not {host!r})", file=sys.stderr)
            return 2
        try:
            demo.pace(os.environ)  # a bad BRAINCHAT_DEMO_PACE stops it before anything is written
        except ConfigError as exc:
            print(f"brainchat: {exc}", file=sys.stderr)
            return 2
        demo.keep_apart(os.environ)
    if problem := exposure_problem(host, load_store_config()):
        print(f"brainchat: {problem}", file=sys.stderr)
        return 2

    if "--demo" in args:  # scripted models in this process: the offline demo is one command
        args = [a for a in args if a != "--demo"]
        server = demo.start()
        print(f"brainchat demo: scripted models at {server.base_url} (offline, no key)", flush=True)
    try:
        cli.main(["run", str(APP), *args], prog_name="brainchat", standalone_mode=False)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def app_root() -> Path | None:
    """The folder Chainlit runs in: its .chainlit/config.toml, chainlit.md and public/.

    A checkout serves its own root. An installed wheel carries a copy of those files
    (`brainchat.resources`) in site-packages, where Chainlit cannot write (it adds `.files/` and
    its translations at start): they are copied into `<state folder>/app` at each start and that
    folder is served. None when neither exists (then Chainlit uses the current folder)."""
    import shutil

    from brainchat.resources import BUNDLED, ROOT
    from brainchat.store.config import load_store_config

    if ROOT != BUNDLED:
        return ROOT if (ROOT / ".chainlit" / "config.toml").is_file() else None
    if not (BUNDLED / ".chainlit" / "config.toml").is_file():
        return None
    served = load_store_config().state_dir.resolve() / "app"
    for name in (".chainlit", "public", "chainlit.md"):
        source = BUNDLED / name
        if source.is_dir():
            shutil.copytree(source, served / name, dirs_exist_ok=True)
        else:
            served.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, served / name)
    return served


def _option(args: list[str], name: str) -> str | None:
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _mcp_server(args: list[str]) -> int:
    from brainchat.mcpserver.main import main as mcp_main

    return mcp_main(args)


def _sub(module: str, args: list[str]) -> int:
    """A subcommand whose module loads only when it runs (users_cli, knowledge_cli, models_cli)."""
    import importlib

    return int(importlib.import_module(f"brainchat.{module}").main(args))


def _session(settings: Any = None) -> Any:
    from brainchat.session import Session

    return Session(settings if settings is not None else _settings())


def _settings() -> Any:
    import logging

    from brainchat.settings import load_settings

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    return load_settings()


def _ask(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="brainchat ask", description="Run one turn headless.")
    parser.add_argument("--mode", choices=["chat", "agent"], default=None)
    parser.add_argument("--json", action="store_true", help="one JSON event per line")
    parser.add_argument(
        "--allow-destructive",
        action="store_true",
        help="run tools that ask first (destructive ones, also by their MCP server's hint) without asking",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="the offline demo's scripted models (no key, no network; Agent mode unless --mode)",
    )
    parser.add_argument("question", nargs="+")
    opts = parser.parse_args(args)
    server = None
    if opts.demo:  # the app's --demo for one turn: its scripted models, its own state folder
        from brainchat import demo
        from brainchat.settings.errors import ConfigError

        try:
            server = demo.start()
        except ConfigError as exc:
            print(f"brainchat: {exc}", file=sys.stderr)
            return 2
        print(f"brainchat demo: scripted models at {server.base_url} (offline)", file=sys.stderr)
    try:
        # a headless run has no connections of a user's: the settings alone say whether it can
        # run, before the agent's libraries load (a config error is told in half a second)
        settings = _settings()
        if problem := settings.problem():
            print(problem, file=sys.stderr)
            return 2
        session = _session(settings)
        if opts.mode or opts.demo:  # the demo's tour (files, training, follow-ups) is the agent's
            session.set_mode(opts.mode or "agent")
        question = " ".join(opts.question)
        return asyncio.run(_ask_with_mcp(session, question, opts.json, opts.allow_destructive))
    finally:
        if server:
            server.stop()


async def _ask_with_mcp(session: Any, question: str, as_json: bool, allow: bool) -> int:
    """Agent turns get the configured MCP servers, kept open for the whole run."""
    if session.mode != "agent":
        return await _print_run(session, question, as_json, allow)
    from brainchat.tools.mcp import McpHub

    async with McpHub.from_config_file(session.settings.mcp_config) as hub:
        session.use_configured_tools(hub.toolset(reserved_names=set(session.toolset().names())))
        for failure in session.extra_tools.failures:
            print(f"warning: MCP {failure.source}: {failure.reason}", file=sys.stderr)
        return await _print_run(session, question, as_json, allow)


async def _print_run(session: Any, question: str, as_json: bool, allow: bool) -> int:
    async def confirm(name: str, args: dict[str, Any], ask: Any) -> bool:
        if ask.reason == "plan_step":  # nobody here can confirm the next step: the run ends
            print(
                f"single-step mode: stopped before {name}; ask again to go on, "
                "or set AGENT_EXECUTION_MODE=auto to run the whole plan",
                file=sys.stderr,
            )
            return False
        verdict = "approved (--allow-destructive)" if allow else "refused"
        hint = "" if allow else "; nobody can approve it here: use --allow-destructive to run it"
        print(f"{verdict} {name}: it asks first because {ask.why(name)}{hint}", file=sys.stderr)
        return allow

    from brainchat.cli_answer import CheckedAnswer  # what a checked answer adds
    from brainchat.cli_elicit import terminal_asker  # an MCP server asks for input
    from brainchat.cli_sampling import terminal_approver  # or to use the model (#43)
    from brainchat.tools.mcp_elicit_route import answering
    from brainchat.tools.mcp_sampling import approving

    status, answer = 0, CheckedAnswer()
    # the terminal answers (and approves), else a clear refusal
    with answering(terminal_asker()), approving(terminal_approver()):
        async for event in session.ask(question, confirm=confirm):
            if as_json:
                print(json.dumps(event.to_dict(), default=str), flush=True)
            else:
                sys.stdout.write(event_text(event) + answer.extra(event))
                sys.stdout.flush()
            if isinstance(event, ev.RunFinished) and event.reason == "error":
                status = 1
                print(event.error, file=sys.stderr)
    return status


def event_text(event: Event) -> str:
    """An event as terminal text, "" for the kinds the terminal leaves out. The match is exhaustive
    over AnyEvent: mypy (`assert_never`) and tests/test_events_dispatch.py fail for a kind without
    a case here."""
    e = as_any(event)
    match e:
        case ev.AnswerToken():
            return e.text
        case ev.ThinkingDone():
            shown = e.text or e.tool_calls
            return f"· thinking ({e.model}): {e.text.strip()[:300]}\n" if shown else ""
        case ev.ToolCallStarted():
            return f"→ {e.name}({json.dumps(e.args, default=str)})\n"
        case ev.ToolProgress():
            return f"  … {e.name}: {e.message}\n"
        case ev.ToolImage():
            return f"  [image] {e.title}\n"
        case ev.ToolFile():
            return f"  [file] {e.path}\n"
        case ev.ToolFinished():
            return _tool_finished_text(e)
        case ev.PlanCreated() | ev.Replanned():
            return _plan_text(e)
        case ev.PlanStepUpdated():
            return (
                f"· step {e.step_id} {e.status}: {e.title}{' — ' + e.detail if e.detail else ''}\n"
            )
        case ev.Evaluation():
            return f"· evaluation: {e.verdict}: {e.reason}\n"
        case ev.RequestUnderstood():
            said = json.dumps(e.record, ensure_ascii=False) if e.record else e.problem
            return f"· request understood ({e.model}): {said}\n"
        case ev.ModelSwitch():
            return f"· answering with {e.model}: {e.reason}\n\n"
        case ev.AnswerChecked():
            return "\n\n" + "".join(f"⚠️ “{f['sentence']}”: {f['why']}\n" for f in e.flags)
        case ev.Citations():
            sources = "".join(f"[{s['n']}] {s['title']} <{s['url']}>\n" for s in e.sources)
            return "\n\nSources:\n" + sources
        case ev.Notice():
            return f"\n! {e.message}{' ' + e.hint if e.hint else ''}\n"
        case ev.StudyRestored():
            return (
                f"· study restored ({e.stage}): {'; '.join(e.replayed) or 'nothing'}"
                f"{'; stopped at ' + e.problem if e.problem else ''}\n"
            )
        case ev.Stats():
            return "\n\n" + format_stats(e) + "\n"
        # Deliberately not shown in the terminal: the start and the end of a run (an error ends
        # `_print_run` with its text on stderr), the reasoning as it streams (ThinkingDone shows it
        # whole), and the study's changes (the tool lines say what ran).
        case ev.RunStarted() | ev.ThinkingToken() | ev.StudyChanged() | ev.RunFinished():
            return ""
        case _:
            assert_never(e)


def _tool_finished_text(e: ev.ToolFinished) -> str:
    mark = "✓" if e.status == "success" else "✗"
    hit = " (cache hit)" if e.cache_hit else ""
    head = f"{mark} {e.name} {e.status} in {e.duration:.2f}s: {e.summary}{hit}\n"
    return head + "".join(f"    - {top['title']} <{top['url']}>\n" for top in e.top)


def _plan_text(e: ev.PlanCreated | ev.Replanned) -> str:
    if isinstance(e, ev.PlanCreated):
        head = "plan"
    else:
        head = f"replanned ({e.attempt}/{e.max_attempts}): {e.reason}"
    return f"· {head}\n" + "".join(f"  {s['id']}. {s['title']} [{s['status']}]\n" for s in e.steps)


def format_stats(stats: Any) -> str:
    """Compact per-role stats lines (shared by the CLI; the UI renders its own table)."""
    lines = []
    for r in stats.rows:
        est = " (est.)" if r.estimated else ""
        ttft = f", ttft {r.ttft:.2f}s" if r.ttft is not None else ""
        cost = f", ${r.cost:.5f}" if r.cost is not None else ""
        lines.append(
            f"{r.role}: {r.model} · {r.calls} call(s){f' ({r.failed} failed)' if r.failed else ''} · {r.input_tokens} in / {r.output_tokens} out{est} · {r.seconds:.2f}s{ttft}{cost}"
        )
    ttft = f", first answer token {stats.ttft:.2f}s" if stats.ttft is not None else ""
    cost = f", cost ${stats.total_cost:.5f}" if stats.total_cost is not None else ""
    unverified = f", {stats.unverified} unverified statement(s) marked" if stats.unverified else ""
    lines.append(f"total {stats.total_seconds:.2f}s{ttft}{cost}{unverified}")
    return "\n".join(lines)


def _tools(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="brainchat tools", description="List the agent's tools.")
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args(args)
    session = _session()
    session.use_configured_tools(asyncio.run(_configured_mcp(session)))
    toolset = session.toolset()
    if opts.json:
        print(
            json.dumps(
                {"tools": toolset.describe(), "failures": [f.__dict__ for f in toolset.failures]},
                indent=2,
            )
        )
        return 0
    for row in toolset.describe():
        flags = [k for k in ("read_only", "destructive", "long_running") if row[k]]
        args_ = ", ".join((row["args_schema"].get("properties") or {}).keys())
        print(
            f"{row['name']}({args_})  [{row['source']}{'; ' + ', '.join(flags) if flags else ''}]"
        )
    for failure in toolset.failures:
        print(f"FAILED {failure.source}: {failure.reason}")
    return 0


async def _configured_mcp(session: Any) -> Any:
    """Connect the configured MCP servers once to list their tools, then close them."""
    from brainchat.tools.mcp import McpHub

    hub = McpHub.from_config_file(session.settings.mcp_config)
    await hub.start()
    try:
        return hub.toolset(reserved_names=set(session.toolset().names()))
    finally:
        await hub.close()


def _eval(args: list[str]) -> int:
    from brainchat.evals.command import main as eval_main

    return eval_main(args)


def _demo_data(args: list[str]) -> int:
    from brainchat.eeg.io.synthetic import demo_folder
    from brainchat.eeg.io.synthetic import main as demo_main
    from brainchat.settings import load_settings

    settings = load_settings()
    if not any(a.startswith("--out") for a in args) and "-h" not in args and "--help" not in args:
        args = ["--out", str(demo_folder(settings.data_dir)), *args]  # where the welcome writes
    return int(demo_main(args) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
