"""One real table of the sweep's catalogue and what its documentation says about it.

A :class:`Dataset` is loaded lazily (its package may be missing); its documented truth is what
``audit.py`` holds a co-pilot run to. A table of several files (a cohort's baseline file and a
file of its follow-up laboratory records) lists the others in ``extra``, passed to the co-pilot
after the main file, with the documented key that joins them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
from audit import Truth


@dataclass
class Dataset:
    name: str
    source: str  # the package that ships it
    load: Callable[[], pd.DataFrame]
    target: str
    task: str  # the task its documentation implies
    time: str | None = None  # survival duration (or visit order)
    give_time: bool = False  # pass time as a hint (its name cannot tell)
    id: str | None = None  # entity id when rows repeat per entity
    # a hidden panel: rows come in consecutive blocks of this many records of one entity, with no
    # id column; the right entity is then a numbering of the blocks the run itself adds
    blocks: int = 0
    ids: tuple[str, ...] = ()  # identifier columns (no signal)
    leaks: tuple[str, ...] = ()  # documented post-outcome / target-derived columns
    follow_up: tuple[str, ...] = ()  # documented as recorded after the prediction time
    # with an entity id: "row" (each record its own prediction), "first" (the outcome counts
    # from each entity's first record), "intervals" ((start, stop] rows on one clock) or "sets" (matched
    # sets, the entity a set of distinct subjects: grouped, never merged)
    index: str = "row"
    note: str = ""
    # further files of the same table, passed after the main one: (file stem, loader)
    extra: tuple[tuple[str, Callable[[], pd.DataFrame]], ...] = ()
    join: str | None = None  # the documented key joining the files
    # the time column of an extra file of records over time, counted from the index (day 0):
    # its records after the index are follow-up by construction
    records: str | None = None
    # survival: the target's codes the documentation names events (quoted in ``note``); empty when
    # it does not say
    event: tuple[float | str, ...] = ()

    def truth(self, extra_columns: tuple[str, ...] = ()) -> Truth:
        """What ``audit.py`` holds a run on this data set to (``extra_columns``: the columns
        of the extra files, to tell the features that came from them)."""
        return Truth(task=self.task, target=self.target, time=self.time, entity=self.id, index=self.index,
                     leaked=self.leaks, follow_up=self.follow_up, identifiers=self.ids, join=self.join,
                     records=self.records, extra_columns=extra_columns, event=self.event)
