"""The text and figures of the artifact scan and the ICA match (eeg/analysis/artifacts.py)."""

from __future__ import annotations

from typing import Any

SHOWN = 14  # rows (and proposed segments) written out in full in the text


def _call(name: str, **args: Any) -> str:
    import json

    return (
        f"{name}("
        + ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
        + ")"
    )


def _scan_line(r: dict) -> str:
    if r["kind"].endswith("channel"):
        extra = f"; {r['detail']}" if r["detail"] else ""
        return (f"- {r['recording']}: {r['kind']} {r['channel']}: {r['measure']} = {r['value']:g} "
                f"(threshold {r['threshold']:g}){extra}")  # fmt: skip
    chans = r["channel"].split(", ")
    shown = ", ".join(chans[:6]) + (f" +{len(chans) - 6} more" if len(chans) > 6 else "")
    which = "max" if r["kind"].startswith("high") else "min"
    end = r["onset_s"] + r["duration_s"]
    return (f"- {r['recording']}: {r['kind']} {r['onset_s']:.2f}-{end:.2f} s "
            f"({r['duration_s']:.2f} s): {which} peak-to-peak {r['value']:.1f} µV (threshold "
            f"{r['threshold']:g} µV) on {r['detail']}: {shown}")  # fmt: skip


def scan_text(result: dict) -> str:
    rows, prop = result["rows"], result.get("proposal") or {}
    lines = [f"artifact scan: {result.get('summary', '')}"]
    lines += [_scan_line(r) for r in rows[:SHOWN]]
    if len(rows) > SHOWN:
        lines.append(f"... {len(rows) - SHOWN} more row(s) in the structured content")
    if prop.get("channels") or prop.get("segments"):
        lines.append("Proposed, only if the user agrees (nothing was removed yet):")
    if prop.get("channels"):
        how = ("interpolated from the other channels" if prop.get("montage") else
               "interpolation needs electrode positions: call set_montage first, or add "
               'action="drop"')  # fmt: skip
        lines.append(f"- {_call('mark_bad_channels', channels=prop['channels'])} ({how})")
    segs = prop.get("segments") or []
    if segs:
        shown = segs[:SHOWN]
        lines.append(f"- {_call('annotate_bad_segments', segments=shown)} (epochs overlapping "
                     "them are dropped at epoch_data)")  # fmt: skip
        if len(segs) > len(shown):
            lines.append(f"  ({len(segs) - len(shown)} more segment(s) in the structured "
                         "content's proposal; a higher ptp_uv finds fewer)")  # fmt: skip
    return "\n".join(lines + [f"note: {n}" for n in result.get("notes") or []])


def ica_text(result: dict) -> str:
    rows = result["rows"]
    lines = [f"ICA artifact match: {result.get('summary', '')}"]
    for ch in dict.fromkeys((r["matched"], r["channel"]) for r in rows):
        mine = [r for r in rows if (r["matched"], r["channel"]) == ch]
        top = [r for r in mine if r["flagged"]] or mine[:1]
        top += [r for r in mine[:3] if r not in top]
        lines.append(f"- {ch[0]} {ch[1]}: " + "; ".join(
            f"component {r['component']} r={r['score']:.3f}{' (flagged)' if r['flagged'] else ''}"
            for r in top))  # fmt: skip
    exclude = (result.get("proposal") or {}).get("exclude") or []
    if exclude:
        lines.append(f"Proposed, only if the user agrees (look at ica_components first; nothing "
                     f"was removed yet): {_call('ica_apply', exclude=exclude)}")  # fmt: skip
    return "\n".join(lines + [f"note: {n}" for n in result.get("notes") or []])


def _png(fig: Any) -> bytes:
    from brainchat.eeg.core.figures import figure_png

    return figure_png(fig, dpi=100, bbox_inches="tight")  # with its SVG


def scan_figure(panels: list[tuple[str, list[str], dict]], result: dict, ptp_uv: float) -> bytes:
    """Per recording (name, channels, window stats): each window's peak-to-peak per channel,
    the bad channels' names in red and the bad segments shaded."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 3.2 * len(panels)))
    for k, (name, names, st) in enumerate(panels):
        ax = fig.add_subplot(len(panels), 1, k + 1)
        edges = [*st["onsets"], st["onsets"][-1] + st["durations"][-1]]
        mesh = ax.pcolormesh(
            edges, range(len(names) + 1), st["ptp"], vmin=0, vmax=2 * ptp_uv, cmap="magma"
        )
        fig.colorbar(mesh, ax=ax, label="peak-to-peak (µV)")
        mine = [r for r in result["rows"] if r["recording"] == name]
        bad = {r["channel"] for r in mine if r["kind"].endswith("channel")}
        ax.set_yticks([i + 0.5 for i in range(len(names))], names, fontsize=6)
        ax.invert_yaxis()  # the first channel on top, as a trace plot has it
        for tick, ch in zip(ax.get_yticklabels(), names, strict=True):
            tick.set_color("tab:red" if ch in bad else "black")
        for r in mine:
            if r["kind"].endswith("segment"):
                ax.axvspan(r["onset_s"], r["onset_s"] + r["duration_s"], color="cyan", alpha=0.3)
        ax.set_title(f"{name}: bad channels in red, bad segments shaded", fontsize=9)
        ax.set_xlabel("time (s)")
    return _png(fig)


def ica_figure(result: dict) -> bytes:
    """Each component's |r| with each EOG/ECG channel, the flagged ones in red."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 3))
    ax = fig.add_subplot()
    refs = list(dict.fromkeys((r["matched"], r["channel"]) for r in result["rows"]))
    width = 0.8 / len(refs)
    for j, ref in enumerate(refs):
        mine = [r for r in result["rows"] if (r["matched"], r["channel"]) == ref]
        mine.sort(key=lambda r: r["component"])
        xs = [r["component"] + j * width for r in mine]
        colors = ["tab:red" if r["flagged"] else "tab:gray" for r in mine]
        ax.bar(xs, [abs(r["score"]) for r in mine], width=width, color=colors, label=" ".join(ref))
    ax.set_xlabel("ICA component")
    ax.set_ylabel("|r| with the channel")
    ax.set_title("ICA components against EOG/ECG channels (flagged in red)", fontsize=9)
    if len(refs) > 1:
        ax.legend(fontsize=7)
    return _png(fig)
