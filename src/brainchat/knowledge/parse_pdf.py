"""PDF text page by page with pypdf, bounded (pages, characters, decoded stream size, time).

pypdf (a runtime dependency) is maintained, pure Python and needs no system library; it bounds
each decoded stream itself (pypdf.filters.ZLIB_MAX_OUTPUT_LENGTH and its kin, 75 MB), raising
LimitReachedError, which is turned here into a refusal that says so."""

from __future__ import annotations

import io
import logging
import re
import time
from pathlib import PurePath
from typing import Any

from brainchat.knowledge.limits import KnowledgeError, env_int, max_chars
from brainchat.knowledge.model import Parsed, Section

NO_TEXT = "no text layer: a scanned PDF; run OCR first (e.g. ocrmypdf) and add the result"


def max_pages() -> int:
    return env_int("BRAINCHAT_KNOWLEDGE_MAX_PAGES", 2000)


def max_seconds() -> int:
    return env_int("BRAINCHAT_KNOWLEDGE_PARSE_SECONDS", 300)


def open_pdf(name: str, data: bytes) -> Any:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    shown = PurePath(name).name
    if not data.lstrip()[:1024].find(b"%PDF-") >= 0:
        raise KnowledgeError(f"'{shown}' is not a PDF (no %PDF- header); check the file")
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise KnowledgeError(
                f"'{shown}' is encrypted with a password; save an unlocked copy and add that"
            )
        count = len(reader.pages)
    except KnowledgeError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        raise KnowledgeError(malformed(shown, exc)) from None
    limit = max_pages()
    if count > limit:
        raise KnowledgeError(
            f"'{shown}' has {count:,} pages, more than the {limit:,} allowed in one document; "
            "split it, or raise BRAINCHAT_KNOWLEDGE_MAX_PAGES"
        )
    return reader


def malformed(shown: str, exc: BaseException) -> str:
    return (
        f"'{shown}' is not a readable PDF ({type(exc).__name__}: {str(exc)[:160]}); the file "
        "may be truncated or damaged: export it again from its source"
    )


def page_text(shown: str, page: Any, number: int) -> str:
    from pypdf.errors import LimitReachedError, PyPdfError

    try:
        text = page.extract_text() or ""
    except LimitReachedError as exc:
        raise KnowledgeError(
            f"'{shown}' page {number}: a compressed stream decodes past pypdf's size bound "
            f"({str(exc)[:120]}): a decompression bomb or a damaged file; it was not indexed"
        ) from None
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        raise KnowledgeError(malformed(shown, exc) + f" (page {number})") from None
    except RecursionError:
        raise KnowledgeError(f"'{shown}' page {number} nests objects too deeply to read") from None
    return text


def parse_pdf(name: str, data: bytes) -> Parsed:
    """Sections per page (1-based), under the headings of the PDF's outline (bookmarks)."""
    shown = PurePath(name).name
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # warnings of damaged files: ours say it
    reader = open_pdf(name, data)
    pages = len(reader.pages)
    sections: list[Section] = []
    marks = outline(reader)
    heading = ""
    total, limit, deadline = 0, max_chars(), time.monotonic() + max_seconds()
    for index, page in enumerate(reader.pages):
        if time.monotonic() > deadline:
            raise KnowledgeError(
                f"'{shown}' took more than {max_seconds()} s to read (stopped at page {index + 1}"
                f" of {pages}); raise BRAINCHAT_KNOWLEDGE_PARSE_SECONDS or split the file"
            )
        text = clean(page_text(shown, page, index + 1))
        total += len(text)
        if total > limit:
            raise KnowledgeError(
                f"'{shown}' holds more than {limit:,} characters of text, the bound of one "
                "document; split it, or raise BRAINCHAT_KNOWLEDGE_MAX_CHARS"
            )
        runs, heading = split_at_headings(text, heading, marks.get(index, []))
        sections += [Section(part, index + 1, under) for part, under in runs]
    notes = [] if sections else [NO_TEXT]
    return Parsed(pdf_title(reader, shown), sections, pages, notes)


MAX_OUTLINE = 5000  # outline entries read (a hostile outline cannot grow without bound)


def outline(reader: Any) -> dict[int, list[str]]:
    """The outline's titles by the 0-based page they start on, in order; {} if it has none
    or cannot be read (a damaged outline costs the headings, not the document)."""
    found: dict[int, list[str]] = {}
    stack: list[Any] = []
    count = 0
    try:
        stack.append(iter(reader.outline))
        while stack and count < MAX_OUTLINE:
            item = next(stack[-1], None)
            if item is None:
                stack.pop()
            elif isinstance(item, list):
                stack.append(iter(item))
            else:
                count += 1
                page = reader.get_destination_page_number(item)
                title = " ".join(str(item.title or "").split())
                if title and page is not None and page >= 0:
                    found.setdefault(page, []).append(title[:200])
    except Exception:  # noqa: BLE001 - see the docstring
        return {}
    return found


def split_at_headings(
    text: str, heading: str, starts: list[str]
) -> tuple[list[tuple[str, str]], str]:
    """A page's text as (part, heading) runs: each outline title starting on this page begins
    a new run where its text appears (else at the page's top); returns the runs and the
    heading that carries on to the next page."""
    parts: list[tuple[str, str]] = []
    rest = text
    for title in starts:
        at = find_title(rest, title)
        if at > 0 and rest[:at].strip():
            parts.append((rest[:at].strip(), heading))
        rest, heading = rest[max(at, 0) :], title
    if rest.strip() or not parts:
        parts.append((rest.strip(), heading))
    return [(p, h) for p, h in parts if p], heading


def find_title(text: str, title: str) -> int:
    """Where a heading's text starts in the page's text (spacing aside), or 0."""
    words = [re.escape(w) for w in title.split()]
    match = re.search(r"\s+".join(words), text, re.IGNORECASE) if words else None
    return match.start() if match else 0


def clean(text: str) -> str:
    """Page text with hyphenated line breaks joined and runs of blank lines folded."""
    text = re.sub(r"(\w)-\n(\w)", r"\1\2", text)
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def pdf_title(reader: Any, shown: str) -> str:
    try:
        title = str((reader.metadata or {}).get("/Title") or "").strip()
    except Exception:  # noqa: BLE001 - damaged metadata: the file's name is title enough
        title = ""
    return title or (PurePath(shown).stem or shown)
