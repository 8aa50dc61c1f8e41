"""Serving a scripted model server by hand: `python -m brainchat.testing.scripted_server`."""

from __future__ import annotations

import argparse
import logging
import signal
import time
from pathlib import Path

from brainchat.testing import scripted_server
from brainchat.testing.scripted_server import Responder, ScriptedServer


def load_responder(name: str) -> Responder:
    """`module:function` -> that function (a clear ValueError when it is not one)."""
    import importlib

    module, _, attr = name.partition(":")
    if not module or not attr:
        raise ValueError(f"responder {name!r}: write it as module:function")
    found = getattr(importlib.import_module(module), attr, None)
    if not callable(found):
        raise ValueError(f"responder {name!r}: {module} has no function {attr}")
    return found  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> None:
    """Serve a script file by hand until Ctrl-C (or SIGTERM)."""
    parser = argparse.ArgumentParser(
        prog="python -m brainchat.testing.scripted_server",
        description=(scripted_server.__doc__ or "").split("\n")[0],
    )
    parser.add_argument(
        "script", nargs="?", type=Path, help="JSON script file (see the module docstring)"
    )
    parser.add_argument(
        "--port", type=int, default=8765, help="port on 127.0.0.1 (0: any free one)"
    )
    parser.add_argument(
        "--responder",
        metavar="MODULE:FUNCTION",
        help="choose replies with this function of the request (e.g. brainchat.demo.replies:respond)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    responder = load_responder(args.responder) if args.responder else None
    server = ScriptedServer(args.port, script=args.script, responder=responder)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` stops it like Ctrl-C
    try:
        print(server.start().base_url, flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
