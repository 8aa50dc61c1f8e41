"""Artifact detection on the continuous recordings: bad channels (flat, noisy, high peak-to-peak),
bad segments (peak-to-peak over a threshold, or flat) and the ICA components that match EOG/ECG
channels. It only proposes: mark_bad_channels, annotate_bad_segments and ica_apply remove what the
user agrees to."""

from __future__ import annotations

from typing import Any

ARTIFACT_NOT_EEG = r"eog|ecg|ekg|emg"  # channel names that are not EEG, whatever their type
ARTIFACT_REF_NAMES = {"EOG": r"eog", "ECG": r"ecg|ekg"}


def _artifact_error(text: str) -> Exception:
    """An error the user can fix (the exported script, without langchain, raises a ValueError)."""
    try:
        from langchain_core.tools import ToolException
    except ImportError:
        return ValueError(text)
    return ToolException(text)


def _artifact_eeg_picks(raw: Any) -> list[int]:
    """The EEG channels to judge: typed EEG and not named as an EOG/ECG/EMG channel."""
    import re

    import mne

    picks = mne.pick_types(raw.info, eeg=True, exclude=[])
    return [int(i) for i in picks if not re.search(ARTIFACT_NOT_EEG, raw.ch_names[i], re.I)]


def _artifact_robust_z(values: Any) -> Any:
    """Each value's distance from the median in robust standard deviations (1.4826 MAD)."""
    import numpy as np

    x = np.asarray(values, float)
    med = np.median(x)
    spread = 1.4826 * np.median(np.abs(x - med))
    if spread <= 0:  # over half the channels alike: the mean absolute deviation instead
        spread = 1.2533 * np.mean(np.abs(x - med))
    return (x - med) / spread if spread > 0 else np.zeros_like(x)


def _artifact_stats(raw: Any, picks: list[int], window_s: float, hf_hz: float, stop: Any) -> Any:
    """Per channel (µV): std, robust std (0.7413 IQR), amplitude above `hf_hz` (None when the
    data has no such band), and each window's peak-to-peak; None when stopped."""
    import numpy as np
    from scipy.signal import welch

    sfreq = float(raw.info["sfreq"])
    win = max(1, int(round(window_s * sfreq)))
    starts = np.arange(0, max(raw.n_times - win // 2, 1), win)  # a short tail joins the last
    with_hf = hf_hz < min(sfreq / 2, float(raw.info["lowpass"]))
    std, robust, hf, ptp = [], [], [], []
    for i in picks:
        if stop is not None and stop.is_set():
            return None
        x = raw.get_data(picks=[i])[0] * 1e6
        std.append(float(np.std(x)))
        q1, q3 = np.percentile(x, [25, 75])
        robust.append(float(0.7413 * (q3 - q1)))
        ptp.append(np.maximum.reduceat(x, starts) - np.minimum.reduceat(x, starts))
        if with_hf:  # the median over Welch segments: a brief burst does not make a channel noisy
            f, p = welch(x, fs=sfreq, nperseg=min(len(x), int(2 * sfreq)), average="median")
            hf.append(float(np.sqrt(np.sum(p[f > hf_hz]) * (f[1] - f[0]))))
    ends = np.append(starts[1:], raw.n_times)
    return {
        "std": np.array(std),
        "robust": np.array(robust),
        "hf": np.array(hf) if with_hf else None,
        "ptp": np.array(ptp).reshape(len(picks), len(starts)),
        "onsets": starts / sfreq,
        "durations": (ends - starts) / sfreq,
    }


def _artifact_row(name: str, kind: str, channel: str, onset: float, duration: float) -> dict:
    return {"recording": name, "kind": kind, "channel": channel, "onset_s": float(onset),
            "duration_s": float(duration)}  # fmt: skip


def _artifact_bad_channels(name: str, names: list[str], st: dict, length: float, p: dict) -> list:
    """Rows of the flat, noisy and high peak-to-peak channels of one recording."""
    import numpy as np

    rows = []

    def add(kind: str, i: Any, value: float, threshold: float, measure: str, detail: str) -> None:
        row = _artifact_row(name, kind, names[i], 0.0, length)
        rows.append({**row, "value": round(float(value), 4), "threshold": float(threshold),
                     "measure": measure, "detail": detail})  # fmt: skip

    flat = st["std"] < p["flat_uv"]
    for i in np.flatnonzero(flat):
        add("flat channel", i, st["std"][i], p["flat_uv"], "std (µV)", "")
    live = np.flatnonzero(~flat)
    hf_label = f"robust z of >{p['hf_hz']:g} Hz amplitude"
    judged = [("robust", "robust z of robust std"), ("hf", hf_label)]
    for key, label in judged if len(live) >= 3 else []:
        if st[key] is None:
            continue
        z = _artifact_robust_z(st[key][live])
        median = float(np.median(st[key][live]))
        for j in np.flatnonzero(z > p["noisy_z"]):
            i = live[j]
            detail = f"{st[key][i]:.2f} µV; channels' median {median:.2f} µV"
            add("noisy channel", i, z[j], p["noisy_z"], label, detail)
    share = (st["ptp"] > p["ptp_uv"]).mean(axis=1)
    for i in np.flatnonzero(share > p["channel_fraction"]):
        measure = f"share of {p['window_s']:g} s windows with peak-to-peak > {p['ptp_uv']:g} µV"
        add("high peak-to-peak channel", i, share[i], p["channel_fraction"], measure, "")
    return rows


def _artifact_spans(name: str, names: list[str], st: dict, good: list[int], p: dict) -> list:
    """Rows of the bad segments of one recording: runs of windows whose peak-to-peak on a good
    channel is over `ptp_uv` (or under `flat_uv`), merged, with the channels concerned."""
    import numpy as np

    rows = []
    ptp = st["ptp"][good]
    kinds = [("high peak-to-peak segment", ptp > p["ptp_uv"], p["ptp_uv"], np.max),
             ("flat segment", ptp < p["flat_uv"], p["flat_uv"], np.min)]  # fmt: skip
    for kind, hit, threshold, pick in kinds:
        bad = hit.any(axis=0)
        k = 0
        while k < len(bad):
            if not bad[k]:
                k += 1
                continue
            end = k
            while end + 1 < len(bad) and bad[end + 1]:
                end += 1
            span = slice(k, end + 1)
            chans = [names[good[c]] for c in np.flatnonzero(hit[:, span].any(axis=1))]
            onset, duration = st["onsets"][k], float(np.sum(st["durations"][span]))
            row = _artifact_row(name, kind, ", ".join(chans), onset, duration)
            value = float(pick(ptp[:, span][hit[:, span]]))
            rows.append({**row, "value": round(value, 4), "threshold": float(threshold),
                         "measure": "peak-to-peak (µV)", "detail": f"{len(chans)} ch"})  # fmt: skip
            k = end + 1
    return sorted(rows, key=lambda r: r["onset_s"])


def find_artifacts(
    data: dict,
    *,
    stop: Any = None,
    flat_uv: float = 0.5,
    noisy_z: float = 5.0,
    hf_hz: float = 30.0,
    ptp_uv: float = 150.0,
    window_s: float = 1.0,
    channel_fraction: float = 0.2,
) -> dict:
    """Bad channels and bad segments of every recording, proposed for removal (none removed)."""
    p = {"flat_uv": flat_uv, "noisy_z": noisy_z, "hf_hz": hf_hz, "ptp_uv": ptp_uv,
         "window_s": window_s, "channel_fraction": channel_fraction}  # fmt: skip
    rows: list[dict] = []
    notes: list[str] = []
    for raw, name in zip(data["raws"], data["names"], strict=True):
        picks = _artifact_eeg_picks(raw)
        if len(picks) == 0:
            notes.append(f"{name}: no EEG channel to judge")
            continue
        st = _artifact_stats(raw, picks, window_s, hf_hz, stop)
        if st is None:
            return {"rows": rows, "notes": ["stopped"]}
        names = [raw.ch_names[i] for i in picks]
        length = raw.n_times / raw.info["sfreq"]
        found = _artifact_bad_channels(name, names, st, length, p)
        flagged = {r["channel"] for r in found}
        good = [i for i, c in enumerate(names) if c not in flagged]
        spans = _artifact_spans(name, names, st, good, p) if good else []
        marked = _artifact_marked(raw)
        new = [r for r in spans if not any(a <= r["onset_s"] and
               r["onset_s"] + r["duration_s"] <= b for a, b in marked)]  # fmt: skip
        rows += found + new
        if len(new) < len(spans):
            notes.append(f"{name}: {len(spans) - len(new)} bad segment(s) already annotated BAD")
        if st["hf"] is None:
            notes.append(f"{name}: no data above {hf_hz:g} Hz (low-pass or Nyquist): the "
                         "high-frequency noise criterion was skipped")  # fmt: skip
        if int((st["std"] >= flat_uv).sum()) < 3:
            notes.append(f"{name}: under 3 channels that are not flat: noise was not judged")
    notes.append(
        f"criteria: flat channel: std < {flat_uv:g} µV; noisy channel: robust z > {noisy_z:g} "
        f"of its robust std or of its amplitude above {hf_hz:g} Hz; high peak-to-peak channel: "
        f"over {ptp_uv:g} µV in more than {channel_fraction:.0%} of its {window_s:g} s windows; "
        f"bad segment: {window_s:g} s windows over {ptp_uv:g} µV or under {flat_uv:g} µV "
        "peak-to-peak. Bad segments are judged on the channels not flagged as bad; channels "
        "named EOG/ECG/EKG/EMG or not typed EEG are not judged; nothing was removed"
    )
    return {"rows": rows, "summary": _artifact_summary(rows, len(data["raws"])), "notes": notes,
            "proposal": _artifact_proposal(rows, data)}  # fmt: skip


def _artifact_marked(raw: Any) -> list[tuple[float, float]]:
    """The spans already annotated BAD (start, end; s from the recording's start)."""
    ann = raw.annotations
    return [(float(o - raw.first_time), float(o - raw.first_time + d))
            for o, d, t in zip(ann.onset, ann.duration, ann.description, strict=True)
            if t.upper().startswith("BAD")]  # fmt: skip


def _artifact_proposal(rows: list[dict], data: dict) -> dict:
    """The calls that would remove what was found (for the user to accept or not)."""
    channels = list(dict.fromkeys(r["channel"] for r in rows if r["kind"].endswith("channel")))
    segments = [
        {"file": r["recording"], "onset": round(r["onset_s"], 3),
         "duration": round(r["duration_s"], 3)}
        for r in rows if r["kind"].endswith("segment")
    ]  # fmt: skip
    montage = all(raw.get_montage() is not None for raw in data["raws"])
    return {"channels": channels, "segments": segments, "montage": montage}


def _artifact_summary(rows: list[dict], n_recordings: int) -> str:
    chans = [r for r in rows if r["kind"].endswith("channel")]
    spans = [r for r in rows if r["kind"].endswith("segment")]
    names = sorted({r["channel"] for r in chans})
    seconds = sum(r["duration_s"] for r in spans)
    return (
        f"{len(names)} bad channel(s){' (' + ', '.join(names) + ')' if names else ''} and "
        f"{len(spans)} bad segment(s) ({seconds:.1f} s) in {n_recordings} recording(s); "
        "nothing was removed"
    )


def ica_find_artifacts(
    data: dict,
    *,
    stop: Any = None,
    eog_channels: list[str] | None = None,
    ecg_channels: list[str] | None = None,
    threshold: float = 3.0,
) -> dict:
    """The fitted ICA's components that match the EOG/ECG channels (MNE's find_bads_eog/ecg)."""
    import mne

    raws, ica = data["raws"], data["ica"]
    refs = _artifact_references(raws[0], eog_channels, ecg_channels)
    notes = [f"{ch} is an EEG channel used as an {kind} proxy, as asked: it also carries brain "
             "activity, so its matches are less specific" for kind, ch, proxy in refs if proxy]  # fmt: skip
    if not refs:
        text = ("no EOG or ECG channel in the recordings (by type or name), so no component was "
                "matched; nothing was guessed. To use a frontal channel as an EOG proxy name it: "
                "ica_find_artifacts(eog_channels=['Fp1']); or look at ica_components")  # fmt: skip
        return {"rows": [], "summary": text, "notes": notes, "proposal": {"exclude": []}}
    raw = mne.concatenate_raws([r.copy() for r in raws]) if len(raws) > 1 else raws[0]
    rows, exclude = [], []
    for kind, ch, _ in refs:
        if stop is not None and stop.is_set():
            break
        if kind == "EOG":
            found, scores = ica.find_bads_eog(raw, ch_name=ch, threshold=threshold, verbose="error")
        else:
            found, scores = ica.find_bads_ecg(
                raw, ch_name=ch, method="correlation", threshold=threshold, verbose="error"
            )
        flagged = {int(k) for k in found}
        exclude += [int(k) for k in found if int(k) not in exclude]
        order = sorted(range(len(scores)), key=lambda k: -abs(float(scores[k])))
        rows += [{"component": k, "matched": kind, "channel": ch,
                  "score": round(float(scores[k]), 6), "flagged": k in flagged,
                  "threshold": float(threshold)} for k in order]  # fmt: skip
    notes.append(
        f"score: Pearson r of each component with the channel (EOG 1-10 Hz, ECG 8-16 Hz); flagged "
        f"when its |z| among the components is over {threshold:g} (MNE's iterative z-score); "
        "nothing was removed"
    )
    summary = f"components matching {', '.join(f'{k} channel {c}' for k, c, _ in refs)}: " + (
        ", ".join(map(str, exclude)) if exclude else "none over the threshold"
    )
    return {"rows": rows, "summary": summary, "notes": notes, "proposal": {"exclude": exclude}}


def _artifact_references(raw: Any, eog: list[str] | None, ecg: list[str] | None) -> list:
    """(kind, channel, named as a proxy) of each EOG/ECG channel: those the user named, else
    those typed or named so."""
    import re

    import mne

    lookup = {c.lower(): c for c in raw.ch_names}
    out = []
    for kind, named in (("EOG", eog), ("ECG", ecg)):
        if named:
            unknown = [n for n in named if n.lower() not in lookup]
            if unknown:
                raise _artifact_error(
                    f"unknown channel(s) {unknown}; available: {', '.join(raw.ch_names)}"
                )
            for n in named:
                ch = lookup[n.lower()]
                typed = raw.get_channel_types(picks=[ch])[0] == kind.lower()
                out.append(
                    (kind, ch, not typed and not re.search(ARTIFACT_REF_NAMES[kind], ch, re.I))
                )
            continue
        typed = mne.pick_types(raw.info, eog=kind == "EOG", ecg=kind == "ECG", exclude=[])
        chans = [raw.ch_names[i] for i in typed] + [
            c for c in raw.ch_names if re.search(ARTIFACT_REF_NAMES[kind], c, re.I)
        ]
        out += [(kind, c, False) for c in dict.fromkeys(chans)]
    return out


def text(result: dict) -> str:
    """The scan or the ICA match as the model reads it, with the calls it proposes."""
    from brainchat.eeg.analysis.artifact_views import ica_text, scan_text

    if "exclude" in (result.get("proposal") or {}):
        return ica_text(result)
    return scan_text(result)


def figure(data: dict, result: dict, **params: Any) -> bytes | None:
    """Each recording's window peak-to-peak per channel, or each component's match."""
    from brainchat.eeg.analysis.artifact_views import ica_figure, scan_figure

    if "exclude" in (result.get("proposal") or {}):
        return ica_figure(result) if result["rows"] else None
    panels = []
    for raw, name in list(zip(data["raws"], data["names"], strict=True))[:3]:
        picks = _artifact_eeg_picks(raw)
        if picks:
            st = _artifact_stats(raw, picks, params.get("window_s", 1.0), float("inf"), None)
            panels.append((name, [raw.ch_names[i] for i in picks], st))
    return scan_figure(panels, result, params.get("ptp_uv", 150.0)) if panels else None


EXPORTED = [
    "ARTIFACT_NOT_EEG",
    "ARTIFACT_REF_NAMES",
    "_artifact_error",
    "_artifact_eeg_picks",
    "_artifact_robust_z",
    "_artifact_stats",
    "_artifact_row",
    "_artifact_bad_channels",
    "_artifact_spans",
    "_artifact_marked",
    "find_artifacts",
    "_artifact_proposal",
    "_artifact_summary",
    "ica_find_artifacts",
    "_artifact_references",
]
