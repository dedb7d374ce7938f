"""Sidecars as files: whatever lies under a sidecar's name (a link, a FIFO, a huge file) is
refused at once without touching what it points to; saved sidecars stay small; a genuine file
beside another notebook, or over other data, is history only; the signing secret is a real
secret (non-empty, a regular file, 0600) or is replaced."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import stat
import time
from pathlib import Path

import pandas as pd
import pytest
from engine_fakes import FakeKernel

from jupyter_dcpilot.engine import fingerprint, sidecar_io, signatures
from jupyter_dcpilot.engine.kernel_calls import KernelCalls
from jupyter_dcpilot.engine.session import Checkpoint, Decision, Session, Step, move_sidecar, now, sidecar_path
from jupyter_dcpilot.engine.task import Given, Inputs, Task
from jupyter_dcpilot.engine.wire import DecisionOption
from kernel_tools.frames import fingerprint as frame_fingerprint


def approved(notebook: Path) -> Session:
    session = Session(notebook=str(notebook), path=str(sidecar_path(notebook)), frame="df",
                      task=Task(given=Given(target="y")), inputs=Inputs(frames=["df"]))
    session.plan = [Step(id="s1", episode="remove_leakage", title="Remove leakage", gate="leakage",
                         decision_id="d1-aaaaaaaa", status="done")]
    session.decisions = [Decision(id="d1-aaaaaaaa", step_id="s1", gate="leakage", question="Drop?",
                                  options=[DecisionOption("drop", "Drop", "", ""), DecisionOption("keep", "Keep", "", "")],
                                  choice="drop", by="user", at=now())]
    session.task = Task(kind="classification", target="y", confirmed=True)
    return session


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_link_a_fifo_and_a_huge_file_are_refused_at_once_and_nothing_they_point_to_changes(tmp_path):
    notebook = tmp_path / "nb.ipynb"
    sidecar = sidecar_path(notebook)
    users_file = tmp_path / "thesis.txt"
    users_file.write_text("the user's own words")
    before = digest(users_file)
    cases = {"a symbolic link": lambda: sidecar.symlink_to("/dev/zero"),
             "a symbolic link ": lambda: sidecar.symlink_to(users_file),
             "a FIFO": lambda: os.mkfifo(sidecar),
             "MiB, larger than": lambda: os.truncate(sidecar.open("wb").name, sidecar_io.MAX_BYTES + 1)}
    for said, make in cases.items():
        make()
        started = time.perf_counter()
        session = Session.for_notebook(notebook, frame="df")
        assert time.perf_counter() - started < 1.0
        assert session.plan == [] and said.strip() in session.warnings[0], session.warnings
        session.save()  # replaces the name itself, never writes through it
        assert stat.S_ISREG(os.lstat(sidecar).st_mode) and Session.load(sidecar).trusted
        assert digest(users_file) == before
        sidecar.unlink()
    assert stat.S_ISCHR(os.stat("/dev/zero").st_mode)


def long_session(notebook: Path, steps: int = 40, findings: int = 150) -> Session:
    session = approved(notebook)
    many = [{"id": f"missing:c{i}", "kind": "missing_values", "columns": [f"c{i}"], "severity": "warning",
             "summary": f"c{i} misses 12% of its values " + "x" * 200, "evidence": {"rate": 0.12}}
            for i in range(findings)]
    session.findings = many
    for i in range(steps):
        session.plan.append(Step(id=f"s{i + 2}", episode="impute", title=f"Impute c{i}", columns=[f"c{i}"],
                                 status="done", reason="r" * 300))
        session.checkpoints.append(Checkpoint(id=f"k{i}", step_id=f"s{i + 2}", label="before", names=["df"],
                                              cell_count=i, snapshot=session.snapshot()))
    session.transcript = [{"at": now(), "kind": "observe", "text": "t" * 200} for _ in range(5000)]
    session.llm_payloads = [{"at": now(), "purpose": "plan", "bytes": 20000, "payload": {"messages": ["m" * 20000]}}
                            for _ in range(100)]
    return session


def test_a_long_session_is_saved_small_and_loads_back_whole(tmp_path):
    session = long_session(tmp_path / "nb.ipynb")
    plain = len(session.to_json())
    session.save()
    saved = Path(session.path).stat().st_size
    assert plain > 5 * 2**20 and saved < plain / 5, (plain, saved)
    loaded = Session.load(session.path)
    assert loaded.trusted
    assert [c.snapshot for c in loaded.checkpoints] == [c.snapshot for c in session.checkpoints]
    assert loaded.transcript[0]["kind"] == "compacted" and len(loaded.transcript) == sidecar_io.TRANSCRIPT_KEPT + 1
    assert loaded.transcript[-1] == session.transcript[-1]
    bodies = [p["payload"] for p in loaded.llm_payloads]
    assert len(bodies) == 100 and bodies[-sidecar_io.PAYLOADS_KEPT:] == [p["payload"] for p in session.llm_payloads[-20:]]
    assert bodies[0] is None and loaded.llm_payloads[0]["payload_sha256"] and loaded.llm_payloads[0]["bytes"] == 20000


def test_a_pool_entry_removed_by_hand_is_a_damaged_file(tmp_path):
    session = long_session(tmp_path / "nb.ipynb", steps=2, findings=3)
    session.save()
    data = json.loads(Path(session.path).read_text())
    data.pop("signature")
    data["pool"].popitem()
    Path(session.path).write_text(json.dumps(data))
    with pytest.raises(ValueError, match="not a co-pilot session file"):
        Session.load(session.path)


@pytest.mark.parametrize("where", ["another folder", "another name"])
def test_a_genuine_sidecar_beside_another_notebook_is_history_only(tmp_path, where):
    first = tmp_path / "a" / "nb.ipynb"
    approved(first).save()
    second = tmp_path / "b" / "nb.ipynb" if where == "another folder" else tmp_path / "a" / "other.ipynb"
    second.parent.mkdir(exist_ok=True)
    shutil.copy(sidecar_path(first), sidecar_path(second))
    loaded = Session.load(sidecar_path(second))
    assert loaded.trusted is False and "does not belong to this notebook" in loaded.trust_note
    assert str(first) in loaded.trust_note and loaded.decision("d1-aaaaaaaa").choice is None
    assert Session.load(sidecar_path(first)).trusted  # where it was written, it still is


def test_a_legitimate_move_signs_the_sidecar_again(tmp_path):
    old, new = tmp_path / "old.ipynb", tmp_path / "sub" / "new.ipynb"
    approved(old).save()
    new.parent.mkdir()
    move_sidecar(old, new)
    assert not sidecar_path(old).exists()
    moved = Session.load(sidecar_path(new))
    assert moved.trusted and moved.notebook == str(new) and moved.decision("d1-aaaaaaaa").choice == "drop"


def test_the_fingerprint_names_the_data_without_its_values():
    df = pd.DataFrame({"age": range(1000), "y": [0, 1] * 500})
    first = frame_fingerprint(df, "df")
    assert first["rows"] == 1000 and first["columns"] == ["age", "y"] and len(first["sample_sha256"]) == 64
    assert "0" not in json.dumps({k: v for k, v in first.items() if k not in ("rows", "sample_sha256")})
    assert frame_fingerprint(df.copy(), "df") == first
    edited = df.copy()
    edited.loc[999, "age"] = -1  # the last row is always among those hashed
    assert frame_fingerprint(edited, "df")["sample_sha256"] != first["sample_sha256"]
    assert fingerprint.difference(first, frame_fingerprint(edited, "df")) == "'df' holds other values than the session's (same shape and columns)"
    leaked = df.assign(leak=1)
    assert "with 'leak'" in fingerprint.difference(first, frame_fingerprint(leaked, "df"))
    assert frame_fingerprint(3, "n") is None


async def test_a_resumed_session_over_other_data_is_history_only(tmp_path):
    kernel = FakeKernel({"findings": [], "task": {"kind": "classification", "target": "y"}})
    session = approved(tmp_path / "nb.ipynb")
    await fingerprint.record(session, KernelCalls(kernel))
    session.save()
    same = Session.load(session.path)
    assert await fingerprint.check_resumed(same, KernelCalls(kernel)) is None and same.trusted
    kernel.columns = [*kernel.columns, "leaked_again"]
    other = Session.load(session.path)
    why = await fingerprint.check_resumed(other, KernelCalls(kernel))
    assert "with 'leaked_again'" in why and other.trusted is False and "written for other data" in other.trust_note
    assert other.decision("d1-aaaaaaaa").choice is None


@pytest.fixture
def secret(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    path = signatures.secret_path()
    path.parent.mkdir(parents=True)
    return path


@pytest.mark.parametrize("bad", ["empty", "a link to /dev/null", "a FIFO", "too short"])
def test_a_secret_that_is_not_one_is_replaced_and_nothing_signed_with_it_is_trusted(tmp_path, secret, bad, caplog):
    if bad == "empty":
        secret.write_bytes(b"")
    elif bad == "a link to /dev/null":
        secret.symlink_to("/dev/null")
    elif bad == "a FIFO":
        os.mkfifo(secret)
    else:
        secret.write_bytes(b"abc")
    session = approved(tmp_path / "nb.ipynb")
    forged = json.loads(session.to_json())
    text = signatures.serialize(forged)
    Path(session.path).write_text(f'{text[:-1]},"signature":"{signatures.signature(text, b"")}"}}')
    assert Session.load(session.path).trusted is False  # the empty key signs nothing
    with caplog.at_level(logging.WARNING):
        session.save()
    assert "a new secret replaces it" in caplog.text
    assert stat.S_ISREG(os.lstat(secret).st_mode) and stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert len(secret.read_bytes()) >= 64 and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert Session.load(session.path).trusted


def test_a_secret_readable_by_others_is_made_0600_with_a_warning(tmp_path, secret, caplog):
    approved(tmp_path / "nb.ipynb").save()
    key = secret.read_bytes()
    secret.chmod(0o644)
    with caplog.at_level(logging.WARNING):
        assert Session.load(sidecar_path(tmp_path / "nb.ipynb")).trusted
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600 and secret.read_bytes() == key
    assert "was readable by others (mode 644); it is now 0600" in caplog.text
