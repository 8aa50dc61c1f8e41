"""search_knowledge: the user's own documents as a tool the agent calls like web_search.

Its passages come back as the same artifact web_search gives (`{"sources": [...]}`), so the
agent numbers them [n] in its ledger, the answer model reads them under the sources header and
the answer check holds every [n] to them, as it does web results. A passage's title names its
document and page ("EEGNet, p. 4"; the heading where the document has no pages), its URL-like
locator (`knowledge://<doc id>?chunk=<n>#page=<p>`) tells one passage from another on the page.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Protocol

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field

from brainchat.knowledge.model import Passage
from brainchat.tools.registry import set_flags

NAME = "search_knowledge"
SCHEME = "knowledge://"
SNIPPET_CHARS = 1200  # a passage as the model reads it (the answer request cuts it further)
NOTHING = (
    "Nothing in your documents matches this query (your collections hold no passage about it). "
    "Say so in the answer and cite no document for it; do not invent a source."
)


class KnowledgeSearch(Protocol):
    """What the tool needs of the knowledge service (`brainchat.knowledge.service.Knowledge`):
    the passages `user` may read that best match `query`, best first (sync or async)."""

    def search(self, user: str, query: str, k: int) -> Any: ...


class KnowledgeArgs(BaseModel):
    query: str = Field(
        min_length=2,
        max_length=400,
        description="A short keyword query made of the request's own subject words",
    )
    k: int = Field(default=5, ge=1, le=10, description="How many passages to return (1-10)")


def passage_title(passage: Passage) -> str:
    """How a passage is cited: "Title, p. N", or "Title, Heading" where there are no pages."""
    title = " ".join(passage.title.split()) or "untitled document"
    chunk = passage.chunk
    if chunk.page > 0:
        return f"{title}, p. {chunk.page}"
    heading = " ".join(chunk.heading.split())
    return f"{title}, {heading}" if heading and heading != title else title


def locator(passage: Passage) -> str:
    """The passage's URL-like address: its document, its chunk, and the page a viewer opens."""
    chunk = passage.chunk
    page = f"#page={chunk.page}" if chunk.page > 0 else ""
    return f"{SCHEME}{chunk.doc_id}?chunk={chunk.ordinal}{page}"


def as_source(passage: Passage) -> dict[str, str]:
    """A passage as a source row, shaped as web_search's results are."""
    text = " ".join(passage.chunk.text.split())
    if len(text) > SNIPPET_CHARS:
        text = text[: SNIPPET_CHARS - 1].rstrip() + "…"
    return {"title": passage_title(passage), "url": locator(passage), "snippet": text}


def make_knowledge_tool(knowledge: KnowledgeSearch, user: str) -> BaseTool:
    """The search_knowledge tool over `user`'s readable collections (their own and shared)."""

    async def search_knowledge(query: str, k: int = 5) -> tuple[str, dict[str, Any]]:
        try:
            found = await asyncio.to_thread(knowledge.search, user, query, k)
            if inspect.isawaitable(found):
                found = await found
        except (ValueError, OSError, RuntimeError) as exc:
            raise ToolException(
                f"searching your documents failed ({exc}); answer from what you have"
            ) from None
        rows = [as_source(p) for p in list(found or [])[:k]]
        if not rows:
            return NOTHING, {"sources": [], "cache_hit": False}
        text = "\n".join(
            f"[{i}] {r['title']}\n{r['url']}\n{r['snippet']}" for i, r in enumerate(rows, 1)
        )
        if note := getattr(found, "note", ""):  # the ranking was less than asked (BM25 alone)
            text += f"\n({note})"
        return text, {"sources": rows, "cache_hit": False}

    tool = StructuredTool.from_function(
        coroutine=search_knowledge,
        name=NAME,
        description=(
            "Search the user's own documents (papers, lab protocols, notes they added). Returns "
            "numbered passages with document title, page and text; cite them as [n]. Where "
            "nothing matches a request in another language, search again in English terms."
        ),
        args_schema=KnowledgeArgs,
        response_format="content_and_artifact",
    )
    return set_flags(tool, read_only=True, source="local")
