"""The local model runtime: one llama.cpp server per model file, started on demand on a free
127.0.0.1 port, shared by every user and role of the app, stopped with the app, restarted when
it dies. It becomes an ordinary connection (`connection()`) whose spec carries the tool calling
the server supports (runtime_command.py says which and why), the catalog's guidance profile and
context window, and `user_url=False`: the app made this loopback address, so netguard, which keeps
users' typed URLs off loopback when there are accounts, does not stand between the app and it.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import tempfile
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import cast

from brainchat.connections import Connection
from brainchat.localmodels.runtime_command import (
    DEFAULT_CONTEXT,
    Launch,
    ModelInfo,
    RuntimeUnavailable,
    Server,
    cores,
    find_server,
    gpu_present,
)
from brainchat.localmodels.runtime_process import Supervisor, free_port, log, port_taken
from brainchat.settings import Guidance, ModelSpec

__all__ = ["LocalConnection", "LocalRuntime", "RuntimeUnavailable", "runtime_for", "stop_all"]
NAME = "local"  # the connection's name: its models show as "<id> @ local"
SPEC_TIMEOUT = (
    300.0  # a 1.5B model on 2 busy cores reads a 3,000-token request for a minute or more
)
PORT_TRIES = 3  # a free port another program takes before the server binds it: try another


@dataclass(frozen=True)
class LocalConnection(Connection):
    """The runtime's connection: its spec is the runtime's (tool calling, guidance, window, and
    user_url=False), not a user-typed URL's. Never saved with the user's connections: its port
    changes with each start of the app."""

    local_spec: ModelSpec | None = field(default=None, repr=False)

    def spec(self, model: str) -> ModelSpec:
        if self.local_spec is None or model != self.local_spec.model:
            return super().spec(model)
        return replace(self.local_spec, label=self.label(model))


class LocalRuntime:
    """One llama.cpp server process for one model file."""

    def __init__(
        self,
        model_path: Path,
        model: ModelInfo | None = None,
        *,
        threads: int | None = None,
        gpu_layers: int | None = None,
        log_dir: Path | None = None,
    ) -> None:
        self.model_path = Path(model_path)
        self.model = model
        self.threads = threads or cores()
        self._gpu_layers = gpu_layers
        self.log_dir = log_dir or Path(tempfile.gettempdir()) / f"brainchat-local-{os.getuid()}"
        self.alias = model.id if model is not None else self.model_path.stem
        self.context = model.context if model is not None else DEFAULT_CONTEXT
        self._supervisor: Supervisor | None = None
        self._server: Server | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        if self._supervisor is None:
            raise RuntimeUnavailable("the local model is not started")
        return f"http://127.0.0.1:{self._supervisor.launch.port}/v1"

    @property
    def launch(self) -> Launch | None:
        """The command line in force (None before the first start)."""
        return self._supervisor.launch if self._supervisor is not None else None

    @property
    def pid(self) -> int | None:
        sup = self._supervisor
        return sup.proc.pid if sup is not None and sup.proc is not None else None

    def running(self) -> bool:
        return self._supervisor is not None and self._supervisor.alive()

    @property
    def problem(self) -> str | None:
        """Why the server is not running (it failed to start, or was given up), if it is not."""
        sup = self._supervisor
        return sup.problem if sup is not None and sup.state == "failed" else None

    async def start(self) -> None:
        """Start the server (or wait for the one starting or restarting) until it answers.
        Cheap when it runs: call it before each use. Raises RuntimeUnavailable saying why not."""
        for _ in range(PORT_TRIES):
            sup = self._ensure_supervisor()
            state = await asyncio.to_thread(sup.settled)  # the supervisor bounds the wait
            if state == "ready":
                return
            if state == "failed" and sup.starts == 1 and port_taken(sup.launch.port):
                continue  # another program took the free port first: the next try picks another
            raise RuntimeUnavailable(sup.problem or "the local model was stopped")
        raise RuntimeUnavailable(sup.problem or "no free port on 127.0.0.1 for the local model")

    def _ensure_supervisor(self) -> Supervisor:
        with self._lock:
            sup = self._supervisor
            if sup is not None and sup.state in ("starting", "ready") and sup.is_alive():
                return sup
            if not self.model_path.is_file():
                raise RuntimeUnavailable(
                    f"the model file {self.model_path} is missing: download it again "
                    f"(`brainchat models pull {self.alias}`) or pick another model"
                )
            if self._server is None:
                self._server = find_server()
            self.log_dir.mkdir(parents=True, exist_ok=True)
            launch = Launch(
                self._server, self.model_path, self.alias, free_port(), self.context,
                self.threads, self.gpu_layers(),
            )  # fmt: skip
            log.info("starting the local model: %s", " ".join(launch.argv()))
            self._supervisor = Supervisor(launch, self.log_dir / f"{self.alias}.log")
            self._supervisor.start()
            return self._supervisor

    def gpu_layers(self) -> int:
        """All layers on the GPU when one is present (-1), else none; a CPU-only build of the
        server ignores the request, so the count never stops a start."""
        if self._gpu_layers is None:
            self._gpu_layers = -1 if gpu_present() else 0
        return self._gpu_layers

    async def stop(self) -> None:
        await asyncio.to_thread(self.stop_now)

    def stop_now(self) -> None:
        with self._lock:
            sup, self._supervisor = self._supervisor, None
        if sup is not None:
            sup.stop()

    def spec(self, role_label: str | None = None) -> ModelSpec:
        """The ModelSpec of this server's model (start it first: the URL holds its port)."""
        server = self._server or find_server()
        return ModelSpec(
            model=self.alias,
            provider="openai-compatible",
            base_url=self.base_url,
            api_key="not-needed",
            label=role_label,
            timeout=SPEC_TIMEOUT,
            context_window=self.context,
            tool_calling=server.tool_calling(self.model),
            response_format=server.response_format,
            guidance=cast(Guidance, "auto" if self.model is None else self.model.guidance),
            user_url=False,
        )

    def connection(self) -> LocalConnection:
        """The connection a session adds (name "local", one model: this one)."""
        spec = self.spec()
        return LocalConnection(
            NAME, self.base_url, None, (self.alias,), ((self.alias, self.context),), spec
        )


_RUNTIMES: dict[Path, LocalRuntime] = {}
_RUNTIMES_LOCK = threading.Lock()


def runtime_for(model_path: Path, model: ModelInfo | None = None) -> LocalRuntime:
    """The app's one runtime for this model file (made on first use; start() starts it)."""
    key = Path(model_path).resolve()
    with _RUNTIMES_LOCK:
        runtime = _RUNTIMES.get(key)
        if runtime is None:
            runtime = _RUNTIMES[key] = LocalRuntime(key, model)
        return runtime


def stop_all_now() -> None:
    """Stop every runtime (atexit; the app's shutdown calls stop_all)."""
    with _RUNTIMES_LOCK:
        runtimes = list(_RUNTIMES.values())
    for runtime in runtimes:
        runtime.stop_now()


async def stop_all() -> None:
    await asyncio.to_thread(stop_all_now)


atexit.register(stop_all_now)
