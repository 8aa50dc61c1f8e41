"""The MOABB data sets fetch_dataset offers: paradigm, subjects, sessions, classes, an approximate
download size per subject (for the disk check), licence and the paper to cite.

Sizes are rough figures of MOABB's source files per subject; the check doubles them (the source
files stay in MOABB's cache, and the FIF copies are about as large). Licences are MOABB's own
metadata (moabb.datasets.metadata); DOIs are the data sets' `doi` attributes."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from langchain_core.tools import ToolException

ACCESSION = re.compile(r"^ds\d{6}$")  # an OpenNeuro data set
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{1,40}$")  # a MOABB class name
DEMO = "FakeDataset"  # MOABB's generated data: no download, random signals


@dataclass(frozen=True)
class MoabbSet:
    """One MOABB data set as fetch_dataset knows it."""

    name: str  # the class in moabb.datasets
    paradigm: str  # imagery, p300 or ssvep
    subjects: int  # numbered 1..subjects
    sessions: int
    classes: tuple[str, ...]
    mb_per_subject: float  # approximate source download
    licence: str
    doi: str


def _set(name: str, paradigm: str, subjects: int, sessions: int, classes: str, mb: float,
         licence: str, doi: str) -> MoabbSet:  # fmt: skip
    return MoabbSet(name, paradigm, subjects, sessions, tuple(classes.split()), mb, licence, doi)


CATALOG: dict[str, MoabbSet] = {
    s.name: s
    for s in (
        _set("BNCI2014_001", "imagery", 9, 2, "left_hand right_hand feet tongue", 84,
             "CC-BY-ND-4.0", "10.3389/fnins.2012.00055"),
        _set("BNCI2014_002", "imagery", 14, 1, "right_hand feet", 60,
             "CC-BY-ND-4.0", "10.1007/s00500-012-0895-4"),
        _set("BNCI2014_004", "imagery", 9, 5, "left_hand right_hand", 20,
             "CC-BY-ND-4.0", "10.1109/TNSRE.2007.906956"),
        _set("BNCI2015_001", "imagery", 12, 2, "right_hand feet", 100,
             "CC-BY-NC-ND-4.0", "10.1109/tnsre.2012.2189584"),
        _set("PhysionetMI", "imagery", 109, 1, "left_hand right_hand feet hands rest", 35,
             "ODC-By-1.0", "10.1109/TBME.2004.827072"),
        _set("Cho2017", "imagery", 52, 1, "left_hand right_hand", 300,
             "CC-BY-4.0", "10.5524/100295"),
        _set("Lee2019_MI", "imagery", 54, 2, "left_hand right_hand", 800,
             "GPL-3.0", "10.5524/100542"),
        _set("Zhou2016", "imagery", 4, 3, "left_hand right_hand feet", 50,
             "CC-BY-4.0", "10.1371/journal.pone.0162657"),
        _set("Schirrmeister2017", "imagery", 14, 1, "right_hand left_hand rest feet", 900,
             "CC-BY-4.0", "10.1002/hbm.23730"),
        _set("Weibo2014", "imagery", 10, 1,
             "left_hand right_hand hands feet left_hand_right_foot right_hand_left_foot rest",
             150, "CC0-1.0", "10.1371/journal.pone.0114853"),
        _set("AlexMI", "imagery", 8, 1, "right_hand feet rest", 40,
             "CC-BY-SA-4.0", "10.5281/zenodo.806022"),
        _set("BNCI2014_008", "p300", 8, 1, "Target NonTarget", 30,
             "CC-BY-NC-ND-4.0", "10.3389/fnhum.2013.00732"),
        _set("BNCI2014_009", "p300", 10, 3, "Target NonTarget", 30,
             "CC-BY-NC-ND-4.0", "10.1088/1741-2560/11/3/035008"),
        _set("BNCI2015_003", "p300", 10, 1, "Target NonTarget", 20,
             "CC-BY-NC-ND-4.0", "10.1016/j.neulet.2009.06.045"),
        _set("EPFLP300", "p300", 8, 4, "Target NonTarget", 300,
             "unknown (see http://bci.epfl.ch/p300)", "10.1016/j.jneumeth.2007.03.005"),
        _set("Kalunga2016", "ssvep", 12, 1, "13 17 21 rest", 15,
             "CC-BY-4.0", "10.1016/j.neucom.2016.01.007"),
        _set("Nakanishi2015", "ssvep", 9, 1, "9.25 11.25 13.25 9.75 11.75 13.75 10.25 12.25 "
             "14.25 10.75 12.75 14.75", 10, "unknown", "10.1371/journal.pone.0140703"),
        _set("Wang2016", "ssvep", 34, 1, "8 9 10 11 12 13 14 15", 110,
             "CC-BY-4.0", "10.1109/TNSRE.2016.2627556"),
        _set(DEMO, "imagery", 10, 2, "left_hand right_hand feet", 1,
             "none (generated random signals)", "none"),
    )
}  # fmt: skip
# FakeDataset's classes per paradigm (its paradigm argument picks one)
DEMO_EVENTS = {
    "imagery": ("left_hand", "right_hand", "feet"),
    "p300": ("Target", "NonTarget"),
    "ssvep": ("13", "17", "21"),
}


def supported() -> str:
    """The MOABB names, grouped by paradigm, for messages and the tool's description."""
    groups: dict[str, list[str]] = {}
    for s in CATALOG.values():
        groups.setdefault(s.paradigm, []).append(s.name)
    return "; ".join(f"{p}: {', '.join(names)}" for p, names in groups.items())


def lookup(name: str) -> MoabbSet | str:
    """The MOABB set named (any case), or an OpenNeuro accession as given; anything else is
    refused before it can reach a path or a URL."""
    text = name.strip()
    if ACCESSION.match(text):
        return text
    if not NAME.match(text):
        raise ToolException(
            f"{_shown(text)} is not a data set name: give a MOABB name such as BNCI2014_001 "
            "(letters, digits and '_' only) or an OpenNeuro accession such as ds002778"
        )
    if re.fullmatch(r"ds\d+", text):
        raise ToolException(
            f"'{text}' is not an OpenNeuro accession: ds and exactly 6 digits (e.g. ds002778)"
        )
    by_lower = {k.lower(): v for k, v in CATALOG.items()}
    found = by_lower.get(text.lower())
    if found is None:
        close = difflib.get_close_matches(text, list(CATALOG), n=3, cutoff=0.6)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise ToolException(
            f"'{text}' is not a MOABB data set fetch_dataset offers.{hint} Offered: "
            f"{supported()}; or an OpenNeuro accession (ds + 6 digits)"
        )
    return found


def _shown(text: str) -> str:
    visible = "".join(c if c.isprintable() else "?" for c in text)
    return repr(visible[:60] + ("..." if len(visible) > 60 else ""))
