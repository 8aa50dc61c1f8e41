"""A figure is made as PNG with its SVG beside it; an SVG over the cap is left out, and the tool's
result says so (eeg/core/figures.py, eeg/decoding/decoding.py emit_image)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from brainchat.eeg.core import figures
from brainchat.events import EventQueue, ToolImage, set_tool_call, unbind


def _emitted(png: bytes) -> tuple[list[ToolImage], str]:
    """The ToolImage events `emit_image` sends for `png`, and the line it returns."""
    from brainchat.eeg.decoding.decoding import emit_image

    async def run() -> tuple[list[ToolImage], str]:
        queue = EventQueue()
        token = queue.bind()
        set_tool_call("c1", "plot_psd")
        try:
            line = emit_image(png, "PSD")
        finally:
            unbind(token)
        seen = []
        while not queue.queue.empty():
            seen.append(queue.queue.get_nowait())
        return [e for e in seen if isinstance(e, ToolImage)], line

    return asyncio.run(run())


def _figure(points: int):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4, 3))
    fig.add_subplot().plot(np.random.default_rng(0).standard_normal(points))
    return fig


def test_a_figure_carries_its_svg_and_the_event_takes_it() -> None:
    png = figures.figure_png(_figure(200), dpi=80)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and b"<svg" in png.svg[:2000] and not png.svg_note
    images, line = _emitted(png)
    assert images[0].svg == png.svg and images[0].png == bytes(png)
    assert line == "image: PSD shown to the user"


def test_an_svg_over_the_cap_is_left_out_and_said(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(figures, "SVG_CAP", 20_000)
    png = figures.figure_png(_figure(5_000), dpi=80)
    assert png.svg == b"" and "as SVG" in png.svg_note
    assert png[:8] == b"\x89PNG\r\n\x1a\n"  # the PNG is whole
    images, line = _emitted(png)
    assert [e.svg for e in images] == [b""]
    assert "no SVG of this figure to download" in line
