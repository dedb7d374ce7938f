"""``jupyter dcpilot run`` / ``jupyter dcpilot demo``: the co-pilot as a headless job.

Starts a real kernel, runs the coordinator's loop to the end (or until a decision is needed
and nobody can answer it), and writes ``DIR/notebook.ipynb``, ``DIR/report.json`` and
``DIR/report.html``. Exit status: 0 finished, 2 stopped on an undecided gate, 1 failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

from jupyter_dcpilot.engine import notebook as nb
from jupyter_dcpilot.engine.coordinator import ApprovalPolicy, Coordinator, stdin_prompt
from jupyter_dcpilot.engine.hosts import HeadlessHost
from jupyter_dcpilot.engine.llm import LLMConfig
from jupyter_dcpilot.engine.planners import ClaudePlanner, RulePlanner
from jupyter_dcpilot.engine.report import write_reports
from jupyter_dcpilot.engine.session import Session, sidecar_path

EXIT = {"finished": 0, "blocked": 2, "failed": 1}


def _columns(path: Path) -> list[str]:
    if path.suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    import pandas as pd

    return [str(c) for c in pd.read_csv(path, nrows=0).columns]


def progress_printer(stream: Any, started: float) -> Callable[[dict[str, Any]], None]:
    """One line per thing a person would want to see happen."""

    def show(event: dict[str, Any]) -> None:
        t = f"[{time.perf_counter() - started:6.1f}s]"
        kind = event["type"]
        if kind == "step" and event.get("status") in ("done", "failed", "skipped"):
            mark = {"done": "ok", "failed": "FAILED", "skipped": "skipped"}[event["status"]]
            stream.write(f"{t} {event['step']}: {mark}\n")
        elif kind == "decision" and event["decision"].get("choice"):
            d = event["decision"]
            stream.write(f"{t} decision {d['gate']} on {d['columns'] or '-'}: {d['choice']} (by {d['by']})\n")
        elif kind == "transcript" and event["entry"]["kind"] in ("observe", "backtrack", "fallback", "error"):
            e = event["entry"]
            stream.write(f"{t} {e['kind']}: {e['text']}\n")
        elif kind == "awaiting_decision":
            d = event["decision"]
            stream.write(f"{t} waiting for a decision ({d['gate']}): {d['question']}\n")
        elif kind == "plan":
            titles = ", ".join(s["title"] for s in event["steps"][:6])
            stream.write(f"{t} plan ({event['planner']}): {titles}{' ...' if len(event['steps']) > 6 else ''}\n")
        stream.flush()

    return show


async def run_job(data: list[str], *, target: str | None, time_col: str | None = None,
                  task: str = "auto", entity: str | None = None, test: str | None = None,
                  index: str | None = None,
                  approve: str = "recommended", planner: str = "rules", out: str = "dcpilot-out",
                  stream: Any = None, interactive: bool | None = None) -> tuple[str, dict[str, Any]]:
    """Run the whole loop on files; returns (final state, report)."""
    stream = stream if stream is not None else sys.stderr
    started = time.perf_counter()
    paths = [Path(p).resolve() for p in data]
    for p in paths:
        if not p.is_file():
            raise FileNotFoundError(f"data file not found: {p}")
    out_dir = Path(out).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    notebook_path = out_dir / "notebook.ipynb"
    sidecar = sidecar_path(notebook_path)
    if sidecar.exists():
        sidecar.unlink()  # a headless run starts from the data, not from an older run
    names = ["df"] + [f"df_{i}" for i in range(2, len(paths) + 1)]
    hints: dict[str, Any] = {"target": target, "time": time_col, "task": task, "id": entity,
                             "index": index, "frames": names, "data": [str(p) for p in paths]}
    if test:
        test_path = Path(test).resolve()
        if not test_path.is_file():
            raise FileNotFoundError(f"test file not found: {test_path}")
        if target and target not in _columns(test_path):
            stream.write(f"warning: the test file has no {target!r} column; it cannot be scored\n")
        else:
            hints["test_path"] = str(test_path)
    session = Session(notebook=str(notebook_path), path=str(sidecar), hints=hints)
    session.subscribe(progress_printer(stream, started))
    interactive = sys.stdin.isatty() if interactive is None else interactive
    policy = ApprovalPolicy.from_spec(approve, prompt=stdin_prompt() if interactive else None)
    plan_with: Any = RulePlanner()
    if planner == "claude":
        config = LLMConfig.load()
        if config.available:
            plan_with = ClaudePlanner(config)
        else:
            message = "no Anthropic API key (~/.jupyter/dcpilot.json or ANTHROPIC_API_KEY): using the rule planner"
            session.warnings.append(message)
            stream.write(f"warning: {message}\n")
    async with HeadlessHost(notebook_path, cwd=out_dir) as host:
        loaded = await host.run_cell(nb.load_cell([str(p) for p in paths], names),
                                     {"dcpilot": {"step": "load"}})
        if loaded.error:
            raise RuntimeError(f"loading the data failed: {loaded.error['ename']}: {loaded.error['evalue']}")
        session.variables["imports"] = True
        coordinator = Coordinator(session, host, host, planner=plan_with, policy=policy)
        state = await coordinator.run_until_blocked()
        report = coordinator.report()
    report["elapsed_s"] = round(time.perf_counter() - started, 1)
    report["state"] = state
    write_reports(report, out_dir)
    if state == "blocked":
        waiting = session.open_decisions()
        what = f"{waiting[0].gate} on {waiting[0].columns}" if waiting else "a decision"
        stream.write(f"stopped: {what} needs a domain expert. Rerun with --approve recommended, "
                     "--approve FILE (a JSON map of gates to choices), or on a terminal with --approve ask.\n")
    return state, report


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jupyter dcpilot", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the co-pilot on data files and write a notebook and a report")
    run.add_argument("data", nargs="+", help="CSV or Parquet file(s); several when a join is needed")
    run.add_argument("--target", required=True, help="the outcome column (for survival: the event)")
    run.add_argument("--time", dest="time_col", help="survival duration column (or visit order)")
    run.add_argument("--task", default="auto", choices=["auto", "classification", "regression", "survival"])
    run.add_argument("--id", dest="entity", help="entity id column (a hint: the co-pilot looks for one)")
    run.add_argument("--index", help="when a prediction is made: 'first' (each entity's first record), "
                     "'row' (each row's own time) or a date column; inferred when not given")
    run.add_argument("--test", help="a separate test file: the fitted pipeline is scored on it")
    run.add_argument("--approve", default="ask", help="ask | recommended | none | decisions.json")
    run.add_argument("--planner", default="rules", choices=["rules", "claude"])
    run.add_argument("--out", default="dcpilot-out", help="output directory")
    demo = sub.add_parser("demo", help="run on demo data built from lifelines' Rossi dataset")
    demo.add_argument("--approve", default="recommended")
    demo.add_argument("--planner", default="rules", choices=["rules", "claude"])
    demo.add_argument("--out", default="dcpilot-out/demo")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "demo":
            from jupyter_dcpilot.engine.demo import TARGET, TIME, write_demo

            data = [str(write_demo(args.out))]
            state, report = asyncio.run(run_job(data, target=TARGET, time_col=TIME, task="survival",
                                                approve=args.approve, planner=args.planner, out=args.out))
        else:
            state, report = asyncio.run(run_job(
                args.data, target=args.target, time_col=args.time_col, task=args.task,
                entity=args.entity, test=args.test, index=args.index, approve=args.approve,
                planner=args.planner, out=args.out))
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    model = report.get("model") or {}
    print(json.dumps({"state": state, "valid": report["valid"], "metric": model.get("metric"),
                      "cv_score": model.get("cv_score"), "holdout_score": model.get("holdout_score"),
                      "elapsed_s": report["elapsed_s"], "out": str(Path(args.out).resolve())}))
    return EXIT[state]


if __name__ == "__main__":
    sys.exit(main())
