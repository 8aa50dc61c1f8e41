"""Local models: a vetted catalog (catalog.py), a verified download into the state folder
(download.py, store.py) and llama.cpp's server run by brainchat itself (runtime*.py).

Headless: the page (ui/local_model.py) and the terminal (`brainchat models`, models_cli.py) call it.
"""

from __future__ import annotations

from brainchat.localmodels.catalog import CATALOG, CatalogModel, find, recommend

__all__ = ["CATALOG", "CatalogModel", "find", "recommend"]
