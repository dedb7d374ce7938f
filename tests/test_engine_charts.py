"""Decision charts built from the evidence that kernel_tools' diagnostics really write."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from jupyter_dcpilot.engine.charts import chart_for
from jupyter_dcpilot.engine.model_audit import leak_finding
from jupyter_dcpilot.engine.observation import diagnosis_failed
from jupyter_dcpilot.engine.session import Session
from jupyter_dcpilot.probe import ProbeError
from kernel_tools.diagnosis.registry import declared_chart
from kernel_tools.findings import Finding
from kernel_tools.vocabulary import Chart


@pytest.fixture(scope="module")
def findings() -> dict[str, Finding]:
    rng = np.random.default_rng(0)
    n = 300
    age = rng.normal(45, 12, n).round()
    tenure = rng.integers(0, 20, n).astype(float)
    y = (rng.random(n) < 1 / (1 + np.exp(0.05 * (age - 45) + 0.1 * (tenure - 10)))).astype(int)
    age[:30] = np.nan
    income = rng.lognormal(10, 0.3, n)
    income[:5] = 1e7
    df = pd.DataFrame({"age": age, "tenure": tenure, "income": income,
                       "complained": np.where(rng.random(n) < 0.03, 1 - y, y), "churned": y})
    found = {f.kind: f for f in kt.diagnose(df, target="churned").findings}
    from lifelines.datasets import load_stanford_heart_transplants

    visits = kt.diagnose(load_stanford_heart_transplants(), target="event").findings
    found.update({f.kind: f for f in visits if f.kind == "repeated_measurements"})
    return found


def values(chart: dict) -> dict[str, float]:
    return {b["label"]: b["value"] for b in chart["bars"]}


def test_leakage_chart_compares_the_column_with_the_best_other_feature(findings) -> None:
    chart = chart_for(findings["target_leakage"])
    evidence = findings["target_leakage"].evidence
    assert values(chart) == {"complained": evidence["score"], "best other feature": evidence["next_best_score"]}
    assert chart["unit"] == "AUROC" and chart["threshold"] == pytest.approx(0.95)  # the metric in words
    assert chart["title"] == "Outcome predicted from one feature alone (AUROC)"
    assert values(chart)["complained"] > values(chart)["best other feature"]


def test_missing_outlier_label_and_aggregation_charts(findings) -> None:
    missing = chart_for(findings["missing_values"])
    assert values(missing) == {"age": 0.1} and missing["threshold"] == 0.6
    outliers = chart_for(findings["outliers"])
    assert values(outliers)["income"] == pytest.approx(5 / 300, abs=1e-4) and outliers["unit"] == "share of rows"
    labels = chart_for(findings["label_issues"])
    ev = findings["label_issues"].evidence
    assert sum(values(labels).values()) == pytest.approx(len(ev["given_labels"]) / ev["sample_size"])
    assert all(label.startswith("recorded '") for label in values(labels))
    visits = chart_for(findings["repeated_measurements"])
    assert values(visits) == {"mean": 1.67, "max": 2.0} and visits["threshold"] == 1.0
    assert visits["title"] == "Rows per id"
    for chart in (missing, outliers, labels, visits):
        assert json.loads(json.dumps(chart)) == chart  # plain JSON for the panel and the sidecar


def test_no_chart_without_numbers() -> None:
    assert chart_for(None) is None
    assert chart_for(Finding("survival_setup", [], "info", "", {"events": 3})) is None
    assert chart_for(Finding("target_leakage", ["x"], "critical", "", {"score": float("nan")})) is None
    assert chart_for(Finding("outliers", [], "info", "", "not a dict")) is None  # type: ignore[arg-type]
    many = Finding("missing_values", [], "info", "", {"columns": {f"c{i}": {"missing_rate": i / 100} for i in range(30)}})
    chart = chart_for(many)
    assert len(chart["bars"]) == 12 and chart["bars"][0] == {"label": "c29", "value": 0.29}  # worst first


def test_a_recoded_outcome_is_charted_as_agreement_against_chance() -> None:
    rng = np.random.default_rng(2)
    n = 400
    x = rng.normal(size=n)
    y = np.where(x + rng.normal(size=n) > 0, "benign", "malignant")
    copy = np.where(rng.random(n) < 0.1, np.where(y == "benign", "malignant", "benign"), y)
    df = pd.DataFrame({"x": x, "z": rng.normal(size=n), "review": copy, "y": y})
    (leak,) = [f for f in kt.diagnose(df, target="y").to_dict()["findings"] if f["kind"] == "target_leakage"]
    chart = chart_for(Finding.from_dict(json.loads(json.dumps(leak))))  # as the engine reads the kernel's JSON
    bars = values(chart)
    assert chart["unit"] == "share" and chart["threshold"] is None
    assert 0.85 < bars["review equals the outcome"] < 0.95 and bars["by chance (majority class)"] < 0.6


def test_a_finding_carries_its_chart_from_the_kernel_and_one_without_it_gets_its_declaration(findings) -> None:
    """The chart kind travels with the finding (the host draws it without loading the detectors);
    one written before it did (an old sidecar, an older kernel_tools) is drawn the same."""
    wires = {kind: f.to_dict() for kind, f in findings.items()}
    assert {kind: w["chart"] for kind, w in wires.items()} == {kind: declared_chart(kind) for kind in wires}
    assert wires["target_leakage"]["chart"] == Chart.LEAKAGE and wires["missing_values"]["chart"] == Chart.MISSING
    from lifelines.datasets import load_rossi

    setup = kt.diagnose(load_rossi(), target="arrest", time="week").by_kind("survival_setup")
    assert [f.to_dict()["chart"] for f in setup] == [Chart.NONE]  # said for a kind without one, not left out
    for kind, wire in wires.items():
        sent = Finding.from_dict(json.loads(json.dumps(wire)))
        old = Finding.from_dict({k: v for k, v in wire.items() if k != "chart"})
        assert sent.chart == wire["chart"] and old.chart is None and "chart" not in old.to_dict()
        assert chart_for(sent) == chart_for(old) == chart_for(findings[kind]), kind
    assert chart_for(findings["missing_values"]) is not None
    # a chart this host does not know is read, not drawn; one built here must be known
    assert chart_for(Finding.from_dict({**wires["missing_values"], "chart": "sparkline"})) is None
    with pytest.raises(ValueError, match="chart must be"):
        Finding("missing_values", [], "info", "", chart="sparkline")


def test_the_engines_own_findings_say_the_chart_their_kind_declares(tmp_path) -> None:
    """Findings the engine builds itself (no detector declared them in its process) name their
    chart, so drawing them loads no detector: the same one the detectors declare."""
    suspected = leak_finding("score", {"metric": "roc_auc", "cv_score": 0.99, "holdout_score": 0.98}, 0.99)
    session = Session(frame="df")
    diagnosis_failed(session, ProbeError("the kernel died"))
    (failed,) = session.findings
    for finding in (suspected, failed):
        assert finding.chart is not None and finding.chart == declared_chart(finding.kind), finding.kind
