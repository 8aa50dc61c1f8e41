"""System prompts as files: prompts/<role>.md, or prompts/<role>.<variant>.md when it exists."""

from __future__ import annotations

from functools import lru_cache

from brainchat.resources import ROOT

PROMPTS_DIR = ROOT / "prompts"


@lru_cache(maxsize=64)
def load_prompt(name: str, variant: str | None = None) -> str:
    """Read prompts/<name>.md (or <name>.<variant>.md when that variant exists)."""
    if variant:
        candidate = PROMPTS_DIR / f"{name}.{variant}.md"
        if candidate.exists():
            return candidate.read_text(encoding="utf-8").strip()
    return (PROMPTS_DIR / f"{name}.md").read_text(encoding="utf-8").strip()
