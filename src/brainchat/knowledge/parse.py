"""Documents into text: PDF (page by page), Markdown, HTML and plain text, as `Parsed` sections
that keep each passage's page and heading.

Hostile input is bounded, never trusted: a PDF's page count (BRAINCHAT_KNOWLEDGE_MAX_PAGES,
refused whole above it: an index of a document's first pages would cite a book it does not
hold), the text extracted (BRAINCHAT_KNOWLEDGE_MAX_CHARS), a compressed stream's decoded size
(pypdf's own bounds, pypdf.filters.ZLIB_MAX_OUTPUT_LENGTH and its kin: 75 MB a stream) and the
time spent extracting (BRAINCHAT_KNOWLEDGE_PARSE_SECONDS). Every refusal is a `KnowledgeError`
naming what was wrong and what to do."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import PurePath

from brainchat.knowledge.limits import KnowledgeError, max_chars
from brainchat.knowledge.model import Parsed, Section

__all__ = ["KINDS", "KnowledgeError", "kind_of", "parse_bytes"]

TEXT_EXTENSIONS = {".txt": "text", ".text": "text", ".md": "markdown", ".markdown": "markdown"}
HTML_EXTENSIONS = {".html": "html", ".htm": "html", ".xhtml": "html"}
KINDS = {".pdf": "pdf", **TEXT_EXTENSIONS, **HTML_EXTENSIONS}
SUPPORTED = ", ".join(sorted(KINDS))


def kind_of(name: str) -> str:
    """The parser a file's name picks ('pdf', 'markdown', 'html', 'text'), or KnowledgeError."""
    suffix = PurePath(name).suffix.lower()
    if suffix not in KINDS:
        raise KnowledgeError(
            f"'{PurePath(name).name}' is not a document type the knowledge store reads "
            f"(allowed: {SUPPORTED}); convert it to PDF, Markdown, HTML or text"
        )
    return KINDS[suffix]


def parse_bytes(name: str, data: bytes) -> Parsed:
    """Parse one file's bytes by its name's extension; KnowledgeError if refused."""
    kind = kind_of(name)
    stem = PurePath(name).stem or name
    if kind == "pdf":
        from brainchat.knowledge.parse_pdf import parse_pdf

        parsed = parse_pdf(name, data)
    else:
        text = decode_text(name, data)
        bound_chars(name, len(text))
        if kind == "markdown":
            parsed = parse_markdown(text, stem)
        elif kind == "html":
            parsed = parse_html(text, stem)
        else:
            parsed = Parsed(stem, [Section(text.strip())] if text.strip() else [])
    if not parsed.sections and not parsed.notes:
        parsed.notes.append("no text found: the file is empty")
    return parsed


def bound_chars(name: str, count: int) -> None:
    limit = max_chars()
    if count > limit:
        raise KnowledgeError(
            f"'{PurePath(name).name}' holds more than {limit:,} characters of text, the bound of "
            "one document; split it, or raise BRAINCHAT_KNOWLEDGE_MAX_CHARS"
        )


def decode_text(name: str, data: bytes) -> str:
    """The text of a text file: UTF-8 (with or without BOM), UTF-16 with a BOM, else GB18030
    (Chinese files saved by older Windows tools); binary data is refused."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            pass
    if b"\x00" in data[:65536]:
        raise KnowledgeError(
            f"'{PurePath(name).name}' is binary data, not text; give its PDF, Markdown, HTML or "
            "plain-text form"
        )
    for encoding in ("utf-8-sig", "gb18030"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise KnowledgeError(
        f"'{PurePath(name).name}' is not readable text (neither UTF-8 nor GB18030); save it as "
        "UTF-8 and add it again"
    )


HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^ {0,3}(```|~~~)")


def parse_markdown(text: str, stem: str) -> Parsed:
    """Sections under each `#` heading (headings inside fenced code are code, not headings)."""
    sections: list[Section] = []
    lines: list[str] = []
    heading, fenced, title = "", False, ""

    def flush() -> None:
        body = "\n".join(lines).strip()
        if body:
            sections.append(Section(body, 0, heading))
        lines.clear()

    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        match = None if fenced else HEADING.match(line)
        if match:
            flush()
            heading = match.group(2).strip()
            title = title or (heading if len(match.group(1)) == 1 else "")
        else:
            lines.append(line)
    flush()
    return Parsed(title or first_heading(sections) or stem, sections)


def first_heading(sections: list[Section]) -> str:
    return next((s.heading for s in sections if s.heading), "")


BLOCKS = {"p", "div", "br", "li", "tr", "table", "section", "article", "blockquote", "pre"}
BLOCKS |= {"ul", "ol", "dd", "dt", "header", "footer", "main", "figure", "figcaption", "hr"}
DROPPED = {"script", "style", "noscript", "template", "svg", "head"}
HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}


class _HTMLText(HTMLParser):
    """Text of an HTML page by heading; script, style and the head (but its title) dropped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[Section] = []
        self.heading = ""
        self.parts: list[str] = []
        self.skip = 0
        self.in_heading: list[str] | None = None
        self.in_title: list[str] | None = None
        self.title = ""
        self.h1 = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = []
        elif tag in DROPPED:
            self.skip += 1
        elif tag in HEADINGS and not self.skip:
            self.flush()
            self.in_heading = []
        elif tag in BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self.in_title is not None:
            self.title = " ".join("".join(self.in_title).split())
            self.in_title = None
        elif tag in DROPPED:
            self.skip = max(0, self.skip - 1)
        elif tag in HEADINGS and self.in_heading is not None:
            self.heading = " ".join("".join(self.in_heading).split())
            self.h1 = self.h1 or (self.heading if tag == "h1" else "")
            self.in_heading = None
        elif tag in BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.in_title is not None:
            self.in_title.append(data)
        elif self.skip:
            return
        elif self.in_heading is not None:
            self.in_heading.append(data)
        else:
            self.parts.append(data)

    def flush(self) -> None:
        raw = "".join(self.parts)
        paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n|\n", raw)]
        body = "\n\n".join(p for p in paragraphs if p)
        if body:
            self.sections.append(Section(body, 0, self.heading))
        self.parts = []


def parse_html(text: str, stem: str) -> Parsed:
    reader = _HTMLText()
    reader.feed(text)
    reader.close()
    reader.flush()
    return Parsed(reader.title or reader.h1 or stem, reader.sections)
