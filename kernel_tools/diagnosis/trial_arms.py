"""Measures a trial records in one arm only: taken after randomisation, not at baseline.

Randomisation balances what was known before it across the arms; what the treatment itself
brings — whether a participant complied, the sessions attended, the dose received — exists only
in the arm that got it: one value (or missing) on every row of the other arm, and varying in its
own. Another column can be constant in one group too (pregnant on the men's rows), so both names
must say it: the arm named as an assigned treatment, the measure named as what was received.
Evidence for a proposal an expert confirms, never a decision.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.columns import ColumnProfile, category_codes

ARM_NAME = re.compile(r"^(treat|treated|treatment|trt|tx|rx|arm|assign\w*|random\w*|allocat\w*|interven\w*)$",
                      re.IGNORECASE)
RECEIVED_NAME = re.compile(r"compl(y|ied|iance|iant)|adher\w*|dose|doses|received|took|taken|attend\w*|"
                           r"particip\w*|sessions?|uptake|exposure|completed", re.IGNORECASE)
MIN_ARM_ROWS = 20
MIN_OTHER = 0.05  # the measure takes another value on at least this share of its own arm's rows


def arms(frame: pd.DataFrame, profiles: dict[str, ColumnProfile], features: list[str]) -> list[str]:
    """Features named as an assigned treatment with two values, both on enough rows."""
    out = []
    for c in features:
        if ARM_NAME.match(c.strip()) and profiles[c].nunique == 2:
            codes = category_codes(frame[c])
            if min((codes == 0).sum(), (codes == 1).sum()) >= MIN_ARM_ROWS:
                out.append(c)
    return out


def one_arm_measures(frame: pd.DataFrame, profiles: dict[str, ColumnProfile],
                     features: list[str]) -> dict[str, dict]:
    """Features named as received that are constant (or missing) in one arm and vary in the other:
    per column, the arm column, the arm it is constant in, and its value there."""
    out: dict[str, dict] = {}
    for arm in arms(frame, profiles, features):
        codes = category_codes(frame[arm])
        for c in features:
            if c == arm or c in out or not RECEIVED_NAME.search(c):
                continue
            values = frame[c].astype(object)
            for k in (0, 1):
                held = values[codes == k].dropna().unique()
                own = values[codes == 1 - k].dropna()
                if len(held) > 1 or own.empty or own.nunique() < 2:
                    continue
                other = float(np.mean(own.to_numpy() != held[0])) if len(held) else 1.0
                if other >= MIN_OTHER:
                    out[c] = {"arm": arm, "arm_value": _plain(frame[arm][codes == k].iloc[0]),
                              "value_there": _plain(held[0]) if len(held) else None,
                              "share_other_in_own_arm": round(other, 4)}
                    break
    return out


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value
