"""Several frames: candidate join keys, match rates, whether a join would duplicate rows, and
whether an auxiliary frame gives the target away once joined."""

from __future__ import annotations

import itertools
import time as _time
from typing import Any

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.columns import profile_columns
from kernel_tools.diagnosis.inputs import check_column, check_frame
from kernel_tools.diagnosis.leakage import ABSOLUTE, feature_scores, strength
from kernel_tools.diagnosis.options import call, drop, keep
from kernel_tools.diagnosis.scoring import fold_ids, metric_name, stratified_sample
from kernel_tools.diagnosis.task import infer_task
from kernel_tools.findings import Diagnosis, Finding, Option
from kernel_tools.frames import to_pandas

MAX_KEY_VALUES = 200_000


def _key_values(s: pd.Series) -> pd.Series:
    return s.dropna().astype(str).str.strip()


def key_candidates(a: pd.DataFrame, b: pd.DataFrame) -> list[dict]:
    """Column pairs whose values overlap enough to join on, best first."""
    out: list[dict[str, Any]] = []
    for ca in a.columns:
        va = _key_values(a[ca])
        ua = pd.unique(va.to_numpy())
        if len(ua) < 2 or len(ua) < 0.05 * len(va):
            continue
        for cb in b.columns:
            if ca != cb and not (str(ca).lower() == str(cb).lower()):
                if a[ca].dtype.kind != b[cb].dtype.kind:
                    continue
            vb = _key_values(b[cb])
            ub = pd.unique(vb.to_numpy())
            if len(ub) < 2 or len(ub) < 0.05 * len(vb):
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
            })
    out.sort(key=lambda d: (-(d["left"] == d["right"]), -(d["match_rate_left"] + d["match_rate_right"]),
                            -(d["unique_left"] + d["unique_right"])))
    return out


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
    strata = outcome.y[valid_pos] if outcome.kind == "classification" else None
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
                f"({metric} {s:.3f} on its own): it must not be joined in as a feature.",
                {"metric": metric, "score": round(s, 4), "frame": right, "joined_on": key["left"],
                 "sample_size": len(pos)},
                [drop([c], "target leaked through a join", "none if it is recorded after the outcome"),
                 keep("Join it in as a feature.", "the model learns the answer, not the problem")],
                "leakage",
            ))
    return findings


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
    for left, right in itertools.permutations(frames, 2):
        if holders and left not in holders:
            continue
        if not holders and list(frames).index(left) > list(frames).index(right):
            continue
        cands = key_candidates(frames[left], frames[right])
        if not cands:
            continue
        best = cands[0]
        ev = {"left_frame": left, "right_frame": right, "best": best, "candidates": cands[:5]}
        dup = best["join_duplicates_rows"]
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
            keep("Do not join.", "loses whatever the other frame adds", label="Keep separate"),
        ]
        key_columns = [best["left"]] + ([best["right"]] if best["right"] != best["left"] else [])
        findings.append(Finding("join_keys", key_columns,
                                "warning" if dup or best["match_rate_left"] < 0.9 else "info",
                                summary, ev, options, None))
        if target is not None and left in holders:
            findings += _leaks_through_join(frames, left, right, best, target, random_state)
    task = {"kind": None, "target": target, "time": None, "event": None, "id": None, "visit": None,
            "reason": "join diagnosis of several frames"}
    shape = [sum(len(df) for df in frames.values()), sum(df.shape[1] for df in frames.values())]
    return Diagnosis(findings, task, shape, round(_time.perf_counter() - started, 3), 0,
                     {"frames": {k: list(v.shape) for k, v in frames.items()}})
