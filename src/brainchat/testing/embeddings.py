"""The scripted server's `/v1/embeddings`: deterministic vectors, so tests of dense retrieval go
over real HTTP. A text's vector counts its hashed lower-cased character pairs (256 buckets),
normalised to length 1: texts sharing words (or Chinese characters) point the same way."""

from __future__ import annotations

import hashlib
import math
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from brainchat.testing.wire import error_response

DIM = 256


def hashed_vector(text: str, dim: int = DIM) -> list[float]:
    """The scripted embedding of `text` (all zeros for a text with no character pair)."""
    counts = [0.0] * dim
    folded = " ".join(text.lower().split())
    for i in range(len(folded) - 1):
        pair = folded[i : i + 2]
        if pair.strip():
            digest = hashlib.blake2b(pair.encode(), digest_size=4).digest()
            counts[int.from_bytes(digest, "big") % dim] += 1.0
    norm = math.sqrt(sum(c * c for c in counts)) or 1.0
    return [c / norm for c in counts]


def embeddings_route(server: Any) -> Route:
    """POST /v1/embeddings on `server` (a ScriptedServer): its `embedding_fault` (an HTTP status)
    fails every request; each request's inputs are logged in `embedding_requests`."""

    async def embeddings(request: Request) -> Response:
        if refused := server._refused(request):
            return refused
        try:
            body = await request.json()
            raw = body["input"]
            texts = [raw] if isinstance(raw, str) else [str(t) for t in raw]
            model = str(body["model"])
        except (ValueError, KeyError, TypeError) as exc:
            return error_response(400, f"bad embeddings request: {exc!r}")
        server.embedding_requests.append(texts)
        if server.embedding_fault:
            return error_response(server.embedding_fault, "scripted embeddings fault")
        data = [
            {"object": "embedding", "index": i, "embedding": hashed_vector(t)}
            for i, t in enumerate(texts)
        ]
        tokens = sum(len(t.split()) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return JSONResponse({"object": "list", "data": data, "model": model, "usage": usage})

    return Route("/v1/embeddings", embeddings, methods=["POST"])
