"""What the page says about local models: sizes, the fit to this machine's memory, the catalog
table, a download's progress line. Plain functions of the catalog's entries (no Chainlit), so
tests read the text without a page."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from brainchat import i18n

BAR_CELLS = 20


def machine_memory() -> int | None:
    """This machine's memory in bytes, as the catalog reads it."""
    from brainchat.localmodels import catalog

    return catalog.total_memory()


def size(n: int | float | None) -> str:
    """Bytes as people read them: 986 MB, 1.1 GB (decimal units, as download sizes are shown)."""
    if n is None:
        return "?"
    value = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            if unit in ("B", "kB") or value >= 100:
                return f"{value:.0f} {unit}"
            return f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"  # pragma: no cover - the loop returns at GB


def duration(seconds: float | None) -> str:
    """A time left in the user's language: 45 s, 3 min, 2 h."""
    if seconds is None or seconds < 0:
        return i18n.t("local_model.unknown_time")
    if seconds < 90:
        return i18n.t("local_model.unit.s", n=max(1, round(seconds)))
    if seconds < 90 * 60:
        return i18n.t("local_model.unit.min", n=round(seconds / 60))
    return i18n.t("local_model.unit.h", n=f"{seconds / 3600:.1f}")


def fits(model: Any, total: int | None) -> bool | None:
    """Whether the model fits this machine's memory, by the catalog's rule (None: unknown)."""
    from brainchat.localmodels import catalog

    return catalog.fits(model, total)


def fit_text(model: Any, total: int | None, short: bool = False) -> str:
    fit = fits(model, total)
    if fit is None:
        return i18n.t("local_model.unknown_memory")
    key = "fits" if fit else "does_not_fit"
    return (
        i18n.t(f"local_model.{key}_short")
        if short
        else i18n.t(f"local_model.{key}", total=size(total))
    )


def offer_text(model: Any, total: int | None, present: bool) -> str:
    """The first screen's line for the recommended model."""
    return i18n.t(
        "local_model.offer",
        name=model.name,
        params=model.params,
        license=model.license,
        size=size(model.size_bytes),
        present=i18n.t("local_model.present") if present else "",
        ram=size(model.ram_bytes),
        fits=fit_text(model, total),
    )


def catalog_text(
    models: Iterable[Any], total: int | None, recommended: str | None, present: set[str]
) -> str:
    """The catalog as a table: name, parameters, download, memory, licence, fit to this machine."""
    rows = []
    for m in models:
        marks = [fit_text(m, total, short=True)]
        if m.id == recommended:
            marks.append(i18n.t("local_model.recommended"))
        if m.id in present:
            marks.append(i18n.t("local_model.downloaded"))
        cells = (
            m.name,
            m.params,
            size(m.size_bytes),
            size(m.ram_bytes),
            m.license,
            ", ".join(marks),
        )
        rows.append("| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |")
    if not rows:
        return i18n.t("local_model.empty_catalog")
    return i18n.t("local_model.catalog", total=size(total), rows="\n".join(rows))


def bar(fraction: float) -> str:
    filled = max(0, min(BAR_CELLS, round(fraction * BAR_CELLS)))
    return "█" * filled + "░" * (BAR_CELLS - filled)


def progress_text(
    name: str, done: int, total: int | None, speed_bps: float, eta_s: float | None
) -> str:
    """One download's state: a bar, percent, bytes, speed and time left."""
    speed = f"{size(speed_bps)}/s"
    if not total:
        return i18n.t("local_model.progress_unsized", name=name, done=size(done), speed=speed)
    fraction = min(1.0, done / total)
    return i18n.t(
        "local_model.progress",
        name=name,
        bar=bar(fraction),
        percent=int(fraction * 100),
        done=size(done),
        total=size(total),
        speed=speed,
        left=duration(eta_s),
    )
