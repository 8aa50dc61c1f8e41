"""Default prices from the genai-prices table (offline); the spec's own prices win."""

from __future__ import annotations

import pytest

from brainchat.prices import cost, unknown_price_hint
from brainchat.settings import load_settings, parse_model_spec
from brainchat.usage import UsageLedger

ENV = {"OPENAI_API_KEY": "sk-test-not-real", "DEEPSEEK_API_KEY": "sk-test-not-real"}


def spec(**data: object):
    return parse_model_spec("CHAT_MODEL", dict(data), ENV)


def test_well_known_models_get_list_prices_from_the_table() -> None:
    mini = spec(provider="openai", model="gpt-4o-mini")
    assert cost(mini, 1_000_000, 1_000_000) == pytest.approx(0.15 + 0.60)
    deepseek = spec(provider="deepseek", model="deepseek-chat")
    assert cost(deepseek, 1_000_000, 0) == pytest.approx(0.27, rel=0.5)  # listed, not "—"


def test_the_specs_own_prices_win() -> None:
    own = spec(provider="openai", model="gpt-4o-mini", input_price=1.0, output_price=2.0)
    assert cost(own, 1_000_000, 1_000_000) == pytest.approx(3.0)


def test_unknown_or_local_models_have_no_price() -> None:
    local = spec(provider="ollama", model="llama3.1:8b")
    assert cost(local, 1000, 1000) is None
    # a well-known name on a server of one's own is not billed at OpenAI's price
    mine = spec(provider="openai-compatible", model="gpt-4o", base_url="http://127.0.0.1:9/v1")
    assert cost(mine, 1000, 1000) is None
    assert "set input_price and output_price" in unknown_price_hint("llama3.1:8b")


def test_the_ledger_costs_rows_with_table_prices() -> None:
    settings = load_settings({**ENV, "CHAT_MODEL": '{"model": "gpt-4o-mini"}'}, dotenv=False)
    assert settings.chat_model is not None
    ledger = UsageLedger({"chat": settings.chat_model})
    ledger.record(
        "chat", input_tokens=1000, output_tokens=500, estimated=False, seconds=1, ttft=0.1
    )
    assert ledger.total_cost() == pytest.approx((1000 * 0.15 + 500 * 0.6) / 1e6)
