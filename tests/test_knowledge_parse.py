"""Parsing documents for the knowledge store (#41): real PDFs (written here by a tiny PDF writer
and by matplotlib), Markdown, HTML, text; a scanned PDF says so; hostile files are refused with
a message naming what and what to do."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from brainchat.knowledge.parse import KnowledgeError, parse_bytes
from brainchat.knowledge.sources import iter_sources
from knowledge_pdf import image_only_pdf, matplotlib_pdf, text_page, tiny_pdf


def test_pdf_keeps_pages_and_title() -> None:
    pdf = tiny_pdf(
        [text_page("Filtering", "Band-pass 8-30 Hz."), text_page("Epochs from 0.5 to 2.5 s.")],
        title="Motor imagery protocol",
    )
    parsed = parse_bytes("protocol.pdf", pdf)
    assert parsed.title == "Motor imagery protocol"
    assert parsed.pages == 2
    assert [s.page for s in parsed.sections] == [1, 2]
    assert "8-30 Hz" in parsed.sections[0].text
    assert "0.5 to 2.5" in parsed.sections[1].text
    assert parsed.notes == []


def test_matplotlib_pdf_is_read(tmp_path: Path) -> None:
    path = matplotlib_pdf(tmp_path / "m.pdf", ["EEGNet accuracy on BCI IV 2a", "page two"])
    parsed = parse_bytes(path.name, path.read_bytes())
    assert parsed.pages == 2
    assert "EEGNet" in parsed.sections[0].text and parsed.sections[1].page == 2
    assert parsed.title == "m"  # no title in the metadata: the file's name


def test_scanned_pdf_says_it_has_no_text() -> None:
    parsed = parse_bytes("scan.pdf", image_only_pdf())
    assert parsed.sections == [] and parsed.pages == 1
    assert any("no text layer" in n and "OCR" in n for n in parsed.notes)


def test_decompression_bomb_is_refused() -> None:
    bomb = tiny_pdf([b"BT /F1 12 Tf (" + b"a" * 80_000_000 + b") Tj ET"], flate=True)
    assert len(bomb) < 200_000  # 80 MB of text in well under a megabyte
    with pytest.raises(KnowledgeError, match="decompression bomb"):
        parse_bytes("bomb.pdf", bomb)


def test_truncated_and_fake_pdfs_are_refused() -> None:
    pdf = tiny_pdf([text_page("hello")] * 3)
    with pytest.raises(KnowledgeError, match="truncated or damaged"):
        parse_bytes("cut.pdf", pdf[: len(pdf) // 3])
    with pytest.raises(KnowledgeError, match="not a PDF"):
        parse_bytes("fake.pdf", b"just some words")


def test_page_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAINCHAT_KNOWLEDGE_MAX_PAGES", "3")
    with pytest.raises(KnowledgeError, match="4 pages.*BRAINCHAT_KNOWLEDGE_MAX_PAGES"):
        parse_bytes("long.pdf", tiny_pdf([text_page(f"p{i}") for i in range(4)]))
    assert parse_bytes("ok.pdf", tiny_pdf([text_page("p")] * 3)).pages == 3


def test_text_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAINCHAT_KNOWLEDGE_MAX_CHARS", "100")
    with pytest.raises(KnowledgeError, match="BRAINCHAT_KNOWLEDGE_MAX_CHARS"):
        parse_bytes("big.txt", b"word " * 50)
    with pytest.raises(KnowledgeError, match="BRAINCHAT_KNOWLEDGE_MAX_CHARS"):
        parse_bytes("big.pdf", tiny_pdf([text_page("x" * 60)] * 2))


def test_markdown_headings_and_fenced_code() -> None:
    text = "# Lab protocol\nIntro.\n\n## Filtering\nBand-pass.\n```\n# not a heading\n```\n"
    parsed = parse_bytes("p.md", text.encode())
    assert parsed.title == "Lab protocol"
    assert [(s.heading, s.text.split()[0]) for s in parsed.sections] == [
        ("Lab protocol", "Intro."),
        ("Filtering", "Band-pass."),
    ]
    assert "# not a heading" in parsed.sections[1].text


def test_html_headings_without_script_or_style() -> None:
    page = (
        "<html><head><title>Methods</title><style>p{color:red}</style></head><body>"
        "<script>var secret = 1;</script><h1>Recording</h1><p>64 channels.</p>"
        "<h2>Filtering</h2><p>Notch at 50 Hz &amp; band-pass.</p></body></html>"
    )
    parsed = parse_bytes("m.html", page.encode())
    assert parsed.title == "Methods"
    assert [(s.heading, s.text) for s in parsed.sections] == [
        ("Recording", "64 channels."),
        ("Filtering", "Notch at 50 Hz & band-pass."),
    ]
    assert all("secret" not in s.text and "color" not in s.text for s in parsed.sections)


def test_text_in_chinese_and_gb18030() -> None:
    text = "运动想象实验的滤波设置为八到三十赫兹。"
    assert parse_bytes("a.txt", text.encode()).sections[0].text == text
    assert parse_bytes("b.txt", text.encode("gb18030")).sections[0].text == text
    with pytest.raises(KnowledgeError, match="binary data"):
        parse_bytes("c.txt", b"\x00\x01\x02")
    with pytest.raises(KnowledgeError, match="not a document type"):
        parse_bytes("d.docx", b"PK")


def test_folder_and_zip(tmp_path: Path) -> None:
    (tmp_path / "docs" / "sub").mkdir(parents=True)
    (tmp_path / "docs" / "a.md").write_text("# A\ntext")
    (tmp_path / "docs" / "sub" / "b.txt").write_text("b")
    (tmp_path / "docs" / ".hidden.txt").write_text("h")
    (tmp_path / "docs" / "c.png").write_bytes(b"\x89PNG")
    got = {s.name: (s.data, s.refused) for s in iter_sources(tmp_path / "docs")}
    assert set(got) == {"a.md", "sub/b.txt", "c.png"}
    assert got["sub/b.txt"][0] == b"b" and "not a document type" in got["c.png"][1]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("x/a.md", "# A")
        zf.writestr("__MACOSX/x/._a.md", "junk")
    (tmp_path / "d.zip").write_bytes(buf.getvalue())
    assert [s.name for s in iter_sources(tmp_path / "d.zip")] == ["x/a.md"]


def test_hostile_zips_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def write(name: str, entries: dict[str, bytes]) -> Path:
        path = tmp_path / name
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            for entry, data in entries.items():
                zf.writestr(entry, data)
        return path

    with pytest.raises(KnowledgeError, match="climbs out"):
        list(iter_sources(write("up.zip", {"../evil.txt": b"x"})))
    monkeypatch.setenv("BRAINCHAT_KNOWLEDGE_ZIP_MB", "1")
    with pytest.raises(KnowledgeError, match="zip bomb"):
        list(iter_sources(write("bomb.zip", {"a.txt": b"a" * 3_000_000})))
    monkeypatch.setenv("BRAINCHAT_KNOWLEDGE_ZIP_ENTRIES", "2")
    with pytest.raises(KnowledgeError, match="3 entries"):
        list(iter_sources(write("many.zip", {f"{i}.txt": b"x" for i in range(3)})))
    (tmp_path / "bad.zip").write_bytes(b"not a zip")
    with pytest.raises(KnowledgeError, match="not a readable zip"):
        list(iter_sources(tmp_path / "bad.zip"))


def test_pdf_outline_gives_headings_split_where_they_start() -> None:
    from pypdf import PdfReader, PdfWriter

    pdf = tiny_pdf(
        [
            text_page("Abstract", "We compare filters."),
            text_page("End of the introduction.", "2 Methods", "Band-pass 8-30 Hz."),
            text_page("Epochs of 2 s."),
        ]
    )
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.add_outline_item(title="Introduction", page_number=0)
    writer.add_outline_item(title="2 Methods", page_number=1)
    out = io.BytesIO()
    writer.write(out)
    parsed = parse_bytes("paper.pdf", out.getvalue())
    assert [(s.page, s.heading, s.text.splitlines()[0]) for s in parsed.sections] == [
        (1, "Introduction", "Abstract"),
        (2, "Introduction", "End of the introduction."),
        (2, "2 Methods", "2 Methods"),
        (3, "2 Methods", "Epochs of 2 s."),  # the heading carries on to the next page
    ]
