"""The detector registry (kernel_tools/diagnosis/registry.py) and the shared vocabularies
(kernel_tools/vocabulary.py): a detector registered in its own module runs without touching the
runner, one that raises is a finding that makes the verdict not valid, and every string the
layers exchange comes from one declaration."""

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from jupyter_dcpilot.engine.task import Task
from kernel_tools import vocabulary
from kernel_tools.diagnosis import registry
from kernel_tools.findings import Finding
from kernel_tools.vocabulary import (
    METRIC,
    Basis,
    Chart,
    FindingKind,
    Severity,
    StepStatus,
    TaskKind,
    finding_kinds,
    kind_rank,
    severity_rank,
)


def frame(n: int = 300, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return pd.DataFrame({"x": x, "z": rng.normal(size=n), "g": rng.choice(list("abc"), n),
                         "y": (x + rng.normal(size=n) > 0).astype(int)})


@pytest.fixture
def temporary_detector():
    """Register detectors for one test and forget them afterwards, with the kinds they declared
    (the generated panel types and schema list every declared kind)."""
    names: list[str] = []
    registry.load_detectors()  # the real detectors declare their kinds first: those stay
    declared = dict(vocabulary._DECLARED)
    kinds = dict(registry.KINDS)

    def add(name, find, **kw):
        kw.setdefault("finds", {FindingKind.MISSING_VALUES: registry.KINDS[FindingKind.MISSING_VALUES]})
        registry.detector(name, **kw)(find)
        names.append(name)

    yield add
    for name in names:
        registry.DETECTORS.pop(name, None)
    vocabulary._DECLARED.clear()
    vocabulary._DECLARED.update(declared)
    registry.KINDS.clear()
    registry.KINDS.update(kinds)


def test_a_detector_registered_in_its_own_module_runs_with_the_context(temporary_detector):
    seen = {}

    def find_wide_columns(ctx):
        seen["features"] = list(ctx.features)
        seen["target"] = ctx.target
        return [Finding("wide_column", ["z"], "info", "z is wide", {"sd": float(ctx.df["z"].std())})]

    temporary_detector("wide columns", find_wide_columns, order=5,
                       finds={"wide_column": registry.KindData(chart=None, basis=Basis.SAMPLE)})
    result = kt.diagnose(frame(), target="y")
    assert seen == {"features": ["x", "z", "g"], "target": "y"}
    assert [f.kind for f in result.findings if f.kind == "wide_column"] == ["wide_column"]
    # a declared kind is a finding kind, shown after the taxonomy's own
    assert "wide_column" in finding_kinds() and kind_rank("wide_column") >= len(FindingKind)


def test_a_detector_that_needs_a_target_is_skipped_without_one(temporary_detector):
    calls = []
    temporary_detector("needs y", lambda ctx: calls.append(1) or [], needs_target=True)
    kt.diagnose(frame().drop(columns="y"))
    assert calls == []
    kt.diagnose(frame(), target="y")
    assert calls == [1]


def test_a_detector_that_raises_is_a_critical_finding_and_the_verdict_is_not_valid(temporary_detector):
    def broken(ctx):
        raise ZeroDivisionError("a column of zeros")

    temporary_detector("fragile", broken)
    result = kt.diagnose(frame(), target="y")
    failed = [f for f in result.findings if f.kind == FindingKind.DIAGNOSIS_INCOMPLETE]
    assert len(failed) == 1 and failed[0].severity == Severity.CRITICAL
    assert "fragile check could not run" in failed[0].summary
    assert failed[0].evidence["error"].startswith("ZeroDivisionError")
    # the other detectors still ran
    assert any(f.kind != FindingKind.DIAGNOSIS_INCOMPLETE for f in result.findings) or result.findings == failed

    # the engine's verdict reads that finding: not valid, and says which check did not run
    from jupyter_dcpilot.engine.session import Session
    from jupyter_dcpilot.engine.validity import audit, verdict

    session = Session(task=Task(kind="classification", target="y"))
    session.findings = list(result.findings)
    checks = audit(session)
    complete = next(c for c in checks if c.check == "diagnosis_complete")
    assert not complete.passed and "fragile check could not run" in complete.detail and not verdict(checks)


def test_two_detectors_may_not_share_a_name(temporary_detector):
    temporary_detector("unique name", lambda ctx: [])
    with pytest.raises(ValueError, match="already registered"):
        registry.detector("unique name", finds={"missing_values": registry.KINDS["missing_values"]})(lambda ctx: [])


def test_every_finding_kind_is_declared_with_its_chart_and_dask_basis():
    """Each finding kind's chart and Dask basis are declared once, by the detector that finds it
    (or, for the runner's structural checks, next to them): a kind of the taxonomy nobody declares
    fails here, and every chart declared is one the engine draws."""
    from jupyter_dcpilot.engine.charts import CHARTS

    for kind in registry.every_finding_kind():
        declared = registry.kind_data(kind)
        assert declared is not None, f"finding kind {kind!r} is not declared (registry.declare / detector finds=)"
        assert declared.basis in set(Basis) and (declared.chart is None or declared.chart in CHARTS), kind
    assert set(CHARTS) == set(Chart) - {Chart.NONE}
    for d in registry.DETECTORS.values():
        assert d.finds and all(registry.kind_data(k) is not None for k in d.finds), d.name


def test_a_detector_registers_only_with_what_it_finds_declared(temporary_detector):
    """A new detector without the declaration is refused where it registers; one with it gets its
    kind's chart in the engine and its basis on a Dask frame, with nothing added elsewhere."""
    from jupyter_dcpilot.engine.charts import chart_for

    with pytest.raises(TypeError):
        registry.detector("no declaration")(lambda ctx: [])  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="declares no finding kind"):
        registry.detector("empty declaration", finds={})(lambda ctx: [])
    with pytest.raises(ValueError, match="already declared"):  # one declaration per kind
        registry.detector("other chart", finds={FindingKind.OUTLIERS: registry.KindData(
            chart=Chart.MISSING, basis=Basis.WHOLE_DATA)})(lambda ctx: [])
    assert "no declaration" not in registry.DETECTORS and "other chart" not in registry.DETECTORS

    rates = {"columns": {"a": {"missing_rate": 0.7}, "b": {"missing_rate": 0.2}}}
    assert registry.kind_data("sparse_columns") is None
    temporary_detector("sparse columns", lambda ctx: [], finds={
        "sparse_columns": registry.KindData(chart=Chart.MISSING, basis=Basis.WHOLE_DATA)})
    chart = chart_for(Finding("sparse_columns", ["a", "b"], "warning", "", rates))
    assert chart is not None and [b["label"] for b in chart["bars"]] == ["a", "b"]
    assert registry.kind_data("sparse_columns").basis == Basis.WHOLE_DATA


def test_every_detector_module_registers_itself():
    names = set(registry.load_detectors())
    assert {"missing values", "outliers", "label issues", "dates out of range"} <= names
    assert all(d.order >= 0 for d in registry.DETECTORS.values())


def test_every_kind_the_detectors_emit_is_in_the_vocabulary():
    """On data the detectors were not written for (scikit-learn's diabetes, with missing values,
    a duplicated row, a text-typed number and a repeated id added), every finding's kind and
    severity come from the vocabulary."""
    from sklearn.datasets import load_diabetes

    df = load_diabetes(as_frame=True).frame
    rng = np.random.default_rng(0)
    df.loc[rng.choice(len(df), 40, replace=False), "bmi"] = np.nan
    df["bp"] = df["bp"].round(3).astype(str)
    df["patient"] = np.arange(len(df)) // 2
    df = pd.concat([df, df.iloc[:3]], ignore_index=True)
    findings = kt.diagnose(df, target="target").findings
    assert findings
    for f in findings:
        assert f.kind in finding_kinds(), f.kind
        assert f.severity in set(Severity), f.severity


def test_vocabularies_are_plain_strings_and_agree_across_layers():
    from jupyter_dcpilot import request_limits
    from jupyter_dcpilot.engine import session, validity
    from kernel_tools.models import evaluate

    assert Severity.CRITICAL == "critical" and severity_rank("critical") < severity_rank("info") < severity_rank("?")
    assert {k: TaskKind(k).metric for k in TaskKind} == {str(k): v for k, v in METRIC.items()}
    assert set(evaluate.TASKS) == set(TaskKind)
    assert set(request_limits.TASK_KINDS) >= set(TaskKind)
    assert set(session.PENDING) == {StepStatus.PROPOSED, StepStatus.AWAITING_DECISION}
    assert validity.METRIC == METRIC


def test_the_panel_reads_the_same_vocabularies():
    """labextension/src/vocabulary.ts is generated from kernel_tools/vocabulary.py; after a change
    there, regenerate it (``python -m kernel_tools.vocabulary --typescript``)."""
    from pathlib import Path

    from kernel_tools.diagnosis.registry import every_finding_kind
    from kernel_tools.vocabulary import typescript

    shipped = Path(__file__).resolve().parents[1] / "labextension" / "src" / "vocabulary.ts"
    assert shipped.read_text() == typescript(every_finding_kind()), "regenerate labextension/src/vocabulary.ts"


def test_an_event_the_hosts_do_not_know_is_refused_where_it_is_sent():
    from jupyter_dcpilot.engine.session import Session

    seen = []
    session = Session(task=Task(kind="classification"))
    session.subscribe(seen.append)
    session.notify("progress", step="s1")
    with pytest.raises(ValueError):
        session.notify("progres", step="s1")
    assert [e["type"] for e in seen] == ["progress"]
