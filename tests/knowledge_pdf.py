"""Real PDFs for the knowledge tests: a tiny PDF writer (text pages, an image-only page, a
compressed stream) and matplotlib's PdfPages for a PDF as a plotting tool writes it."""

from __future__ import annotations

import zlib
from pathlib import Path


def _obj(text: str) -> bytes:
    return text.encode("latin-1")


def tiny_pdf(pages: list[bytes], flate: bool = False, title: str = "") -> bytes:
    """A valid PDF whose pages have these content streams (Helvetica as /F1)."""
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(pages)))
    font = 3 + 2 * len(pages)
    info = f"/Info {font + 1} 0 R " if title else ""
    objs = [_obj("<< /Type /Catalog /Pages 2 0 R >>")]
    objs.append(_obj(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>"))
    for i, content in enumerate(pages):
        stream = zlib.compress(content, 9) if flate else content
        filt = "/Filter /FlateDecode " if flate else ""
        objs.append(
            _obj(
                f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R"
                f" /Resources << /Font << /F1 {font} 0 R >> >> >>"
            )
        )
        objs.append(_obj(f"<< {filt}/Length {len(stream)} >>\nstream\n") + stream + b"\nendstream")
    objs.append(_obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"))
    if title:
        objs.append(_obj(f"<< /Title ({title}) >>"))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objs):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % (i + 1) + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R %s>>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objs) + 1,
        info.encode(),
        xref,
    )
    return bytes(out)


def text_page(*lines: str) -> bytes:
    """A content stream drawing these lines of text (ASCII) down the page."""
    parts = [b"BT /F1 11 Tf 14 TL 72 720 Td"]
    for line in lines:
        safe = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        parts.append(b"(" + safe.encode("latin-1") + b") Tj T*")
    parts.append(b"ET")
    return b"\n".join(parts)


def image_only_pdf() -> bytes:
    """A page holding one gray image and no text: a scan as a scanner saves it."""
    pixels = zlib.compress(bytes(range(256)) * 64)
    image = (
        b"<< /Type /XObject /Subtype /Image /Width 128 /Height 128 /ColorSpace /DeviceGray "
        b"/BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n"
        % len(pixels)
        + pixels
        + b"\nendstream"
    )
    pdf = tiny_pdf([b"q 400 0 0 400 100 200 cm /Im1 Do Q"])
    # put the image in as object 6 and name it in the page's resources
    pdf = pdf.replace(b"/Resources << /Font", b"/Resources << /XObject << /Im1 6 0 R >> /Font")
    head, tail = pdf.split(b"xref\n", 1)
    offset = len(head)
    body = head + b"6 0 obj\n" + image + b"\nendobj\n"
    xref_at = len(body)
    entries = tail.split(b"\n")[2:7]  # the five existing offsets
    new = b"xref\n0 7\n0000000000 65535 f \n" + b"\n".join(entries) + b"\n"
    new += b"%010d 00000 n \n" % offset
    new += b"trailer\n<< /Size 7 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % xref_at
    return body + new


def matplotlib_pdf(path: Path, pages: list[str], title: str = "") -> Path:
    """A PDF written by matplotlib (TrueType text, fonttype 42), one line of text a page."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    with matplotlib.rc_context({"pdf.fonttype": 42}):
        with PdfPages(path, metadata={"Title": title} if title else None) as pdf:
            for text in pages:
                fig = plt.figure(figsize=(8.5, 11))
                fig.text(0.1, 0.9, text, fontsize=11)
                pdf.savefig(fig)
                plt.close(fig)
    return path
