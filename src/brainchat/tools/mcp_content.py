"""What a tool result gives the model, once: its text content (which the specification says
is the structured content serialized, or a rendering of it: server-filesystem's read_text_file
gives the file as text and as {"content": text}), or the structured content when there is no
text; never both (#43: a file reached the model twice). Binary content (images, audio, blobs) is
described (type, size, name), never pasted; an image the page can show is shown (a ToolImage
event), and the model is told so only then."""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, field
from typing import Any

from mcp import types

MAX_RESULT_CHARS = 16_000
# Image types the page shows, with the first bytes each must start with: a server's claim is
# checked, so bytes of another kind are never served to the browser as an image. SVG is not
# shown: served from the app's own origin it could run scripts if opened on its own.
_SIGNATURES: dict[str, tuple[bytes, ...]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}
SHOWN_TYPES = tuple(_SIGNATURES)
# A long run of base64 in structured content: described, never given to the model or the step.
_BASE64 = re.compile(r"^[A-Za-z0-9+/\s]{200,}={0,2}$")


@dataclass
class ModelContent:
    """The model's text, and the images to show under the call's step."""

    text: str
    images: list[tuple[str, bytes, str]] = field(default_factory=list)  # (mime, bytes, name)


def model_content(result: types.CallToolResult, *, can_show: bool = True) -> ModelContent:
    """The result as the model gets it; `can_show`: a page is listening for images."""
    out = ModelContent("")
    parts: list[str] = []  # in the server's order
    for block in result.content:
        if isinstance(block, types.TextContent):
            # the structured content serialized, or what the server wrote for it: given alone
            parts.append(_compact_text(block.text))
        else:
            parts.append(_describe(block, out, can_show))
    has_text = any(isinstance(b, types.TextContent) for b in result.content)
    structured = result.structuredContent
    if not has_text and structured is not None and not _copy_of_blocks(structured, result.content):
        parts.insert(0, _compact(scrub(structured)))  # no text: the data, once
    text = "\n".join(p for p in parts if p)
    text = text or "(the tool returned no content)"
    if len(text) > MAX_RESULT_CHARS:
        text = text[:MAX_RESULT_CHARS] + f"\n[truncated: {len(text)} characters in all]"
    out.text = text
    return out


def _describe(block: types.ContentBlock, out: ModelContent, can_show: bool) -> str:
    """One non-text block in words; an image the page can show is queued to be shown."""
    if isinstance(block, types.ImageContent | types.AudioContent):
        kind = "image" if isinstance(block, types.ImageContent) else "audio"
        return _binary(kind, block.mimeType, block.data, "", out, can_show)
    if isinstance(block, types.ResourceLink):
        extra = ", ".join(x for x in (block.mimeType, _size(block.size)) if x)
        return f"[resource link {block.name}: {block.uri}{f' ({extra})' if extra else ''}]"
    if isinstance(block, types.EmbeddedResource):
        res = block.resource
        if isinstance(res, types.TextResourceContents):
            return f"[resource {res.uri}]\n{res.text}"
        mime = res.mimeType or "application/octet-stream"
        kind = "image" if mime.startswith("image/") else "resource"
        return _binary(kind, mime, res.blob, str(res.uri), out, can_show)
    return f"[{getattr(block, 'type', 'unknown')} content, not shown]"


def _binary(kind: str, mime: str, data: str, name: str, out: ModelContent, can_show: bool) -> str:
    label = f"{kind} {name + ' ' if name else ''}{mime}"
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return f"[{label}: not valid base64, not shown]"
    size = _size(len(raw))
    if kind == "image" and mime in _SIGNATURES:
        if not raw.startswith(_SIGNATURES[mime]):
            return f"[{label}, {size}: its bytes are not {mime}, not shown]"
        if can_show:
            out.images.append((mime, raw, name))
            return f"[{label}, {size}, shown to the user]"
    if kind == "image":
        return f"[{label}, {size}, not shown: the page shows {', '.join(SHOWN_TYPES)}]"
    return f"[{label}, {size}, binary: not shown]"


def image_mime(raw: bytes) -> str:
    """The type of an image the page shows, from its first bytes (ToolImage carries bytes only:
    EEG figures are PNG, an MCP tool's image may be any of SHOWN_TYPES)."""
    return next((m for m, sigs in _SIGNATURES.items() if raw.startswith(sigs)), "image/png")


def _size(n: int | None) -> str:
    if n is None:
        return ""
    return f"{n} bytes" if n < 10_000 else f"{n / 1024:.0f} KiB"


def _copy_of_blocks(structured: Any, blocks: list[types.ContentBlock]) -> bool:
    """The structured content repeats the content blocks themselves (server-filesystem's
    read_media_file returns {"content": [its image block]}): it adds nothing to say."""
    dumped = [b.model_dump(mode="json", exclude_none=True, by_alias=True) for b in blocks]
    if structured == dumped:
        return True
    return (
        isinstance(structured, dict) and len(structured) == 1 and [*structured.values()] == [dumped]
    )


def scrub(value: Any) -> Any:
    """`value` with every long base64 string replaced by a note of its size."""
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, str) and _BASE64.match(value):
        return f"<{len(value)} base64 characters, not shown>"
    return value


_MISSING = object()


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return _MISSING


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def _compact_text(text: str) -> str:
    """JSON objects and arrays in text, re-dumped without indentation (fewer tokens)."""
    if not text.lstrip().startswith(("{", "[")):
        return text
    value = _parsed(text)
    return text if value is _MISSING else _compact(value)
