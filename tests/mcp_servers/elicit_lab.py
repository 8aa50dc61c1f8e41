"""A FastMCP server whose tools ask the user for input mid-call (MCP elicitation, #25).

Run over stdio: python tests/mcp_servers/elicit_lab.py
or over streamable HTTP: python tests/mcp_servers/elicit_lab.py --http PORT
"""

from __future__ import annotations

import json
import sys
from typing import Any

from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel, Field

mcp = FastMCP("elicit-lab", log_level="WARNING")


class Participant(BaseModel):
    name: str = Field(description="The participant's name", min_length=2, max_length=40)
    email: str = Field(description="Contact address", json_schema_extra={"format": "email"})
    age: int = Field(description="Age in years", ge=18, le=99)
    weight: float = Field(default=70.0, description="Weight in kg", ge=20, le=300)
    consent: bool = Field(description="Consent to share the recording")


@mcp.tool()
async def register_participant(ctx: Context) -> str:  # type: ignore[type-arg]
    """Register a participant: asks the user for their details."""
    result = await ctx.elicit("Who is the participant?", schema=Participant)
    if result.action == "accept":
        d = result.data
        return f"registered {d.name} <{d.email}>, {d.age} y, {d.weight:g} kg, consent={d.consent}"
    return f"not registered: the user chose {result.action}"


BAND_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "band": {
            "type": "string",
            "title": "Frequency band",
            "enum": ["mu", "beta"],
            "enumNames": ["Mu (8-12 Hz)", "Beta (13-30 Hz)"],
        },
        "side": {
            "type": "string",
            "title": "Hemisphere",
            "oneOf": [
                {"const": "C3", "title": "Left (C3)"},
                {"const": "C4", "title": "Right (C4)"},
            ],
        },
        "session_date": {"type": "string", "format": "date", "title": "Session date"},
        "api_password": {"type": "string", "title": "Archive password"},
    },
    "required": ["band", "side"],
}


async def _ask(ctx: Context, message: str, schema: dict[str, Any]) -> str:  # type: ignore[type-arg]
    session = ctx.request_context.session
    result = await session.elicit_form(message, schema, related_request_id=ctx.request_id)
    return json.dumps({"action": result.action, "content": result.content}, sort_keys=True)


@mcp.tool()
async def pick_band(ctx: Context) -> str:  # type: ignore[type-arg]
    """Ask which band and hemisphere to analyse (enums, a date, a password); echo the answer."""
    return await _ask(ctx, "Which band should I analyse?", BAND_SCHEMA)


@mcp.tool()
async def nested_form(ctx: Context) -> str:  # type: ignore[type-arg]
    """Ask with a schema the specification does not allow (a nested object)."""
    schema = {
        "type": "object",
        "properties": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }
    return await _ask(ctx, "Where do you live?", schema)


@mcp.tool()
def client_elicitation(ctx: Context) -> str:  # type: ignore[type-arg]
    """The elicitation capability the client declared at initialize."""
    params = ctx.request_context.session.client_params
    caps = params.capabilities.elicitation if params else None
    return json.dumps(caps.model_dump(exclude_none=True) if caps else None)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        mcp.settings.port = int(sys.argv[2])
        mcp.run("streamable-http")
    else:
        mcp.run()
