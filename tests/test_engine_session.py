"""Session: state bank persisted to a sidecar, exact reload, decisions, events."""

from __future__ import annotations

import asyncio
import json

import pytest

from jupyter_dcpilot.engine.session import Checkpoint, Decision, DecisionClosed, Session, Step, sidecar_path
from jupyter_dcpilot.engine.task import Given, Inputs, Task
from jupyter_dcpilot.engine.wire import DecisionOption
from kernel_tools.findings import Finding, Option
from kernel_tools.vocabulary import SessionState, StepStatus, TaskKind


def _populated(tmp_path):
    s = Session(notebook=str(tmp_path / "nb.ipynb"), path=str(sidecar_path(tmp_path / "nb.ipynb")),
                task=Task(given=Given(target="y")), inputs=Inputs(frames=["df"]))
    s.task = Task(kind="classification", target="y", id=None)
    s.findings = [Finding("target_leakage", ["x"], "critical", "x leaks", {"auroc": 0.99}, [
        Option("drop", "Drop x", "", "", True, {"function": "drop_columns", "params": {"columns": ["x"]}}),
        Option("keep", "Keep x", "", "")], "leakage")]
    s.plan = [Step(id="s1", episode="remove_leakage", title="Remove leakage: x", gate="leakage",
                   finding_ids=["target_leakage:x"], columns=["x"], decision_id="d2")]
    s.decisions = [Decision(id="d2", step_id="s1", gate="leakage", question="x leaks?",
                            options=[DecisionOption.of(o) for o in s.findings[0].options], recommended="drop",
                            columns=["x"])]
    s.checkpoints = [Checkpoint(id="k1", step_id="s1", label="before s1", names=["df"], cell_count=0,
                                snapshot=s.snapshot())]
    s.llm_usage = [{"purpose": "plan", "input_tokens": 10, "output_tokens": 3, "cost_usd": 0.0001}]
    s.log("observe", "diagnosed")
    return s


def test_reload_restores_the_session_exactly(tmp_path):
    s = _populated(tmp_path)
    s.decide("d2", "drop", "it is filed after the outcome")
    loaded = Session.load(s.path)
    assert loaded == s
    assert loaded.decisions[0].choice == "drop" and loaded.decisions[0].by == "user"
    assert loaded.plan[0].gate == "leakage"
    assert loaded.checkpoints[0].snapshot.findings[0].id == "target_leakage:x"
    assert isinstance(loaded.findings[0], Finding) and loaded.decisions[0].option("drop").action["function"] == "drop_columns"
    assert loaded.task.kind is TaskKind.CLASSIFICATION and loaded.plan[0].status is StepStatus.PROPOSED
    # a change after reload is saved too
    loaded.instruct("log-transform income")
    assert Session.load(s.path).instructions[0]["text"] == "log-transform income"


def test_every_change_is_persisted_and_announced(tmp_path):
    s = _populated(tmp_path)
    events = []
    unsubscribe = s.subscribe(events.append)
    s.decide("d2", "keep", "known before the outcome", by="policy")
    on_disk = json.loads(open(s.path).read())
    assert on_disk["decisions"][0]["choice"] == "keep" and on_disk["decisions"][0]["by"] == "policy"
    assert events[-1]["type"] == "decision" and events[-1]["decision"]["choice"] == "keep"
    unsubscribe()
    s.log("note", "after unsubscribe")
    assert len(events) == 1


def test_a_coalescing_session_writes_a_burst_of_changes_once_before_the_next_await(tmp_path, monkeypatch):
    s = _populated(tmp_path)
    s.save()
    s.coalesce = True
    writes = []
    save = Session.save
    monkeypatch.setattr(Session, "save", lambda self: (writes.append(self.transcript[-1]["text"]), save(self))[1])

    async def burst_then_await():
        for i in range(5):
            s.log("note", f"change {i}")
        assert writes == []  # not yet: the loop has not turned
        await asyncio.sleep(0)  # what the coordinator does next: await the kernel
        assert writes == ["change 4"]  # once, with every change of the burst
        on_disk = json.loads(open(s.path).read())
        assert [e["text"] for e in on_disk["transcript"][-5:]] == [f"change {i}" for i in range(5)]
        s.log("note", "the last")
        s.flush()  # the command line's end: written now, not left for a turn that may not come
        assert writes == ["change 4", "the last"]
        await asyncio.sleep(0)
        assert writes == ["change 4", "the last"]  # nothing left to write

    asyncio.run(burst_then_await())
    s.log("note", "outside a loop")  # no loop to wait for: written at once
    assert writes == ["change 4", "the last", "outside a loop"]


def test_a_coalesced_write_that_fails_raises_at_the_next_change(tmp_path):
    s = _populated(tmp_path)
    s.coalesce = True
    (tmp_path / "a file").write_text("")
    s.path = str(tmp_path / "a file" / "sidecar.json")  # its folder cannot be made

    async def go():
        s.log("note", "lost?")
        await asyncio.sleep(0)
        with pytest.raises(OSError):
            s.log("note", "the next change")

    asyncio.run(go())


def test_each_checkpoint_is_encoded_once_and_the_sidecar_follows_undo(tmp_path, monkeypatch):
    from jupyter_dcpilot.engine import session as session_module

    s = _populated(tmp_path)
    encoded = []
    encode = session_module.encode
    monkeypatch.setattr(session_module, "encode", lambda value: (encoded.append(type(value).__name__), encode(value))[1])
    s.checkpoints.append(Checkpoint(id="k2", step_id="s1", label="before s1 again", names=["df"], cell_count=1,
                                    snapshot=s.snapshot()))
    for i in range(3):
        s.log("note", f"save {i}")
    assert encoded.count("Checkpoint") == 1  # the new one, once; k1's from the save before
    assert Session.load(s.path) == s
    s.checkpoints.pop()  # an undo
    s.checkpoints.append(Checkpoint(id="k3", step_id="s1", label="a new one", names=["df"], cell_count=2,
                                    snapshot=s.snapshot()))
    s.log("note", "after the undo")
    assert encoded.count("Checkpoint") == 2
    assert [c.id for c in Session.load(s.path).checkpoints] == ["k1", "k3"]
    assert Session.load(s.path) == s


KILLED_AFTER_A_DECISION = """
import asyncio, os, signal, sys
sys.path.insert(0, {tests!r})
from test_engine_session import _populated
from pathlib import Path

async def decide_then_die():
    s = _populated(Path({folder!r}))
    s.save()
    s.coalesce = True  # as the command line runs: the write waits for the loop's next turn
    s.decide("d2", "drop", "filed after the outcome", by="policy")
    s.log("note", "the step goes on")
    await asyncio.sleep(0)  # the next await (the kernel's work), then the process dies
    os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(decide_then_die())
"""


def test_a_decision_made_then_the_process_killed_is_in_the_sidecar(tmp_path):
    import signal
    import subprocess
    import sys
    from pathlib import Path

    script = KILLED_AFTER_A_DECISION.format(tests=str(Path(__file__).parent), folder=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr
    loaded = Session.load(sidecar_path(tmp_path / "nb.ipynb"))
    assert loaded.trusted, loaded.trust_note  # signed whole: the write was not cut short
    assert loaded.decisions[0].choice == "drop" and loaded.decisions[0].by == "policy"
    assert loaded.transcript[-1]["text"] == "the step goes on"
    assert not list(tmp_path.glob(".dcpilot-*.tmp"))


def test_each_pooled_entry_is_hashed_once_and_the_file_is_the_same(tmp_path, monkeypatch):
    from jupyter_dcpilot.engine import sidecar_io

    s = _populated(tmp_path)
    hashed = []
    key = sidecar_io._key
    monkeypatch.setattr(sidecar_io, "_key", lambda value: (hashed.append(1), key(value))[1])
    s.checkpoints.append(Checkpoint(id="k2", step_id="s1", label="again", names=["df"], cell_count=1,
                                    snapshot=s.snapshot()))
    s.log("note", "a new checkpoint")
    first = len(hashed)
    assert first == len(s.findings) + len(s.plan)  # the new checkpoint's entries; k1's were known
    for i in range(3):
        s.log("note", f"save {i}")
    assert len(hashed) == first  # the checkpoint's entries: hashed at the first save only
    with_cache = open(s.path).read()
    s._pool_keys.clear()
    s.save()
    assert open(s.path).read() == with_cache  # the same file as hashing afresh
    s.checkpoints.pop()  # an undo: its entries are let go
    s.log("note", "after the undo")
    assert len(s._pool_keys) == len(s.findings) + len(s.plan)
    assert Session.load(s.path) == s


def test_decide_rejects_unknown_options_and_deciders(tmp_path):
    s = _populated(tmp_path)
    with pytest.raises(ValueError, match="unknown option 'maybe'"):
        s.decide("d2", "maybe")
    with pytest.raises(ValueError, match="by must be"):
        s.decide("d2", "drop", by="robot")
    with pytest.raises(KeyError, match="no decision 'd9'"):
        s.decide("d9", "drop")
    assert s.decisions[0].choice is None


def test_sidecar_is_hidden_next_to_the_notebook_and_reused(tmp_path):
    nb = tmp_path / "analysis.ipynb"
    assert sidecar_path(nb) == tmp_path / ".analysis.ipynb.dcpilot.json"
    first = Session.for_notebook(nb, frame="data")
    first.log("note", "hello")
    again = Session.for_notebook(nb)
    assert again.frame == "data" and again.transcript[0]["text"] == "hello"


def test_snapshot_restore_round_trip(tmp_path):
    s = _populated(tmp_path)
    snap = s.snapshot()
    s.plan[0].status = "done"
    s.handled.append("target_leakage:x")
    s.data_version = 3
    s.restore_snapshot(snap)
    assert s.plan[0].status == "proposed" and s.handled == [] and s.data_version == 0


def test_a_decision_is_answered_once_and_again_only_after_a_reopen(tmp_path):
    s = _populated(tmp_path)
    s.decide("d2", "drop", "it is filed after the outcome")
    with pytest.raises(DecisionClosed, match="already answered"):  # e.g. a stale card's second click
        s.decide("d2", "keep", via="magic")
    assert s.decisions[0].choice == "drop" and Session.load(s.path).decisions[0].choice == "drop"
    s.decisions[0].reopen("undone by the user")
    s.decide("d2", "keep", via="magic")
    assert s.decisions[0].choice == "keep" and s.decisions[0].via == "magic"
    assert s.decisions[0].history[0]["choice"] == "drop"


def test_a_decision_whose_step_no_longer_waits_takes_no_answer(tmp_path):
    s = _populated(tmp_path)
    s.plan[0].status = StepStatus.SKIPPED
    with pytest.raises(DecisionClosed, match="asks nothing any more"):
        s.decide("d2", "drop")
    assert s.decisions[0].choice is None


def test_a_sidecar_written_before_the_typed_core_still_loads(tmp_path):
    """``task`` and ``hints`` as two dicts, findings and options as dicts, statuses as strings."""
    old = {"notebook": "nb.ipynb", "frame": "visits", "state": "blocked",
           "task": {"kind": "survival", "target": "death", "time": "futime", "id": "pid", "confirmed": True,
                    "index": {"kind": "entity_start", "label": "each pid's first record"}},
           "hints": {"target": "death", "time": "futime", "task": "auto", "id": None, "index": "first",
                     "frames": ["visits"], "test_path": "test.csv", "share": "schema"},
           "findings": [{"id": "outliers:age", "kind": "outliers", "columns": ["age"], "severity": "warning",
                         "summary": "age", "evidence": {}, "gate": "outliers",
                         "options": [{"id": "keep", "label": "Keep", "description": "", "risk": "",
                                      "recommended": True, "action": None}]}],
           "plan": [{"id": "s1", "episode": "outliers", "title": "Outliers", "status": "awaiting_decision",
                     "decision_id": "d1"}],
           "decisions": [{"id": "d1", "step_id": "s1", "gate": "outliers", "question": "?",
                          "options": [{"id": "keep", "label": "Keep", "description": "", "risk": "",
                                       "recommended": True, "action": None, "impact": {"metric": "c_index"}}]}],
           "checkpoints": [{"id": "k1", "step_id": "s1", "label": "before", "names": ["visits"], "cell_count": 0,
                            "snapshot": {"task": {"kind": "survival", "target": "death"}, "findings": [],
                                         "diagnosis": {}, "plan": [], "handled": [], "variables": {},
                                         "data_version": 0, "diagnosed_version": -1}}]}
    path = tmp_path / ".nb.ipynb.dcpilot.json"
    path.write_text(json.dumps(old))
    s = Session.load(path)  # unsigned: history only, but every part decoded
    assert s.inputs.frames == ["visits"] and s.inputs.test_path == "test.csv"
    assert s.decisions[0].options[0].impact == {"metric": "c_index"}
    assert s.checkpoints == [] and s.state is SessionState.IDLE  # as history: nothing to restore
    trusted = Session.from_dict(old)
    assert trusted.task.given == Given(target="death", time="futime", index="first")
    assert trusted.task.kind is TaskKind.SURVIVAL and trusted.task.confirmed and trusted.task.id == "pid"
    assert trusted.findings[0].id == "outliers:age" and trusted.plan[0].status is StepStatus.AWAITING_DECISION
    assert trusted.checkpoints[0].snapshot.task.kind is TaskKind.SURVIVAL
    assert trusted.task.diagnosis_args() == {"target": "death", "time": "futime", "id": "pid", "task": "survival",
                                             "index": "first"}


def test_next_decision_is_the_one_question_to_ask_now_in_plan_order(tmp_path):
    """One card at a time (issue 29): the waiting step's question, else the next step's; none while
    a step before it still has to run (a question reopened by an undo waits for the split)."""
    s = _populated(tmp_path)
    leak = s.decisions[0]
    s.plan.insert(0, Step(id="s0", episode="split", title="Split", gate=None))
    s.plan.append(Step(id="s2", episode="handle_outliers", title="Outliers", gate="outliers", decision_id="d3"))
    s.decisions.append(Decision(id="d3", step_id="s2", gate="outliers", question="clip?",
                                options=[DecisionOption(id="clip", label="Clip", description="", risk="")]))
    assert s.next_decision() is None  # the split runs first
    s.plan[0].status = StepStatus.DONE
    assert s.next_decision() is leak
    s.plan[2].status = StepStatus.AWAITING_DECISION  # the run waits at a later step: its question first
    assert s.next_decision() is s.decisions[1]
    s.plan[2].status = StepStatus.PROPOSED
    s.decide("d2", "drop")
    s.plan[1].status = StepStatus.DONE
    assert s.next_decision() is s.decisions[1]
    s.decide("d3", "clip")
    assert s.next_decision() is None
