"""MCP resources: list and read a server's resources, for the agent (two read-only tools) and the UI.

A read only ever asks a server for a URI that the server itself lists, or that matches one of its
resource templates: the agent (or a prompt injected into a tool result) cannot make a server read
`file:///etc/passwd` or an internal URL it happens to resolve but never offered. Text is bounded
(the agent's context budget cuts further); binary contents are described, never dumped.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from mcp import ClientSession, types
from pydantic import AnyUrl

from brainchat.redact import mask
from brainchat.tools.mcp_tools import MAX_RESULT_CHARS
from brainchat.tools.registry import set_flags

LIST_TOOL, READ_TOOL = "mcp_list_resources", "mcp_read_resource"
TOOL_NAMES = frozenset({LIST_TOOL, READ_TOOL})
TIMEOUT = 30.0
MAX_ENTRIES = 200  # resources listed to the model at most (a server may have thousands)
_VAR = re.compile(r"\{([+#./;?&]?)([^}]*)\}")


class Server(Protocol):
    """What this module needs of a connection (mcp_connection.ServerConnection has it)."""

    @property
    def name(self) -> str: ...

    capabilities: types.ServerCapabilities | None
    resources_offered: bool

    async def request(
        self,
        what: str,
        during: str,
        op: Callable[[ClientSession], Awaitable[Any]],
        timeout: float,  # noqa: ASYNC109
        after_restart: Callable[[], None] | None = None,
    ) -> Any: ...


@dataclass(frozen=True)
class Entry:
    """One resource, or one resource template (`template=True`, its `uri` is the pattern)."""

    uri: str
    name: str
    description: str = ""
    mime: str = ""
    template: bool = False

    def line(self) -> str:
        kind = " (template: fill in the {…} parts)" if self.template else ""
        mime = f" [{self.mime}]" if self.mime else ""
        about = f": {self.description}" if self.description else ""
        return f"- {self.uri}{kind} — {self.name}{mime}{about}"


@dataclass(frozen=True)
class Contents:
    """A read resource: the text for the model (bounded) and what it was made of."""

    uri: str
    text: str
    parts: list[dict[str, Any]]  # uri, mime, and text or size (binary) of each part


def has_resources(server: Server) -> bool:
    """Whether the server lists any resource or template (FastMCP declares the capability always)."""
    return server.resources_offered


async def offers_any_resource(
    session: ClientSession, capabilities: types.ServerCapabilities | None
) -> bool:
    """At connect: the first page of resources or templates is not empty (failures: no)."""
    if capabilities is None or capabilities.resources is None:
        return False
    try:
        if (await session.list_resources()).resources:
            return True
        return bool((await session.list_resource_templates()).resourceTemplates)
    except Exception:  # noqa: BLE001 - a server that cannot list them offers none
        return False


async def list_entries(server: Server) -> list[Entry]:
    """The server's resources and resource templates (following pagination)."""
    if not has_resources(server):
        return []
    entries: list[Entry] = []
    for method, field, template in (
        ("list_resources", "resources", False),
        ("list_resource_templates", "resourceTemplates", True),
    ):
        cursor: str | None = None
        for _ in range(50):
            page = await server.request(
                "resource listing",
                "a resource listing",
                _lister(method, cursor),
                TIMEOUT,
            )
            for r in getattr(page, field):
                uri = str(r.uriTemplate if template else r.uri)
                entries.append(
                    Entry(uri, r.title or r.name, r.description or "", r.mimeType or "", template)
                )
            cursor = page.nextCursor
            if not cursor:
                break
    return entries


def _lister(method: str, cursor: str | None) -> Callable[[ClientSession], Awaitable[Any]]:
    params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
    return lambda s: getattr(s, method)(params=params)


def offers(entries: list[Entry], uri: str) -> bool:
    """Whether `uri` is one of the server's own: listed exactly, or matching a template."""
    for e in entries:
        if (not e.template and e.uri == uri) or (e.template and _template_re(e.uri).fullmatch(uri)):
            return True
    return False


def _template_re(template: str) -> re.Pattern[str]:
    """An RFC 6570 template as a pattern: `{x}` one path segment, `{+x}` any text."""
    out, last = [], 0
    for m in _VAR.finditer(template):
        out.append(re.escape(template[last : m.start()]))
        out.append(".+" if m.group(1) in ("+", "#") else "[^/?#]+")
        last = m.end()
    out.append(re.escape(template[last:]))
    return re.compile("".join(out))


async def read(server: Server, uri: str, max_chars: int = MAX_RESULT_CHARS) -> Contents:
    """Read one of the server's own resources; ToolException (naming what to do) otherwise."""
    if not has_resources(server):
        raise ToolException(f"MCP server '{server.name}' offers no resources")
    if not offers(await list_entries(server), uri):
        raise ToolException(
            f"MCP server '{server.name}' does not offer the resource {mask(uri)!r}: only the URIs "
            f"it lists (or that match its templates) can be read; call {LIST_TOOL} to see them"
        )
    result = await server.request(
        f"resource read {mask(uri)!r}",
        f"the read of {mask(uri)!r}",
        lambda s: s.read_resource(AnyUrl(uri)),
        TIMEOUT,
    )
    texts, parts = [], []
    for c in result.contents:
        mime = c.mimeType or ""
        if isinstance(c, types.TextResourceContents):
            texts.append(c.text)
            parts.append({"uri": str(c.uri), "mime": mime or "text/plain", "text": c.text})
        else:
            size = len(base64.b64decode(c.blob)) if isinstance(c, types.BlobResourceContents) else 0
            texts.append(f"[binary resource {c.uri} ({mime or 'unknown type'}, {size:,} bytes)]")
            parts.append({"uri": str(c.uri), "mime": mime, "size": size})
    text = "\n".join(texts) or "(the resource is empty)"
    if len(text) > max_chars:
        text = text[:max_chars] + f"\n[truncated: {len(text):,} characters in all]"
    return Contents(uri, text, parts)


def resource_tools(servers: Callable[[], Mapping[str, Server]]) -> list[BaseTool]:
    """`mcp_list_resources(server)` and `mcp_read_resource(server, uri)`: read-only agent tools
    over the servers `servers()` returns now (those whose capabilities include resources)."""

    def pick(name: str) -> Server:
        found = {n: s for n, s in servers().items() if has_resources(s)}
        if name not in found:
            known = ", ".join(sorted(found)) or "none"
            raise ToolException(
                f"no connected MCP server {mask(name)!r} with resources; servers with resources: "
                f"{known}"
            )
        return found[name]

    async def list_them(server: str) -> str:
        entries = await list_entries(pick(server))
        if not entries:
            return f"MCP server '{server}' lists no resources."
        lines = [e.line() for e in entries[:MAX_ENTRIES]]
        if len(entries) > MAX_ENTRIES:
            lines.append(f"[{len(entries) - MAX_ENTRIES} more not shown]")
        return f"Resources of MCP server '{server}':\n" + "\n".join(lines)

    async def read_it(server: str, uri: str) -> str:
        return (await read(pick(server), uri)).text

    server_arg = {"type": "string", "description": "The MCP server's name"}
    tools: list[BaseTool] = [
        StructuredTool(
            name=LIST_TOOL,
            description="List the resources (documents, data, templates) an MCP server offers.",
            args_schema={
                "type": "object",
                "properties": {"server": server_arg},
                "required": ["server"],
            },
            coroutine=list_them,
        ),
        StructuredTool(
            name=READ_TOOL,
            description=f"Read one resource of an MCP server by its URI (as {LIST_TOOL} "
            "lists it, templates filled in). Text comes back; binary data is only described.",
            args_schema={
                "type": "object",
                "properties": {
                    "server": server_arg,
                    "uri": {"type": "string", "description": "The resource's URI"},
                },
                "required": ["server", "uri"],
            },
            coroutine=read_it,
        ),
    ]
    for tool in tools:
        set_flags(tool, source="mcp:resources", read_only=True, timeout=TIMEOUT * 2 + 5)
    return tools
