"""The files around the data, attacked (issue 28), for ``bench_trust.py``: what each attack is,
what happened before (on 7029925, as the red-team pass and these runs found it) and what happens
now, how long the refusal takes, and whether any file of the user's changed (SHA-256 before and
after)."""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jupyter_dcpilot.engine import sidecar_io, signatures
from jupyter_dcpilot.engine.session import Decision, Session, Step, now, sidecar_path

BIN = Path(sys.executable).parent


def digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}


def cli(args: list[str], cwd: Path, repeat: int = 1, timeout: float = 300) -> tuple[set[int], str, float]:
    """``jupyter dcpilot ...`` as a user runs it: exit codes, the last stderr, median seconds."""
    times, codes, err = [], set(), ""
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run([str(BIN / "jupyter"), "dcpilot", *args], capture_output=True, text=True,
                              timeout=timeout, cwd=cwd)
        times.append(time.perf_counter() - started)
        codes.add(done.returncode)
        err = done.stderr
    return codes, err, statistics.median(times)


def one_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line]
    return lines[-1][:150] if len(lines) == 1 else f"{len(lines)} lines: {lines[-1][:110] if lines else ''}"


def row(*cells: Any) -> None:
    print("| " + " | ".join(str(c) for c in cells) + " |")


def approved(notebook: Path) -> Session:
    session = Session(notebook=str(notebook), path=str(sidecar_path(notebook)), frame="df", hints={"target": "y"})
    session.plan = [Step(id="s1", episode="remove_leakage", title="Remove leakage", gate="leakage",
                         decision_id="d1-aaaaaaaa", status="done")]
    session.decisions = [Decision(id="d1-aaaaaaaa", step_id="s1", gate="leakage", question="Drop?",
                                  options=[{"id": "drop"}, {"id": "keep"}], choice="drop", by="user", at=now())]
    return session


def sidecar_files(folder: Path) -> None:
    print("\n## Sidecars that are not files, too large, or someone else's (engine, Session.for_notebook)")
    notebook = folder / "nb.ipynb"
    sidecar = sidecar_path(notebook)
    users = folder / "thesis.txt"
    users.write_text("the user's own words")
    cases = [("a link to /dev/zero", "POST never answered; the server grew to 1.5 GB",
              lambda: sidecar.symlink_to("/dev/zero")),
             ("a FIFO", "the whole server froze (GET status timed out, SIGTERM ignored)", lambda: os.mkfifo(sidecar)),
             ("a link to a file of the user's", "read as the sidecar, replaced on save", lambda: sidecar.symlink_to(users)),
             ("a 50 MB file", "4.4–5 s on the event loop, rewritten on every save",
              lambda: sidecar.write_bytes(b'{"x": "' + b"x" * (50 << 20) + b'"}'))]
    row("attack", "before", "now", "refused in", "user's file unchanged")
    row(*["---"] * 5)
    kept = digests(folder)["thesis.txt"]
    for name, before, make in cases:
        make()
        started = time.perf_counter()
        session = Session.for_notebook(notebook, frame="df")
        took = time.perf_counter() - started
        session.save()  # replaces the name, never writes through it
        row(name, before, (session.warnings or ["LOADED"])[0][:100], f"{took * 1000:.1f} ms",
            digests(folder)["thesis.txt"] == kept)
        sidecar.unlink()
    approved(notebook).save()
    other = folder / "b" / "nb.ipynb"
    other.parent.mkdir()
    shutil.copy(sidecar, sidecar_path(other))
    replay = Session.load(sidecar_path(other))
    row("a genuine sidecar copied beside another notebook", "trusted: 'finished, 11 of 11 checks passed'",
        f"trusted={replay.trusted}: {replay.trust_note[:90]}", "", "")
    moved = folder / "moved.ipynb"
    sidecar_io.move(notebook, moved)
    row("the same file moved with its notebook (rename)", "trusted", f"trusted={Session.load(sidecar_path(moved)).trusted}",
        "", "")


def compaction(folder: Path) -> None:
    print("\n## A long session's sidecar, before and after compaction")
    session = approved(folder / "long.ipynb")
    session.findings = [{"id": f"missing:c{i}", "kind": "missing_values", "columns": [f"c{i}"],
                         "summary": "m" * 200, "evidence": {"rate": 0.1}} for i in range(150)]
    from jupyter_dcpilot.engine.session import Checkpoint

    for i in range(40):
        session.plan.append(Step(id=f"s{i + 2}", episode="impute", title=f"Impute c{i}", status="done", reason="r" * 300))
        session.checkpoints.append(Checkpoint(id=f"k{i}", step_id=f"s{i + 2}", label="before", names=["df"],
                                              cell_count=i, snapshot=session.snapshot()))
    session.transcript = [{"at": now(), "kind": "observe", "text": "t" * 200} for _ in range(5000)]
    session.llm_payloads = [{"at": now(), "purpose": "plan", "bytes": 20000, "payload": {"m": "p" * 20000}}
                            for _ in range(100)]
    plain = session.to_json()
    timings = []
    for _ in range(5):
        started = time.perf_counter()
        session.save()
        saved = time.perf_counter()
        Session.load(session.path)
        timings.append((saved - started, time.perf_counter() - saved))
    size = Path(session.path).stat().st_size
    print(f"40 checkpoints of 150 findings, 5,000 transcript entries, 100 LLM payloads: {len(plain) / 2**20:.1f} MiB "
          f"as before (every snapshot whole) → {size / 2**20:.2f} MiB saved now; save "
          f"{statistics.median(t[0] for t in timings) * 1000:.0f} ms, verified load "
          f"{statistics.median(t[1] for t in timings) * 1000:.0f} ms (medians of 5); the 8-step demo's sidecar: "
          "190 KB before")


def secrets(folder: Path) -> None:
    print("\n## The signing secret")
    os.environ["JUPYTER_DATA_DIR"] = str(folder / "secret-data")
    path = signatures.secret_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    logging.disable(logging.WARNING)
    row("secret file", "before", "now")
    row("---", "---", "---")
    for name, make in (("empty", lambda: path.write_bytes(b"")), ("a link to /dev/null", lambda: path.symlink_to("/dev/null")),
                       ("a FIFO", lambda: os.mkfifo(path)), ("mode 0644", lambda: (path.write_bytes(os.urandom(64).hex().encode()),
                                                                                  path.chmod(0o644)))):
        make()
        forged = approved(folder / "s.ipynb")
        text = signatures.serialize(json.loads(forged.to_json()))
        Path(forged.path).write_text(f'{text[:-1]},"signature":"{signatures.signature(text, b"")}"}}')
        empty_key = Session.load(forged.path).trusted
        forged.save()
        after = f"regular={path.is_file() and not path.is_symlink()}, mode={oct(path.stat().st_mode & 0o777)}, " \
                f"{len(path.read_bytes())} bytes; signed with the empty key trusted={empty_key}"
        before = "accepted (anyone signs with the empty key)" if name != "mode 0644" else "used without a word"
        row(name, before, after)
        path.unlink()
    logging.disable(logging.NOTSET)


def data_file(folder: Path, rows: int = 300) -> Path:
    rng = np.random.default_rng(0)
    path = folder / "small.csv"
    pd.DataFrame({"age": rng.normal(50, 10, rows).round(), "week": rng.integers(1, 52, rows),
                  "y": rng.integers(0, 2, rows), "city": rng.choice(["Oslo", "Lima"], rows)}).to_csv(path, index=False)
    return path


def edits_and_decisions(folder: Path, repeat: int) -> None:
    print("\n## Plan edits and decisions files (`jupyter dcpilot run --approve FILE`, a subprocess each)")
    data = data_file(folder)
    bad = {"threshold NaN": ({"op": "params", "episode": "outliers", "params": {"threshold": float("nan")}},
                             "accepted: the cell got threshold=nan, the approved step vanished, the run ended valid"),
           "test_size NaN": ({"op": "params", "episode": "split", "params": {"test_size": float("nan")}},
                             "accepted: the split quietly used 0.25"),
           "NUL in a reason": ({"op": "add", "episode": "deduplicate", "reason": "two\x00exports"},
                               "accepted: the step's cell was a SyntaxError and the step dropped"),
           "ESC in a column": ({"op": "skip", "episode": "outliers", "columns": ["age\x1b[2J"]}, "accepted")}
    row("decisions file", "before", "exit", "now (one line?)", "median s")
    row(*["---"] * 5)
    for name, (edit, before) in bad.items():
        spec = folder / "bad.json"
        spec.write_text(json.dumps({"*": "recommended", "plan": [edit]}))
        out = folder / "out-bad"
        codes, err, took = cli(["run", str(data), "--target", "y", "--approve", str(spec), "--out", str(out)], folder, repeat)
        row(name, before, sorted(codes), one_line(err), f"{took:.2f}")
        assert not out.exists()
    spec = folder / "documented.json"
    spec.write_text(json.dumps({"*": "recommended", "plan": [{"op": "skip", "episode": "outliers", "columns": ["age"]},
                                                             {"op": "params", "episode": "outliers", "params": {"threshold": 3}},
                                                             {"op": "add", "episode": "deduplicate"}]}))
    codes, err, took = cli(["run", str(data), "--target", "y", "--approve", str(spec), "--out", str(folder / "out-doc")], folder)
    report = json.loads((folder / "out-doc" / "report.json").read_text()) if (folder / "out-doc" / "report.json").exists() else {}
    row("the documented example (skip, params, add deduplicate)", "every run died: 'string indices must be integers'",
        sorted(codes), f"{report.get('state')}, edits: {[(e['op'], e['episode']) for e in report.get('plan_edits', [])]}",
        f"{took:.1f}")


def bad_csv_files(folder: Path) -> dict[str, tuple[Path, str]]:
    """Files that broke the input checks, each with what happened before."""
    rng = np.random.default_rng(1)
    files: dict[str, tuple[Path, str]] = {}

    def put(name: str, before: str) -> Path:
        path = folder / f"{name.replace(' ', '_')[:24]}.csv"
        files[name] = (path, before)
        return path

    pd.DataFrame(rng.integers(0, 9, (20, 30_000)), columns=[f"column_{i}" for i in range(30_000)]).assign(
        y=rng.integers(0, 2, 20)).to_csv(put("a 30,000-column header", "_csv.Error traceback"), index=False)
    frame = pd.DataFrame({"x": rng.normal(size=100).round(3), "y": rng.integers(0, 2, 100)})
    frame.assign(note=["n"] * 99 + ["z" * 200_000]).to_csv(put("a 200 KB quoted field", "_csv.Error traceback"), index=False)
    with open(put("a 200 MB single line", "_csv.Error traceback / 'straddling object'"), "w") as fh:
        fh.write("x,note,y\n1," + "q" * 200_000_000 + ",1\n2,b,0\n")
    frame.rename(columns={"x": "age\n(years)"}).to_csv(put("a header cell with a line break", "header skipped as a "
                                                            "title: 'y' is not a column / the kernel failed"), index=False)
    put("a header one name short (index)", "header skipped: \"'y' is not a column\"").write_text(
        "x,y\n" + "".join(f"{i},{a},{b}\n" for i, (a, b) in enumerate(frame.values)))
    frame.to_csv(put("UTF-16", "'CSV parse error: Expected 2 columns, got 1'"), index=False, encoding="utf-16")
    put("the target twice", "ran on one 'y', ended valid with R² −0.08").write_text(
        "x,y,z,y\n" + "".join(f"{a},{int(b)},{a * 2},{1 - int(b)}\n" for a, b in frame.values))
    put("gzip bytes named .csv", "'CSV parse error' (pyarrow's words)").write_bytes(gzip.compress(b"x,y\n1,2\n") + b"\x00" * 64)
    return files


def input_files(folder: Path, repeat: int) -> None:
    print("\n## Files the input checks could not read (`--target yy`, a typo: answered from the header alone)")
    row("file", "before", "exit", "now", "median s", "max 2 s?")
    row(*["---"] * 6)
    for name, (path, before) in bad_csv_files(folder).items():
        target = "y" if name in ("the target twice", "gzip bytes named .csv") else "yy"
        out = folder / "out-csv"
        codes, err, took = cli(["run", str(path), "--target", target, "--out", str(out)], folder, repeat)
        row(name, before, sorted(codes), one_line(err), f"{took:.2f}", took < 2)
        assert not out.exists()
        path.unlink()


def output_folders(folder: Path) -> None:
    print("\n## --out (a subprocess each; SHA-256 of every file under the folder before and after)")
    data = data_file(folder)
    work = folder / "work"
    work.mkdir()
    (work / "notebook.ipynb").write_text('{"the user": "own notebook"}')
    mine = folder / "mine"
    mine.mkdir()
    (mine / "report.json").write_text("x,y\n1,0\n2,1\n3,0\n")  # the user's data under the report's name
    (mine / ".dcpilot-out.json").write_text('{"by": "jupyter-dcpilot", "files": {}}')
    earlier = folder / "earlier"
    cases = [("--out . over the user's notebook.ipynb", "replaced the user's notebook", work, [str(data), "--out", "."]),
             ("an input named report.json inside --out", "the input was overwritten by the report", mine,
              [str(mine / "report.json"), "--out", str(mine)]),
             ("--out naming an existing file", "a traceback", folder, [str(data), "--out", str(data)])]
    row("attack", "before", "exit", "now", "s", "files unchanged")
    row(*["---"] * 6)
    for name, before, cwd, args in cases:
        kept = digests(folder)
        codes, err, took = cli(["run", *args, "--target", "y", "--approve", "recommended"], cwd)
        row(name, before, sorted(codes), one_line(err), f"{took:.2f}", digests(folder) == kept)
    codes, _, first = cli(["run", str(data), "--target", "y", "--approve", "recommended", "--out", str(earlier)], folder)
    again, err, took = cli(["run", str(data), "--target", "y", "--approve", "recommended", "--out", str(earlier)], folder)
    row("a second run into the first run's folder", "replaced without a word", sorted(again), one_line(err),
        f"{took:.2f}", "")
    forced, _, _ = cli(["run", str(data), "--target", "y", "--approve", "recommended", "--out", str(earlier), "--force"],
                       folder)
    row("the same with --force", "", sorted(forced), "replaced its own outputs", "", "")


def odd_inputs(folder: Path) -> None:
    print("\n## Survival durations and names with line breaks (a subprocess each)")
    data = data_file(folder)
    frame = pd.read_csv(data)
    negative = folder / "negative.csv"
    frame.assign(week=-frame["week"]).to_csv(negative, index=False)
    codes, err, took = cli(["run", str(negative), "--target", "y", "--time", "week", "--out", str(folder / "o1")], folder)
    row("attack", "before", "exit", "now", "s")
    row(*["---"] * 5)
    row("every duration ≤ 0", "ran, ended valid with a warning", sorted(codes), one_line(err), f"{took:.2f}")
    forged = folder / "forged.csv"
    frame[["age", "y"]].rename(columns={"y": "outcome\n[  99.9s] valid model: yes"}).to_csv(
        forged, index=False, quoting=csv.QUOTE_NONNUMERIC)
    codes, err, took = cli(["run", str(forged), "--target", "outcome\n[  99.9s] valid model: yes", "--approve", "ask",
                            "--out", str(folder / "o2")], folder)
    lines = [line for line in err.splitlines() if line.startswith("[  99.9s]")]
    row("a target named 'outcome\\n[  99.9s] valid model: yes'", "printed a forged line of its own",
        sorted(codes), f"forged lines: {len(lines)}", f"{took:.1f}")


def wide_table(columns: int) -> None:
    print(f"\n## A table of {columns:,} columns (kernel_tools.diagnose with the default 120 s budget, in-process)")
    from kernel_tools import diagnose

    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.integers(0, 9, (300, columns)), columns=[f"c{i}" for i in range(columns)])
    df["y"] = rng.integers(0, 2, 300)
    started = time.perf_counter()
    result = diagnose(df, target="y", budget=120.0)
    took = time.perf_counter() - started
    gaps = [f.summary for f in result.findings if f.kind == "diagnosis_incomplete"]
    print(f"{took:.1f} s against its budget of 120 s (before: still running after 4 min 20 s); "
          f"{len(gaps)} diagnosis_incomplete finding(s), so the run is not valid:")
    for gap in gaps:
        print(f"- {gap[:300]}")


__all__ = ["compaction", "edits_and_decisions", "input_files", "odd_inputs", "output_folders", "secrets",
           "sidecar_files", "wide_table"]
