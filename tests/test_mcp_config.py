"""The mcpServers file: formats accepted, and failures that name the file, server and allowed values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brainchat.tools.mcp_config import load_mcp_config, parse_mcp_config


def write(tmp_path: Path, data) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_example_file_shipped_with_the_repo_loads():
    example = Path(__file__).resolve().parents[1] / "mcp_servers.example.json"
    configs, failures = load_mcp_config(example)
    assert failures == []
    assert {c.name for c in configs} >= {"time"}


def test_stdio_http_and_sse_entries(tmp_path, monkeypatch):
    monkeypatch.setenv("MAPS_TOKEN", "s3cret")
    path = write(
        tmp_path,
        {
            "mcpServers": {
                "time": {
                    "command": "mcp-server-time",
                    "args": ["--local-timezone", "UTC"],
                    "readOnly": True,
                },
                "local": {"command": "./server.py", "cwd": "srv", "env": {"A": "1"}},
                "maps": {
                    "url": "https://maps.example/mcp",
                    "headers": {"Authorization": "Bearer ${MAPS_TOKEN}"},
                    "timeout": 5,
                    "tools": {"delete_route": {"destructive": True, "timeout": 60}},
                },
                "legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
                "auto_sse": {"url": "http://127.0.0.1:9/sse"},
                "off": {"command": "x", "disabled": True},
            }
        },
    )
    configs, failures = load_mcp_config(path)
    assert failures == []
    by = {c.name: c for c in configs}
    assert set(by) == {"time", "local", "maps", "legacy", "auto_sse"}
    assert by["time"].transport == "stdio" and by["time"].read_only and by["time"].env is None
    assert by["local"].command == str(tmp_path / "server.py") and by["local"].cwd == str(
        tmp_path / "srv"
    )
    assert by["local"].env == {"A": "1"}
    maps = by["maps"]
    assert maps.transport == "streamable_http" and maps.headers == {
        "Authorization": "Bearer s3cret"
    }
    assert maps.flags_for("delete_route") == (False, True, 60.0)
    assert maps.flags_for("route") == (False, False, 5.0)
    assert by["legacy"].transport == "sse" and by["auto_sse"].transport == "sse"


def test_missing_default_file_is_no_servers_but_missing_named_file_is_a_failure(
    tmp_path, monkeypatch
):
    monkeypatch.delenv("MCP_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    import brainchat.tools.mcp_config as mc

    monkeypatch.setattr(mc, "default_config_path", lambda: tmp_path / "mcp_servers.json")
    assert load_mcp_config(None) == ([], [])
    monkeypatch.setenv("MCP_CONFIG", str(tmp_path / "nope.json"))
    configs, failures = load_mcp_config(None)
    assert (
        configs == [] and "nope.json" in failures[0].reason and "MCP_CONFIG" in failures[0].reason
    )


def test_env_variable_picks_the_file(tmp_path, monkeypatch):
    path = write(tmp_path, {"mcpServers": {"a": {"command": "x"}}})
    monkeypatch.setenv("MCP_CONFIG", str(path))
    configs, failures = load_mcp_config(None)
    assert [c.name for c in configs] == ["a"] and failures == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{not json", ["not valid JSON", "line 1"]),
        ('{"servers": 3}', ["mcpServers"]),
        ("[]", ["mcpServers"]),
    ],
)
def test_malformed_file(tmp_path, text, expected):
    path = write(tmp_path, text)
    configs, failures = load_mcp_config(path)
    assert configs == [] and len(failures) == 1
    assert str(path) in failures[0].reason
    for word in expected:
        assert word in failures[0].reason


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({}, "'command' is required"),
        ({"command": 3}, "'command' must be a string"),
        ({"command": "x", "args": "a b"}, "'args' must be a list of strings"),
        ({"command": "x", "readonly": True}, "unknown key(s) ['readonly']; allowed:"),
        ({"command": "x", "destructive": "yes"}, "'destructive' must be true or false"),
        ({"command": "x", "timeout": -1}, "'timeout' must be a number of seconds in (0, 3600]"),
        ({"type": "websocket", "url": "ws://x"}, "'type' 'websocket' is not a transport; allowed:"),
        ({"url": "ftp://x"}, "'url' must be an http(s) URL"),
        ({"command": "x", "tools": {"t": {"dangerous": True}}}, "tools.t: bad entry ['dangerous']"),
        ({"command": "x", "env": {"K": "${NOT_SET_ANYWHERE_42}"}}, "${NOT_SET_ANYWHERE_42}"),
        ("python server.py", "expected an object, got str"),
    ],
)
def test_bad_entry_names_server_and_what_is_allowed(entry, expected):
    configs, failures = parse_mcp_config(
        {"mcpServers": {"good": {"command": "y"}, "bad": entry}}, where="MCP config f.json"
    )
    assert [c.name for c in configs] == ["good"]
    assert len(failures) == 1 and failures[0].source == "mcp:bad"
    assert failures[0].reason.startswith("MCP config f.json: server 'bad': ")
    assert expected in failures[0].reason


def test_bad_server_name():
    _, failures = parse_mcp_config({"mcpServers": {"my server!": {"command": "x"}}})
    assert "letters, digits" in failures[0].reason


def test_status_target_masks_secrets_in_args_and_url_queries() -> None:
    from brainchat.tools.mcp_config import McpServerConfig

    stdio = McpServerConfig(
        name="s",
        transport="stdio",
        command="srv",
        args=["--api-key", "sk-123", "--token=abc", "--port", "9"],
    )
    assert stdio.describe() == "srv --api-key *** --token=*** --port 9"
    http = McpServerConfig(
        name="h", transport="streamable_http", url="http://127.0.0.1:8001/mcp?token=abc"
    )
    assert "abc" not in http.describe() and http.describe().endswith("127.0.0.1:8001/mcp")
