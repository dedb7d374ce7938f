"""The engine with interval rows: the time-varying option runs ``to_intervals`` and the model
step fits the interval model, for intervals it made and for data that came as intervals."""

from __future__ import annotations

from engine_fakes import FakeKernel, FakeNotebook, finding

from jupyter_dcpilot.engine.coordinator import ApprovalPolicy, Coordinator
from jupyter_dcpilot.engine.session import Session
from jupyter_dcpilot.engine.task import Given, Inputs, Task
from jupyter_dcpilot.engine.validity import audit

MODEL = {"metric": "c_index", "cv_score": 0.89, "cv_scores": [0.87, 0.89, 0.91], "holdout_score": 0.93, "model_name": "Time-varying Cox (penalized)",
         "warnings": [], "importance": [{"feature": "bili", "importance": 0.2}], "grouped": True}


def option(name, recommended=False, function=None, **params):
    return {"id": name, "label": name, "description": name, "risk": "r", "recommended": recommended,
            "action": {"function": function, "params": params} if function else None}


def visits(index, options, columns):
    rm = finding("repeated_measurements", columns[:2], "aggregation", options, severity="critical")
    return {"findings": [rm], "shape": [1945, len(columns)], "elapsed_s": 0.1, "sample_size": 1945,
            "task": {"kind": "survival", "target": "status", "time": columns[2], "event": "status", "id": "id",
                     "visit": columns[1], "reason": "duration and event", "index": index}}


def make(tmp_path, diagnosis, columns, policy):
    kernel = FakeKernel(diagnosis, model=dict(MODEL))
    kernel.columns = list(columns)
    notebook = FakeNotebook(kernel)
    session = Session(notebook=str(tmp_path / "nb.ipynb"), path=str(tmp_path / ".nb.ipynb.dcpilot.json"),
                      task=Task(given=Given(target="status", time=columns[2])), inputs=Inputs(frames=["df"]))
    session.variables["imports"] = True
    return Coordinator(session, kernel, notebook, policy=policy), kernel, notebook, session


PBCSEQ = ["id", "day", "futime", "status", "bili"]
FIRST = {"kind": "entity_start", "column": "day", "label": "each entity's first record (by 'day')"}
PBCSEQ_OPTIONS = [option("aggregate_first", True, "aggregate_per_entity", id="id", time="day", how="baseline"),
                  option("time_varying", False, "to_intervals", id="id", time="day", duration="futime",
                         event="status"),
                  option("keep")]


async def test_the_time_varying_option_fits_the_interval_model(tmp_path):
    policy = ApprovalPolicy(mode="file", choices={"aggregation": "time_varying", "*": "recommended"})
    coord, kernel, notebook, session = make(tmp_path, visits(FIRST, PBCSEQ_OPTIONS, PBCSEQ), PBCSEQ, policy)
    assert await coord.run_until_blocked() == "finished"
    code = notebook.sources()
    assert "df, aggregation = kt.to_intervals(df, id='id', time='day', duration='futime', event='status')" in code[0]
    assert any("kt.split(df, target='status', groups='id'" in c for c in code)
    model = [c for c in code if "model = " in c]
    assert model == [c for c in code if "model = kt.fit_evaluate_intervals(train, id='id', start='day', "
                     "stop='futime', event='status', test=test, preprocess=[])" in c] and model
    assert session.task.start == "day" and session.task.stop == "futime"
    # the event moves to the interval that ends at it: the post-step checks allow that change
    validate = [kw for name, _, kw in kernel.calls if name == "validate_json"]
    assert validate[0]["expect"] == {"target_changes": True}
    step = next(s for s in session.plan if s.episode == "train_evaluate")
    assert step.result["function"] == "fit_evaluate_intervals"
    checks = {c.check: c for c in audit(session)}
    assert checks["known_at_index"].passed and "('day', 'futime'] interval" in checks["known_at_index"].detail

    # undone, the intervals are gone and so is what the task knew of them
    aggregation = next(s for s in session.plan if s.episode == "aggregate")
    await coord.undo(aggregation.checkpoint_id)
    assert session.task.start is None and session.task.stop is None


async def test_the_first_visit_still_fits_the_usual_model(tmp_path):
    coord, kernel, notebook, session = make(tmp_path, visits(FIRST, PBCSEQ_OPTIONS, PBCSEQ), PBCSEQ,
                                            ApprovalPolicy.from_spec("recommended"))
    assert await coord.run_until_blocked() == "finished"
    code = notebook.sources()
    assert not any("to_intervals" in c or "fit_evaluate_intervals" in c for c in code)
    assert any("model = kt.fit_evaluate(train, target='status', task='survival', time='futime'" in c for c in code)


async def test_data_that_came_as_intervals_and_was_kept_fits_the_interval_model(tmp_path):
    cgd = ["id", "tstart", "tstop", "status", "treat"]
    index = {"kind": "row", "column": "tstart", "start": "tstart", "label": "each row's own time"}
    options = [option("aggregate_first", False, "aggregate_per_entity", id="id", time="tstart", how="baseline"),
               option("keep", True)]
    coord, kernel, notebook, session = make(tmp_path, visits(index, options, cgd), cgd,
                                            ApprovalPolicy.from_spec("recommended"))
    assert await coord.run_until_blocked() == "finished"
    code = notebook.sources()
    assert any("model = kt.fit_evaluate_intervals(train, id='id', start='tstart', stop='tstop', "
               "event='status', test=test" in c for c in code)
    assert "known_at_index" not in {c.check for c in audit(session) if not c.passed}

    # aggregated to one row per entity, the rows are no longer intervals
    policy = ApprovalPolicy(mode="file", choices={"aggregation": "aggregate_first", "*": "recommended"})
    coord, kernel, notebook, session = make(tmp_path, visits(index, options, cgd), cgd, policy)
    assert await coord.run_until_blocked() == "finished"
    assert any("model = kt.fit_evaluate(train" in c for c in notebook.sources())
