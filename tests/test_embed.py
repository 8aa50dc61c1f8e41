"""The embeddings client (knowledge/embed.py) against the scripted server's /v1/embeddings over
real HTTP: batching, order, a failing or unreachable endpoint, a bad spec."""

from __future__ import annotations

import json
import socket

import pytest

from brainchat.knowledge.embed import VARIABLE, EmbeddingError, embedder_from_env
from brainchat.settings import ConfigError
from brainchat.testing.embeddings import DIM, hashed_vector
from brainchat.testing.scripted_server import ScriptedServer


def spec(base_url: str, **extra: object) -> dict[str, str]:
    body = {"provider": "openai-compatible", "model": "emb", "base_url": base_url, "api_key": "k"}
    return {VARIABLE: json.dumps(body | extra)}


def test_unset_means_no_embedder() -> None:
    assert embedder_from_env({}) is None


def test_a_bad_spec_names_the_variable() -> None:
    with pytest.raises(ConfigError) as info:
        embedder_from_env({VARIABLE: '{"model": "emb", "base_url": "ftp://x"}'})
    assert VARIABLE in str(info.value)


def test_vectors_come_in_order_in_batches(scripted_server: ScriptedServer) -> None:
    embedder = embedder_from_env(spec(scripted_server.base_url))
    assert embedder is not None and embedder.model == "emb"
    embedder.batch = 2
    texts = ["alpha band power", "theta", "滤波器设置", "beta rebound", "ERD"]
    vectors = embedder.embed(texts)
    assert vectors == [hashed_vector(t) for t in texts]
    assert all(len(v) == DIM for v in vectors)
    assert [len(r) for r in scripted_server.embedding_requests] == [2, 2, 1]


def test_a_failing_endpoint_raises_a_clear_error(scripted_server: ScriptedServer) -> None:
    scripted_server.embedding_fault = 503
    embedder = embedder_from_env(spec(scripted_server.base_url))
    assert embedder is not None
    with pytest.raises(EmbeddingError) as info:
        embedder.embed(["x"])
    assert "HTTP 503" in str(info.value) and "/embeddings" in str(info.value)


def test_an_unreachable_endpoint_raises_a_clear_error() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    embedder = embedder_from_env(spec(f"http://127.0.0.1:{port}/v1", timeout=5))
    assert embedder is not None
    with pytest.raises(EmbeddingError, match="embeddings endpoint"):
        embedder.embed(["x"])
