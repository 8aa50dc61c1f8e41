"""Embeddings from any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama, llama.cpp
`--embedding`, vLLM), configured by BRAINCHAT_EMBEDDINGS_MODEL (a JSON model spec, as the chat
models are). Without one, retrieval is BM25 alone.

No local embedding model is bundled: the small static ones on PyPI (model2vec, fastembed) fetch
their weights from the Hugging Face hub on first use, which a closed network refuses."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from brainchat import netguard
from brainchat.redact import mask, mask_url
from brainchat.settings import ModelSpec, parse_model_spec

VARIABLE = "BRAINCHAT_EMBEDDINGS_MODEL"
BATCH = 64  # texts per request: every server named above takes this many


class EmbeddingError(Exception):
    """The endpoint failed or answered something that is not embeddings (the text says which)."""


def embedder_from_env(env: Mapping[str, str] | None = None) -> Embedder | None:
    """The configured embedder, or None when BRAINCHAT_EMBEDDINGS_MODEL is unset.

    Raises ConfigError (naming the variable) for a spec that cannot be read."""
    env = os.environ if env is None else env
    raw = (env.get(VARIABLE) or "").strip()
    return Embedder(parse_model_spec(VARIABLE, raw, env)) if raw else None


@dataclass
class Embedder:
    """Texts -> vectors over HTTP, `batch` texts per request, each request within the spec's
    timeout."""

    spec: ModelSpec
    batch: int = BATCH

    @property
    def model(self) -> str:
        """The name vectors are stored under: vectors of another model are never compared."""
        return self.spec.model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order. Raises EmbeddingError."""
        out: list[list[float]] = []
        with self._client() as client:
            for start in range(0, len(texts), self.batch):
                out += self._request(client, list(texts[start : start + self.batch]))
        return out

    def _client(self) -> Any:
        import httpx

        if self.spec.user_url and not netguard.active().anywhere:
            return netguard.sync_client(timeout=self.spec.timeout)  # a URL a user typed
        return httpx.Client(timeout=self.spec.timeout)

    def _request(self, client: Any, texts: list[str]) -> list[list[float]]:
        import httpx

        url = f"{self.spec.base_url or 'https://api.openai.com/v1'}/embeddings"
        where = f"embeddings endpoint {mask_url(url, drop_query=True)} ({self.spec.model})"
        headers = {"Authorization": f"Bearer {self.spec.api_key or 'not-needed'}"}
        try:
            response = client.post(
                url, json={"model": self.spec.model, "input": texts}, headers=headers
            )
        except httpx.TimeoutException:
            raise EmbeddingError(f"{where}: no answer within {self.spec.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise EmbeddingError(f"{where}: {mask(str(exc)) or type(exc).__name__}") from None
        if response.status_code != 200:
            said = mask(response.text[:200].strip())
            raise EmbeddingError(f"{where}: HTTP {response.status_code} {said}".rstrip())
        return _vectors(where, response, len(texts))


def _vectors(where: str, response: Any, count: int) -> list[list[float]]:
    """The `data[].embedding` lists of an OpenAI embeddings reply, in input order."""
    try:
        data = sorted(response.json()["data"], key=lambda item: item.get("index", 0))
        vectors = [[float(x) for x in item["embedding"]] for item in data]
    except (ValueError, KeyError, TypeError, AttributeError):
        raise EmbeddingError(f"{where}: the reply is not an embeddings list") from None
    if len(vectors) != count:
        raise EmbeddingError(f"{where}: {len(vectors)} vectors for {count} texts")
    if len({len(v) for v in vectors}) > 1 or not vectors[0]:
        raise EmbeddingError(f"{where}: vectors of differing or zero length")
    return vectors
