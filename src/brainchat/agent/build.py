"""The parts build_agent assembles: each role's name and budget, the answer model's tag, and
which tools a round does not offer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from langchain_core.language_models import BaseChatModel

from brainchat.agent.budget import Budget
from brainchat.settings import ModelSpec
from brainchat.usage import reply_reserve

if TYPE_CHECKING:
    pass


def model_name(llm: BaseChatModel) -> str:
    meta = getattr(llm, "metadata", None) or {}
    return str(
        meta.get("brainchat_model")
        or getattr(llm, "model_name", None)
        or getattr(llm, "model", "model")
    )


def retag(llm: BaseChatModel, role: str) -> BaseChatModel:
    """The same model under another role's tag, so its usage lands in that role's row."""
    from brainchat.llm import ROLE_TAG_PREFIX

    tags = [t for t in (llm.tags or []) if not t.startswith(ROLE_TAG_PREFIX)]
    meta = {**(llm.metadata or {}), "brainchat_role": role}
    return llm.model_copy(update={"tags": [*tags, ROLE_TAG_PREFIX + role], "metadata": meta})


def budgets(specs: dict[str, ModelSpec]) -> dict[str, Budget]:
    """Each role's window and reply reserve; the tools are added per request (Deps.budget):
    each round offers its own subset."""
    return {
        role: Budget(spec.context_window, reply_reserve(spec))
        for role in ("function_call", "answer")
        for spec in [specs.get(role) or specs.get("function_call") or ModelSpec(model="?")]
    }


ROLES = ("function_call", "answer")


def names(
    specs: dict[str, ModelSpec], function_call_llm: BaseChatModel, answer_llm: BaseChatModel
) -> dict[str, str]:
    """Each role's model name: its spec's, else the chat model's own."""
    models = {"function_call": function_call_llm, "answer": answer_llm}
    return {r: specs[r].name if r in specs else model_name(models[r]) for r in ROLES}
