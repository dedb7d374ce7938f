"""Joining two frames without silently duplicating or losing rows."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from kernel_tools.diagnosis.entities import INDEX_NAME
from kernel_tools.diagnosis.id_names import ROW_ID_NAME
from kernel_tools.lazy import lazy_aware

from ._base import FrameTransformer, check_choice, check_columns, check_frame
from .report import StepReport

RECORDS_COUNT = "records_before_index"  # summarize_records' count of each entity's records
VALIDATE = ("one_to_one", "one_to_many", "many_to_one", "many_to_many")


class FrameJoiner(FrameTransformer):
    """Left-join a fixed right frame on fixed keys: the same columns reach the test rows.

    New rows are always left-joined (every test row kept, none multiplied), whatever ``how``
    built the training frame.
    """

    def __init__(self, right: pd.DataFrame | None = None, on: Sequence[str] = (), suffix: str = "_right") -> None:
        self.right = right
        self.on = on
        self.suffix = suffix

    def fit(self, X: pd.DataFrame, y: object = None) -> FrameJoiner:
        X = self._remember_input(X)
        keys = check_columns(X, self.on, "key column (left)")
        right = check_frame(self.right, "right")
        check_columns(right, keys, "key column (right)")
        # one row per key: a test row must not be multiplied by the replay
        self.right_ = right.drop_duplicates(subset=keys, keep="first")
        self.keys_ = keys
        self.feature_names_out_ = list(X.merge(self.right_.head(0), on=keys, how="left",
                                                suffixes=("", self.suffix)).columns)
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        X = self._check_transform_input(X, self.keys_)
        out = X.merge(self.right_, on=self.keys_, how="left", suffixes=("", self.suffix))
        out.index = X.index
        return out


@lazy_aware()
def join_frames(
    left: pd.DataFrame,
    right: pd.DataFrame,
    on: str | Sequence[str],
    how: str = "left",
    validate: str | None = None,
    allow_duplicates: bool = False,
    suffix: str = "_right",
) -> tuple[pd.DataFrame, StepReport]:
    """Merge ``right`` into ``left`` on key column(s) and report the match rates.

    A join whose right side repeats a matched key multiplies left rows (a patient table joined
    to a visit table). That is refused unless ``allow_duplicates=True`` or ``validate`` says a
    "to-many" relation is expected. ``validate`` is checked as in ``pandas.merge``.
    """
    check_frame(left, "left")
    check_frame(right, "right")
    check_choice(how, "how", ("left", "inner", "right", "outer"))
    if validate is not None:
        check_choice(validate, "validate", VALIDATE)
    keys = check_columns(left, on, "key column (left)")
    check_columns(right, keys, "key column (right)")
    if not keys:
        raise ValueError("on is empty: name the key column or columns to join on")
    for key in keys:
        lk, rk = left[key].dtype, right[key].dtype
        if pd.api.types.is_numeric_dtype(lk) != pd.api.types.is_numeric_dtype(rk):
            raise TypeError(
                f"key {key!r} is {lk} on the left but {rk} on the right; "
                "convert one side first (e.g. fix_dtypes) so the values can match"
            )
    lkey = pd.MultiIndex.from_frame(left[keys])
    rkey = pd.MultiIndex.from_frame(right[keys])
    left_matched = lkey.isin(rkey)
    right_matched = rkey.isin(lkey)
    if len(left) and len(right) and not left_matched.any():  # every joined column would be missing
        raise ValueError(
            f"no value of {', '.join(map(repr, keys))} matches between the two frames ({len(left)} and "
            f"{len(right)} rows, e.g. '{lkey[0][0]}' and '{rkey[0][0]}'): they share no key, so a join "
            "would add only missing values. Join on another column, convert the keys to one coding, or do "
            "not join."
        )
    right_dup = rkey.duplicated(keep=False)
    dup_matched = int((right_dup & right_matched).sum())
    to_many = validate in ("one_to_many", "many_to_many")
    if dup_matched and not (allow_duplicates or to_many):
        examples = [list(k) if len(keys) > 1 else k[0] for k in rkey[right_dup & right_matched].unique()[:5]]
        raise ValueError(
            f"{dup_matched} right rows share a key with other right rows and match the left, so the "
            f"join would duplicate left rows (e.g. keys {examples}). Aggregate the right frame to one "
            "row per key first (aggregate_per_entity), or pass allow_duplicates=True / "
            "validate='one_to_many' if repeated rows are intended."
        )
    try:
        out = left.merge(right, on=keys, how=how, validate=validate, suffixes=("", suffix))
    except pd.errors.MergeError as err:
        raise ValueError(f"join violates validate={validate!r}: {err}") from err
    overlap = [c for c in right.columns if c in left.columns and c not in keys]
    details = {
        "on": keys,
        "how": how,
        "left_rows": int(left.shape[0]),
        "right_rows": int(right.shape[0]),
        "left_match_rate": float(left_matched.mean()) if len(left) else 0.0,
        "right_match_rate": float(right_matched.mean()) if len(right) else 0.0,
        "right_duplicate_key_rows": int(right_dup.sum()),
        "renamed_overlapping_columns": {c: f"{c}{suffix}" for c in overlap},
    }
    warnings = []
    if len(left) and left_matched.mean() < 0.9:
        warnings.append(f"only {left_matched.mean():.0%} of left rows found a match on {keys}")
    if out.shape[0] > left.shape[0] and how in ("left", "inner"):
        warnings.append(f"the join grew the frame from {left.shape[0]} to {out.shape[0]} rows")
    joiner = FrameJoiner(right, keys, suffix).fit(left)
    return out, StepReport.between("join_frames", left, out, details=details, warnings=warnings,
                                   transformer=joiner)


class FilesJoiner(FrameTransformer):
    """Left-join fixed one-row-per-key frames one after another, then an age from a birth date:
    the same columns reach the test rows."""

    def __init__(self, joiners: Sequence[FrameJoiner] = (), birth: str | None = None, at: str | None = None) -> None:
        self.joiners = joiners
        self.birth = birth
        self.at = at

    def fit(self, X: pd.DataFrame, y: object = None) -> FilesJoiner:
        X = self._remember_input(X)
        self.feature_names_out_ = list(self.transform(X.head(0)).columns)
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        out = X
        for joiner in self.joiners:
            out = joiner.transform(out)
        return age_at(out, self.birth, self.at)


def age_at(df: pd.DataFrame, birth: str | None, at: str | None) -> pd.DataFrame:
    """``age_at_<at>`` in years from the ``birth`` date to the ``at`` date, the birth date dropped
    (a date of birth is a person's age only once it is measured from the prediction's moment)."""
    if birth is None or at is None or birth not in df.columns:
        return df
    born = pd.to_datetime(df[birth], errors="coerce", format="mixed")
    when = pd.to_datetime(df[at], errors="coerce", format="mixed")
    age = ((when - born).dt.days / 365.25).round(1)
    return df.drop(columns=[birth]).assign(**{f"age_at_{at}": age})


def _row_label(name: object) -> bool:
    return bool(INDEX_NAME.search(str(name).strip()) or ROW_ID_NAME.search(str(name).strip()))


@lazy_aware()
def join_files(
    left: pd.DataFrame,
    files: Sequence[pd.DataFrame],
    on: Sequence[str],
    names: Sequence[str] | None = None,
    birth: str | None = None,
    at: str | None = None,
) -> tuple[pd.DataFrame, StepReport]:
    """Left-join each of ``files`` to ``left`` on its key (``on[i]``), many-to-one: every file has
    one row per key (a parent such as the patients, or records already summarised per entity).

    ``birth`` / ``at``: a birth date (of a joined file) becomes the age at the ``at`` date of
    ``left`` (an admission time) in years, and the birth date is dropped. Each join is said in
    words with its key and rows before and after (``details['joins']``).
    """
    check_frame(left, "left")
    names = list(names) if names is not None else [f"file {i + 1}" for i in range(len(files))]
    if len(files) != len(on) or len(names) != len(files):
        raise ValueError(f"files, on and names go together: {len(files)} files, {len(on)} keys, {len(names)} names")
    out, joiners, said = left, [], []
    for frame, key, name in zip(files, on, names, strict=True):
        check_frame(frame, name)
        # a file's own row numbers (MIMIC's row_id, R's row names) number its rows, not the entity's
        frame = frame.drop(columns=[c for c in frame.columns if c != key and _row_label(c)])
        if frame[key].duplicated().any():
            raise ValueError(f"'{key}' repeats in {name} ({int(frame[key].duplicated().sum())} rows): join it one "
                             "row per key (summarize_records or aggregate_per_entity first), or not at all")
        suffix = "_" + re.sub(r"\W+", "_", Path(str(name)).stem)
        if RECORDS_COUNT in frame.columns:  # each summarised file's count of records says which file's
            frame = frame.rename(columns={RECORDS_COUNT: RECORDS_COUNT + suffix})
        joined, report = join_frames(out, frame, on=key, how="left", validate="many_to_one", suffix=suffix)
        said.append(f"{name} joined many-to-one on '{key}': {len(out):,} → {len(joined):,} rows, "
                    f"{len(report.columns_added)} columns added, {report.details['left_match_rate']:.0%} of rows "
                    "matched")
        out = joined
        joiners.append(report.transformer)
    out = age_at(out, birth, at)
    if birth is not None and at is not None:
        said.append(f"'{birth}' became the age at '{at}' (age_at_{at}, years); the birth date itself dropped")
    joiner = FilesJoiner(joiners, birth, at).fit(left)
    return out, StepReport.between("join_files", left, out, details={"joins": said, "on": list(on), "files": names},
                                   transformer=joiner)
