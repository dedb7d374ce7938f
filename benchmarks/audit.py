"""The referee: a strict external audit of one co-pilot run against the documented truth.

It reads only what a run leaves behind — ``report.json`` (the model's features, metric and
scores, and the run's own verdict ``valid``) and ``notebook.ipynb`` (the code that actually
ran: which rows were aggregated how, what the split and the folds were grouped by) — and the
data file the notebook loaded. It imports nothing from ``jupyter_dcpilot``: the co-pilot's own
verdict (``jupyter_dcpilot.engine.validity``) is what is being checked, so it cannot be the
judge. A run passes only when

- ``features``: no documented leak, column recorded after the prediction time (follow-up or
  outcome-derived), identifier, the entity id, the target or the survival time is a model
  feature, also through a derived name (``x_missing``, ``x_last`` ...);
- ``entities``: rows of different entities are never merged (an aggregation by a column that
  repeats, where each row is its own entity); when rows repeat per entity, each entity sits on one side of every split and
  fold — aggregated to one row per entity, or split and cross-validated by a grouping that
  never separates an entity's rows — and, when the outcome counts from each entity's first
  record (``index="first"``), the features are what was known then: the first / baseline
  record, a landmark, or (start, stop] intervals fitted as intervals; with (start, stop] rows
  (``index="intervals"``) a model that reads every row as starting at time 0 is not valid; with
  matched sets (``index="sets"``: twins, relatives of one family, a matched pair, each row its own
  subject) each set sits on one side of every split, and merging a set to one row is not valid;
- ``joins``: files are joined on the documented key, never on another column (R's row names);
  features from an extra file of records over time come only through a window that ends at the
  index (``summarize_records``), never from records taken after it;
- ``target``: the model predicts the documented target; a survival model reads the documented
  time as its duration (not a censoring time or another clock) and does not read a documented
  event code as censored (``event``: the codes the documentation names events; the code the run
  read as censored is the one its ``recode_status`` cell named, else the readers' convention on
  the loaded codes: 0, or the lower of two);
- ``metric``: the metric fits the documented task (AUROC, R², C-index);
- ``holdout``: the held-out score confirms the cross-validated one (AUROC / C-index ≤ 0.55
  next to a cross-validated ≥ 0.60 fails; R² ≤ 0 next to ≥ 0.2).

A run is *quietly invalid* when its report says valid and the audit does not.

    python benchmarks/audit.py RUN_DIR --task survival --target status --time futime --event 1 \\
        --entity id --index first --follow-up day --identifiers rownames
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

RIGHT_METRIC = {"classification": "roc_auc", "regression": "r2", "survival": "c_index"}
HOLDOUT_FLOOR = {"roc_auc": 0.55, "c_index": 0.55, "r2": 0.0}  # no better than chance ...
CV_CLAIM = {"roc_auc": 0.60, "c_index": 0.60, "r2": 0.2}  # ... while cross-validation claims this
AT_INDEX = ("first", "baseline")  # aggregation rules that keep each entity's first record
INDEX_KINDS = ("row", "first", "intervals", "sets")
CALLS = ("aggregate_per_entity", "split", "fit_evaluate", "fit_evaluate_intervals", "to_intervals",
         "read_csv", "read_parquet", "join_frames", "summarize_records", "recode_status")
FITS = ("fit_evaluate", "fit_evaluate_intervals")
JOIN_SUFFIX = "_right"  # join_frames' suffix for a column both files hold


@dataclass
class Truth:
    """What is documented about a data set: the task and which columns may not be features.

    index: when a prediction is made, for data with an ``entity``: ``"row"`` (each record is
    its own prediction: grouping the entity's rows is enough), ``"first"`` (the outcome counts
    from each entity's first record), ``"intervals"`` ((start, stop] rows whose time counts
    from the first record) or ``"sets"`` (the ``entity`` names matched sets whose rows are
    distinct subjects, each its own prediction: a set is grouped, never merged into one row).
    """

    task: str
    target: str
    time: str | None = None
    entity: str | None = None
    index: str = "row"
    leaked: tuple[str, ...] = ()  # outcome-derived or otherwise giving the outcome away
    follow_up: tuple[str, ...] = ()  # recorded after the prediction time
    identifiers: tuple[str, ...] = ()
    join: str | None = None  # the documented key of a table of several files
    # the time column (counted from the index) of an extra file of records over time: its
    # records after the index may reach the model only through a window that ends at the index
    records: str | None = None
    extra_columns: tuple[str, ...] = ()  # the columns of the extra files
    # survival: the target's codes its documentation names events (numbers, or labels of a status
    # stored as text); empty when the documentation does not say (then only the duration is checked)
    event: tuple[float | str, ...] = ()

    def __post_init__(self) -> None:
        if self.task not in RIGHT_METRIC:
            raise ValueError(f"task must be one of {sorted(RIGHT_METRIC)}; got {self.task!r}")
        if self.index not in INDEX_KINDS:
            raise ValueError(f"index must be one of {INDEX_KINDS}; got {self.index!r}")

    def forbidden(self) -> dict[str, str]:
        """Column -> why it may not be a feature."""
        out: dict[str, str] = {self.target: "the target"}
        if self.time and self.task == "survival":
            out[self.time] = "the survival time"
        if self.entity:
            out[self.entity] = "the entity id"
        out.update({c: "an identifier" for c in self.identifiers})
        out.update({c: "recorded after the prediction time" for c in self.follow_up})
        out.update({c: "a documented leak" for c in self.leaked})
        return out


@dataclass
class Audit:
    """The audit of one run: each rule's problems (empty when it passed) and the run's claim."""

    said_valid: bool | None
    problems: dict[str, list[str]] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not any(self.problems.values())

    @property
    def quietly_invalid(self) -> bool:
        """The run's report says valid, the audit says not."""
        return bool(self.said_valid) and not self.passed

    def summary(self) -> str:
        bad = [f"{rule}: {'; '.join(p)}" for rule, p in self.problems.items() if p]
        return "passed" if not bad else " | ".join(bad)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "passed": self.passed, "quietly_invalid": self.quietly_invalid}


# ---------------------------------------------------------------- what the notebook ran


@dataclass
class Call:
    name: str
    args: list[Any]
    kwargs: dict[str, Any]


def _value(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return ast.unparse(node)  # a variable or an expression: its source


def notebook_calls(notebook: dict[str, Any]) -> list[Call]:
    """The calls of interest in the code cells that ran without an error, in order."""
    out: list[Call] = []
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        if any(o.get("output_type") == "error" for o in cell.get("outputs", [])):
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in CALLS:
                out.append(Call(name, [_value(a) for a in node.args],
                                {k.arg: _value(k.value) for k in node.keywords if k.arg}))
    return out


def _last(calls: list[Call], name: str) -> Call | None:
    return next((c for c in reversed(calls) if c.name == name), None)


def _arg(call: Call, name: str, position: int) -> Any:
    """A keyword argument, or the positional one at ``position`` (0 = the frame)."""
    if name in call.kwargs:
        return call.kwargs[name]
    return call.args[position] if len(call.args) > position else None


def loaded_data(calls: list[Call], workdir: Path) -> pd.DataFrame | None:
    """The first data file the notebook loaded (the co-pilot's starting point), if readable."""
    for call in calls:
        if call.name in ("read_csv", "read_parquet") and call.args and isinstance(call.args[0], str):
            path = Path(call.args[0])
            path = path if path.is_absolute() else workdir / path
            if path.is_file():
                return pd.read_csv(path) if call.name == "read_csv" else pd.read_parquet(path)
    return None


# ---------------------------------------------------------------- the rules


def _derived_from(feature: str, column: str, raw: set[str]) -> bool:
    """``feature`` is ``column`` or a name derived from it (``column_missing``, ``column_last``),
    unless that name is itself a column of the raw data."""
    return feature == column or (feature.startswith(f"{column}_") and feature not in raw)


def feature_problems(features: list[str], truth: Truth, raw: set[str]) -> list[str]:
    problems = []
    for column, why in truth.forbidden().items():
        used = [f for f in features if _derived_from(f, column, raw)]
        if used:
            problems.append(f"'{column}' ({why}) is a feature" + (f" as {used}" if used != [column] else ""))
    return problems


def _keeps_together(entity: str, grouping: Any, data: pd.DataFrame | None) -> bool:
    """Rows grouped by ``grouping`` never separate an ``entity``: the same column, or (checked
    on the loaded data) a column that is constant within each entity."""
    if not isinstance(grouping, str) or not grouping:
        return False
    if grouping == entity:
        return True
    if data is None or entity not in data.columns or grouping not in data.columns:
        return False
    return bool((data.groupby(entity, dropna=False)[grouping].nunique(dropna=False) <= 1).all())


def _at_index(aggregate: Call) -> bool:
    """Each entity's features as known at its first record: first/baseline, or a landmark."""
    if aggregate.kwargs.get("landmark") not in (None, "None"):
        return True
    how = _arg(aggregate, "how", 3)
    if how is None:
        return False  # aggregate_per_entity's default is "last"
    if isinstance(how, dict):
        return bool(how) and all(h in AT_INDEX for h in how.values())  # unlisted columns take "last"
    return how in AT_INDEX


def merged_rows(calls: list[Call], data: pd.DataFrame | None) -> list[str]:
    """Each row is its own entity, yet rows sharing a value of some column were merged into one."""
    aggregate = _last(calls, "aggregate_per_entity")
    if aggregate is None:
        return []
    key = _arg(aggregate, "id", 1)
    if data is not None and isinstance(key, str) and key in data.columns and data[key].is_unique:
        return []  # one row per value already: nothing merged
    return [f"rows were merged by '{key}', but each row is its own entity: the rows of different entities "
            "were averaged into one"]


def entity_problems(calls: list[Call], truth: Truth, data: pd.DataFrame | None) -> list[str]:
    if not truth.entity:
        return merged_rows(calls, data)
    entity = truth.entity
    aggregate = _last(calls, "aggregate_per_entity")
    intervals = _last(calls, "fit_evaluate_intervals")
    fit = _last(calls, "fit_evaluate")  # the last fit is the model reported
    split = _last(calls, "split")
    if aggregate is not None and _keeps_together(entity, _arg(aggregate, "id", 1), data):
        how = "landmark" if aggregate.kwargs.get("landmark") not in (None, "None") else _arg(aggregate, "how", 3)
        if truth.index == "sets":
            return [f"each set of '{entity}' was merged into one row (its '{how or 'last'}'), but its rows are distinct "
                    "subjects, each its own prediction: the other members were dropped or merged"]
        if truth.index != "row" and not _at_index(aggregate):
            return [f"one row per '{entity}' from the '{how or 'last'}' of its records, but the outcome counts "
                    "from the first record: the features hold what is known only after the prediction time"]
        return []
    if intervals is not None and _keeps_together(entity, _arg(intervals, "id", 1), data):
        return []
    if fit is None:
        return [f"rows repeat per '{entity}' and no model step shows how they were kept together"]
    problems = []
    if not _keeps_together(entity, fit.kwargs.get("groups"), data):
        problems.append(f"the cross-validation is not grouped by '{entity}' (groups={fit.kwargs.get('groups')!r})")
    if split is not None and not _keeps_together(entity, split.kwargs.get("groups"), data):
        problems.append(f"the train/test split is not grouped by '{entity}' (groups={split.kwargs.get('groups')!r})")
    if truth.index == "first":
        problems.append(f"every record of each '{entity}' is a training row, but the outcome counts from the first "
                        "record: later records hold what is known only after the prediction time")
    elif truth.index == "intervals":
        problems.append(f"(start, stop] rows of each '{entity}' fitted as if each began at time 0: the entry time "
                        "of every later interval is ignored")
    return problems


def _ends_at_index(call: Call) -> bool:
    until = call.kwargs.get("until", 0)  # summarize_records' window ends at the index by default
    return isinstance(until, (int, float)) and until <= 0


def _from_extra(feature: str, truth: Truth, raw: set[str]) -> bool:
    """The feature came from an extra file: one of its columns, or one both files held."""
    if feature in raw:
        return False
    own = [c for c in truth.extra_columns if c not in raw]
    return (feature in own or feature.endswith(JOIN_SUFFIX)
            or any(feature.startswith(f"{c}_") for c in own))


def join_problems(calls: list[Call], truth: Truth, features: list[str], raw: set[str]) -> list[str]:
    problems = []
    for call in calls:
        if call.name != "join_frames":
            continue
        on = _arg(call, "on", 2)
        keys = [on] if isinstance(on, str) else list(on) if isinstance(on, (list, tuple)) else [on]
        if truth.join is not None and keys != [truth.join]:
            problems.append(f"joined on {on!r}: the documented key is '{truth.join}'")
    if truth.records:
        windowed = any(c.name == "summarize_records" and _ends_at_index(c) for c in calls)
        later = [f for f in features if _from_extra(f, truth, raw)]
        if later and not windowed:
            problems.append(f"features from the records over time ({later[:4]}) include records taken after the "
                            f"index ('{truth.records}' > 0): no window ends at the index")
    return problems


def _same_code(a: Any, b: Any) -> bool:
    """Two status codes alike: 1 and 1.0 and '1' are one code, a label is compared as text."""
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return str(a) == str(b)


def read_as_censored(calls: list[Call], target: str, data: pd.DataFrame | None) -> Any:
    """The code of ``target`` (as loaded) the run's model read as censored: the one its
    ``recode_status`` cell named, else the survival readers' convention (kernel_tools' and
    lifelines'): 0 among non-negative codes, or the lower of two. None when it cannot be told."""
    recode = next((c for c in reversed(calls) if c.name == "recode_status" and _arg(c, "column", 1) == target), None)
    if recode is not None:
        return _arg(recode, "censored", 2) if _arg(recode, "censored", 2) is not None else 0
    if data is None or target not in data.columns:
        return None
    codes = data[target].dropna().unique()
    numbers = pd.to_numeric(pd.Series(codes), errors="coerce")
    if len(codes) and numbers.notna().all() and (numbers >= 0).all() and (numbers == 0).any():
        return 0
    if len(codes) == 2:
        try:
            return sorted(codes)[0]
        except TypeError:
            return sorted(map(str, codes))[0]
    return None


def target_problems(calls: list[Call], report: dict[str, Any], truth: Truth, data: pd.DataFrame | None) -> list[str]:
    """The model's target, duration and event coding against the documented ones."""
    fit = next((c for c in reversed(calls) if c.name in FITS), None)
    task = report.get("task") or {}
    if fit is None:
        target, time = task.get("target"), task.get("time")
    elif fit.name == "fit_evaluate":
        target, time = _arg(fit, "target", 1), _arg(fit, "time", 3)
    else:
        target, time = _arg(fit, "event", 4), _arg(fit, "stop", 3)
    problems = []
    if target != truth.target:
        problems.append(f"the model predicts {target!r}: the documented target is '{truth.target}'")
    if truth.task != "survival":
        return problems
    if truth.time and time != truth.time:
        problems.append(f"the model reads {time!r} as the survival time: the documented one is '{truth.time}'")
    if truth.event and target == truth.target:
        censored = read_as_censored(calls, truth.target, data)
        if censored is not None and any(_same_code(censored, e) for e in truth.event):
            events = ", ".join(map(str, truth.event))
            problems.append(f"'{truth.target}' = {censored} read as censored, but the documentation names {events} "
                            "the event: events and censored rows swapped")
    return problems


def metric_problems(model: dict[str, Any], truth: Truth) -> list[str]:
    expected = RIGHT_METRIC[truth.task]
    if model.get("metric") != expected:
        return [f"metric {model.get('metric')!r} for a {truth.task} task (expected {expected!r})"]
    return []


def holdout_problems(model: dict[str, Any]) -> list[str]:
    metric, cv, holdout = model.get("metric"), model.get("cv_score"), model.get("holdout_score")
    if not isinstance(holdout, (int, float)):
        return ["no held-out score"]
    if not isinstance(cv, (int, float)):
        return ["no cross-validated score"]
    floor, claim = HOLDOUT_FLOOR.get(metric), CV_CLAIM.get(metric)
    if floor is not None and holdout <= floor and cv >= claim:
        return [f"the holdout does not confirm the model: {metric} holdout {holdout:.3f}, cross-validated {cv:.3f}"]
    return []


def audit_run(out_dir: str | Path, truth: Truth) -> Audit:
    """Audit the run whose report.json and notebook.ipynb are in ``out_dir``."""
    out = Path(out_dir)
    report_path = out / "report.json"
    if not report_path.is_file():
        return Audit(None, {"report": [f"no report.json in {out}"]})
    report = json.loads(report_path.read_text())
    audit = Audit(report.get("valid") if isinstance(report.get("valid"), bool) else None)
    model = report.get("model") or {}
    if not model.get("features"):
        audit.problems["model"] = ["no model with features"]
        return audit
    notebook_path = out / "notebook.ipynb"
    notebook = json.loads(notebook_path.read_text()) if notebook_path.is_file() else {}
    if not notebook:
        audit.problems["notebook"] = ["no notebook: what ran cannot be checked"]
    calls = notebook_calls(notebook)
    data = loaded_data(calls, out)
    raw = set(map(str, data.columns)) if data is not None else set()
    features = [str(f) for f in model["features"]]
    audit.problems["features"] = feature_problems(features, truth, raw)
    audit.problems["entities"] = entity_problems(calls, truth, data)
    audit.problems["joins"] = join_problems(calls, truth, features, raw)
    audit.problems["target"] = target_problems(calls, report, truth, data)
    audit.problems["metric"] = metric_problems(model, truth)
    audit.problems["holdout"] = holdout_problems(model)
    return audit


def count(audits: list[Audit | None]) -> dict[str, int]:
    """Runs, runs whose report says valid, audits passed, quietly invalid runs."""
    done = [a for a in audits if a is not None]
    return {"runs": len(audits), "said_valid": sum(bool(a.said_valid) for a in done),
            "audit_passed": sum(a.passed for a in done),
            "quietly_invalid": sum(a.quietly_invalid for a in done)}


def _code(text: str) -> float | str:
    """A code given on the command line: a number when it reads as one, else a label."""
    try:
        return float(text)
    except ValueError:
        return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", help="the folder with report.json and notebook.ipynb")
    ap.add_argument("--task", required=True, choices=sorted(RIGHT_METRIC))
    ap.add_argument("--target", required=True)
    ap.add_argument("--time")
    ap.add_argument("--entity")
    ap.add_argument("--index", default="row", choices=INDEX_KINDS)
    ap.add_argument("--join", help="the documented key of a table of several files")
    ap.add_argument("--event", default="", help="survival: the comma-separated codes documented as the event")
    for name in ("leaked", "follow-up", "identifiers"):
        ap.add_argument(f"--{name}", default="", help="comma-separated columns")
    args = ap.parse_args(argv)

    def columns(text: str) -> tuple[str, ...]:
        return tuple(c for c in text.split(",") if c)

    truth = Truth(task=args.task, target=args.target, time=args.time, entity=args.entity, index=args.index,
                  leaked=columns(args.leaked), follow_up=columns(args.follow_up),
                  identifiers=columns(args.identifiers), join=args.join,
                  event=tuple(_code(c) for c in columns(args.event)))
    result = audit_run(args.run_dir, truth)
    print(json.dumps(result.to_dict(), indent=2))
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
