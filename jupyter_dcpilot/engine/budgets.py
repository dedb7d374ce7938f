"""Time budgets: how long each kind of step should take, and when a step is stopped.

A budget is a target, not a timeout. The model step receives its budget and cuts its work to
fit (fewer folds, a sample, a lighter candidate; it says what it cut); every step's progress
is reported against its budget; a step still running at :data:`STOP_FACTOR` times its budget
is interrupted and rolled back to its checkpoint, with a sentence saying how to give it more
time. Nothing is ever cut short by how long a reply took to travel.

Kinds are episode ids (``impute``, ``train_evaluate``, ...), ``diagnose`` for the diagnosis,
and ``*`` for every kind not named. Budgets come from, in order of precedence: the command
line (``--budget train_evaluate=900``), the panel's settings or the server's start request
(``{"budget": {"impute": 300}}``), ``%dcplan --budget``, then the defaults: an episode's own
``budget`` (see :mod:`.episodes`), else :data:`BASE`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kernel_tools.durations import minutes  # noqa: F401 (the engine's hosts read it from here)

from .episodes import Episode, library

# seconds on a 2-core machine: a 100k x 50 table fits in these (see docs/benchmarks.md); the
# episodes that need longer say so in their entry's ``budget``
BASE: dict[str, float] = {"*": 60.0, "diagnose": 120.0}
# a step still running at this multiple of its budget is stopped (interrupted and rolled back)
STOP_FACTOR = 4.0
# and never before this many seconds: short budgets must not stop a step on a busy machine
MIN_STOP_S = 60.0
# the budgets were measured on in-memory tables of up to this many rows; a lazy (Dask) frame's
# steps are passes over all of its rows, so their stop limit grows with the rows beyond it
LAZY_ROWS = 1_000_000


def data_scale(rows: int | None, lazy: bool) -> float:
    """How many times its stop limit a step may run on this data before it is stopped: 1 for an
    in-memory frame (whose budgets hold up to a million rows, docs/benchmarks.md), ``rows /``
    :data:`LAZY_ROWS` (at least 1) for a lazy frame, which is read from disk at every step."""
    return max(1.0, (rows or 0) / LAZY_ROWS) if lazy else 1.0


def defaults(episodes: Mapping[str, Episode] | None = None) -> dict[str, float]:
    """The default budgets: :data:`BASE` and each episode's own (default: the built-in library)."""
    episodes = episodes if episodes is not None else library()
    return {**BASE, **{ep.id: ep.budget for ep in episodes.values() if ep.budget is not None}}


DEFAULTS = defaults()  # those of the built-in library


def kinds(episodes: Mapping[str, Episode] | None = None) -> set[str]:
    """The names a budget may be given for: every episode, the diagnosis, and ``*``."""
    return {*(episodes if episodes is not None else library()), *BASE}


@dataclass(frozen=True)
class Budgets:
    """Seconds per kind of step (see the module docstring); unnamed kinds take ``"*"``."""

    seconds: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULTS))
    stop_factor: float = STOP_FACTOR
    min_stop_s: float = MIN_STOP_S

    def of(self, kind: str) -> float:
        """The budget of one kind of step, in seconds."""
        return float(self.seconds.get(kind, self.seconds.get("*", BASE["*"])))

    def stop_after(self, kind: str, scale: float = 1.0) -> float:
        """Seconds after which a step of this kind is stopped and rolled back; ``scale``: the
        data's :func:`data_scale`."""
        return max(self.stop_factor * self.of(kind) * scale, self.min_stop_s)

    def to_dict(self) -> dict[str, float]:
        return dict(self.seconds)

    @classmethod
    def from_spec(cls, spec: Any = None, base: Budgets | None = None,
                  episodes: Mapping[str, Episode] | None = None, **options: float) -> Budgets:
        """Budgets from a user's spec layered over ``base`` (default :func:`defaults` of
        ``episodes``, the library whose episodes are the kinds; default the built-in one).

        ``spec``: None; a number (every kind); a mapping ``{kind: seconds}``; or command-line
        strings ``["600", "impute=300"]``. ValueError names the bad part in words. ``options``:
        ``stop_factor``, ``min_stop_s``."""
        seconds = dict(base.seconds if base is not None else defaults(episodes))
        known_kinds = kinds(episodes)
        # a bare number first, whatever its place: the kinds named explicitly win over it
        for kind, value in sorted(_pairs(spec), key=lambda pair: pair[0] != "*"):
            if kind not in known_kinds:
                known = ", ".join(sorted(known_kinds))
                raise ValueError(f"budget: {kind!r} is not a kind of step; use one of {known}")
            seconds_value = _seconds(value, kind)
            if kind == "*":  # a bare number: every kind, including the defaults' own
                seconds = {k: seconds_value for k in seconds}
            seconds[kind] = seconds_value
        return cls(seconds=seconds, **options)


def _pairs(spec: Any) -> Iterable[tuple[str, Any]]:
    if spec is None:
        return []
    if isinstance(spec, bool):
        raise ValueError(f"budget must be seconds or a map of step kinds to seconds, not {spec!r}")
    if isinstance(spec, (int, float)):
        return [("*", spec)]
    if isinstance(spec, Mapping):
        return [(str(k), v) for k, v in spec.items()]
    if isinstance(spec, str):
        spec = [spec]
    pairs = []
    for item in spec:
        if not isinstance(item, str):
            raise ValueError(f"budget entries must be text like 'impute=300', not {item!r}")
        kind, sep, value = item.partition("=")
        pairs.append((kind.strip(), value.strip()) if sep else ("*", kind.strip()))
    return pairs


def _seconds(value: Any, kind: str) -> float:
    try:
        seconds = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"budget for {kind!r} must be a positive number of seconds, not {value!r}")
    return seconds

