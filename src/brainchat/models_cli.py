"""`brainchat models pull|list|remove`: local models from a terminal, in the same folder the app
uses (`<state folder>/models`, BRAINCHAT_STATE_DIR).

pull without a name takes the catalog model recommended for this machine's memory; a name is a
catalog id, an http(s) URL of a .gguf file, or a .gguf file you already have."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

from brainchat.localmodels import catalog, store
from brainchat.localmodels.catalog import CatalogError, CatalogModel
from brainchat.localmodels.download import DownloadCancelled, DownloadError, Progress, hub_url, pull
from brainchat.localmodels.transfer import human

BAR = 24


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="brainchat models", description=__doc__.splitlines()[0])
    sub = top.add_subparsers(dest="command", required=True)
    get = sub.add_parser("pull", help="download and verify a model (default: the recommended one)")
    get.add_argument("source", nargs="?", metavar="ID|URL|PATH")
    show = sub.add_parser("list", help="the catalog, what fits this machine, what is installed")
    show.add_argument("--json", action="store_true", help="machine-readable")
    rm = sub.add_parser("remove", help="delete an installed model (asks first)")
    rm.add_argument("name", metavar="NAME")
    rm.add_argument(
        "--yes", "-y", action="store_true", help="do not ask (needed without a terminal)"
    )
    return top


def main(argv: list[str]) -> int:
    opts = parser().parse_args(argv)
    try:
        if opts.command == "pull":
            return pull_command(opts.source)
        if opts.command == "list":
            return list_command(opts.json)
        return remove_command(opts.name, opts.yes)
    except (CatalogError, DownloadError, store.NotInstalled) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, CatalogError) else 1


def pull_command(source: str | None) -> int:
    target: CatalogModel | str
    if source is None:
        total = catalog.total_memory()
        pick = catalog.recommend(total)
        if pick is None:
            print(
                f"error: no catalog model fits this machine's memory ({human(total or 0)} with "
                f"{human(catalog.RESERVE)} kept for brainchat and the system); name one: "
                "`brainchat models list`, then `brainchat models pull ID`",
                file=sys.stderr,
            )
            return 1
        print(f"recommended for this machine ({human(total) if total else 'memory unknown'}):")
        target = pick
    elif Path(source).expanduser().is_file():
        target = source
        print(f"installing {source}: checking that it is a GGUF and hashing it (sha256)")
    else:
        target = catalog.find(source) or source
    if isinstance(target, CatalogModel):
        m = target
        print(
            f"{m.name}: {human(m.size_bytes)} download, needs {human(m.ram_bytes)} memory, "
            f"{m.params} parameters, licence {m.license}\n"
            f"from {hub_url()}/{m.repo} at commit {m.revision[:12]}, sha256 {m.sha256[:16]}…"
        )
    bar = ProgressBar(sys.stderr)
    cancel = threading.Event()
    try:
        path = pull(target, progress=bar, cancel=cancel)
    except KeyboardInterrupt:
        cancel.set()
        bar.end()
        print("cancelled: run the same command again to resume", file=sys.stderr)
        return 130
    except DownloadCancelled as exc:
        bar.end()
        print(f"error: {exc}", file=sys.stderr)
        return 130
    except DownloadError:
        bar.end()
        raise
    bar.end()
    note = store.verified(path)
    sha = note[0] if note else "?"
    print(f"installed: {path} ({human(path.stat().st_size)}, sha256 {sha[:16]}…)")
    known = store.by_sha(sha)
    if known is not None:
        print(f"catalog model {known.id}: start brainchat and choose “Use a local model”")
    return 0


class ProgressBar:
    """A one-line bar on a terminal (percent, bytes, speed, time left); a line per 10% in a log."""

    def __init__(self, out: TextIO) -> None:
        self.out, self.tty, self.shown, self.width = out, out.isatty(), -1, 0

    def __call__(self, p: Progress) -> None:
        pct = int(100 * p.done / p.total) if p.total else None
        speed = f"{human(p.speed_bps)}/s" if p.speed_bps > 0 else "…"
        left = f", {clock(p.eta_s)} left" if p.eta_s is not None and pct != 100 else ""
        size = f"{human(p.done)} / {human(p.total)}" if p.total else human(p.done)
        if self.tty:
            cells = round(BAR * (pct or 0) / 100)
            line = f"\r[{'#' * cells}{'.' * (BAR - cells)}] {pct if pct is not None else '?':>3}%  {size}  {speed}{left}"
            self.width = max(self.width, len(line))
            self.out.write(line.ljust(self.width))
            self.out.flush()
        elif pct is not None and pct // 10 != self.shown:
            self.shown = pct // 10
            print(f"{pct:3d}%  {size}  {speed}{left}", file=self.out, flush=True)

    def end(self) -> None:
        if self.tty and self.width:
            self.out.write("\n")
            self.out.flush()
            self.width = 0


def clock(seconds: float) -> str:
    s = int(seconds + 0.5)
    return (
        f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"
    )


def list_command(as_json: bool) -> int:
    models = catalog.entries()
    total = catalog.total_memory()
    pick = catalog.recommend(total)
    items = store.installed()
    have = {i.sha256 for i in items if i.sha256}
    if as_json:
        print(json.dumps(_json(models, total, pick, items), indent=1))
        return 0
    folder = store.models_folder()
    free = shutil.disk_usage(folder if folder.exists() else _existing(folder)).free
    print(f"memory {human(total) if total else 'unknown'}, models in {folder} ({human(free)} free)")
    print(f"  {'ID':<38}{'PARAMS':>7}{'SIZE':>10}{'MEMORY':>10}  {'LICENCE':<12}{'FITS':<6}STATUS")
    for m in models:
        fit = {True: "yes", False: "no", None: "?"}[catalog.fits(m, total)]
        marks = ["installed" if m.sha256 in have else ""]
        marks += ["default"] * m.default + ["recommended"] * (pick is not None and m.id == pick.id)
        status = ", ".join(x for x in marks if x) or "-"
        print(f"  {m.id:<38}{m.params:>7}{human(m.size_bytes):>10}{human(m.ram_bytes):>10}  "
              f"{m.license:<12}{fit:<6}{status}")  # fmt: skip
    others = [i for i in items if i.model is None]
    if others:
        print("other model files:")
        for i in others:
            state = "sha256 " + i.sha256[:16] + "…" if i.sha256 else "not verified"
            print(f"  {i.path.name:<38}{'':>7}{human(i.size_bytes):>10}  {state}")
    for part in store.partials():
        print(
            f"unfinished download: {part.name} ({human(part.stat().st_size)}); pull it again to resume"
        )
    return 0


def _json(models: Any, total: int | None, pick: CatalogModel | None, items: Any) -> dict[str, Any]:
    by_sha = {i.sha256: str(i.path) for i in items if i.sha256}
    return {
        "memory_bytes": total,
        "folder": str(store.models_folder()),
        "recommended": pick.id if pick else None,
        "catalog": [
            {**asdict(m), "fits": catalog.fits(m, total), "installed": by_sha.get(m.sha256)}
            for m in models
        ],
        "other_files": [
            {"path": str(i.path), "size_bytes": i.size_bytes, "sha256": i.sha256}
            for i in items
            if i.model is None
        ],
    }


def _existing(path: Any) -> Any:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def remove_command(name: str, yes: bool) -> int:
    item = store.lookup(name)
    what = f"{item.path} ({human(item.size_bytes)})"
    if not yes:
        if not sys.stdin.isatty():
            print(f"error: not removing {what} without asking: there is no terminal to ask "
                  "in; add --yes to remove it", file=sys.stderr)  # fmt: skip
            return 2
        try:
            answer = input(f"remove {what}? [y/N] ")
        except EOFError:
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print("kept")
            return 1
    path = store.remove(name)
    print(f"removed {path}")
    return 0
