"""The detector registry: one signature for every detector, registered next to it.

The shape of cleanlab's issue managers: what every detector needs (the frame, its column
profiles, the sample and folds of the model-based checks, the task, the entity, the prediction
time, the columns already known to be ids or leaks) is a :class:`Context` built once by
:func:`kernel_tools.diagnose`; a detector is a function ``find(ctx) -> list[Finding]``
registered with :func:`detector` in its own module, which also declares what the hosts need
to know of each finding kind it finds (:class:`KindData`: the decision card's chart, where its
numbers come from on a Dask frame), and any finding kind of its own. The structural checks the
runner calls itself (ids, entities, leakage, stray rows, joins) declare their kinds with
:func:`declare` in their modules. Adding a detector touches its module (and its test), not the
runner, the charts or the lazy diagnosis.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kernel_tools.findings import Diagnosis, Finding
from kernel_tools.vocabulary import Basis, Chart, FindingKind, declare_kind, finding_kinds

if TYPE_CHECKING:
    from kernel_tools.diagnosis.columns import ColumnProfile
    from kernel_tools.diagnosis.entities import Entity
    from kernel_tools.diagnosis.task import Outcome
    from kernel_tools.diagnosis.timing import PredictionIndex, Timing


class Clock:
    """The diagnosis's deadline, read between detectors and between the columns of a long one.

    A detector that works column by column asks :meth:`reach` for its columns: once the deadline
    has passed it gets no more, and the columns it did not reach are kept per detector, so the
    ``diagnosis_incomplete`` finding names them (wide.py) instead of the check silently covering
    fewer columns."""

    def __init__(self, deadline: float | None = None) -> None:
        self.deadline = deadline  # time.perf_counter() after which nothing more starts
        self.unreached: dict[str, list[str]] = {}  # detector -> columns it did not reach

    def over(self) -> bool:
        return self.deadline is not None and time.perf_counter() > self.deadline

    def reach(self, detector: str, columns: Iterable[str]) -> Iterator[str]:
        """``columns`` one at a time while the deadline has not passed; the rest are noted."""
        columns = list(columns)
        for i, column in enumerate(columns):
            if self.over():
                self.not_reached(detector, columns[i:])
                return
            yield column

    def not_reached(self, detector: str, columns: Iterable[str]) -> None:
        missed = self.unreached.setdefault(detector, [])
        missed += [c for c in columns if c not in missed]


NO_CLOCK = Clock()  # no deadline: every column is reached


@dataclass
class Context:
    """What the registered detectors read, built once per diagnosis (never changed by them,
    except ``column_stats``, where a detector may leave per-column numbers for the plots)."""

    df: pd.DataFrame  # every row
    profiles: dict[str, ColumnProfile]  # one per column of df
    outcome: Outcome  # the task over every row
    frame: pd.DataFrame  # the sample of the model-based checks
    sub: Outcome  # the outcome on the sample
    folds: np.ndarray  # fold of each sample row
    target: str | None
    duration: str | None  # the follow-up time of a survival task
    structural: set[str]  # target, duration, id: never features
    id_cols: list[str]  # columns found to be identifiers
    entity: Entity
    when: PredictionIndex
    features: list[str]  # candidate features (no structural, id or entity columns)
    leak_cols: list[str]  # columns flagged as leaks
    timings: dict[str, Timing]
    test: pd.DataFrame | None
    random_state: int
    column_stats: dict[str, Any] = field(default_factory=dict)
    # what a codebook given to diagnose says (codebook.Codebook): per-column timing evidence with
    # a confidence (``codebook.timing_evidence()``), private columns, a REDCap export's layout
    codebook: Any = None
    deadline: float | None = None  # time.perf_counter() by which a long detector stops (wide.py)
    clock: Clock = NO_CLOCK  # the same deadline, and what the detectors did not reach by it
    memo: Any = None  # results kept from the last diagnosis (reuse.Memo), None: compute afresh

    @property
    def entity_cols(self) -> set[str]:
        return {c for c in (self.entity.id, self.entity.visit) if c}

    @property
    def model_features(self) -> list[str]:
        """Features a model-based check may use: no leaks, no free text."""
        return [c for c in self.features if c not in self.leak_cols and self.profiles[c].kind != "text"]


@dataclass(frozen=True)
class KindData:
    """What the hosts read of one finding kind, declared by the detector that finds it."""

    chart: Chart | None  # the decision card's chart of its evidence; None: no chart fits it
    basis: Basis  # where its numbers come from on a lazy (Dask) frame


KINDS: dict[str, KindData] = {}  # finding kind -> what its detector declared


def declare(kind: str, data: KindData) -> None:
    """Declare ``kind``'s data (a finding kind of its own too, outside the taxonomy). One
    declaration per kind: a second, different one is an error, not a silent override."""
    kind = str(kind)
    if KINDS.get(kind, data) != data:
        raise ValueError(f"finding kind {kind!r} is already declared as {KINDS[kind]}")
    declare_kind(kind)
    KINDS[kind] = data


def kind_data(kind: str) -> KindData | None:
    """What the detector that finds ``kind`` declared of it (None for a kind nobody declared)."""
    load_detectors()
    return KINDS.get(kind)


def declared_chart(kind: str) -> Chart | None:
    """The chart a finding of ``kind`` carries (:attr:`Chart.NONE` when its detector declared
    none; None for a kind nobody declared)."""
    declared = kind_data(kind)
    return None if declared is None else declared.chart or Chart.NONE


def with_charts(diagnosis: Diagnosis) -> Diagnosis:
    """``diagnosis`` with each finding carrying its declared chart (:func:`declared_chart`): the
    hosts draw it without loading the detectors."""
    for finding in diagnosis.findings:
        finding.chart = finding.chart or declared_chart(finding.kind)
    return diagnosis


# a detector that raised (Detectors.run below), or one the time budget stopped (wide.py)
declare(FindingKind.DIAGNOSIS_INCOMPLETE, KindData(chart=None, basis=Basis.WHOLE_DATA))


@dataclass(frozen=True)
class Detector:
    name: str  # in words: "missing values" (a failure says "the missing values check could not run")
    find: Callable[[Context], list[Finding]]
    order: int  # run order; the findings are sorted by severity and kind afterwards anyway
    needs_target: bool
    needs_test: bool
    finds: tuple[str, ...] = ()  # the finding kinds it declared

    def applies(self, ctx: Context) -> bool:
        return (ctx.target is not None or not self.needs_target) and (ctx.test is not None or not self.needs_test)


DETECTORS: dict[str, Detector] = {}


def load_detectors() -> dict[str, Detector]:
    """Import every module of :mod:`kernel_tools.diagnosis`, so that each detector registers:
    a new detector module needs no import added anywhere."""
    _import_detector_modules()
    return DETECTORS


@functools.cache  # once: kind_data reads the declarations for every card and every finding
def _import_detector_modules() -> None:
    import kernel_tools.diagnosis as package

    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")


def every_finding_kind() -> tuple[str, ...]:
    """Every finding kind: the taxonomy's and those the detectors declare (loaded first, so the
    answer does not depend on what happened to be imported)."""
    load_detectors()
    return finding_kinds()


def detector(name: str, *, finds: dict[str, KindData], order: int = 100, needs_target: bool = False,
             needs_test: bool = False) -> Callable[[Callable[[Context], list[Finding]]],
                                                  Callable[[Context], list[Finding]]]:
    """Register ``find(ctx) -> list[Finding]`` as the detector ``name``.

    ``finds`` declares, for each finding kind it finds, its chart and Dask basis (a kind beyond
    the taxonomy of :class:`kernel_tools.vocabulary.FindingKind` becomes a finding kind);
    ``needs_target`` / ``needs_test`` skip it when there is no target / no held-out frame.
    """
    if not finds:
        raise ValueError(f"the detector {name!r} declares no finding kind it finds")

    def register(find: Callable[[Context], list[Finding]]) -> Callable[[Context], list[Finding]]:
        if name in DETECTORS and DETECTORS[name].find is not find:
            raise ValueError(f"a detector named {name!r} is already registered")
        for kind, data in finds.items():
            declare(kind, data)
        DETECTORS[name] = Detector(name, find, order, needs_target, needs_test, tuple(map(str, finds)))
        return find

    return register


class Detectors:
    """Runs detectors; one that raises becomes a ``diagnosis_incomplete`` finding instead of
    stopping the diagnosis (no single column's oddity may), and the result says it is partial."""

    def __init__(self, deadline: float | None = None) -> None:
        self.failed: list[Finding] = []
        self.clock = Clock(deadline)  # after its deadline no detector starts (wide.py)
        self.skipped: list[str] = []  # detectors not run: the deadline had passed

    @property
    def deadline(self) -> float | None:
        return self.clock.deadline

    def run(self, name: str, function: Callable[..., Any], *args: Any, default: Any = None,
            columns: tuple = (), **kwargs: Any) -> Any:
        if self.clock.over():
            self.skipped.append(name)
            return default
        try:
            return function(*args, **kwargs)
        except Exception as exc:  # recorded as a finding: the diagnosis is incomplete
            message = " ".join(str(exc).split())[:300] or type(exc).__name__
            self.failed.append(Finding(
                "diagnosis_incomplete", list(columns), "critical",
                f"The {name} check could not run ({type(exc).__name__}: {message}); the diagnosis "
                "is incomplete, so no model built on it can be called valid until it runs.",
                {"detector": name, "error": f"{type(exc).__name__}: {message}"}))
            return default

    def run_registered(self, ctx: Context) -> list[Finding]:
        """Every registered detector that applies to ``ctx``, in their order."""
        found: list[Finding] = []
        for d in sorted(load_detectors().values(), key=lambda d: d.order):
            if d.applies(ctx):
                found += self.run(d.name, d.find, ctx, default=[])
        return found
