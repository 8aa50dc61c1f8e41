"""Every environment variable brainchat reads, declared once: type, range, default and help.

Each group is a pydantic model whose field is named as the attribute it fills (AgentLimits,
Settings, StoreConfig...) and whose alias is the variable's name. `fields.check` reads a raw
value against a field (its type and `ge`/`le` bounds, enforced by pydantic); the settings panel
takes its ranges, and README.md its configuration table (settings/table.py), from here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from brainchat.settings.compute import ComputeVars, DemoVars, KernelVars, PublicDataVars
from brainchat.settings.declare import Declared, var
from brainchat.settings.localmodels import LocalModelVars


class ModelVars(Declared):
    """The models (settings/spec.py parses a spec)."""

    openai_api_key: str | None = var(
        None,
        "OPENAI_API_KEY",
        "the ecosystem's default key: alone it gives a chat model (`OPENAI_MODEL`); also the "
        "key of `openai` specs",
        allowed="an API key",
        secret=True,
    )
    openai_base_url: str | None = var(
        None,
        "OPENAI_BASE_URL",
        "another OpenAI-compatible server for the default model and `openai` specs",
        allowed="an http(s) URL",
        shown_default="`https://api.openai.com/v1`",
    )
    openai_model: str = var(
        "gpt-4o-mini", "OPENAI_MODEL", "the model `OPENAI_API_KEY` alone gives", allowed="a model"
    )
    deepseek_api_key: str | None = var(
        None, "DEEPSEEK_API_KEY", "the key of `deepseek` specs", allowed="an API key", secret=True
    )
    chat_model: str | None = var(
        None,
        "CHAT_MODEL",
        "the model of Chat mode (falls back to the function-call model)",
        allowed="a model spec (below)",
        secret=True,
    )
    function_call_model: str | None = var(
        None,
        "AGENT_FUNCTION_CALL_MODEL",
        "the model that calls tools (falls back to `CHAT_MODEL`)",
        allowed="a model spec (below)",
        secret=True,
    )
    answer_model: str | None = var(
        None,
        "AGENT_ANSWER_MODEL",
        "the model that writes the agent's answer; without it the function-call model plays "
        "both roles",
        allowed="a model spec (below)",
        secret=True,
    )
    embeddings_model: str | None = var(
        None,
        "BRAINCHAT_EMBEDDINGS_MODEL",
        "an OpenAI-compatible `/v1/embeddings` model for knowledge search (OpenAI, Ollama, "
        "llama.cpp `--embedding`, vLLM); without it the search is BM25 alone",
        allowed="a model spec (below)",
        secret=True,
    )


class LimitVars(Declared):
    """Agent mode's limits and behaviour (AgentLimits)."""

    max_iterations: int = var(
        10,
        "AGENT_MAX_ITERATIONS",
        "the hard limit on function-call model calls in one turn",
        ge=1,
        le=30,
        panel="Max iterations",
    )
    max_execution_time: float = var(
        60.0,
        "AGENT_MAX_EXECUTION_TIME",
        "the whole turn, answer included; the tool loop keeps a fifth (at most 15 s) for the "
        "answer, more for a slow answer model (its measured tokens/s, up to half the turn; when "
        "even that is too little, brainchat states the gathered facts itself), and an answer cut "
        "by the limit stays with a notice",  # agent/pace.py
        ge=10,
        le=300,
        unit="seconds",
        panel="Max execution time",
    )
    execution_mode: Literal["auto", "single_step"] = var(
        "auto",
        "AGENT_EXECUTION_MODE",
        "how many successful tool rounds a turn runs",
        choices={"auto": "several", "single_step": "one, then the answer"},
        panel="Execution mode",
    )
    plan_mode: Literal["off", "auto", "always"] = var(
        "off",
        "AGENT_PLAN_MODE",
        "multi-step requests get a visible, verified plan (see [Plans](#plans)); also in the "
        "settings panel",
        panel="Plan mode",
    )
    max_replans: int = var(
        2,
        "AGENT_MAX_REPLANS",
        "replans after a failed or unverified plan step in one turn; then the answer says what "
        "was done and what was not",
        ge=0,
        le=5,
    )
    max_auto_rounds: int = var(
        5,
        "AGENT_MAX_TOOL_ROUNDS",
        "successful tool rounds in auto mode; then the answer says what was done and what "
        'remains, and "continue" goes on',
        ge=1,
        le=30,
    )
    max_calls_per_reply: int = var(
        8,
        "AGENT_MAX_TOOL_CALLS",
        "tool calls run from one model reply; the rest are refused and the model is told",
        ge=1,
        le=50,
    )
    evaluation: Literal["rule", "model"] = var(
        "rule",
        "AGENT_EVALUATION",
        "who ends the tool loop",
        choices={
            "rule": "a round of web searches that found sources goes straight to the answer, "
            "saving a model call, and a round with nothing useful goes back with the reason",
            "model": "the function-call model always decides",
        },
    )
    tool_timeout: float = var(
        30.0, "AGENT_TOOL_TIMEOUT", "the limit of one tool call", ge=1, le=3600, unit="seconds"
    )
    min_result_chars: int = var(
        20,
        "AGENT_MIN_RESULT_CHARS",
        'tool results shorter than this are "not enough"',
        ge=0,
        le=10_000,
        unit="characters",
    )
    enable_cache: bool = var(True, "AGENT_ENABLE_CACHE", "the per-session web-search cache")
    verbose: bool = var(False, "AGENT_VERBOSE", "log every thought, tool input/output and decision")


class AppVars(Declared):
    """The rest of Settings: mode, data folder, sizes, MCP servers, web search."""

    default_mode: Literal["chat", "agent"] = var(
        "chat", "DEFAULT_MODE", "the mode a new conversation starts in"
    )
    data_dir: Path = var(
        Path("data"),
        "BRAINCHAT_DATA_DIR",
        "the EEG data folder; EEG tools read and write only inside it",
        allowed="a folder",
    )
    upload_max_mb: int = var(
        500,
        "BRAINCHAT_UPLOAD_MAX_MB",
        "the largest file (or .zip) a user may upload; see [Upload recordings](#upload-recordings)",
        ge=1,
        le=100_000,
        unit="MB",
    )
    max_operation_mb: int = var(
        4_000,
        "BRAINCHAT_MAX_OPERATION_MB",
        "the memory one EEG study step (load, resample, filter, ICA, epochs) may need by its "
        "estimate; a step over it is refused before it starts",
        ge=10,
        le=10_000_000,
        unit="MB",
    )
    user_quota_mb: int = var(
        20_000,
        "BRAINCHAT_USER_QUOTA_MB",
        "the disk one user's uploads, unpacked zips, saved models and exports may take (`0`: no "
        "quota); see [Upload recordings](#upload-recordings)",
        ge=0,
        le=100_000_000,
        unit="MB",
    )
    mcp_config: Path | None = var(
        None,
        "MCP_CONFIG",
        "MCP servers file in the `mcpServers` format (optional; see `mcp_servers.example.json`)",
        allowed="a file",
        shown_default="`mcp_servers.json`",
    )
    mcp_max_call_seconds: float = var(
        600.0, "BRAINCHAT_MCP_MAX_CALL_SECONDS", "the longest one MCP tool call may run while "
        "its server keeps sending progress (each progress restarts the tool's own `timeout`); "
        "past it the call is cancelled, the session kept", ge=1, le=86_400, unit="s",
    )  # fmt: skip
    mcp_log_level: Literal[
        "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
    ] = var(
        "warning", "BRAINCHAT_MCP_LOG_LEVEL", "the lowest level of an MCP server's log message "
        "shown in the step of the call it came during (every message goes to the app log, "
        "masked)",
    )  # fmt: skip
    mcp_roots: Literal["read_only", "read_write", "off"] = var(
        "read_only", "BRAINCHAT_MCP_ROOTS", "what MCP servers are told of the data folder (MCP "
        "roots): `read_only` or `read_write` names it as a `file://` root saying so, `off` none; "
        "with accounts configured servers get none, plug-button ones the user's own folder",
    )  # fmt: skip
    search_fixture: Path | None = var(
        None,
        "BRAINCHAT_SEARCH_FIXTURE",
        "serve `web_search` from a JSON file instead of the web (tests, offline demos)",
        allowed="a file",
    )
    knowledge_max_mb: int = var(
        500, "BRAINCHAT_KNOWLEDGE_MAX_MB", "the documents one user may add to knowledge, in all; "
        "see [Knowledge](#knowledge-your-documents-as-a-source)", ge=1, le=1_000_000, unit="MB",
    )  # fmt: skip
    knowledge_max_file_mb: int = var(
        200, "BRAINCHAT_KNOWLEDGE_MAX_FILE_MB", "the largest document (or zip of them) added to "
        "knowledge", ge=1, le=100_000, unit="MB",
    )  # fmt: skip
    knowledge_max_pages: int = var(
        2000, "BRAINCHAT_KNOWLEDGE_MAX_PAGES", "the most pages of a PDF added to knowledge (a "
        "longer one is refused whole)", ge=1, le=1_000_000,
    )  # fmt: skip
    knowledge_max_chars: int = var(
        20_000_000, "BRAINCHAT_KNOWLEDGE_MAX_CHARS", "the most characters of text one document "
        "gives", ge=1, le=2_000_000_000,
    )  # fmt: skip
    knowledge_parse_seconds: int = var(
        300, "BRAINCHAT_KNOWLEDGE_PARSE_SECONDS", "the longest one document's text extraction may "
        "take", ge=1, le=86_400, unit="s",
    )  # fmt: skip
    knowledge_zip_entries: int = var(
        2000, "BRAINCHAT_KNOWLEDGE_ZIP_ENTRIES", "the most entries of a zip added to knowledge",
        ge=1, le=1_000_000,
    )  # fmt: skip
    knowledge_zip_mb: int = var(
        1000, "BRAINCHAT_KNOWLEDGE_ZIP_MB", "the most bytes a zip added to knowledge may unpack "
        "to", ge=1, le=1_000_000, unit="MB",
    )  # fmt: skip
    search_backend: Literal["ddgs", "fixture"] = var(
        "ddgs",
        "BRAINCHAT_SEARCH_BACKEND",
        "where `web_search` looks: `ddgs` the web, `fixture` the `BRAINCHAT_SEARCH_FIXTURE` "
        "file (setting that file alone picks `fixture`)",
    )


class StoreVars(Declared):
    """Stored conversations and logins (parsed by store/config.py)."""

    state_dir: Path | None = var(
        None,
        "BRAINCHAT_STATE_DIR",
        "the SQLite database, stored plots, the auth secret (see "
        "[Conversations and accounts](#conversations-and-accounts))",
        allowed="a folder",
        shown_default="`state` beside the data folder",
    )
    database_url: str | None = var(
        None,
        "DATABASE_URL",
        "`postgresql://user:password@host:5432/db` stores conversations in Postgres (asyncpg) "
        "instead of the SQLite file; `sqlite:////absolute/path.db` names another SQLite file "
        "(`sqlite:///relative.db`: relative to the folder the app starts in)",
        allowed="a database URL",
        shown_default="the SQLite file in the state folder",
        secret=True,
    )
    auth: Literal["local", "password"] = var(
        "local",
        "BRAINCHAT_AUTH",
        "who may log in",
        choices={
            "local": "one local user, no login page, loopback only",
            "password": "accounts from `brainchat users add`",
        },
    )
    session_hours: float = var(
        24.0,
        "BRAINCHAT_SESSION_HOURS",
        "how long a password login lasts, however active (then log in again)",
        ge=0.01,
        le=720,
        unit="hours",
    )
    login_backoff: float = var(
        10.0,
        "BRAINCHAT_LOGIN_BACKOFF_SECONDS",
        "the first wait of a throttled login, doubled at each further failure (up to 15 min)",
        ge=0.1,
        le=900,
        unit="seconds",
    )
    secure_cookies: Literal["auto", "always"] = var(
        "auto",
        "BRAINCHAT_SECURE_COOKIES",
        "when login cookies are `Secure`",
        choices={
            "auto": "when the request came over https, as uvicorn reads `X-Forwarded-Proto` "
            "from a trusted proxy",
            "always": "always",
        },
    )
    titles: Literal["question", "model"] = var(
        "question",
        "BRAINCHAT_THREAD_TITLES",
        "how a thread is titled",
        choices={
            "question": "by its first question",
            "model": "the chat model writes a short title, one extra call",
        },
    )


class AccessVars(Declared):
    """Who may reach the app, and where users' connections may go (ui/origin.py, netguard.py)."""

    allowed_origins: str | None = var(
        None,
        "BRAINCHAT_ALLOWED_ORIGINS",
        "other origins allowed to drive the app, e.g. a reverse proxy's public address; `*` is "
        "refused",
        allowed="`scheme://host[:port]`, comma-separated",
    )
    connection_allow: str | None = var(
        None,
        "BRAINCHAT_CONNECTION_ALLOW",
        "with accounts, the internal servers users' connections and MCP servers may reach "
        "(see [Security](#security))",
        allowed="host names, addresses or CIDR networks, comma-separated",
    )


class ServerVars(Declared):
    """`brainchat mcp-server` (mcpserver/): read there, not by the app."""

    mcp_token: str | None = var(
        None,
        "BRAINCHAT_MCP_TOKEN",
        "the bearer token `brainchat mcp-server --http` requires (it refuses to start without "
        "one); see [brainchat as an MCP server](#brainchat-as-an-mcp-server)",
        allowed="16 characters or more",
        secret=True,
    )
    mcp_allowed_origins: str | None = var(
        None,
        "BRAINCHAT_MCP_ALLOWED_ORIGINS",
        "browser origins `brainchat mcp-server --http` accepts besides its own address (every "
        "other Origin is refused, on every bind address), e.g. `http://localhost:6274` for the "
        "MCP Inspector",
        allowed="comma-separated `http(s)://host[:port]` (`:*`: any port)",
    )
    mcp_study_handles: int = var(
        16,
        "BRAINCHAT_MCP_STUDY_HANDLES",
        "study handles (from `load_data`, for one-shot MCP clients) one bearer token, or the "
        "one stdio client, may hold at once; past it a new study gets no handle",
        ge=1,
        le=1_000,
        unit="handles",
    )
    mcp_handle_idle_s: int = var(
        3_600,
        "BRAINCHAT_MCP_HANDLE_IDLE_S",
        "a study handle unused this long expires (its study is released)",
        ge=60,
        le=604_800,
        unit="seconds",
    )


GROUPS: tuple[type[Declared], ...] = (
    ModelVars,
    LimitVars,
    AppVars,
    StoreVars,
    AccessVars,
    ServerVars,
    ComputeVars,  # eeg/protocols/runner.py
    KernelVars,  # eeg/kernel/
    PublicDataVars,  # eeg/tools/fetch_tool.py
    LocalModelVars,  # localmodels/
    DemoVars,
)
