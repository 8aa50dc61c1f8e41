"""The operator's variables for local models (brainchat.localmodels): where they are downloaded
from and which catalog is offered. Declared as every group is (settings/declare.py)."""

from __future__ import annotations

from pathlib import Path

from brainchat.settings.declare import Declared, var


class LocalModelVars(Declared):
    """Read at each download and catalog read (localmodels/catalog.py, download.py); operator
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
