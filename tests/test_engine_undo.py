"""Undo that resumes, and interrupts, on the engine's fake hosts."""

from __future__ import annotations

from engine_fakes import FakeKernel, FakeNotebook, churn_diagnosis

from jupyter_dcpilot.engine.coordinator import ApprovalPolicy, Coordinator
from jupyter_dcpilot.engine.hosts import CellResult
from jupyter_dcpilot.engine.session import Session
from jupyter_dcpilot.engine.task import Given, Inputs, Task
from jupyter_dcpilot.probe import ProbeError


def make(tmp_path, policy="recommended", notebook_class=FakeNotebook):
    kernel = FakeKernel(churn_diagnosis())
    notebook = notebook_class(kernel)
    session = Session(notebook=str(tmp_path / "nb.ipynb"), path=str(tmp_path / ".nb.ipynb.dcpilot.json"),
                      task=Task(given=Given(target="y")), inputs=Inputs(frames=["df"]))
    session.variables["imports"] = True
    coordinator = Coordinator(session, kernel, notebook, policy=ApprovalPolicy.from_spec(policy, files=True))
    return coordinator, kernel, notebook, session


def by_episode(session, episode):
    return next(s for s in session.plan if s.episode == episode)


async def test_undo_reopens_decisions_and_restores_later_checkpoints_newest_first(tmp_path):
    coord, kernel, notebook, session = make(tmp_path)
    assert await coord.run_until_blocked() == "finished"
    leak, outliers = by_episode(session, "remove_leakage"), by_episode(session, "outliers")
    leak_decision, outlier_decision = session.decision(leak.decision_id), session.decision(outliers.decision_id)
    checkpoint = leak.checkpoint_id
    later = [c.id for c in session.checkpoints[session.checkpoints.index(session.checkpoint(checkpoint)) + 1:]]
    assert later  # split, imputation, outliers, model ran after the leakage step
    kernel.restored.clear()
    await coord.undo(checkpoint)
    # every later checkpoint is restored, newest first, then the one undone to
    assert kernel.restored == [*reversed(later), checkpoint] and "complained" in kernel.columns
    assert session.state == "idle" and session.checkpoints == []
    assert [s.status for s in session.plan[1:]] == ["proposed"] * (len(session.plan) - 1)
    assert all(not s.cell_ids and s.checkpoint_id is None and not s.result for s in session.plan[1:])
    # the undone step's decision goes back to the user; the policy's later ones to the policy
    assert leak_decision.choice is None and leak_decision.reopened
    assert leak_decision.history[0]["choice"] == "drop" and leak_decision.history[0]["by"] == "policy"
    assert outliers.decision_id is None and outlier_decision not in session.decisions  # the policy decides again
    assert session.open_decisions() == [leak_decision]
    assert Session.load(session.path) == session

    # resuming asks the undone decision again (same step, same decision id), the policy does not answer it
    assert await coord.run_until_blocked() == "blocked"
    assert session.step(leak.id).status == "awaiting_decision"
    assert [d.id for d in session.open_decisions()] == [leak_decision.id]
    session.decide(leak_decision.id, "keep", "known at prediction time")
    assert await coord.run_until_blocked() == "finished"
    assert session.step(leak.id).status == "done" and "complained" in kernel.columns
    renewed = session.decision(session.step(outliers.id).decision_id)
    assert renewed.by == "policy" and renewed.id != outlier_decision.id and session.step(outliers.id).status == "done"
    # the undone drop cell left the notebook; "keep" runs nothing
    assert not [c for c in notebook.sources() if "columns=['complained']" in c]
    assert any("columns=['complained']" in c for c in notebook.ran)


async def test_a_user_answer_is_asked_again_after_undo(tmp_path):
    coord, kernel, notebook, session = make(tmp_path, policy="ask")
    for _ in range(10):
        if await coord.run_until_blocked() != "blocked":
            break
        decision = session.open_decisions()[0]
        session.decide(decision.id, decision.recommended, "expert")
    first = next(c for c in session.checkpoints)
    steps_after = [s.id for s in session.plan if s.decision_id and s.status == "done"
                   and s.checkpoint_id and s.checkpoint_id != first.id]
    for st in steps_after:  # estimated on the data as it was then
        decision = session.decision(session.step(st).decision_id)
        decision.impact = {"status": "done", "best": decision.options[0].id}
        decision.options[0].impact = {"metric": "roc_auc", "mean": 0.9, "sd": 0.01, "rows": 9, "columns": 2,
                                      "top_features": [], "flags": []}
    await coord.undo(first.id)
    reopened = [session.decision(session.step(s).decision_id) for s in steps_after]
    assert reopened and all(d.reopened and d.choice is None for d in reopened)  # the user answered them
    # asked again with a fresh estimate, never with the old chart
    assert all(d.impact is None and all(o.impact is None for o in d.options) for d in reopened)
    assert await coord.run_until_blocked() == "blocked"


async def test_backtracking_still_marks_steps_undone(tmp_path):
    coord, kernel, notebook, session = make(tmp_path)
    await coord.run_until_blocked()
    leak = by_episode(session, "remove_leakage")
    async with coord._lock:
        await coord.backtrack(leak, "test")
    assert session.step(leak.id).status == "undone"
    assert session.decision(leak.decision_id).choice == "drop"  # kept: backtracking excludes it instead
    assert session.exclusions[leak.finding_ids[0]] == ["drop"]


class InterruptedNotebook(FakeNotebook):
    """The user interrupts the kernel while the split cell runs; with ``missed`` the signal
    reaches an idle kernel (the cell being inserted) and the cell runs to its end anyway."""

    missed = False

    def __init__(self, kernel):
        super().__init__(kernel)
        self.coordinator = None

    async def run_cell(self, source, metadata):
        if metadata["dcpilot"]["episode"] == "split" and not any("kt.split(" in s for s in self.ran):
            assert "Split" in self.coordinator.interrupt()
            if not self.missed:
                self.ran.append(source)
                cid = f"c{len(self.cells) + len(self.deleted) + 1}"
                self.cells.append({"id": cid, "source": source, "metadata": metadata, "type": "code"})
                return CellResult(cid, [], {"ename": "KeyboardInterrupt", "evalue": "", "traceback": []})
        return await super().run_cell(source, metadata)


async def test_an_interrupted_step_fails_without_retry_and_the_session_stays_usable(tmp_path):
    coord, kernel, notebook, session = make(tmp_path, notebook_class=InterruptedNotebook)
    notebook.coordinator = coord
    assert coord.interrupt() is None  # nothing runs yet
    assert await coord.run_until_blocked() == "idle"
    split = by_episode(session, "split")
    assert (split.status, split.note, split.attempts) == ("failed", "interrupted by the user", 1)
    assert split.started and split.checkpoint_id in kernel.restored  # its state was put back
    assert split.finding_ids == [] and not coord.interrupted
    assert any(e["kind"] == "interrupt" for e in session.transcript)
    # resuming proposes the split again and runs it to the end
    assert await coord.run_until_blocked() == "finished"
    assert [s.status for s in session.plan if s.episode == "split"] == ["failed", "done"]


class MissedInterruptNotebook(InterruptedNotebook):
    missed = True


async def test_an_interrupt_the_kernel_missed_still_rolls_the_step_back_and_stops(tmp_path):
    coord, kernel, notebook, session = make(tmp_path, notebook_class=MissedInterruptNotebook)
    notebook.coordinator = coord
    assert await coord.run_until_blocked() == "idle"
    split = by_episode(session, "split")
    assert (split.status, split.note, split.attempts) == ("failed", "interrupted by the user", 1)
    assert split.checkpoint_id in kernel.restored and not split.cell_ids
    assert not [c for c in notebook.sources() if "kt.split(" in c]  # its cell left the notebook
    assert not any(s.status == "done" for s in session.plan if s.episode in ("model", "impute"))
    assert await coord.run_until_blocked() == "finished"


class InterruptedDiagnosis(FakeKernel):
    """The user interrupts the kernel while the first diagnosis runs."""

    coordinator = None

    def diagnose_json(self, name, **hints):
        if self.names("diagnose_json") == ["diagnose_json"]:
            assert self.coordinator.interrupt() == "diagnosis and planning"
            raise ProbeError("KeyboardInterrupt: ", "KeyboardInterrupt", "")
        return super().diagnose_json(name, **hints)


async def test_an_interrupted_diagnosis_stops_the_run_and_runs_again_next_time(tmp_path):
    kernel = InterruptedDiagnosis(churn_diagnosis())
    session = Session(notebook=str(tmp_path / "nb.ipynb"), path=str(tmp_path / ".nb.ipynb.dcpilot.json"),
                      task=Task(given=Given(target="y")), inputs=Inputs(frames=["df"]))
    session.variables["imports"] = True
    coord = Coordinator(session, kernel, FakeNotebook(kernel), policy=ApprovalPolicy.from_spec("recommended"))
    kernel.coordinator = coord
    assert await coord.run_until_blocked() == "idle"
    assert session.findings == [] and session.diagnosed_version == -1 and session.plan == []
    assert not session.warnings  # not planned without findings: it simply stopped
    assert await coord.run_until_blocked() == "finished"
    assert len(kernel.names("diagnose_json")) >= 2 and session.findings and session.state == "finished"
