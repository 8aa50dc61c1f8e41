"""What a model's tokens cost: the spec's own prices, else the `genai-prices` table (offline).

`genai-prices` ships its price table inside the wheel; only its optional updater goes online, and
brainchat never calls it. A provider's own API (openai, deepseek at their default URLs) is looked
up by provider id; any other base URL by the URL (OpenRouter, Groq, Together... are known); a
local server (Ollama, vLLM, the scripted server) has no list price, so its cost stays unknown.
"""

from __future__ import annotations

from functools import lru_cache

from brainchat.redact import get_logger
from brainchat.settings import PROVIDERS, ModelSpec

log = get_logger("brainchat.prices")
HOW_TO_SET = (
    "No price is known for {model}: set input_price and output_price "
    "(USD per million tokens) in its model spec"
)


def cost(spec: ModelSpec, input_tokens: int, output_tokens: int) -> float | None:
    """USD for these tokens, or None when neither the spec nor the price table knows the model."""
    own = spec.cost(input_tokens, output_tokens)
    if own is not None:
        return own
    if not _known(spec.provider, spec.model, spec.base_url or ""):
        return None
    return _table_cost(spec.provider, spec.model, spec.base_url or "", input_tokens, output_tokens)


@lru_cache(maxsize=256)
def _known(provider: str, model: str, base_url: str) -> bool:
    return _table_cost(provider, model, base_url, 1000, 1000) is not None


def _table_cost(
    provider: str, model: str, base_url: str, input_tokens: int, output_tokens: int
) -> float | None:
    try:
        from genai_prices import Usage, calc_price
    except ImportError:  # an install without the table: costs stay unknown, never an error
        return None
    default_url = (PROVIDERS.get(provider) or {}).get("base_url")
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    try:
        if provider in ("openai", "deepseek") and base_url.rstrip("/") == default_url:
            price = calc_price(usage, model, provider_id=provider)
        elif base_url:  # another host: known ones (OpenRouter, Groq...) are matched by URL
            price = calc_price(usage, model, provider_api_url=base_url)
        else:
            return None
        return float(price.total_price)
    except LookupError:
        return None
    except Exception as exc:  # noqa: BLE001 - a price is a nicety, never a failure
        log.warning("price lookup for %s failed: %s", model, exc)
        return None


def unknown_price_hint(model: str) -> str:
    """The tooltip on a "—" cost: how to give this model a price."""
    return HOW_TO_SET.format(model=model)
