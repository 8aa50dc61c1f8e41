"""The parts build_agent assembles: each role's name and budget, the answer model's tag, and
which tools a round does not offer."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from brainchat.agent.budget import Budget
from brainchat.agent.guards import in_force
from brainchat.settings import ModelSpec
from brainchat.usage import reply_reserve

if TYPE_CHECKING:
    from brainchat.agent.context import Deps


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


def hidden_tools(
    tools: list[BaseTool], hidden: Callable[[], Collection[str]] | None, built: list[Deps]
) -> Callable[[], frozenset[str]]:
    """The tools not offered in a round: what `hidden()` names, and for a guided profile what
    its guards do not offer (the study's state does not allow them yet)."""

    def hide() -> frozenset[str]:
        base = frozenset(hidden()) if hidden is not None else frozenset()
        if not built or not built[0].profile.guided:
            return base
        names = [t.name for t in tools if t.name not in base]
        kept = set(in_force(built[0]).offer(built[0], names))
        return base | frozenset(n for n in names if n not in kept)

    return hide
