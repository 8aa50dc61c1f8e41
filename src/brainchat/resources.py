"""The app's files that live beside the Python package, not in it.

prompts/, examples/, chainlit.md, public/ and .chainlit/ sit at the repository root (the layout the
design card asks for). A checkout, the editable install the README sets up, reads them there; a
wheel carries a copy in `brainchat/_app/`, which setup.py's build step puts there (`FILES` is its
list). `ROOT` is whichever of the two this installation has.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
CHECKOUT = PACKAGE.parents[1]  # src/brainchat -> the repository root
BUNDLED = PACKAGE / "_app"

# What a wheel carries, relative to the repository root: folders are copied with the files that
# match their pattern (Chainlit writes its other translations at start; only en-US is the app's).
FILES: tuple[tuple[str, str], ...] = (
    ("prompts", "*.md"),
    ("examples", "*.json"),
    ("public", "**/*"),  # fonts/ and katex/ too: the page loads nothing from other sites
    (".chainlit", "config.toml"),
    (".chainlit/translations", "en-US.json"),
    (".", "chainlit.md"),
)


def _root() -> Path:
    if (CHECKOUT / "pyproject.toml").is_file() and (CHECKOUT / "prompts").is_dir():
        return CHECKOUT
    return BUNDLED


ROOT = _root()
