"""Joining two frames without silently duplicating or losing rows."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from kernel_tools.lazy import lazy_aware

from ._base import FrameTransformer, check_choice, check_columns, check_frame
from .report import StepReport

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
