"""The operator's variables for local models (brainchat.localmodels): where they are downloaded
from and which catalog is offered. Declared as every group is (settings/declare.py)."""

from __future__ import annotations

from pathlib import Path

from brainchat.settings.declare import Declared, var


class LocalModelVars(Declared):
    """Read at each download, catalog read and runtime start (localmodels/); operator
    settings only: never set from the settings panel."""

    models_hub_url: str = var(
        "https://huggingface.co",
        "BRAINCHAT_MODELS_HUB_URL",
        "where catalog models are downloaded from: a Hugging Face hub or a mirror that answers "
        "`{repo}/resolve/{revision}/{file}` (every file is checked against the catalog's sha256)",
        allowed="an http(s) URL",
    )
    models_catalog: Path | None = var(
        None,
        "BRAINCHAT_MODELS_CATALOG",
        "a lab's own catalog instead of the built-in one: a JSON list of models with the "
        "built-in entries' fields (`brainchat models list` shows them)",
        allowed="a JSON file",
        shown_default="the built-in catalog",
    )
    llama_server: Path | None = var(
        None,
        "BRAINCHAT_LLAMA_SERVER",
        "run local models with this llama.cpp `llama-server` binary (native tool calls, two "
        "requests at once) instead of llama-cpp-python's server from `brainchat[local]`",
        allowed="an executable file",
        shown_default="llama-cpp-python's server",
    )
