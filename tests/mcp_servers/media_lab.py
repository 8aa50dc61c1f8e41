"""A FastMCP server whose file tools answer in the shapes server-filesystem's do (#43):
`read_text_file` gives the file as text content and again as structuredContent {"content": text};
`read_media_file` gives an image, audio or (other types) an embedded resource with a blob, and
repeats that block as structuredContent {"content": [block]}."""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path
from typing import Annotated, Any

from mcp import types
from mcp.server.fastmcp import FastMCP
from pydantic import BaseModel

mcp = FastMCP("media-lab")


class TextFile(BaseModel):
    content: str


class MediaFile(BaseModel):
    content: list[dict[str, Any]]


@mcp.tool(annotations=types.ToolAnnotations(readOnlyHint=True))
def read_text_file(path: str) -> Annotated[types.CallToolResult, TextFile]:
    """Read a text file."""
    text = Path(path).read_text(encoding="utf-8")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structuredContent={"content": text}
    )


@mcp.tool(annotations=types.ToolAnnotations(readOnlyHint=True))
def read_media_file(path: str) -> Annotated[types.CallToolResult, MediaFile]:
    """Read an image or audio file; base64 data and MIME type."""
    file = Path(path)
    mime = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
    data = base64.b64encode(file.read_bytes()).decode("ascii")
    item: dict[str, Any]
    if mime.startswith(("image/", "audio/")):
        item = {"type": mime.split("/")[0], "data": data, "mimeType": mime}
    else:
        item = {
            "type": "resource",
            "resource": {"uri": file.as_uri(), "mimeType": mime, "blob": data},
        }
    return types.CallToolResult.model_validate(
        {"content": [item], "structuredContent": {"content": [item]}}
    )


if __name__ == "__main__":
    mcp.run()
