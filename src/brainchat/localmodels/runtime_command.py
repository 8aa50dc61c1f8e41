"""How the local runtime is launched: which llama.cpp server, its command line, its environment,
and the tool calling the connection to it gets. No process here (runtime_process.py runs it).

Two servers speak the OpenAI API over llama.cpp:

- a `llama-server` binary the operator names in BRAINCHAT_LLAMA_SERVER (llama.cpp's own server,
  prebuilt or built from source): started with `--jinja`, it renders the model's own chat template
  and reads the model's tool calls back into OpenAI `tool_calls`, so the connection calls tools
  natively (`tool_calling` from the catalog); it serves two requests at once (`--parallel 2`), so a
  Chat answer and an Agent run do not wait for each other;
- llama-cpp-python's server (`python -m llama_cpp.server`, the extra `brainchat[local]`): its
  default chat handler renders the template but returns a tool call as plain text, never as
  `tool_calls`, so the connection uses `prompt` tool calling (tools described in the system
  prompt, calls read from the reply's JSON: agent/textcalls.py). It runs one request at a time;
  `--interrupt_requests False` makes a second request wait instead of cutting the first one's
  stream short (its default ends a streaming answer the moment another request arrives). It
  refuses a JSON schema for the reply, so guided requests go without one (`response_format`).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

SERVER_ENV = "BRAINCHAT_LLAMA_SERVER"
INSTALL = "pip install 'brainchat[local]'"
# what `python -m llama_cpp.server` imports: the bare llama-cpp-python lacks all but the first
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context")
DEFAULT_CONTEXT = 8192  # a GGUF the catalog does not know
PARALLEL = 2  # llama-server's slots: a Chat answer and an Agent run at once
# the child's environment: what a server needs to run and to find a GPU, not the app's secrets
# (API keys, DATABASE_URL); llama-cpp-python's settings would also read API_KEY, HOST, PORT or
# CONFIG_FILE from the environment and, say, demand a key nobody sends
ENV_KEEP = re.compile(
    r"(PATH|HOME|USER|LOGNAME|LANG|TZ|TMPDIR|TEMP|TMP|SYSTEMROOT|LD_LIBRARY_PATH|VIRTUAL_ENV"
    r"|PYTHONPATH|LC_\w+|CUDA_\w+|NVIDIA_\w+|HIP_\w+|ROCR_\w+|GGML_\w+|LLAMA_ARG_\w+|OMP_\w+)"
)


class RuntimeUnavailable(Exception):
    """Why the local model cannot run; str(e) says what to do (install, pull, free a port...)."""


class ModelInfo(Protocol):
    """What the runtime reads of a catalog entry (localmodels.catalog.CatalogModel)."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def context(self) -> int: ...
    @property
    def tool_calling(self) -> str: ...
    @property
    def guidance(self) -> str: ...


@dataclass(frozen=True)
class Server:
    """One llama.cpp server program and the flags it speaks."""

    kind: Literal["llama-server", "llama-cpp-python"]
    argv0: tuple[str, ...]

    @property
    def parallel(self) -> int:
        return PARALLEL if self.kind == "llama-server" else 1

    @property
    def response_format(self) -> bool:
        """Whether it takes a JSON schema for the reply: llama-cpp-python 0.3.36 answers
        `response_format: {"type": "json_schema", ...}` with HTTP 500 (it knows json_object only)."""
        return self.kind == "llama-server"

    def tool_calling(self, model: ModelInfo | None) -> Literal["native", "prompt"]:
        """native only where the server turns the model's calls into tool_calls (see above)."""
        if self.kind == "llama-cpp-python":
            return "prompt"
        return "prompt" if model is not None and model.tool_calling == "prompt" else "native"


def find_server(env: Mapping[str, str] | None = None) -> Server:
    """The operator's llama-server (BRAINCHAT_LLAMA_SERVER), else llama-cpp-python's server."""
    env = os.environ if env is None else env
    named = env.get(SERVER_ENV, "").strip()
    if named:
        found = shutil.which(named) or named
        if not (os.path.isfile(found) and os.access(found, os.X_OK)):
            raise RuntimeUnavailable(
                f"{SERVER_ENV} names {named!r}, which is not an executable file: give the path "
                f"of llama.cpp's llama-server, or unset it to use llama-cpp-python ({INSTALL})"
            )
        return Server("llama-server", (str(Path(found).resolve()),))
    missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise RuntimeUnavailable(
            "the local model runtime is not installed (missing: "
            f"{', '.join(missing)}): run `{INSTALL}` (it compiles llama.cpp once: about 11 "
            f"minutes on 2 cores), or set {SERVER_ENV} to a llama-server binary"
        )
    return Server("llama-cpp-python", (sys.executable, "-m", "llama_cpp.server"))


def cores() -> int:
    """The cores this process may run on (a container's or taskset's limit, not the machine's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def gpu_present() -> bool:
    """An NVIDIA GPU this machine's driver lists (`nvidia-smi -L`)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


def cpu_workarounds(cpuinfo: Path = Path("/proc/cpuinfo")) -> list[str]:
    """llama-server flags this CPU needs: on a CPU with AMX a -march=native build's AMX matrix
    kernel segfaulted in this sandbox (bench/real_model_setup.py); --no-repack avoids it."""
    try:
        flags = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return ["--no-repack"] if re.search(r"\bamx_(tile|int8)\b", flags) else []


@dataclass(frozen=True)
class Launch:
    """Everything one start of the server needs."""

    server: Server
    model_path: Path
    alias: str  # the model id the server lists and answers to
    port: int
    context: int  # tokens one request may use
    threads: int
    gpu_layers: int  # -1: all (a GPU is present), 0: none

    def argv(self) -> list[str]:
        path, port = str(self.model_path), str(self.port)
        if self.server.kind == "llama-server":
            n = self.server.parallel  # without --kv-unified each slot gets -c / --parallel
            layers = "999" if self.gpu_layers < 0 else str(self.gpu_layers)  # 999: all, any version
            return [*self.server.argv0, "-m", path, "--alias", self.alias, "--jinja",
                    "--host", "127.0.0.1", "--port", port, "-c", str(self.context * n),
                    "--parallel", str(n), "-t", str(self.threads), "-tb", str(self.threads),
                    "-ngl", layers, *cpu_workarounds()]  # fmt: skip
        return [*self.server.argv0, "--model", path, "--model_alias", self.alias,
                "--host", "127.0.0.1", "--port", port, "--n_ctx", str(self.context),
                "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads),
                "--n_gpu_layers", str(self.gpu_layers), "--interrupt_requests", "false"]  # fmt: skip


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The server's environment: ENV_KEEP's variables only."""
    env = os.environ if env is None else env
    return {k: v for k, v in env.items() if ENV_KEEP.fullmatch(k)}
