"""Where conversations are kept and who may log in: the state folder, the database, the login mode.

Read from the environment (and `.env`, as the rest of the configuration). Problems are listed by
variable name with what is allowed; a secret in DATABASE_URL is never shown.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, urlencode, urlsplit

from brainchat.redact import mask_url, remember, show
from brainchat.settings.declared import StoreVars
from brainchat.settings.fields import bounds

STATE_ENV, AUTH_ENV, TITLES_ENV, DB_ENV = (
    "BRAINCHAT_STATE_DIR",
    "BRAINCHAT_AUTH",
    "BRAINCHAT_THREAD_TITLES",
    "DATABASE_URL",
)
SESSION_ENV, BACKOFF_ENV, SECURE_ENV = (
    "BRAINCHAT_SESSION_HOURS",
    "BRAINCHAT_LOGIN_BACKOFF_SECONDS",
    "BRAINCHAT_SECURE_COOKIES",
)
DB_FILE = "brainchat.db"
LOCAL_USER = "local"
POSTGRES_SCHEMES = ("postgres", "postgresql", "postgresql+asyncpg")
SQLITE_SCHEMES = ("sqlite", "sqlite+aiosqlite")


@dataclass(frozen=True)
class StoreConfig:
    state_dir: Path
    data_dir: Path
    database_url: str  # an SQLAlchemy async URL
    auth: Literal["local", "password"] = "local"
    titles: Literal["question", "model"] = "question"
    errors: tuple[str, ...] = ()
    session_hours: float = 24.0  # a login's lifetime, however active
    login_backoff: float = 10.0  # seconds: the first wait of a throttled login (then doubled)
    secure_cookies: Literal["auto", "always"] = "auto"  # auto: when the request came over https

    @property
    def dialect(self) -> str:
        return "postgresql" if self.database_url.startswith("postgresql") else "sqlite"

    @property
    def shown_url(self) -> str:
        """The database URL as logs may show it: no password, no query values."""
        return mask_url(self.database_url, drop_query=True)

    @property
    def files_dir(self) -> Path:
        return self.state_dir / "files"


def read_env() -> dict[str, str]:
    """The environment over `.env`, as `load_settings` reads it."""
    from dotenv import dotenv_values

    values = {k: v for k, v in dotenv_values(".env").items() if v is not None}
    return {**values, **os.environ}


def load_store_config(env: Mapping[str, str] | None = None) -> StoreConfig:
    """Read the store's settings; never raises: problems are in `errors`."""
    env = read_env() if env is None else env
    errors: list[str] = []
    data_dir = Path(env.get("BRAINCHAT_DATA_DIR") or "data")
    state_dir = Path(env.get(STATE_ENV) or data_dir.parent / "state")
    url = sqlite_url(state_dir / DB_FILE)
    if raw := (env.get(DB_ENV) or "").strip():
        try:
            url = async_url(raw)
        except ValueError as exc:
            errors.append(str(exc))
    auth = (env.get(AUTH_ENV) or "local").strip().lower()
    if auth not in ("local", "password"):
        errors.append(
            f"{AUTH_ENV} is not valid (its value is not shown: it may be a password); allowed: "
            "local (one user, no login, loopback only) or password (accounts from `brainchat "
            "users add`)"
        )
        auth = "password"  # fail closed
    titles = (env.get(TITLES_ENV) or "question").strip().lower()
    if titles not in ("question", "model"):
        errors.append(
            f"{TITLES_ENV}={show(titles, 40)} is not valid; allowed: question (the first "
            "question, default) or model (a short title written by the chat model)"
        )
        titles = "question"
    hours = _number(env, "session_hours", "hours a login lasts", errors)
    backoff = _number(env, "login_backoff", "seconds of the first wait", errors)
    secure = (env.get(SECURE_ENV) or "auto").strip().lower()
    if secure not in ("auto", "always"):
        errors.append(
            f"{SECURE_ENV}={show(secure, 40)} is not valid; allowed: auto (Secure cookies when "
            "the request came over https, as a trusted proxy's X-Forwarded-Proto says) or always"
        )
        secure = "always"  # fail closed
    return StoreConfig(
        state_dir, data_dir, url, auth, titles, tuple(errors), hours, backoff, secure,  # type: ignore[arg-type]
    )  # fmt: skip


def _number(env: Mapping[str, str], field: str, what: str, errors: list[str]) -> float:
    """A number variable; its name, default and range are declared in settings (StoreVars)."""
    info = StoreVars.model_fields[field]
    name, default, (low, high) = str(info.alias), float(info.default), bounds(info)
    assert low is not None and high is not None
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not low <= value <= high:  # NaN fails too
        errors.append(f"{name}={show(raw, 40)} is not valid; allowed: {what}, {low:g} to {high:g}")
        return default
    return value


def sqlite_url(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path.expanduser().resolve()}"


def async_url(raw: str) -> str:
    """DATABASE_URL as an async SQLAlchemy URL (asyncpg for Postgres, aiosqlite for SQLite).

    Built by replacing the scheme in the raw text, not by `urlunsplit`: on Python 3.11 that drops
    an empty host, so `sqlite:////abs/a.db` became host `abs` and `sqlite:///a.db` lost its `//`.
    Raises ValueError naming DATABASE_URL, with the password (and any userinfo) hidden.
    """
    scheme, sep, rest = raw.partition("://")
    try:
        parts = urlsplit(raw) if sep else None
    except ValueError:
        parts = None
    if parts is None or scheme.lower() not in POSTGRES_SCHEMES + SQLITE_SCHEMES:
        raise ValueError(
            f"{DB_ENV}={_shown(raw)!r} is not a database URL brainchat can use; allowed: "
            "postgresql://user:password@host:5432/dbname (Postgres, through asyncpg) or "
            "sqlite:////absolute/path.db; leave it unset for the SQLite file in the state folder "
            f"({STATE_ENV})"
        )
    if scheme.lower() in SQLITE_SCHEMES:
        return "sqlite+aiosqlite://" + rest
    if parts.password:
        remember(parts.password)  # masked in any later message, even when it looks like a word
    try:
        port_ok = parts.port is not None or not parts.netloc.rpartition("@")[2].endswith(":")
    except ValueError:  # not a number, or out of range: asyncpg would raise it at connect time
        port_ok = False
    socket = any(k == "host" for k, _ in parse_qsl(parts.query))  # postgresql:///db?host=/run
    if not (parts.hostname or socket) or not port_ok:
        raise ValueError(
            f"{DB_ENV}={_shown(raw)!r} has no usable host and port; write "
            "postgresql://user:password@host:5432/dbname (the port a number from 0 to 65535), "
            "or postgresql://user@/dbname?host=/socket/folder"
        )
    # asyncpg takes ssl=..., not libpq's sslmode=...
    query = urlencode([("ssl" if k == "sslmode" else k, v) for k, v in parse_qsl(parts.query)])
    return f"postgresql+asyncpg://{parts.netloc}{parts.path}" + (f"?{query}" if query else "")


def _shown(raw: str) -> str:
    """DATABASE_URL for an error message: no query, and nothing before an '@' (user, password),
    which `mask` cannot find in a URL too broken to parse (`postgresql//u:pw@host`)."""
    text = re.split(r"[?#]", raw, maxsplit=1)[0]
    if "@" in text:
        text = "***@" + text.rsplit("@", 1)[1]
    return mask_url(text)[:80]


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost: only this machine can connect."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def exposure_problem(host: str, config: StoreConfig) -> str | None:
    """Why the app must not start on `host` with this login mode, or None when it may."""
    if config.auth == "password" or is_loopback(host):
        return None
    return (
        f"refusing to listen on {host!r} without login: anyone who can reach this address would "
        "use the app, its models and keys as the local user. Set BRAINCHAT_AUTH=password and add "
        "accounts with `brainchat users add NAME`, or listen on 127.0.0.1 (the default)."
    )
