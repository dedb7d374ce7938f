"""Several frames: candidate join keys, match rates, whether a join would duplicate rows, and
whether an auxiliary frame gives the target away once joined."""

from __future__ import annotations

import dataclasses
import itertools
import re
import time as _time
from typing import Any

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.columns import profile_columns
from kernel_tools.diagnosis.entities import INDEX_NAME, ROW_NUMBER_NAME
from kernel_tools.diagnosis.id_names import ROW_ID_NAME, looks_like_id_name
from kernel_tools.diagnosis.inputs import check_column, check_frame
from kernel_tools.diagnosis.join_plan import (
    DEFAULT_WINDOW_HOURS,
    ITEM_NAME,
    WINDOWS_HOURS,
    plan_entry,
    plan_finding,
    unit_column,
    window_evidence,
)
from kernel_tools.diagnosis.leakage import ABSOLUTE, feature_scores, strength
from kernel_tools.diagnosis.options import call, drop, keep
from kernel_tools.diagnosis.registry import KindData, declare
from kernel_tools.diagnosis.scoring import fold_ids, metric_name, stratified_sample
from kernel_tools.diagnosis.task import infer_task
from kernel_tools.findings import Diagnosis, Finding, Option
from kernel_tools.frames import to_pandas
from kernel_tools.inferences import Alternative, Inference
from kernel_tools.vocabulary import Basis, Confidence, FindingKind, Gate, InferenceKind, TaskKind, metric_words

MAX_KEY_VALUES = 200_000


def _key_values(s: pd.Series) -> pd.Series:
    return s.dropna().astype(str).str.strip()


def _not_a_key(name: str, s: pd.Series) -> str | None:
    """Why a column cannot join two files: a row label (R's row names, a saved index) numbers the
    rows of one file only; a number with decimals is a measurement, equal across files by chance."""
    if INDEX_NAME.search(str(name).strip()):
        return "a row label: it numbers the rows of one file, not a subject"
    if ROW_ID_NAME.search(str(name).strip()):
        return "named as a row's number: each file numbers its own rows, so equal values are not one subject"
    if ROW_NUMBER_NAME.search(str(name).strip()) and _running_number(s):
        return "a running number (named as one, distinct whole numbers from 1): it numbers the rows of one file"
    if pd.api.types.is_float_dtype(s.dtype):
        v = s.dropna().to_numpy()
        if v.size and not np.array_equal(v, np.round(v)):
            return "a measurement (numbers with decimals)"
    return None


def _running_number(s: pd.Series) -> bool:
    """Whole numbers rising with the rows from 0 or 1 with almost no gaps: the rows counted off (a
    subject's number in another order than the rows' is a code a second file can share)."""
    v = pd.to_numeric(s, errors="coerce").dropna().to_numpy()
    if v.size < 3 or not np.array_equal(v, np.round(v)) or not np.all(np.diff(v) > 0):
        return False
    return v[0] in (0, 1) and v[-1] - v[0] + 1 <= 1.05 * v.size


def _too_few(name: Any, distinct: np.ndarray, values: pd.Series) -> bool:
    """A handful of levels (a sex, a centre) is no key; an id repeating over many records is."""
    return len(distinct) < 2 or (len(distinct) < 0.05 * len(values) and not looks_like_id_name(str(name)))


def key_candidates(a: pd.DataFrame, b: pd.DataFrame) -> list[dict]:
    """Column pairs whose values overlap enough to join on, best first: named as an id, the
    same name on both sides, unique on one side (one row per subject), then the match rates.
    Row labels and measurements are never keys."""
    out: list[dict[str, Any]] = []
    for ca in a.columns:
        if _not_a_key(ca, a[ca]):
            continue
        va = _key_values(a[ca])
        ua = pd.unique(va.to_numpy())
        if _too_few(ca, ua, va):
            continue
        for cb in b.columns:
            if _not_a_key(cb, b[cb]):
                continue
            if str(ca).lower() != str(cb).lower():
                # two different names: only ids of the same kind (a count of days equals a
                # follow-up time by chance)
                if a[ca].dtype.kind != b[cb].dtype.kind or not (looks_like_id_name(str(ca)) or looks_like_id_name(str(cb))):
                    continue
            vb = _key_values(b[cb])
            ub = pd.unique(vb.to_numpy())
            if _too_few(cb, ub, vb):
                continue
            a_in_b = pd.Series(va.isin(ub)).mean()
            b_in_a = pd.Series(vb.isin(ua)).mean()
            if max(a_in_b, b_in_a) < 0.5 and ca != cb:
                continue
            right_counts = vb.value_counts()
            per_left = va.map(right_counts).fillna(0)
            rows_after = int(np.maximum(per_left, 1).sum()) + int(a[ca].isna().sum())
            out.append({
                "left": str(ca), "right": str(cb),
                "unique_left": bool(va.is_unique), "unique_right": bool(vb.is_unique),
                "match_rate_left": round(float(a_in_b), 4), "match_rate_right": round(float(b_in_a), 4),
                "rows_left": len(a), "rows_after_left_join": rows_after,
                "join_duplicates_rows": rows_after > len(a),
                "relationship": ("1" if va.is_unique else "n") + ":" + ("1" if vb.is_unique else "n"),
                "named_as_id": bool(looks_like_id_name(str(ca)) or looks_like_id_name(str(cb))),
            })
    out.sort(key=lambda d: (-d["named_as_id"], -(d["left"] == d["right"]), -(d["unique_left"] or d["unique_right"]),
                            -(d["match_rate_left"] + d["match_rate_right"]), -(d["unique_left"] + d["unique_right"])))
    return out


def key_inference(left: str, right: str, cands: list[dict]) -> Inference:
    """The join key of two frames and how sure it is: high when it is named as an id, unique
    on one side and matches most rows, and no other candidate is as good."""
    best = cands[0]
    key = best["left"] if best["left"] == best["right"] else f"{best['left']}={best['right']}"
    evidence = [f"{best['match_rate_left']:.0%} of '{left}' rows and {best['match_rate_right']:.0%} of '{right}' "
                f"rows match on it ({best['relationship']})"]
    if best["named_as_id"]:
        evidence.append("named as an id")
    # one file may cover a subset of the other's subjects (labs only of the randomised patients)
    matched = max(best["match_rate_left"], best["match_rate_right"]) >= 0.9
    clear = best["named_as_id"] and (best["unique_left"] or best["unique_right"]) and matched
    rivals = [c for c in cands[1:] if c["named_as_id"] and (c["unique_left"] or c["unique_right"])]
    if rivals:
        evidence.append(f"'{rivals[0]['left']}' is also named as an id and unique on one side")
    alternatives = [Alternative(c["left"] if c["left"] == c["right"] else f"{c['left']}={c['right']}",
                                [f"{c['match_rate_left']:.0%} of '{left}' rows match ({c['relationship']})"
                                 + (", named as an id" if c["named_as_id"] else "")],
                                c["match_rate_left"] + c["named_as_id"]) for c in cands[1:5]]
    return Inference(InferenceKind.JOIN_KEY, key, Confidence.HIGH if clear and not rivals else Confidence.LOW,
                     evidence, alternatives, subject=f"{left}+{right}")


RECORD_TIME = re.compile(r"(^|[_\W])(day|days|time|visit|week|weeks|month|months|year|years|date|t)([_\W]|$)|^(day|"
                         r"days|time|visit|month|week)|[a-z](time|date)$", re.IGNORECASE)
# each entity's own start in the one-row-per-entity frame: clock-time records count from it
ANCHOR_NAME = re.compile(r"(^|[_\W])in_?(time|date)|admi\w*_?(time|date)|admittime|intime|enrol\w*_?(time|date)|"
                         r"(entry|start)_?(time|date)", re.IGNORECASE)
UNIT_NAME = re.compile(r"unit|uom", re.IGNORECASE)


def _clock(s: pd.Series) -> bool:
    """Dates or clock times, stored as such or written as text."""
    if pd.api.types.is_datetime64_any_dtype(s):
        return True
    if s.dtype != object:
        return False
    sample = s.dropna().head(200)
    return bool(len(sample)) and pd.to_datetime(sample, errors="coerce", format="mixed").notna().mean() > 0.9


def _long_columns(b: pd.DataFrame, skip: tuple) -> tuple[str | None, str | None]:
    """A long table's test column (text or a code named as an item, never a unit) and its one
    numeric value column."""
    tests = [c for c in b.columns if c not in skip and 2 <= b[c].nunique() <= 50 and not UNIT_NAME.search(str(c))
             and (b[c].dtype == object or (pd.api.types.is_integer_dtype(b[c]) and ITEM_NAME.search(str(c))))]
    tests.sort(key=lambda c: not ITEM_NAME.search(str(c)))
    # a float with decimals is a measurement whatever its name ('result_num' names a number, not an id)
    numbers = [c for c in b.columns if c not in skip and pd.api.types.is_float_dtype(b[c])
               and (not looks_like_id_name(str(c)) or _not_a_key(c, b[c]) is not None)]
    if tests and len(numbers) == 1:
        return tests[0], numbers[0]
    return None, None


def records_over_time(b: pd.DataFrame, key: str, a: pd.DataFrame | None = None) -> dict | None:
    """Whether ``b`` holds several records per ``key`` over time (long-format labs or visits):
    the time column that orders them, and in long format the test and value columns. Clock
    times count from an admission-like column of ``a`` (``anchor``), when it has one."""
    counts = b[key].value_counts()
    if counts.empty or counts.max() < 2:
        return None
    times = [c for c in b.columns if c != key and RECORD_TIME.search(str(c)) and (
        pd.api.types.is_numeric_dtype(b[c]) or _clock(b[c])) and not INDEX_NAME.search(str(c))]
    if not times:
        return None
    multi = b[b[key].isin(counts.index[counts > 1])]
    varying = [t for t in times if multi.groupby(key, sort=False)[t].nunique().mean() > 1]
    if not varying:
        return None
    anchor = _anchor(a if a is not None else pd.DataFrame())
    clock = _clock(b[varying[0]])
    test, value = _long_columns(b, (key, *varying))
    return {"time": varying[0], "records_per_key_mean": round(float(counts.mean()), 2), "key": test,
            "value": value, "anchor": anchor if clock else None}


def _anchor(a: pd.DataFrame) -> str | None:
    """Each entity's own start in a one-row-per-entity frame (an admission time), stamped as a clock time."""
    return next((str(c) for c in a.columns if ANCHOR_NAME.search(str(c)) and _clock(a[c])), None)


def _leaks_through_join(frames, left, right, key, target, seed) -> list[Finding]:
    """Score the right frame's columns against the left frame's target once joined."""
    a, b = frames[left], frames[right]
    extra = [c for c in b.columns if c != key["right"] and c not in a.columns]
    if not extra:
        return []
    right_first = b.drop_duplicates(subset=[key["right"]]).set_index(key["right"])[extra]
    keys = a[key["left"]]
    joined = pd.concat([a[[target]].reset_index(drop=True),
                        right_first.reindex(keys.to_numpy()).reset_index(drop=True)], axis=1)
    profiles = profile_columns(joined)
    outcome = infer_task(joined, profiles, target, None, None)
    assert outcome.valid is not None and outcome.y is not None  # a target was given
    valid_pos = np.flatnonzero(outcome.valid)
    strata = outcome.y[valid_pos] if outcome.kind == TaskKind.CLASSIFICATION else None
    pos = valid_pos[stratified_sample(len(valid_pos), 10_000, strata, seed)]
    sub = outcome.take(pos)
    folds = fold_ids(len(pos), sub.y if strata is not None else None, seed)
    usable = [c for c in extra if profiles[c].kind != "empty" and profiles[c].nunique > 1]
    scores = feature_scores(joined.iloc[pos], profiles, usable, sub, folds)
    metric = metric_name(outcome.kind)
    findings = []
    for c, s in scores.items():
        if strength(s, outcome.kind) >= ABSOLUTE:
            findings.append(Finding(
                "target_leakage", [c], "critical",
                f"'{c}' from frame '{right}' gives '{target}' away once joined on '{key['left']}' "
                f"({metric_words(metric)} {s:.3f} on its own): it must not be joined in as a feature.",
                {"metric": metric, "score": round(s, 4), "frame": right, "joined_on": key["left"],
                 "sample_size": len(pos)},
                [drop([c], "target leaked through a join", "none if it is recorded after the outcome"),
                 keep("Join it in as a feature.", "the model learns the answer, not the problem")],
                "leakage",
            ))
    return findings


declare(FindingKind.JOIN_KEYS, KindData(chart=None, basis=Basis.SAMPLE))


def diagnose_join(frames: dict[str, pd.DataFrame], target: str | None = None,
                  random_state: int = 0) -> Diagnosis:
    """Join keys between several frames (and leakage through a join when ``target`` is given).

    ``frames`` maps a name (e.g. the notebook variable) to its DataFrame; ``target`` is the
    outcome column of whichever frame holds it.
    """
    started = _time.perf_counter()
    if not isinstance(frames, dict) or len(frames) < 2:
        raise TypeError("frames must be a dict of at least two named DataFrames")
    frames = {name: to_pandas(df, str(name)) for name, df in frames.items()}  # polars too: converted once
    for name, df in frames.items():
        check_frame(df, str(name))
    holders = [name for name, df in frames.items() if target is not None and target in df.columns]
    if target is not None and not holders:
        check_column(next(iter(frames.values())), target, "target")
    findings = []
    inferences: list[Inference] = []
    entries: list[dict] = []
    # three files or more around the one holding the target: one plan for all of them (a pair of
    # files keeps its own finding, with the other keys as options)
    planned = len(holders) == 1 and len(frames) > 2
    for left, right in itertools.permutations(frames, 2):
        if holders and left not in holders:
            continue
        if not holders and list(frames).index(left) > list(frames).index(right):
            continue
        cands = key_candidates(frames[left], frames[right])
        if planned:
            entries.append(plan_entry(frames, left, right, cands, records_over_time))
        if not cands:
            continue
        key = key_inference(left, right, cands)
        inferences.append(key)
        if not planned:
            findings.append(_join_finding(frames, left, right, cands))
            # an uncertain key is a question at the join, with its alternatives; so is the window
            # of records stamped with clock times (no question for records counted from the index)
            if not key.settled or (findings[-1].evidence.get("records") or {}).get("anchor"):
                findings[-1].gate = Gate.JOIN
        if target is not None and left in holders:
            findings += _leaks_through_join(frames, left, right, cands[0], target, random_state)
    if planned:
        left = holders[0]
        plan = plan_finding(frames, left, entries, _anchor(frames[left]))
        # an uncertain key, or a window over clock times, is the expert's to decide
        joined = {f"{left}+{e['frame']}" for e in entries if "why" not in e}
        unsure = any(not i.settled for i in inferences if i.subject in joined)
        if unsure or plan.evidence.get("window_hours"):
            plan.gate = Gate.JOIN
        findings.insert(0, plan)
    task = {"kind": None, "target": target, "time": None, "event": None, "id": None, "visit": None,
            "reason": "join diagnosis of several frames"}
    shape = [sum(len(df) for df in frames.values()), sum(df.shape[1] for df in frames.values())]
    return Diagnosis(findings, task, shape, round(_time.perf_counter() - started, 3), 0,
                     {"frames": {k: list(v.shape) for k, v in frames.items()}}, inferences)


def _other_keys(left: str, right: str, cands: list[dict]) -> list[Option]:
    """A left join on each runner-up key of the same name on both sides (an uncertain key is
    asked with its alternatives), ranked as the candidates are."""
    return [Option(f"join_left_on_{c['left']}", f"Left-join {right} on '{c['left']}'",
                   f"Add the columns of '{right}' to '{left}' by '{c['left']}' instead "
                   f"({c['match_rate_left']:.0%} of '{left}' rows match).",
                   "duplicates rows when the key repeats on the right" if c["join_duplicates_rows"] else
                   "unmatched rows get missing values", False,
                   call("join_frames", right=right, on=c["left"], how="left",
                        allow_duplicates=c["join_duplicates_rows"]))
            for c in cands[1:3] if c["left"] == c["right"] and c["named_as_id"]]


def _summarise_options(frames: dict[str, pd.DataFrame], left: str, right: str, key: str, records: dict,
                       recommended: bool) -> list[Option]:
    """Summarise the records up to the index, then join: day 0 of a time counted from the index;
    for clock times the first hours after the entity's own anchor (an admission time), the window
    the expert's choice (6, 24 or 48 h, 24 recommended), each with how many entities it sees."""
    anchor, time = records.get("anchor"), records["time"]
    pivot = f", a column per '{records['key']}'" if records["key"] else ""
    units = {"unit_column": u} if (u := unit_column(frames[right], records)) else {}
    if not anchor:
        said = f"One row per '{key}' from its records with '{time}' <= 0 (the index){pivot}, then a left join."
        return [Option("summarize_then_join", f"Summarise {right} up to the index, then join", said,
                       "assumes '" + time + "' counts from the index (day 0)", recommended,
                       call("summarize_records", records=right, id=key, time=time, until=0, key=records["key"],
                            value=records["value"], **units))]
    seen = window_evidence(frames[left], frames[right], key, records)
    options = []
    for w in WINDOWS_HOURS:
        n, median = seen[w]
        options.append(Option(
            "summarize_then_join" + ("" if w == DEFAULT_WINDOW_HOURS else f"_{w}h"),
            f"Summarise {right} over the first {w} h, then join",
            f"One row per '{key}' from its records with '{time}' within {w} h after its '{anchor}'{pivot}, then a "
            f"left join: {n:,} of {len(frames[left]):,} '{left}' rows have records in it (median {median:g}).",
            f"the prediction is made {w} h after '{anchor}': a longer window sees more but predicts later",
            recommended and w == DEFAULT_WINDOW_HOURS,
            call("summarize_records", records=right, id=key, time=time, until=w, key=records["key"],
                 value=records["value"], **units, index="left", anchor=anchor, unit="h")))
    return options


def _join_finding(frames: dict[str, pd.DataFrame], left: str, right: str, cands: list[dict]) -> Finding:
    """The join_keys finding of two frames: the best key, and for records over time (several
    per key, ordered by a time), that only those up to the index may become features."""
    best = cands[0]
    ev = {"left_frame": left, "right_frame": right, "best": best, "candidates": cands[:5]}
    dup = best["join_duplicates_rows"]
    records = records_over_time(frames[right], best["right"], frames[left]) if not best["unique_right"] else None
    summary = (f"'{left}' and '{right}' can be joined on '{best['left']}'"
               + (f" = '{best['right']}'" if best["right"] != best["left"] else "")
               + f" ({best['match_rate_left']:.0%} of '{left}' rows match"
               + (f"; the join would grow {best['rows_left']} rows to {best['rows_after_left_join']}"
                  if dup else "") + ").")
    same_name = best["left"] == best["right"]
    options = [
        Option("join_left", f"Left-join {right}", f"Add the columns of '{right}' to '{left}' "
               f"by '{best['left']}', keeping every row of '{left}'"
               + ("" if same_name else f" (rename '{best['right']}' to '{best['left']}' first)") + ".",
               "duplicates rows when the key repeats on the right" if dup else
               "unmatched rows get missing values", True,
               # the frame is the first argument (here: the frame named `left`); `right`
               # names the other frame's variable
               call("join_frames", right=right, on=best["left"], how="left", allow_duplicates=dup)
               if same_name else None),
        *_other_keys(left, right, cands),
        keep("Do not join.", "loses whatever the other frame adds", label="Keep separate"),
    ]
    if records is not None:
        ev["records"] = records
        summary += (f" '{right}' holds {records['records_per_key_mean']:g} records per '{best['right']}' over "
                    f"'{records['time']}': those after the index are follow-up, so only the records up to it, "
                    "summarised per subject, may become features."
                    + (f" How long after '{records['anchor']}' the prediction is made is the expert's choice "
                       f"(default the first {DEFAULT_WINDOW_HOURS} h after admission)." if records.get("anchor")
                       else ""))
        # joined as they are, the records multiply the rows (a 3,500-row cohort became 84,000) and
        # bring the follow-up in: summarising them first is what is recommended
        summarise = same_name
        if summarise:
            options[0] = dataclasses.replace(options[0], recommended=False)
        options[1:1] = _summarise_options(frames, left, right, best["right"], records, summarise)
    key_columns = [best["left"]] + ([best["right"]] if best["right"] != best["left"] else [])
    return Finding("join_keys", key_columns, "warning" if dup or best["match_rate_left"] < 0.9 or records else "info",
                   summary, ev, options, None)
