"""Multi-state rows: one row per possible transition of each subject out of each state it was in
(mstate's long layout: ``from``, ``to``, a transition number, ``Tstart``/``Tstop``, a status).

A subject in a state has a row for every state it could move to, all with the same start and stop,
the status 1 on the one it moved to (at most one). Fitted as they are, each row would count from 0,
the transition columns would be features, and a subject would count once per possible transition:
not a valid survival model. Found from the data (several rows per subject with the same start and
different ``to``, the status 1 on at most one of them, a ``from`` constant among them and never the
``to``), the names only said as evidence. The readings (one transition's time as survival, the
first transition out of the starting state whichever it is, the rows with their start for a
multi-state model) are the expert's: the task card asks.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.columns import ColumnProfile
from kernel_tools.diagnosis.intervals import _entity_like
from kernel_tools.time_names import DURATION_NAME

MIN_ROWS = 20
MAX_STATES = 12
MAX_SUBJECTS = 2000  # the layout is read on the rows of at most this many subjects
MIN_SHARED = 0.3  # of rows in a group of several rows of one subject with one start
AGREE = 0.95  # of such groups that must show the layout
STATE_NAME = re.compile(r"(^|[_\W])(from|to|state|trans|transition|von|nach|de|vers|desde|hasta)([_\W]|$)", re.I)


def _codes(s: pd.Series) -> np.ndarray | None:
    if s.isna().any():
        return None
    return pd.factorize(s)[0]


def find_multistate(df: pd.DataFrame, profiles: dict[str, ColumnProfile], target: str) -> dict[str, Any] | None:
    """The multi-state layout of the rows (see the module), or None: the columns of the subject,
    the start and stop, the state left (``from``) and entered (``to``), the transition number, the
    starting state, the transitions out of it, and the evidence in words."""
    if len(df) < MIN_ROWS or target not in df.columns:
        return None
    status = pd.to_numeric(df[target], errors="coerce")
    if status.isna().any() or not set(np.unique(status)) <= {0, 1}:
        return None
    columns = [c for c in profiles if c != target and c in df.columns]
    ids = [c for c in columns if _entity_like(df[c], profiles[c])]
    states = [
        c
        for c in columns
        if profiles[c].nunique <= MAX_STATES and 2 <= profiles[c].nunique and profiles[c].missing_rate == 0
    ]
    times = [c for c in columns if profiles[c].kind == "numeric" and profiles[c].missing_rate == 0 and c not in ids]
    if not ids or len(states) < 2 or len(times) < 2:
        return None
    # the states left and entered first: a pair never equal on a row, the states left (but the
    # starting one) among those entered; most tables have none, and stop here
    head = df.head(5000)
    text = {c: head[c].astype(str).to_numpy() for c in states}
    left = {c: set(text[c]) - {pd.Series(text[c]).mode().iloc[0]} for c in states}  # but the starting state
    entered = {c: set(text[c]) for c in states}
    pairs = [
        (f, t)
        for f in states
        for t in states
        if f != t and left[f] and left[f] <= entered[t] and _apart(text[f], text[t])
    ]
    if not pairs:
        return None
    event = status.to_numpy()
    for subject in ids[:5]:
        found = _layout(df, subject, pairs, times, event)
        if found is not None:
            return found
    return None


def _apart(a: np.ndarray, b: np.ndarray) -> bool:
    """Never (on 99% of rows) the same state: screened on the first rows, then on all."""
    return bool(np.mean(a[:200] != b[:200]) >= 0.99 and np.mean(a != b) >= 0.99)


def _subject_rows(df: pd.DataFrame, subject: str) -> np.ndarray:
    codes = pd.factorize(df[subject])[0]
    if codes.max() + 1 <= MAX_SUBJECTS:
        return np.arange(len(df))
    return np.flatnonzero(codes < MAX_SUBJECTS)  # the first subjects met, every row of each


def _layout(
    df: pd.DataFrame, subject: str, pairs: list[tuple[str, str]], times: list[str], event: np.ndarray
) -> dict | None:
    rows = _subject_rows(df, subject)
    sub = df.iloc[rows]
    ev = event[rows]
    who = pd.factorize(sub[subject])[0]
    states = sorted({c for pair in pairs for c in pair})
    for start in times:
        if start in states or sub[start].nunique() <= 2:
            continue
        s = pd.to_numeric(sub[start], errors="coerce").to_numpy()
        group = pd.factorize(pd.Series(list(zip(who, s))))[0]
        sizes = np.bincount(group)
        shared = sizes[group] >= 2
        if shared.mean() < MIN_SHARED:
            continue
        many = np.flatnonzero(sizes >= 2)
        # the status is 1 on at most one row of a group
        if np.mean(np.bincount(group, weights=ev)[many] <= 1) < AGREE:
            continue
        for frm, to in pairs:
            t = _codes(sub[to])
            if t is None or _distinct_share(group, t, many) < AGREE:
                continue
            if _constant_share(group, _codes(sub[frm]), many) < AGREE:
                continue
            stop = next(
                (
                    c
                    for c in times
                    if c not in (start, to, frm)
                    and _constant_share(group, pd.factorize(sub[c])[0], many) >= AGREE
                    and (pd.to_numeric(sub[c], errors="coerce") >= s).mean() >= 0.99
                    and (pd.to_numeric(sub[c], errors="coerce") > s).mean() >= 0.5
                    and _chained(who, s, pd.to_numeric(sub[c], errors="coerce").to_numpy(), c)
                ),
                None,
            )
            if stop is None:
                continue
            others = [c for c in df.columns if c not in (subject, start, stop, frm, to)]
            return _found(df, subject, start, stop, frm, to, others, shared.mean())
    return None


def _distinct_share(group: np.ndarray, values: np.ndarray, many: np.ndarray) -> float:
    """Of the groups of several rows, the share whose ``values`` all differ."""
    pairs = pd.DataFrame({"g": group, "v": values})
    distinct = pairs.groupby("g")["v"].nunique().to_numpy()
    sizes = np.bincount(group)
    return float(np.mean(distinct[many] == sizes[many]))


def _constant_share(group: np.ndarray, values: np.ndarray | None, many: np.ndarray) -> float:
    if values is None:
        return 0.0
    distinct = pd.DataFrame({"g": group, "v": values}).groupby("g")["v"].nunique().to_numpy()
    return float(np.mean(distinct[many] == 1))


def _entered(frm: pd.Series, to: pd.Series) -> bool:
    """Whether the states left are, but for the starting one, states entered before."""
    left = set(frm.astype(str)) - {str(frm.mode().iloc[0])}
    return bool(left) and left <= set(to.astype(str))


STOP_NAME = re.compile(r"stop|exit|end|ende|fin|sortie|salida", re.IGNORECASE)


def _chained(who: np.ndarray, start: np.ndarray, stop: np.ndarray, name: str) -> bool:
    """Whether ``stop`` ends the time in a state: each later start of a subject is one of its
    stops (the moment it entered the state); with no later start, the name must say a stop."""
    first = pd.Series(start).groupby(who).transform("min").to_numpy()
    later = np.flatnonzero(start > first)
    if not len(later):
        return bool(DURATION_NAME.search(name) or STOP_NAME.search(name))
    stops = set(zip(who.tolist(), np.round(stop, 9).tolist()))
    return float(np.mean([(w, round(float(t), 9)) in stops for w, t in zip(who[later], start[later])])) >= 0.9


def _never_equal(a: pd.Series, b: pd.Series) -> bool:
    return bool((a.astype(str).to_numpy() != b.astype(str).to_numpy()).mean() >= 0.99)


def _found(
    df: pd.DataFrame, subject: str, start: str, stop: str, frm: str, to: str, others: list[str], shared: float
) -> dict[str, Any]:
    begin = df.groupby(subject, sort=False)[start].transform("min") == df[start]
    first_state = df.loc[begin, frm].mode()
    initial = first_state.iloc[0] if len(first_state) else df[frm].iloc[0]
    out_of = sorted(df.loc[df[frm] == initial, to].unique().tolist(), key=str)
    pairs = df[[frm, to]].astype(str).agg("->".join, axis=1)
    trans = next(
        (
            c
            for c in others
            if df[c].nunique() <= 2 * MAX_STATES**2
            and pd.crosstab(pairs, df[c].astype(str)).gt(0).sum(axis=1).le(1).all()
            and df[c].nunique() == pairs.nunique()
        ),
        None,
    )
    elapsed = df[stop] - df[start]
    durations = [
        c
        for c in df.columns
        if c not in (start, stop)
        and pd.api.types.is_numeric_dtype(df[c])
        and np.allclose(df[c].to_numpy(dtype=float), elapsed.to_numpy(dtype=float), equal_nan=True)
    ]
    n_subjects = int(df[subject].nunique())
    named = [c for c in (frm, to, trans) if c and STATE_NAME.search(str(c))]
    reason = (
        f"multi-state rows: each '{subject}' has a row per possible transition out of each state it was in "
        f"({shared:.0%} of rows share their '{subject}' and '{start}' with another row, differ in '{to}', "
        f"the event on at most one of them; '{frm}' the state left, '{to}' the state entered, ('{start}', "
        f"'{stop}'] the time in it)" + (f"; named so: {', '.join(map(repr, named))}" if named else "")
    )
    return {
        "id": subject,
        "start": start,
        "stop": stop,
        "from": frm,
        "to": to,
        "trans": trans,
        "initial": _plain(initial),
        "out_of_initial": [_plain(v) for v in out_of],
        "durations": durations,
        "subjects": n_subjects,
        "reason": reason,
    }


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value
