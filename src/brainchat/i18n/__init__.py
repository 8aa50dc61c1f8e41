"""brainchat's own text in the languages of its users: English, 简体中文 and 繁體中文.

Every message the app itself shows (welcome, buttons, notices, step titles, errors, settings
labels) is a key in a table: each module of this package holds `TEXT = {key: (en, zh-CN, zh-TW)}`
for one part of the app, and the package merges them on first use (a key defined twice is an
error). `t(key, **values)` formats the message in the current language. Tool names, file names,
numbers and what models write stay as they are.

The current language is, in order: `use(lang)` for the running task (a test, the CLI), else what
the installed resolver says (the UI installs one that reads the user's setting and the browser's
`Accept-Language`, as Chainlit chooses its own), else English. `pick` maps any language tag
(zh-Hant-HK, zh_SG, en-GB, de) to one of `LANGS`; a language brainchat lacks falls back to English.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import string
from collections.abc import Callable
from contextvars import ContextVar

LANGS = ("en", "zh-CN", "zh-TW")
NAMES = {"en": "English", "zh-CN": "简体中文", "zh-TW": "繁體中文"}
TRADITIONAL = re.compile(r"zh[-_](tw|hk|mo|hant)", re.IGNORECASE)

_current: ContextVar[str | None] = ContextVar("brainchat_language", default=None)
_resolver: Callable[[], str | None] | None = None
_table: dict[str, tuple[str, str, str]] | None = None


def pick(tag: str | None) -> str:
    """One of LANGS for an Accept-Language value or a single tag; the first tag brainchat has
    wins ("de-DE,zh-TW;q=0.8" -> zh-TW), and English when none matches."""
    for part in (tag or "").split(","):
        code = part.split(";")[0].strip()
        low = code.lower().replace("_", "-")
        if low.startswith("zh"):
            return "zh-TW" if TRADITIONAL.match(low) else "zh-CN"
        if low.startswith("en"):
            return "en"
    return "en"


def use(lang: str | None) -> None:
    """Set the language for this task and the tasks it starts (None: back to the resolver)."""
    _current.set(pick(lang) if lang else None)


def set_resolver(resolver: Callable[[], str | None] | None) -> None:
    """Install how the current language is found when `use` did not set one (the UI's)."""
    global _resolver
    _resolver = resolver


def current() -> str:
    if lang := _current.get():
        return lang
    if _resolver is not None:
        try:
            found = _resolver()
        except Exception:  # outside a session (start-up, a worker thread): English
            found = None
        if found:
            return pick(found)
    return "en"


def table() -> dict[str, tuple[str, str, str]]:
    """Every key of every module of this package, merged once."""
    global _table
    if _table is None:
        merged: dict[str, tuple[str, str, str]] = {}
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            module = importlib.import_module(f"{__name__}.{info.name}")
            for key, texts in getattr(module, "TEXT", {}).items():
                if key in merged:
                    raise KeyError(f"i18n key {key!r} is defined twice ({info.name})")
                merged[key] = texts
        _table = merged
    return _table


def t(key: str, lang: str | None = None, /, **values: object) -> str:
    """The message `key` in `lang` (default: the current language), formatted with `values`."""
    texts = table()[key]
    text = texts[LANGS.index(pick(lang) if lang else current())]
    return text.format(**values) if values else text


def every(key: str) -> tuple[str, str, str]:
    """The message in every language (to recognise a reply or label whatever the language)."""
    return table()[key]


def fields(text: str) -> set[str]:
    """The {placeholders} a message formats (the same in every language, by test)."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}
