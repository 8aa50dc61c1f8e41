"""A figure as the page gets it: PNG to show, and the same drawing as SVG to download.

`figure_png(fig, **savefig)` returns the PNG bytes (a `bytes`, so every caller keeps working) that
also carry the SVG (`.svg`). A dense drawing (a long raw trace, many topomaps) can be megabytes
of SVG: writing stops at `SVG_CAP` bytes and the figure goes without one (`.svg_note` says why),
so the size kept per figure stays bounded (the tool's result says so).
"""

from __future__ import annotations

import io
from typing import Any

SVG_CAP = 3_000_000  # bytes of SVG kept for one figure, at most


class FigureBytes(bytes):
    """PNG bytes with the same figure as SVG (`svg`, empty when it was left out: `svg_note`)."""

    svg: bytes = b""
    svg_note: str = ""


class _Capped(io.BytesIO):
    """A buffer that refuses to grow past `cap` bytes (the SVG writer stops there)."""

    def __init__(self, cap: int) -> None:
        super().__init__()
        self.cap = cap

    def write(self, data: Any) -> int:
        if self.tell() + len(data) > self.cap:
            raise _TooLarge
        return super().write(data)


class _TooLarge(Exception):
    pass


def figure_png(fig: Any, **savefig: Any) -> FigureBytes:
    """`fig` as PNG (savefig's options as given), with its SVG when that stays under the cap."""
    png = io.BytesIO()
    fig.savefig(png, format="png", **savefig)
    out = FigureBytes(png.getvalue())
    svg = _Capped(SVG_CAP)
    options = {k: v for k, v in savefig.items() if k != "dpi"}
    try:
        fig.savefig(svg, format="svg", **options)
        out.svg = svg.getvalue()
    except _TooLarge:
        out.svg_note = f"over {SVG_CAP // 1_000_000} MB as SVG"
    return out
