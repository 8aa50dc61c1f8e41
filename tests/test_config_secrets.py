"""The store's and the origin guard's configuration: URLs as written in the docs open, and a bad
value is named without echoing what may be a secret."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from brainchat import redact
from brainchat.store.config import async_url, load_store_config
from brainchat.store.database import make_engine, migrate
from brainchat.ui.origin import parse_allowed


def test_sqlite_urls_keep_their_slashes() -> None:
    # urlunsplit on Python 3.11 turned the absolute path's first folder into a host
    assert async_url("sqlite:////tmp/x/a.db") == "sqlite+aiosqlite:////tmp/x/a.db"
    assert async_url("sqlite:///rel.db") == "sqlite+aiosqlite:///rel.db"
    assert async_url("SQLITE:///rel.db") == "sqlite+aiosqlite:///rel.db"


def test_a_postgres_url_becomes_asyncpg_with_ssl() -> None:
    assert (
        async_url("postgresql://u:pw@db:5432/x?sslmode=require")
        == "postgresql+asyncpg://u:pw@db:5432/x?ssl=require"
    )
    assert async_url("postgres://u@db/x") == "postgresql+asyncpg://u@db/x"
    # a Unix socket, as the embedded test server and libpq write it
    assert (
        async_url("postgresql://postgres:@/t1?host=/tmp/pg")
        == "postgresql+asyncpg://postgres:@/t1?host=%2Ftmp%2Fpg"
    )


def test_the_documented_absolute_sqlite_url_opens_the_file_it_names(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "a.db"
    cfg = load_store_config({"DATABASE_URL": f"sqlite:///{target}"})
    assert cfg.errors == ()
    asyncio.run(_open(cfg.database_url))
    assert target.is_file()


def test_a_relative_sqlite_url_opens_beside_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = load_store_config({"DATABASE_URL": "sqlite:///sub/rel.db"})
    assert cfg.errors == ()
    asyncio.run(_open(cfg.database_url))
    assert (tmp_path / "sub" / "rel.db").is_file()


def test_make_engine_takes_an_in_memory_sqlite_url() -> None:
    asyncio.run(_open("sqlite+aiosqlite://"))  # no ":///" in it: this was an IndexError


async def _open(url: str) -> None:
    engine = make_engine(url)
    try:
        await migrate(engine)
    finally:
        await engine.dispose()


@pytest.mark.parametrize("port", ["notaport", "99999", "-1"])
def test_a_bad_postgres_port_is_a_config_error_without_the_password(port: str) -> None:
    cfg = load_store_config({"DATABASE_URL": f"postgresql://u:pw-Secret-77@db:{port}/x"})
    [error] = cfg.errors
    assert "DATABASE_URL" in error and "port" in error and "pw-Secret-77" not in error


def test_a_postgres_url_without_a_host_is_a_config_error() -> None:
    [error] = load_store_config({"DATABASE_URL": "postgresql:///x"}).errors
    assert "DATABASE_URL" in error and "host" in error


def test_a_url_missing_its_colon_is_named_without_the_password() -> None:
    [error] = load_store_config(
        {"DATABASE_URL": "postgresql//alice:Tr0ub4dor3xyz@db:5432/x"}
    ).errors
    assert "DATABASE_URL" in error and "Tr0ub4dor3xyz" not in error and "alice" not in error
    assert "db:5432" in error  # the host is still shown: it says which database was meant


def test_mask_finds_userinfo_after_a_slash() -> None:
    assert "pw123456" not in redact.mask("postgresql//u:pw123456@h/x")
    assert "pw123456" not in redact.mask("see /u:pw123456@h/x")


def test_a_database_password_is_remembered_for_later_messages() -> None:
    async_url("postgresql://u:plainpass-db-41@db:5432/x")
    assert "plainpass-db-41" not in redact.mask("FATAL: password plainpass-db-41 rejected")


def test_placeholder_keys_are_not_remembered() -> None:
    redact.remember("not-needed")
    assert redact.mask("api_key not-needed here") == "api_key not-needed here"
    redact.remember("lm-studio")  # LM Studio's usual stand-in: its host names stay readable
    assert redact.mask("LM Studio at http://lm-studio.lan:1234") == (
        "LM Studio at http://lm-studio.lan:1234"
    )


def test_a_default_database_password_does_not_hide_the_word_everywhere() -> None:
    """postgres:postgres (Docker's default) and the README's user:password example: remembering
    them would turn every later 'postgres' or 'password' in any message into ***."""
    cfg = load_store_config({"DATABASE_URL": "postgresql://postgres:postgres@localhost:5432/bc"})
    assert (
        cfg.shown_url.startswith("postgresql+asyncpg://") and "localhost:5432/bc" in cfg.shown_url
    )
    async_url("postgresql://user:password@host:5432/db")
    said = "the postgres server asked for a password"
    assert redact.mask(said) == said


def test_a_remembered_secret_is_masked_as_a_whole_word_only() -> None:
    redact.remember("Lovelace-lab-77")
    assert redact.mask("key Lovelace-lab-77, again (Lovelace-lab-77)") == "key ***, again (***)"
    assert redact.mask("xLovelace-lab-77y") == "xLovelace-lab-77y"  # a longer word, not the key


@pytest.mark.parametrize(
    ("name", "credential"),
    [
        ("GITHUB_TOKEN", True), ("OPENAI_API_KEY", True), ("Authorization", True),
        ("X-Api-Key", True), ("apiKey", True), ("accessToken", True), ("DB_PASSWORD", True),
        ("client_secret", True), ("SESSION_ID", True),
        ("max_tokens", False), ("GIT_AUTHOR_NAME", False), ("KEYBOARD_LAYOUT", False),
        ("KEYCLOAK_URL", False), ("OAUTH_REDIRECT_URI", False), ("NODE_ENV", False),
    ],
)  # fmt: skip
def test_credential_names_are_told_by_their_parts(name: str, credential: bool) -> None:
    assert redact.secret_name(name) is credential


@pytest.mark.parametrize("value", ["sk-abcdefgh12345678", "hunter2hunter2"])
def test_a_bad_login_mode_is_not_echoed(value: str) -> None:
    [error] = load_store_config({"BRAINCHAT_AUTH": value}).errors
    assert "BRAINCHAT_AUTH" in error and value not in error and "password" in error


def test_a_bad_title_mode_is_masked() -> None:
    [error] = load_store_config({"BRAINCHAT_THREAD_TITLES": "sk-abcdefgh12345678"}).errors
    assert "BRAINCHAT_THREAD_TITLES" in error and "sk-abcdefgh12345678" not in error
    [error] = load_store_config({"BRAINCHAT_THREAD_TITLES": "modle"}).errors
    assert "'modle'" in error  # a plain typo is still shown


@pytest.mark.parametrize(
    ("entry", "secret"),
    [
        ("https://user:Pw-proxy-99@proxy.example", "Pw-proxy-99"),
        ("https://app.example/?token=tk-origin-55", "tk-origin-55"),
    ],
)
def test_a_bad_allowed_origin_is_named_without_its_credentials(entry: str, secret: str) -> None:
    allowed, [error] = parse_allowed(f"https://ok.example, {entry}")
    assert allowed == {"https://ok.example"}
    assert "BRAINCHAT_ALLOWED_ORIGINS" in error and secret not in error


def test_the_start_up_check_names_an_engine_it_cannot_make(tmp_path: Path) -> None:
    from brainchat.store.config import StoreConfig
    from brainchat.ui.persistence import _check_database

    # past load_store_config's checks (a URL built by hand): make_engine raises on the port
    cfg = StoreConfig(tmp_path, tmp_path, "postgresql+asyncpg://u:pw-start-31@db:notaport/x")
    problem = asyncio.run(_check_database(cfg))
    assert problem is not None and "cannot open the database" in problem
    assert "pw-start-31" not in problem


def test_session_and_login_settings_are_checked_and_default_to_a_day() -> None:
    cfg = load_store_config({})
    assert (cfg.session_hours, cfg.login_backoff, cfg.secure_cookies) == (24.0, 10.0, "auto")
    cfg = load_store_config({"BRAINCHAT_SESSION_HOURS": "8", "BRAINCHAT_SECURE_COOKIES": "Always"})
    assert (cfg.session_hours, cfg.secure_cookies, cfg.errors) == (8.0, "always", ())
    bad = load_store_config({"BRAINCHAT_SESSION_HOURS": "nan", "BRAINCHAT_LOGIN_BACKOFF_SECONDS": "0",
                             "BRAINCHAT_SECURE_COOKIES": "sometimes"})  # fmt: skip
    assert [e.split("=")[0] for e in bad.errors] == [
        "BRAINCHAT_SESSION_HOURS", "BRAINCHAT_LOGIN_BACKOFF_SECONDS", "BRAINCHAT_SECURE_COOKIES"
    ]  # fmt: skip
    assert bad.secure_cookies == "always"  # a wrong value fails closed
