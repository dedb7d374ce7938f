"""Several files around the one that holds the target: each is joined many-to-one on its key (a
parent, one row per key), summarised per entity over the prediction window then joined (records
over time), or said not joined, and why. Clock-time records make the window a question: its
evidence is how many entities have records in it (issue 26).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.id_names import looks_like_id_name
from kernel_tools.diagnosis.options import call, keep
from kernel_tools.findings import Finding, Option
from kernel_tools.transforms.records import relative_time

WINDOWS_HOURS = (6, 24, 48)  # the windows the question offers; the first day is the usual ICU index
DEFAULT_WINDOW_HOURS = 24
BIRTH_NAME = re.compile(r"(^|[_\W])(dob|birth\w*|born)([_\W]|$)|^dob|birth_?date|date_?of_?birth", re.IGNORECASE)
# a long table's column naming what was measured (a test, an item code)
ITEM_NAME = re.compile(r"item|test|lab|code|param|variable|measure|label|analyte|name", re.IGNORECASE)
# its unit of each value, named as a whole word ('community' holds no unit)
UNIT_COLUMN_NAME = re.compile(r"(^|[_\W])(unit|units|uom)([_\W]|$)|uom$|units?$", re.IGNORECASE)


def unit_column(b: pd.DataFrame, records: dict) -> str | None:
    """The long table's unit of each value: a text column named as a unit, with few values."""
    if not records.get("key"):
        return None
    return next((str(c) for c in b.columns if UNIT_COLUMN_NAME.search(str(c)) and b[c].dtype == object
                 and 1 <= b[c].nunique() <= 200), None)


def _finer_level(b: pd.DataFrame, a: pd.DataFrame, records: dict | None) -> str | None:
    """An id unique in ``b``, named as one and absent from ``a``, when ``b`` is no long table of a
    named item: ``b``'s rows are entities below ``a``'s (the stays of an admission), not records."""
    if records is not None and records.get("key") and ITEM_NAME.search(str(records["key"])):
        return None
    return next((str(c) for c in b.columns if c not in a.columns and looks_like_id_name(str(c))
                 and b[c].notna().all() and b[c].is_unique), None)


def window_evidence(a: pd.DataFrame, b: pd.DataFrame, key: str, records: dict) -> dict[int, list[float]]:
    """Per window (hours after each entity's anchor): how many of ``a``'s entities have records in
    it, and the median count among those."""
    anchor = records["anchor"]
    both = b[[key, records["time"]]].merge(a[[key, anchor]].drop_duplicates(key), on=key, how="inner")
    hours = relative_time(both, records["time"], anchor, "h")
    out = {}
    for w in WINDOWS_HOURS:
        counts = both.loc[(hours <= w).fillna(False).to_numpy(), key].value_counts()
        out[w] = [int(len(counts)), float(np.median(counts)) if len(counts) else 0.0]
    return out


def plan_entry(frames: dict[str, pd.DataFrame], left: str, right: str, cands: list[dict],
               records_of: Any) -> dict:
    """How ``right`` reaches ``left``: ``{"frame", "on"}`` and ``"records"`` (summarise first) or
    ``"birth"``; or ``{"frame", "why"}`` when it is not joined."""
    a, b = frames[left], frames[right]
    if not cands:
        return {"frame": right, "why": f"no column of '{right}' is an id that '{left}' shares"}
    best = cands[0]
    key = best["left"]
    if best["left"] != best["right"]:
        return {"frame": right, "why": f"its key '{best['right']}' is named unlike '{left}'s '{key}': not sure "
                                       "they are one id"}
    if best["unique_right"]:  # a parent: one row per key
        birth = next((str(c) for c in b.columns if BIRTH_NAME.search(str(c)) and c not in a.columns
                      and pd.to_datetime(b[c].dropna().head(200), errors="coerce", format="mixed").notna().all()),
                     None)
        return {"frame": right, "on": key, "birth": birth, "rows": len(b)}
    records = records_of(b, key, a)
    finer = _finer_level(b, a, records)
    if finer is not None:
        return {"frame": right, "why": f"one row per '{finer}', several per '{key}': a finer level than "
                                       f"'{left}'s rows, not records of a measured item"}
    if records is None:
        return {"frame": right, "why": f"several rows per '{key}' and no time to order them by: joined, they "
                                       "would multiply the rows"}
    params = {"id": key, "time": records["time"], "key": records["key"], "value": records["value"],
              "unit_column": unit_column(b, records)}
    entry: dict[str, Any] = {"frame": right, "on": key, "records": params, "rows": len(b)}
    if records.get("anchor"):
        params.update(anchor=records["anchor"], unit="h")
        entry["window"] = window_evidence(a, b, key, records)
    return entry


def _said(entry: dict, left: str, n_left: int, until: int) -> str:
    if "why" in entry:
        return f"'{entry['frame']}' not joined: {entry['why']}"
    if "records" not in entry:
        age = f"; its '{entry['birth']}' becomes the age at the index" if entry.get("birth") else ""
        return f"'{entry['frame']}' joined many-to-one on '{entry['on']}' (one row per key{age})"
    r = entry["records"]
    if "window" in entry:
        n, median = entry["window"][until]
        when = (f"records with '{r['time']}' within {until} h after '{r['anchor']}' ({n:,} of {n_left:,} "
                f"'{left}' rows have some, median {median:g})")
    else:
        when = f"records with '{r['time']}' <= 0 (the index)"
    units = f", units reconciled by '{r['unit_column']}'" if r.get("unit_column") else ""
    return f"'{entry['frame']}' summarised per '{entry['on']}' from its {when}{units}, then joined"


def _action(entries: list[dict], at: str | None, until: int | None) -> dict:
    """The ``join_files`` call of the joinable entries, records windowed at ``until`` hours (day 0
    for records counted from the index)."""
    files = []
    for e in entries:
        if "why" in e or ("records" in e and until is None):
            continue
        records = None if "records" not in e else {**e["records"], "until": until if "window" in e else 0}
        files.append({"frame": e["frame"], "on": e["on"], "records": records})
    birth = next((e["birth"] for e in entries if e.get("birth") and e["frame"] in {f["frame"] for f in files}), None)
    skipped = [{"frame": e["frame"], "why": e["why"]} for e in entries if "why" in e]
    return call("join_files", files=files, birth=birth if at else None, at=at if birth else None, skipped=skipped)


def plan_finding(frames: dict[str, pd.DataFrame], left: str, entries: list[dict], anchor: str | None) -> Finding:
    """One finding for every file around ``left``: what joins how, what does not and why; with
    clock-time records, the window is its question (6, 24 or 48 h; 24 recommended)."""
    n_left = len(frames[left])
    clock = any("window" in e for e in entries)
    joined = [e for e in entries if "why" not in e]
    lines = [_said(e, left, n_left, DEFAULT_WINDOW_HOURS) for e in entries]
    summary = (f"{len(joined)} of {len(entries)} other files can reach '{left}': " + "; ".join(lines) + ".")
    options = []
    if clock:
        summary += (f" Records after the prediction's moment are follow-up: the window is the expert's choice "
                    f"(default the first {DEFAULT_WINDOW_HOURS} h after admission).")
        for w in WINDOWS_HOURS:
            counts = "; ".join(f"'{e['frame']}': {e['window'][w][0]:,} of {n_left:,} rows with records, median "
                               f"{e['window'][w][1]:g}" for e in joined if "window" in e)
            options.append(Option(f"join_files_{w}h", f"Join them, records of the first {w} h",
                                  f"Predict {w} h after '{anchor}': {counts}.",
                                  "a longer window sees more but predicts later; a shorter one may see nothing",
                                  w == DEFAULT_WINDOW_HOURS, _action(entries, anchor, w)))
    else:
        options.append(Option("join_files", "Join them", "; ".join(lines) + ".", "unmatched rows get missing values",
                              True, _action(entries, anchor, 0)))
    if any("records" in e for e in joined) and any("records" not in e for e in joined):
        options.append(Option("join_parents", "Join only the one-row-per-key files",
                              "Leave the records over time out.", "loses what the records show", False,
                              _action(entries, anchor, None)))
    options.append(keep("Do not join.", "loses whatever the other files add", label="Keep separate"))
    ev = {"left_frame": left, "files": entries, "window_hours": DEFAULT_WINDOW_HOURS if clock else None}
    keys = sorted({e["on"] for e in joined})
    return Finding("join_keys", keys, "warning", summary, ev, options, None)
