"""How many times a process reads a Parquet data set: the bytes of the column chunks its
Parquet reader asks for, over the bytes of every column chunk in the files.

Counting the process's file reads (``/proc/<pid>/io``) does not tell this: a Dask shuffle writes
its partitions to disk and reads them back, and a cluster near its memory limit spills. Here
the count is taken where Dask's reader (``ArrowDatasetEngine._read_table``, the default
``fsspec`` route of ``dd.read_parquet``) is called, with the columns it is asked for, so a pass
that reads two columns counts their share of the bytes, not the whole file's.

    with ParquetReads() as reads:
        ...                         # Dask work in this process (a LocalCluster with processes=False)
    reads.times(folder)             # e.g. 2.1: the data read twice and a tenth
"""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from typing import Any


class ParquetReads:
    """Record each Parquet read of this process while in the ``with`` block."""

    def __init__(self) -> None:
        self.reads: list[tuple[str, int]] = []  # (file, bytes of the column chunks asked for)
        self._sizes: dict[str, Counter] = {}
        self._lock = threading.Lock()
        self._original: Any = None

    def column_bytes(self, path: str) -> Counter:
        """Compressed bytes of each column of ``path``, over its row groups."""
        if path not in self._sizes:
            import pyarrow.parquet as pq

            meta = pq.ParquetFile(path).metadata
            sizes: Counter = Counter()
            for g in range(meta.num_row_groups):
                group = meta.row_group(g)
                for i in range(group.num_columns):
                    chunk = group.column(i)
                    sizes[chunk.path_in_schema] += chunk.total_compressed_size
            self._sizes[path] = sizes
        return self._sizes[path]

    def __enter__(self) -> ParquetReads:
        from dask.dataframe.io.parquet.arrow import ArrowDatasetEngine

        self._original = ArrowDatasetEngine.__dict__["_read_table"]
        read = self._original.__func__
        counter = self

        def counted(cls: Any, path_or_frag: Any, fs: Any, row_groups: Any, columns: Any, *args: Any,
                    **kwargs: Any) -> Any:
            path = path_or_frag if isinstance(path_or_frag, str) else path_or_frag.path
            sizes = counter.column_bytes(path)
            wanted = list(sizes) if columns is None else [c for c in columns if c in sizes]
            with counter._lock:
                counter.reads.append((path, sum(sizes[c] for c in wanted)))
            return read(cls, path_or_frag, fs, row_groups, columns, *args, **kwargs)

        ArrowDatasetEngine._read_table = classmethod(counted)
        return self

    def __exit__(self, *exc: Any) -> None:
        from dask.dataframe.io.parquet.arrow import ArrowDatasetEngine

        ArrowDatasetEngine._read_table = self._original

    def times(self, folder: str | Path) -> float:
        """Bytes asked for over the bytes of every column chunk in ``folder``'s Parquet files."""
        total = sum(sum(self.column_bytes(str(p)).values()) for p in Path(folder).glob("*.parquet"))
        return sum(b for _, b in self.reads) / total if total else 0.0

    def most_per_file(self) -> int:
        """The most times any one file was opened for reading."""
        return max(Counter(p for p, _ in self.reads).values(), default=0)
