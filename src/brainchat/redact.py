"""Masking of values that may be secrets, for every error message, status line and log record.

`mask(text)` replaces with *** whatever looks like a credential: key-shaped tokens (sk-..., ghp_...,
xoxb-..., AKIA..., JWTs), bearer / basic credentials, the values of `token=`, `api_key: ...`,
`"password": "..."` and `--secret VALUE`, URL userinfo and URL query values, and long random-looking
strings, and the secrets given at run time (`remember`). `show(value)` is how an error message quotes a value; `get_logger` gives a logger whose
records are masked before any handler sees them (the last line of defence).

A secret a user typed (a connection's key) is theirs: it is masked in logs and in that user's
output, not in another user's, or typing a guess of it would show *** exactly when it matched (an
oracle). The UI names the user whose output is being masked (`serve`); without one (logs, the
CLI, a background task) every remembered secret is masked.
"""

from __future__ import annotations

import logging
import math
import re
import traceback
from collections import Counter
from collections.abc import Callable, Collection, Iterable

MASK = "***"
HIDDEN = "the value (not shown: it may be a secret)"

# A name whose value is a credential: api_key, X-Api-Key, access_token, client_secret, password,
# Authorization... ("keys", "tokens" and "author" are ordinary words, e.g. max_tokens).
_WORD = (
    r"(?:key(?!s\b)|token(?!s\b)|secret|passw(?:or)?d|passphrase|pwd|auth(?!ors?\b)"
    r"|credential|signature|cookie|session[_-]?id)"
)
_NAME = r"[A-Za-z0-9_.-]*" + _WORD + r"[A-Za-z0-9_.-]*"
_VALUE = r"(?P<v>[^\s\"'&,;{}\[\]()<>]+)"
_KEY_SHAPES = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"sk-[A-Za-z0-9_-]{6,}"  # OpenAI, DeepSeek, Anthropic (sk-ant-...)
    r"|(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{6,}"  # Stripe
    r"|gh[pousr]_[A-Za-z0-9]{10,}|github_pat_\w{10,}|glpat-[A-Za-z0-9_-]{10,}"  # GitHub, GitLab
    r"|xox[abposr]-[A-Za-z0-9-]{6,}"  # Slack
    r"|(?:AKIA|ASIA)[A-Z0-9]{12,}"  # AWS access key id
    r"|AIza[A-Za-z0-9_-]{20,}"  # Google
    r"|(?:hf|gsk|pplx|r8)_[A-Za-z0-9]{10,}"  # Hugging Face, Groq, Perplexity, Replicate
    r"|eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}(?:\.[A-Za-z0-9_-]+)?"  # JWT
    r")"
)
_VALUE_RULES = [
    re.compile(r"(?i)\bbearer\s+(?P<v>[A-Za-z0-9._~+/=-]{6,})"),
    re.compile(r"\bBasic\s+(?P<v>(?=[A-Za-z0-9+/]*[0-9+/=])[A-Za-z0-9+/]{8,}={0,2})"),
    # "name": "value" / name=value / name: value (a header or YAML: quoted, or with a digit)
    re.compile(
        r"(?i)(?<![A-Za-z0-9_.-])" + _NAME + r"(?:[\"']\s*:\s*[\"']?|\s*=\s*[\"']?"
        r"|\s*:\s*(?=[\"']|[^\s\"']*\d)[\"']?)(?:(?:bearer|basic)\s+)?" + _VALUE
    ),
    re.compile(r"(?i)(?<!\S)--?" + _NAME + r"\s+(?P<v>[^\s-]\S*)"),  # --api-key VALUE
    re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://(?P<v>[^/\s@'\"?#]+)@"),  # scheme://userinfo@
    # user:pw@host, also after a '/' (`postgresql//u:pw@host`, a URL missing its ':')
    re.compile(r"(?<![\w:.@%+-])[\w.%+-]+:(?P<v>[^\s/@'\":]+)@(?=[\w-])"),
]
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s'\"<>]+")
_QUERY_VALUE = re.compile(r"[?&][^=&#\s]+=(?P<v>[^&#\s]+)")
_RUN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]{20,}(?![A-Za-z0-9])")
_JSON_PAIR = re.compile(
    r"(?:\"(?P<k>[^\"\\]*)\"|[{,]\s*(?P<bare>[A-Za-z_][\w-]*))\s*:\s*"
    r"(?P<v>\"(?:[^\"\\]|\\.)*\"?|[^\s,}\]]+)"
)
_SAFE_VALUES = {"none", "null", "true", "false", "***", "not-needed"}


def _random_looking(word: str) -> bool:
    """A long run of letters and digits with the spread of a generated key (not a word or name)."""
    digits = sum(c.isdigit() for c in word)
    if digits < 2 or digits == len(word):
        return False
    if re.fullmatch(r"[0-9a-fA-F]+", word):
        return len(word) >= 32
    counts = Counter(word)
    entropy = -sum(n / len(word) * math.log2(n / len(word)) for n in counts.values())
    return entropy >= 3.5


_KNOWN: set[str] = set()  # the operator's secrets given at run time: masked for everyone
_OWNED: dict[str, set[str]] = {}  # user -> the secrets they typed (connection keys)
_SERVED: list[Callable[[], str | None]] = [lambda: None]  # whose output is being masked


MIN_REMEMBERED = 8  # shorter "keys" are placeholders (Ollama's `ollama`, vLLM's `EMPTY`)
# Longer placeholder keys that servers without auth accept, and the default passwords of local
# databases: masking them would hide ordinary text ("the postgres server", "lm-studio.lan") and
# hides nothing anyone could not guess (`not-needed` is brainchat's own stand-in for "no key").
PLACEHOLDERS = {
    "not-needed", "no-key-required", "sk-no-key-required", "lm-studio", "anything", "dummy-key",
    "postgres", "password", "changeme", "localhost", "123456789",
}  # fmt: skip


def remember(secret: str | None, owner: str | None = None) -> None:
    """Mask `secret` from now on in logs and messages, even when it does not look like a key:
    in every message, or with an `owner` (the user who typed it) in that user's only.

    Only in what `mask` hides: `looks_secret` (which refuses names and model ids that look like
    keys) does not consult these, or one user's key would refuse another user's provider name,
    and trying names would tell whether a string is somebody's key.
    """
    if secret and len(secret) >= MIN_REMEMBERED and secret.lower() not in PLACEHOLDERS:
        (_OWNED.setdefault(owner, set()) if owner is not None else _KNOWN).add(secret)


def serve(lookup: Callable[[], str | None]) -> None:
    """How `mask` learns the user whose output it masks (None: no one; mask every secret)."""
    _SERVED[0] = lookup


def _remembered(everyone: bool) -> Iterable[str]:
    """The secrets `mask` hides here: the operator's, and the served user's (all, if none)."""
    user = None
    if not everyone:
        try:
            user = _SERVED[0]()
        except Exception:  # noqa: BLE001 - no user to be found: mask everything
            user = None
    if user is None:
        owned = [secret for secrets in tuple(_OWNED.values()) for secret in tuple(secrets)]
    else:
        owned = list(_OWNED.get(user, ()))
    return (*_KNOWN, *owned)


_SECRET_PARTS = re.compile(
    r"(?:api)?key|(?:access|refresh|id|auth|bearer)?token|secret|passw(?:or)?d|passphrase|pwd"
    r"|auth|authorization|credentials?|cookie|signature|sessionid|pat"
)


def secret_name(name: str) -> bool:
    """Whether a variable or header name says its value is a credential (GITHUB_TOKEN, API_KEY,
    Authorization, X-Api-Key, apiKey; not max_tokens, GIT_AUTHOR_NAME or KEYBOARD_LAYOUT): one of
    its parts (split at `_`, `-`, `.` and lower-to-upper case changes) is a credential word."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    parts = [p for p in re.split(r"[_.\-\s]+", spaced.lower()) if p]
    return any(_SECRET_PARTS.fullmatch(p) for p in parts) or "sessionid" in "".join(parts)


def _spans(text: str, *, known: bool = True, everyone: bool = False) -> list[tuple[int, int]]:
    """Where the secrets of `text` are, as sorted, merged (start, end) pairs."""
    found = [m.span() for m in _KEY_SHAPES.finditer(text)]
    for secret in _remembered(everyone) if known else ():
        at = text.find(secret)
        while at >= 0:
            end = at + len(secret)
            if not (_joined(text, at - 1, secret[0]) or _joined(text, end, secret[-1])):
                found.append((at, end))  # a whole token, not a piece of a longer word
            at = text.find(secret, at + 1)
    found += [m.span() for m in _RUN.finditer(text) if _random_looking(m.group())]
    for rule in _VALUE_RULES:
        found += [m.span("v") for m in rule.finditer(text) if m["v"].lower() not in _SAFE_VALUES]
    for url in _URL.finditer(text):
        found += [
            (url.start() + m.start("v"), url.start() + m.end("v"))
            for m in _QUERY_VALUE.finditer(url.group())
        ]
    return _merge(found)


def _joined(text: str, i: int, edge: str) -> bool:
    """Whether text[i], beside a remembered secret whose end character is `edge`, continues the
    same word (both letters or digits): then the match is part of a longer word, not the secret."""
    return 0 <= i < len(text) and text[i].isalnum() and edge.isalnum()


def _merge(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _replace(text: str, spans: list[tuple[int, int]], lo: int, hi: int) -> str:
    """text[lo:hi] with every span that touches it replaced by one MASK."""
    out, at = [], lo
    for start, end in spans:
        if end <= lo or start >= hi:
            continue
        out.append(text[at : max(start, lo)])
        out.append(MASK)
        at = min(end, hi)
    out.append(text[at:hi])
    return "".join(out)


def mask(text: str, *, everyone: bool = False) -> str:
    """`text` with everything that may be a secret replaced by ***: the served user's remembered
    secrets, or (`everyone`, for logs) every user's."""
    return _replace(text, _spans(text, everyone=everyone), 0, len(text)) if text else text


def mask_url(url: str, *, drop_query: bool = False) -> str:
    """A URL for a status line: userinfo and query values masked (or the query dropped)."""
    if drop_query:
        url = re.split(r"[?#]", url, maxsplit=1)[0]
    return mask(url)


def mask_args(args: Iterable[str]) -> list[str]:
    """Command-line arguments with `--api-key X`, `--token=X` and key-shaped values masked."""
    out: list[str] = []
    hide_next = False
    for arg in args:
        if hide_next:
            out.append(MASK)
            hide_next = False
            continue
        hide_next = "=" not in arg and bool(re.fullmatch(r"(?i)--?" + _NAME, arg))
        out.append(mask(arg))
    return out


def looks_secret(text: str) -> bool:
    """Whether `text` has the shape of a secret (a key, a token, a credential in a URL)."""
    return bool(_spans(text, known=False))


def show(value: object, limit: int = 80) -> str:
    """How an error message quotes a value: masked and quoted; a container only by its type."""
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    if not isinstance(value, str):
        return f"a {type(value).__name__}"
    text = mask(value)
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def excerpt(text: str, pos: int, *, width: int = 24, shown_keys: Collection[str] = ()) -> str:
    """The masked text around `pos` (a parse error); JSON values of keys not in `shown_keys` too."""
    spans = _spans(text)
    if shown_keys:
        spans = _merge(
            [*spans]
            + [
                m.span("v")
                for m in _JSON_PAIR.finditer(text)
                if (m["k"] or m["bare"]) not in shown_keys
            ]
        )
    lo, hi = max(0, pos - width), min(len(text), pos + width)
    return ("…" if lo else "") + _replace(text, spans, lo, hi) + ("…" if hi < len(text) else "")


class MaskingFilter(logging.Filter):
    """Masks a record's message and traceback before any handler formats them."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string is logging's own error to report
            return True
        masked = mask(message, everyone=True)  # a log is the operator's: no user's key in it
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
            lines = traceback.format_exception(*record.exc_info)
            record.exc_text = mask("".join(lines).rstrip("\n"), everyone=True)
        return True


_FILTER = MaskingFilter()


def get_logger(name: str) -> logging.Logger:
    """`logging.getLogger(name)` with the masking filter attached (once)."""
    logger = logging.getLogger(name)
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
    return logger
