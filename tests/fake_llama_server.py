"""A stand-in for llama.cpp's llama-server in the runtime's fast tests: it takes llama-server's
flags, serves GET /v1/models (the runtime's readiness check), and, on demand, dies or leaves a
child behind. It writes what it was started with to $FAKE_LLAMA_RECORD (one JSON line a start).

    GET /die        exit at once (code 3), as a crashed server does
    FAKE_LLAMA_FAIL=1            print an error and exit 1 before listening
    FAKE_LLAMA_CHILD=1           start a `sleep` child in the same process group (its pid recorded)
    FAKE_LLAMA_LOADING=N         answer 503 to the first N /v1/models requests (a model loading)
    FAKE_LLAMA_DIE_SOON=1        exit 0.2 s after each answer to /v1/models (a crash loop)
    FAKE_LLAMA_HOLD=FILE         on /die, first start a program that holds the port (pid -> FILE)
    FAKE_LLAMA_STEAL_ONCE=FILE   unless FILE exists, a program takes the port before this binds it
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

HOLDER = """import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen()
print("bound", flush=True); time.sleep(600)"""


def hold_port(port: str, record: str) -> None:
    """Start a program of its own that listens on `port`; its pid goes to the file `record`."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, port], stdout=subprocess.PIPE, start_new_session=True
    )
    assert holder.stdout is not None and holder.stdout.readline()
    with open(record, "w", encoding="utf-8") as f:
        f.write(str(holder.pid))


def main() -> None:
    p = argparse.ArgumentParser()
    for flag in ("-m", "--alias", "--host", "--port", "-c", "--parallel", "-t", "-tb", "-ngl"):
        p.add_argument(flag)
    p.add_argument("--jinja", action="store_true")
    p.add_argument("--no-repack", action="store_true")
    args = p.parse_args()
    child = None
    if os.environ.get("FAKE_LLAMA_CHILD"):
        child = subprocess.Popen(["sleep", "600"])
    record = os.environ.get("FAKE_LLAMA_RECORD")
    if record:
        line = {"pid": os.getpid(), "pgid": os.getpgid(0), "argv": sys.argv[1:],
                "env": sorted(os.environ), "child": child.pid if child else None}  # fmt: skip
        with open(record, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
    if os.environ.get("FAKE_LLAMA_FAIL"):
        print("error: failed to load model 'x.gguf' (api_key=sk-abcdefghijklmnop0123456789)")
        sys.exit(1)
    loading = [int(os.environ.get("FAKE_LLAMA_LOADING", "0"))]

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/die":
                hold = os.environ.get("FAKE_LLAMA_HOLD")
                if hold:  # another program takes the port as this server dies
                    server.server_close()
                    hold_port(args.port, hold)
                os._exit(3)
            if self.path == "/v1/models" and loading[0] > 0:
                loading[0] -= 1
                self._send(503, {"error": {"message": "Loading model"}})
            elif self.path == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": args.alias}]})
                if os.environ.get("FAKE_LLAMA_DIE_SOON"):  # crashes right after it is ready
                    threading.Timer(0.2, os._exit, (4,)).start()
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:  # a chat completion, streamed: "pong"
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path != "/v1/chat/completions":
                return self._send(404, {"error": "not found"})
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            base = {
                "id": "c1",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": args.alias,
            }
            for choice in ({"delta": {"role": "assistant", "content": "pong"}},
                           {"delta": {}, "finish_reason": "stop"}):  # fmt: skip
                chunk = {**base, "choices": [{"index": 0, "finish_reason": None, **choice}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            usage = {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
            self.wfile.write(
                f"data: {json.dumps({**base, 'choices': [], 'usage': usage})}\n\n".encode()
            )
            self.wfile.write(b"data: [DONE]\n\n")

        def _send(self, code: int, body: object) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a: object) -> None:
            pass

    steal = os.environ.get("FAKE_LLAMA_STEAL_ONCE")
    if steal and not os.path.exists(steal):  # another program took the free port first
        hold_port(args.port, steal)
    try:
        server = HTTPServer((args.host, int(args.port)), Handler)
    except OSError as exc:
        print(f"couldn't bind HTTP server socket: {exc}", flush=True)
        sys.exit(1)
    print(f"server is listening on http://{args.host}:{args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
