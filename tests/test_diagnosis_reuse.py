"""A re-diagnosis after columns were dropped keeps the surviving columns' own results (profiles,
single-feature scores) and gives exactly the findings a full diagnosis gives (issue 31)."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from kernel_tools.diagnosis import reuse

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

from _frames import mixed_frame  # noqa: E402
from bench_scale import make_tables  # noqa: E402
from dev_tables import dev_rdataset  # noqa: E402

# 20 columns: every column kind of mixed_frame and the same five kinds of findings as at its default
# 40, at a quarter of a diagnosis's CPU (0.4 against 1.7 s on 3,000 rows)
COLUMNS = 20


def _as_json(diagnosis) -> str:
    data = diagnosis.to_dict()
    data.pop("elapsed_s", None)  # the only field that may differ: the time taken
    return json.dumps(data, default=str, sort_keys=True)


def _incremental_and_full(before: pd.DataFrame, after: pd.DataFrame, **hints) -> tuple[str, str, int]:
    """The diagnosis of ``after`` following one of ``before``, that of ``after`` from scratch, and
    how many column results the first reused."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reuse.forget()
        kt.diagnose(before, **hints)
        incremental = kt.diagnose(after, **hints)
        reused = reuse.reused_last()
        reuse.forget()
        full = kt.diagnose(after, **hints)
    return _as_json(incremental), _as_json(full), reused


@pytest.mark.parametrize("drop", [["num_03", "cat_01"], ["customer_id"], ["signup_date", "flag_a", "count_00"]])
def test_dropping_columns_gives_the_findings_of_a_full_diagnosis(drop):
    df = mixed_frame(3000, COLUMNS)
    drop = [c for c in drop if c in df.columns] or list(df.columns[2:5])
    incremental, full, reused = _incremental_and_full(df, df.drop(columns=drop), target="y")
    assert incremental == full
    # every surviving column's profile, and each feature's score, came from the last diagnosis
    assert reused >= df.shape[1] - len(drop)


def test_a_column_changed_in_place_is_checked_afresh():
    df = mixed_frame(2000, COLUMNS)
    changed = df.drop(columns=[df.columns[1]])
    column = next(c for c in changed.columns if pd.api.types.is_float_dtype(changed[c]))
    changed[column] = changed[column] * 1000 + 7  # same name, new values
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reuse.forget()
        kt.diagnose(df, target="y")
        incremental = _as_json(kt.diagnose(changed, target="y"))
        # read before the full diagnosis below: the results kept after the incremental one
        profiles_kept = [k[1] for k in reuse._last if k[0] == "profile"]
        reuse.forget()
        full = _as_json(kt.diagnose(changed, target="y"))
    assert incremental == full
    assert column in profiles_kept  # kept under its new fingerprint: the old one is gone
    assert profiles_kept.count(column) == 1


def test_true_and_one_are_not_the_same_column():
    ones = pd.Series([1, 0, 1, None] * 5, dtype=object)
    flags = pd.Series([True, False, True, None] * 5, dtype=object)
    assert reuse.fingerprint(ones) != reuse.fingerprint(flags)
    assert reuse.fingerprint(ones) == reuse.fingerprint(ones.copy())
    assert reuse.fingerprint(pd.Series([[1], [2]])) is None  # unhashable cells: never reused

    class Odd:
        def __str__(self):
            raise RuntimeError("no text for this value")

    assert reuse.fingerprint(pd.Series([Odd()] * 3)) is None


def test_other_rows_reuse_nothing():
    df = mixed_frame(2000, COLUMNS)
    incremental, full, reused = _incremental_and_full(df, df.iloc[:1500].drop(columns=["cat_01"]), target="y")
    assert incremental == full and reused == 0



@pytest.mark.parametrize("package, item, hints, drop", [
    ("survival", "mgus2", {"target": "death", "time": "futime"}, ["pstat", "ptime"]),
    ("AER", "Affairs", {"target": "affairs"}, ["rownames"]),
])
def test_a_real_development_table_re_diagnosed_after_a_drop(package, item, hints, drop):
    df = dev_rdataset(package, item)
    drop = [c for c in drop if c in df.columns]
    assert drop, f"{package}/{item} has none of the columns to drop"
    incremental, full, reused = _incremental_and_full(df, df.drop(columns=drop), **hints)
    assert incremental == full and reused > 0


def test_the_kept_results_are_copies():
    df = pd.DataFrame({"a": np.arange(100.0), "b": ["x", "y"] * 50, "y": [0, 1] * 50})
    reuse.forget()
    kt.diagnose(df, target="y")
    memo = reuse.Memo(df)
    first = memo.get(memo.key("profile", "a", len(df)), lambda: None)
    first.kind = "changed by a detector"
    again = reuse.Memo(df)
    assert again.get(again.key("profile", "a", len(df)), lambda: None).kind != "changed by a detector"


def test_a_dtype_fix_the_label_model_does_not_read_keeps_its_fit(monkeypatch):
    """The benchmark's table: fixing the text dates (a column the label model leaves out) changes
    neither its matrix nor its labels, so its out-of-fold probabilities are the last diagnosis's;
    the findings are a full diagnosis's, label issues among them."""
    from kernel_tools.diagnosis import labels

    df = make_tables(2000)[0]
    fixed, _ = kt.fix_dtypes(df, columns=["admitted"], na_tokens=[], sentinels={})
    hints = {"target": "outcome", "id": "patient_id", "task": "classification"}
    fits = []
    fit = labels.out_of_fold_probabilities
    monkeypatch.setattr(labels, "out_of_fold_probabilities", lambda *a, **k: fits.append(1) or fit(*a, **k))
    incremental, full, _ = _incremental_and_full(df, fixed, **hints)
    assert incremental == full
    assert "label_issues" in incremental
    assert len(fits) == 2  # the first diagnosis and the one from scratch; the re-diagnosis fitted none


def test_the_label_model_is_fitted_again_when_a_label_changes(monkeypatch):
    from kernel_tools.diagnosis import labels

    df = make_tables(2000)[0]
    flipped = df.copy()
    flipped.loc[flipped.index[:40], "outcome"] = 1 - flipped["outcome"].iloc[:40]
    fits = []
    fit = labels.out_of_fold_probabilities
    monkeypatch.setattr(labels, "out_of_fold_probabilities", lambda *a, **k: fits.append(1) or fit(*a, **k))
    incremental, full, _ = _incremental_and_full(df, flipped, target="outcome", id="patient_id")
    assert incremental == full
    assert len(fits) == 3  # other labels: no diagnosis took another's fit


def test_a_survival_re_diagnosis_after_a_dtype_fix_scores_no_gap_again(monkeypatch):
    """The benchmark's survival table: the gaps' scores (read by the leakage and missing-value
    checks alike) are computed once per indicator, and not again after the dates are fixed."""
    from kernel_tools.diagnosis import scoring

    df = make_tables(2000)[1]
    fixed, _ = kt.fix_dtypes(df, columns=["admitted"], na_tokens=[], sentinels={})
    hints = {"target": "died", "time": "days", "id": "patient_id", "task": "survival"}
    scored: list[bytes] = []
    score = scoring.single_feature_score

    def counted(codes, outcome, folds):
        scored.append(codes.tobytes())
        return score(codes, outcome, folds)

    monkeypatch.setattr(scoring, "single_feature_score", counted)
    incremental, full, _ = _incremental_and_full(df, fixed, **hints)
    assert incremental == full
    gaps = [c for c in scored if set(np.frombuffer(c, dtype=np.int64)) == {0, 1}]
    assert gaps and len(gaps) == 2 * len(set(gaps))  # first diagnosis and the one from scratch, once each


TEXTS = {
    "ties": ["b", "a", "c", "a", "b", None, "c", "d"] * 50 + ["e"],  # counts that tie: pandas' own order
    "missing": [None, np.nan, "x", " x", "X", "y"] * 30,
    "unique ids": [f"C{i:06d}" for i in range(3000)],
    "numbers as objects": [1, 2, 2, 3.5, None] * 20,  # not text: pandas' count (its index dtype inferred)
    "mixed": ["1", 1, True, "a", None] * 20,
    "empty": [None] * 10,
}


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_text_counts_from_the_shared_codes_are_pandas_value_counts(name):
    """The profile counts a text column from the codes its fingerprint and the row hashes also read
    (one hash pass: 0.12 s for a million distinct ids where pandas' own count takes 0.61 s); the
    counts, their order among ties and their index are pandas'."""
    from kernel_tools.diagnosis import columns

    s = pd.Series(np.array(TEXTS[name], dtype=object), name="col")
    got = columns.value_counts(s, columns.factorize_objects(s))
    pd.testing.assert_series_equal(got, s.value_counts(dropna=True))
    shared, own = columns.profile_column("col", s, columns.factorize_objects(s)), columns.profile_column("col", s)
    if own.counts is not None:
        pd.testing.assert_series_equal(shared.counts, own.counts)
    shared.counts = own.counts = None
    assert shared == own


def test_a_text_fingerprint_from_the_codes_tells_every_change():
    """Fingerprints read from the shared codes: equal for equal columns, different for any change of
    one value, of the order, of missing against text, and of text joined differently."""
    from kernel_tools.diagnosis import columns

    def fp(values):
        s = pd.Series(np.array(values, dtype=object))
        return reuse.fingerprint(s, columns.factorize_objects(s))

    base = ["ab", "c", None, "ab", "d"]
    assert fp(base) == fp(list(base))
    changed = [["ab", "c", None, "ab", "e"], ["c", "ab", None, "ab", "d"], ["ab", "c", "None", "ab", "d"],
               ["a", "bc", None, "ab", "d"], ["ab", "c", None, "ab", "d", "d"], ["ab", "c", None, 1, "d"]]
    digests = {fp(v) for v in changed}
    assert fp(base) not in digests and len(digests) == len(changed)
    # the same digest whichever way the codes were found: the memo's and a plain column's
    s = pd.Series(np.array(base, dtype=object))
    assert reuse.Memo(pd.DataFrame({"t": s})).columns["t"] == fp(base)
