"""What DataFrames a namespace holds, a compact profile of one, and the one conversion of
other tables to pandas.

A frame is a pandas DataFrame, or any eager table with the Arrow PyCapsule interface
(``__arrow_c_stream__`` and a two-dimensional ``shape``: polars, pyarrow, ...). The latter are
listed from their Arrow schema without copying, and converted to pandas once, at the boundary
(:func:`to_pandas`: ``diagnose``, the probes, the co-pilot's first cell), since every tool
here works on pandas.

These run after every cell the user executes (the panel refreshes), so they must stay
cheap: no deep memory accounting in :func:`list_frames`, no pairwise statistics anywhere.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from kernel_tools.lazy.engine import is_lazy
from kernel_tools.privacy import WITHHELD, is_private

# IPython's own bookkeeping names that may hold frames but are not the user's variables
_HIDDEN = {"In", "Out", "exit", "quit", "get_ipython"}


def dtype_kind(dtype: Any) -> str:
    """A coarse, human kind for a pandas dtype: number, bool, datetime, category, text, other."""
    if isinstance(dtype, pd.CategoricalDtype):
        return "category"
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    if pd.api.types.is_numeric_dtype(dtype):
        return "number"
    if pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype):
        return "datetime"
    if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
        return "text"
    return "other"


def _shallow_memory(df: pd.DataFrame) -> int:
    return int(df.memory_usage(index=True, deep=False).sum())


def frame_bytes(df: pd.DataFrame, sample: int = 1000) -> int:
    """Memory of a pandas frame, text included, without reading every string: numbers and
    dates exactly, object columns from the deep size of a sample of their rows."""
    shallow = df.memory_usage(index=True, deep=False)
    text = [c for c in df.columns if df[c].dtype == object]
    if not text or len(df) <= sample:
        return int(df.memory_usage(index=True, deep=True).sum()) if text else int(shallow.sum())
    rows = df[text].iloc[:: max(1, len(df) // sample)]
    per_row = float(rows.memory_usage(index=False, deep=True).sum()) / len(rows)
    return int(shallow.sum() - df[text].memory_usage(index=False, deep=False).sum() + per_row * len(df))


def is_arrow_frame(value: Any) -> bool:
    """True for a table (not pandas) that exports an Arrow stream and has a 2-D ``shape``."""
    if isinstance(value, (pd.DataFrame, type)) or not callable(getattr(value, "__arrow_c_stream__", None)):
        return False
    try:
        shape = value.shape
    except Exception:  # an object whose shape cannot be read is not a frame here
        return False
    return isinstance(shape, tuple) and len(shape) == 2 and all(isinstance(n, int) for n in shape)


def to_pandas(df: Any, name: str = "df") -> pd.DataFrame:
    """``df`` as a pandas DataFrame: a pandas frame itself, a polars / pyarrow / other Arrow
    PyCapsule table converted through pyarrow (categoricals stay categorical, dates datetimes).

    Raises TypeError naming ``name`` for anything else."""
    if isinstance(df, pd.DataFrame):
        return df
    if not is_arrow_frame(df):
        raise TypeError(f"{name} must be a pandas DataFrame or a table with the Arrow PyCapsule "
                        f"interface (polars, pyarrow), got {type(df).__name__}")
    try:
        import pyarrow as pa
    except ImportError as error:
        raise ImportError(f"converting {name} ({library(df)}) to pandas needs pyarrow: "
                          "pip install 'dcpilot-kernel-tools[arrow]'") from error
    return pa.table(df).to_pandas(date_as_object=False)  # dates as datetime64, as pandas reads them


def library(value: Any) -> str:
    """The library a frame comes from: "pandas", "polars", "pyarrow", ..."""
    return type(value).__module__.split(".")[0]


def _arrow_kind(field_type: Any) -> str:
    """:func:`dtype_kind` for an Arrow type."""
    import pyarrow.types as t

    if t.is_dictionary(field_type):
        return "category"
    if t.is_boolean(field_type):
        return "bool"
    if t.is_integer(field_type) or t.is_floating(field_type) or t.is_decimal(field_type):
        return "number"
    if t.is_temporal(field_type):
        return "datetime"
    if t.is_string(field_type) or t.is_large_string(field_type) or getattr(t, "is_string_view", lambda _: False)(field_type):
        return "text"
    return "other"


def _arrow_summary(value: Any) -> tuple[Counter, int | None]:
    """Column kinds from the Arrow schema (no data is copied) and the size the library reports;
    without pyarrow the kinds are unknown ("other")."""
    size = getattr(value, "estimated_size", None) or getattr(value, "nbytes", None)
    size = int(size() if callable(size) else size) if size is not None else None
    try:
        import pyarrow as pa
    except ImportError:
        return Counter({"other": int(value.shape[1])}), size
    schema = value.schema if isinstance(value, pa.Table) else pa.RecordBatchReader.from_stream(value).schema
    return Counter(_arrow_kind(f.type) for f in schema), size


def list_frames(namespace: Mapping[str, Any]) -> list[dict[str, Any]]:
    """List the pandas DataFrames bound in ``namespace``, sorted by name.

    Parameters
    ----------
    namespace : mapping of str to object
        Usually the kernel's user namespace (``get_ipython().user_ns``).

    Returns
    -------
    list of dict
        One entry per frame (pandas, or an Arrow PyCapsule table such as polars): ``name``,
        ``library``, ``rows``, ``columns``, ``memory_bytes`` (shallow: object columns count
        their pointers, not their strings — cheap enough to run after every cell; for other
        libraries what they report, or None) and ``dtypes`` (count of columns per kind, see
        :func:`dtype_kind`). A lazy (Dask) frame has ``rows`` and ``memory_bytes`` None and
        its ``partitions``.
    """
    if not isinstance(namespace, Mapping):
        raise TypeError(f"namespace must be a mapping of names to objects, got {type(namespace).__name__}")
    frames = []
    for name, value in namespace.items():
        if name.startswith("_") or name in _HIDDEN:
            continue
        if is_lazy(value):
            frames.append(_lazy_entry(name, value))
            continue
        memory: int | None
        if isinstance(value, pd.DataFrame):
            kinds, memory = Counter(dtype_kind(dtype) for dtype in value.dtypes), _shallow_memory(value)
        elif is_arrow_frame(value):
            kinds, memory = _arrow_summary(value)
        else:
            continue
        frames.append(
            {
                "name": name,
                "library": library(value),
                "rows": int(value.shape[0]),
                "columns": int(value.shape[1]),
                "memory_bytes": memory,
                "dtypes": dict(sorted(kinds.items())),
            }
        )
    return sorted(frames, key=lambda frame: frame["name"])


def _lazy_entry(name: str, value: Any) -> dict[str, Any]:
    """A lazy (Dask) frame as the panel lists it, from its schema alone: counting its rows
    would read every file after every cell."""
    kinds = Counter(dtype_kind(dtype) for dtype in value.dtypes)
    return {"name": name, "rows": None, "columns": int(len(value.columns)), "memory_bytes": None,
            "dtypes": dict(sorted(kinds.items())), "partitions": int(value.npartitions),
            "library": library(value)}


def _json_scalar(value: Any) -> Any:
    """A JSON-safe version of one cell value (for example values in the profile)."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return None if not np.isfinite(value) else float(value)
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (int, float, str)):
        return value
    return str(value)


def sample_rows(df: pd.DataFrame, n: int = 5, *, random_state: int = 0,
                max_chars: int = 200) -> list[dict[str, Any]]:
    """``n`` randomly chosen rows of ``df`` as JSON-safe records (column name -> value).

    What an LLM sees when the user chose to share sample rows: whole rows, so it can read how
    columns relate (a date next to an outcome, units next to numbers). Missing values become
    None and long texts are cut to ``max_chars``; a column a codebook marked private
    (:mod:`kernel_tools.privacy`) shows ``"<private>"``. ``df`` is not modified; of a lazy frame, the
    rows come from its first partition.
    """
    if is_lazy(df):
        from kernel_tools.lazy.engine import first_partition

        df = first_partition(df)
    df = to_pandas(df, "sample_rows' frame")
    if n < 0:
        raise ValueError(f"n must be >= 0, not {n}")
    picked = df.sample(n=min(n, len(df)), random_state=random_state) if len(df) else df
    records = []
    for _, row in picked.iterrows():
        record = {}
        for name, value in zip(map(str, picked.columns), row.tolist()):
            value = WITHHELD if is_private(name) else None if _is_missing(value) else _json_scalar(value)
            record[name] = value[:max_chars] if isinstance(value, str) else value
        records.append(record)
    return records


def _is_missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # lists, arrays: not a missing scalar
        return False


def profile(df: pd.DataFrame, *, examples: int = 3) -> dict[str, Any]:
    """A compact profile of ``df``: shape, memory and, per column, dtype and missing share.

    Parameters
    ----------
    df : DataFrame
        The frame to describe (pandas, or an Arrow PyCapsule table: converted). It is not
        modified.
    examples : int, default 3
        How many distinct non-missing example values to show per column.

    Returns
    -------
    dict
        ``rows``, ``columns``, ``memory_bytes`` (deep: includes string contents),
        ``missing_share`` (of all cells) and ``columns_detail``: a list of
        ``{name, dtype, kind, missing_share, unique, examples}``.
    """
    if is_lazy(df):  # its first partition: a look, not a pass over every file
        from kernel_tools.lazy.engine import first_partition

        head = first_partition(df)
        return {**profile(head, examples=examples), "rows": None, "memory_bytes": None,
                "profiled_rows": int(len(head)), "partitions": int(df.npartitions)}
    df = to_pandas(df, "profile's frame")
    rows = int(df.shape[0])
    missing = df.isna().sum()
    detail = []
    for position, name in enumerate(df.columns):
        column = df.iloc[:, position]
        try:
            unique = int(column.nunique(dropna=True))
            values = column.dropna().unique()[:examples]
        except TypeError:  # unhashable cells (lists, dicts): still describe the column
            unique, values = None, column.dropna().head(examples).tolist()
        if is_private(name):  # a codebook says it identifies a person: no value leaves the kernel
            values = [WITHHELD] if len(values) else []
        detail.append(
            {
                "name": str(name),
                "dtype": str(column.dtype),
                "kind": dtype_kind(column.dtype),
                "missing_share": float(missing.iloc[position] / rows) if rows else 0.0,
                "unique": unique,
                "examples": [_json_scalar(v) for v in values],
            }
        )
    cells = rows * df.shape[1]
    return {
        "rows": rows,
        "columns": int(df.shape[1]),
        "memory_bytes": int(df.memory_usage(index=True, deep=True).sum()),
        "missing_share": float(missing.sum() / cells) if cells else 0.0,
        "columns_detail": detail,
    }


FINGERPRINT_ROWS = 256  # rows hashed: spread over the whole frame, so an edit anywhere is likely seen


def fingerprint(value: Any, name: str = "df") -> dict[str, Any] | None:
    """What identifies a frame's data without sending any of it: its name, shape, column names
    and types, and a SHA-256 over :data:`FINGERPRINT_ROWS` rows spread evenly over it (a lazy
    frame: its first rows, its rows not counted). A co-pilot session records it as it goes, so
    a session file resumed over other data is recognised. None when ``value`` is no frame."""
    import hashlib

    lazy = is_lazy(value)
    if not (lazy or isinstance(value, pd.DataFrame) or is_arrow_frame(value)):
        return None
    if lazy:
        rows, sample = None, value.head(FINGERPRINT_ROWS, npartitions=1)
    else:
        frame = to_pandas(value, name)
        rows = len(frame)
        positions = np.unique(np.linspace(0, max(rows - 1, 0), min(rows, FINGERPRINT_ROWS)).astype(int))
        sample = frame.iloc[positions]
    digest = hashlib.sha256()
    try:
        digest.update(pd.util.hash_pandas_object(sample, index=True).to_numpy().tobytes())
    except TypeError:  # unhashable cells (lists, dicts): their text
        digest.update(pd.util.hash_pandas_object(sample.astype(str), index=True).to_numpy().tobytes())
    return {"name": name, "rows": rows, "columns": [str(c) for c in value.columns],
            "dtypes": [str(t) for t in value.dtypes], "sample_sha256": digest.hexdigest()}
