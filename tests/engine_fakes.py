"""In-memory stand-ins for a kernel and a notebook, for the engine's unit tests.

``FakeKernel`` answers the engine's silent probes (it parses the probe expression the engine
really sends) from a hand-made Diagnosis and a tiny model of the frame's columns;
``FakeNotebook`` records cells and can be told to fail some of them.
"""

from __future__ import annotations

import ast
import copy
import re
from typing import Any

from jupyter_dcpilot.engine.hosts import CellResult


def option(id, recommended=False, function=None, **params):
    return {"id": id, "label": id, "description": id, "risk": "r", "recommended": recommended,
            "action": {"function": function, "params": params} if function else None}


def finding(kind, columns, gate, options, severity="warning"):
    return {"id": f"{kind}:{','.join(columns)}", "kind": kind, "columns": columns, "severity": severity,
            "summary": f"{kind} in {columns}", "evidence": {"score": 0.9, "rows": 200}, "options": options,
            "gate": gate}


def churn_diagnosis():
    findings = [
        finding("target_leakage", ["complained"], "leakage",
                [option("drop", True, "drop_columns", columns=["complained"], reason="leak"),
                 option("keep")], severity="critical"),
        finding("id_column", ["customer_id"], "identifiers",
                [option("drop", True, "drop_columns", columns=["customer_id"], reason="identifier"),
                 option("keep")]),
        finding("missing_values", ["age"], "imputation",
                [option("impute_median", True, "impute", method="median", target="y"),
                 option("keep")]),
        finding("outliers", ["income"], "outliers",
                [option("remove", True, "handle_outliers", columns=["income"], action="remove"),
                 option("clip", False, "handle_outliers", columns=["income"], action="clip"),
                 option("keep")]),
    ]
    return {"findings": findings, "shape": [200, 6], "elapsed_s": 0.1, "sample_size": 200,
            "task": {"kind": "classification", "target": "y", "time": None, "event": None, "id": None,
                     "visit": None, "reason": "binary target",
                     "index": {"kind": "row", "column": None, "reason": "no dates or entities",
                               "label": "each row's own time"}},
            # a plain table's structure: every choice clear from the data (kernel_tools.inferences)
            "inferences": [{"what": "task", "value": "classification", "confidence": "high"},
                           {"what": "entity", "value": None, "confidence": "high"},
                           {"what": "index", "value": "each row's own time", "confidence": "high"}]}


class FakeKernel:
    """Answers probes; ``model`` is what report_json('model') returns."""

    def __init__(self, diagnosis: dict[str, Any], model: dict[str, Any] | None = None,
                 retention: dict[str, float] | None = None, leak_scores: bool = False,
                 memory: tuple[int, int] | None = None) -> None:
        self.leak_scores = leak_scores  # a model that sees 'complained' scores 0.999
        self.memory = memory  # (the frame's bytes, the bytes the machine has left)
        self.diagnosis = diagnosis
        self.columns = ["customer_id", "age", "income", "complained", "plan", "y"]
        self.rows = 200
        self.model = model or {"metric": "roc_auc", "cv_score": 0.81, "holdout_score": 0.8,
                               "cv_scores": [0.79, 0.81, 0.83],
                               "model_name": "hgb", "warnings": [],
                               "importance": [{"feature": "complained", "importance": 0.4},
                                              {"feature": "income", "importance": 0.1}],
                               "grouped": False}
        self.retention = retention or {}  # text in a cell -> share of rows that cell keeps
        self.calls: list[tuple[str, list, dict]] = []
        self.saved: dict[str, dict[str, Any]] = {}
        self.restored: list[str] = []
        self.last_function: str | None = None

    async def evaluate(self, expression: str) -> Any:
        call = ast.parse(expression, mode="eval").body
        name = call.func.attr
        args = [ast.literal_eval(a) for a in call.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
        self.calls.append((name, args, kwargs))
        return getattr(self, name)(*args, **kwargs)

    def names(self, probe: str) -> list[str]:
        return [c[0] for c in self.calls if c[0] == probe]

    # -- the probes ------------------------------------------------------------------------
    def diagnose_json(self, name, **hints):
        d = copy.deepcopy(self.diagnosis)
        d["findings"] = [f for f in d["findings"] if all(c in self.columns for c in f["columns"])]
        d["shape"] = [self.rows, len(self.columns)]
        return d

    def frame_info_json(self, names):
        memory = dict(zip(("memory_bytes", "available_bytes"), self.memory)) if self.memory else {}
        return {n: {"type": "DataFrame", "rows": self.rows, "cols": len(self.columns),
                    "columns": list(self.columns), **memory} for n in names}

    def fingerprint_json(self, names):
        return {n: {"name": n, "rows": self.rows, "columns": list(self.columns), "dtypes": ["int64"] * len(self.columns),
                    "sample_sha256": f"{self.rows}:{','.join(self.columns)}"} for n in names}

    def parameters_json(self, function):
        return ["df", "target", "task", "time", "groups", "test", "preprocess", "budget"]

    def warm_json(self, functions):
        return {"warmed": list(functions)}

    def checkpoint_save_json(self, names, label):
        cid = f"k{len(self.saved) + 1}"
        self.saved[cid] = {"columns": list(self.columns), "rows": self.rows}
        return {"id": cid, "saved": names, "absent": []}

    def checkpoint_restore_json(self, cid):
        state = self.saved[cid]
        self.columns, self.rows = list(state["columns"]), state["rows"]
        self.restored.append(cid)
        return {"restored": ["df"], "removed": []}

    def checkpoint_problem_json(self, cid):
        return {"problem": None if cid in self.saved else f"this kernel has no checkpoint {cid!r}"}

    def checkpoint_discard_json(self, cid):
        return {"discarded": cid}

    def report_json(self, name):
        if name == "model":
            model = copy.deepcopy(self.model)
            model.setdefault("features", [c for c in self.columns if c not in ("y", "customer_id")])
            if "complained" in self.columns and self.leak_scores:
                model["cv_score"] = model["holdout_score"] = 0.999
            return model
        return {"operation": self.last_function, "rows_in": 200, "rows_out": self.rows,
                "columns_removed": [], "transformer": "X", "warnings": []}

    def split_audit_json(self, train, test, groups=None, same_source=True):
        return {"train_rows": int(self.rows * 0.8), "test_rows": self.rows - int(self.rows * 0.8),
                "groups": groups, "shared_rows": 0, **({"shared_entities": 0} if groups else {})}

    def validate_json(self, checkpoint_id, before, after, target=None, expect=None, train_test=None):
        before_rows = self.saved[checkpoint_id]["rows"]
        failures = []
        if self.rows < 0.5 * before_rows:
            failures.append({"check": "row_retention", "severity": "error",
                             "message": f"only {self.rows} of {before_rows} rows kept"})
        return {"failures": failures, "rows_before": before_rows, "rows_after": self.rows,
                "cols_before": 0, "cols_after": 0}

    # -- what a cell does ------------------------------------------------------------------
    def run(self, source: str) -> None:
        match = re.search(r"kt\.(\w+)\(", source)
        self.last_function = match.group(1) if match else None
        if self.last_function == "drop_columns":
            cols = ast.literal_eval(re.search(r"columns=(\[.*?\])", source).group(1))
            self.columns = [c for c in self.columns if c not in cols]
        for marker, share in self.retention.items():
            if marker in source:
                self.rows = int(self.rows * share)


class FakeNotebook:
    """Records cells; a cell whose source contains one of ``fail_on`` raises in the 'kernel'."""

    def __init__(self, kernel: FakeKernel, fail_on: tuple[str, ...] = ()) -> None:
        self.kernel = kernel
        self.fail_on = fail_on
        self.cells: list[dict[str, Any]] = []
        self.deleted: list[str] = []
        self.ran: list[str] = []

    async def run_cell(self, source, metadata):
        cid = f"c{len(self.cells) + len(self.deleted) + 1}"
        self.cells.append({"id": cid, "source": source, "metadata": metadata, "type": "code"})
        self.ran.append(source)
        if any(marker in source for marker in self.fail_on):
            return CellResult(cid, [], {"ename": "ValueError", "evalue": "scripted failure", "traceback": []})
        self.kernel.run(source)
        return CellResult(cid, [{"output_type": "execute_result", "data": {"text/plain": "ok"}}], None)

    async def insert_markdown(self, source, metadata):
        cid = f"c{len(self.cells) + len(self.deleted) + 1}"
        self.cells.append({"id": cid, "source": source, "metadata": metadata, "type": "markdown"})
        return cid

    async def delete_cells(self, cell_ids):
        self.deleted += list(cell_ids)
        self.cells = [c for c in self.cells if c["id"] not in set(cell_ids)]

    def sources(self, kind="code"):
        return [c["source"] for c in self.cells if c["type"] == kind]
