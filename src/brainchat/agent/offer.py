"""Which tools the function-call model sees in a round: all of them, less what `hidden()` names.

The schemas of every tool are converted once, when the agent is built; each distinct subset is
bound to the model once and reused, so choosing per round costs a set lookup. A hidden tool stays
runnable (the act node has every tool); only its schema is left out of the request.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from brainchat.usage import tools_tokens


class ToolOffer:
    """The function-call model bound to the tools offered this round; one binding per subset."""

    def __init__(
        self,
        llm: BaseChatModel,
        tools: list[BaseTool],
        schemas: list[dict[str, Any]],
        hidden: Callable[[], Collection[str]] | None,
        *,
        plain: bool = False,
    ) -> None:
        self.llm, self.hidden, self.plain = llm, hidden, plain
        self.pairs = list(zip(tools, schemas, strict=True))
        # the run's own choice of tools, in place of `hidden` (a guided profile's guards, which
        # read the run's record), set by the decide node for the request it builds
        self.narrow: Callable[[list[str]], Collection[str]] | None = None
        # and the arguments it shows of them (prompt mode's description and reply schema)
        self.shape: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None
        self.bound: dict[frozenset[str], Any] = {}
        self.sizes: dict[frozenset[str], int] = {}

    def replace(self, tools: list[BaseTool], schemas: list[dict[str, Any]]) -> None:
        """Other tools from this round on (an MCP server's list changed mid-run)."""
        self.pairs = list(zip(tools, schemas, strict=True))
        self.bound.clear()
        self.sizes.clear()

    def _hide(self) -> frozenset[str]:
        if self.narrow is None:
            return frozenset(self.hidden()) if self.hidden else frozenset()
        names = [t.name for t, _ in self.pairs]
        kept = set(self.narrow(names))
        return frozenset(n for n in names if n not in kept)

    def offered(self) -> list[str]:
        """The names of the tools the model sees this round."""
        hide = self._hide()
        return [t.name for t, _ in self.pairs if t.name not in hide]

    def schemas(self) -> list[dict[str, Any]]:
        """The schemas of the tools offered this round (described in the prompt in prompt mode),
        shaped by the run's guards when they shape them."""
        hide = self._hide()
        offered = [s for t, s in self.pairs if t.name not in hide]
        return self.shape(offered) if self.shape is not None else offered

    def tokens(self) -> int:
        """Tokens the tool definitions offered this round add to a request, counted per subset.

        Prompt mode sends no `tools`: the descriptions are in the system prompt, counted with it.
        """
        if self.plain:
            return 0
        hide = self._hide()
        if hide not in self.sizes:
            self.sizes[hide] = tools_tokens([s for t, s in self.pairs if t.name not in hide])
        return self.sizes[hide]

    def __call__(self) -> Any:
        hide = self._hide()
        if self.plain:
            return self.llm  # prompt-based tool calling: no `tools` in the request
        if hide not in self.bound:
            schemas = [s for t, s in self.pairs if t.name not in hide]
            self.bound[hide] = self.llm.bind_tools(schemas) if schemas else self.llm
        return self.bound[hide]
