"""``jupyter dcpilot run`` / ``jupyter dcpilot demo``: the co-pilot as a headless job.

Starts a real kernel, runs the coordinator's loop to the end (or until a decision is needed
and nobody can answer it), and writes ``DIR/notebook.ipynb``, ``DIR/report.json`` and
``DIR/report.html``. Inputs are checked while the kernel starts, before any step runs
(:mod:`jupyter_dcpilot.inputs`; a refused input stops the kernel and writes nothing);
the exit status is in :data:`EXIT` (see ``jupyter dcpilot run --help``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jupyter_dcpilot import __version__, outputs
from jupyter_dcpilot.engine.budgets import Budgets, data_scale, minutes
from jupyter_dcpilot.engine.decisions_file import ANSWERABLE_GATES
from jupyter_dcpilot.engine.errors import cell_error, in_words
from jupyter_dcpilot.engine.hosts import PROBE_TIMEOUT_S, HeadlessHost
from jupyter_dcpilot.engine.kernel_calls import KernelCalls
from jupyter_dcpilot.engine.task import Given, Inputs, task_kind
from jupyter_dcpilot.inputs import (
    InputError,
    check_dictionary,
    check_run_inputs,
    frame_names,
    header,
    parquet_rows,
    target_first,
)
from jupyter_dcpilot.terminal import TerminalStream, one_line
from kernel_tools.dictionary import LABELLED
from kernel_tools.vocabulary import StepStatus

if TYPE_CHECKING:
    from jupyter_dcpilot.engine.session import Session

# 1 is also every input refused before a step runs, and a command line argparse rejects
EXIT = {"finished": 0, "blocked": 2, "failed": 1}


def _size(path: Path) -> str:
    files = path.iterdir() if path.is_dir() else [path]  # a folder: its files together
    size = float(sum(f.stat().st_size for f in files if f.is_file()))
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return ""


def _shape_text(name: str, frame: dict[str, Any]) -> str:
    """``df: 1,000 rows × 5 columns``; a lazy frame's rows are not counted when it is loaded."""
    rows = f"{frame['rows']:,} rows" if frame.get("rows") is not None else f"lazy {frame['type']}"
    return f"{name}: {rows} × {frame['cols']} columns"


def progress_printer(stream: Any, started: float, session: Session | None = None,
                     every: float = 30.0) -> Callable[[dict[str, Any]], None]:
    """One line per thing a person would want to see happen, each step named by its title.

    Long work gets a line when it starts (with its budget), after 10 s, then every ``every``
    seconds; ``session`` (optional) gives the titles of steps that events name by id."""
    shown: dict[str, float] = {}  # what runs -> elapsed seconds of its last line

    def title(step_id: str) -> str:
        try:
            return f"{step_id} {session.step(step_id).title}" if session is not None else step_id
        except KeyError:
            return step_id

    def progress(event: dict[str, Any]) -> str | None:
        what, elapsed, budget = event["title"], float(event["elapsed_s"]), event.get("budget_s")
        if elapsed == 0:
            shown[what] = 0.0
            return f"{what}: started" + (f" (budget {minutes(budget)})" if budget else "")
        last = shown.get(what, 0.0)
        if elapsed < 10 or elapsed - last < (10 if last == 0 else every):
            return None
        shown[what] = elapsed
        if budget and elapsed > budget:
            return f"{what}: still running after {minutes(elapsed)}, over its budget of {minutes(budget)}"
        return f"{what}: still running, {minutes(elapsed)}" + (f" of its {minutes(budget)} budget" if budget else "")

    def show(event: dict[str, Any]) -> None:
        t = f"[{time.perf_counter() - started:6.1f}s]"
        kind = event["type"]
        line: str | None = None
        if kind == "progress":
            line = progress(event)
        elif kind == "step" and event.get("status") in (StepStatus.DONE, StepStatus.FAILED, StepStatus.SKIPPED):
            step = session.step(event["step"]) if session is not None else None
            took = f" in {minutes(step.elapsed_s)}" if step is not None and step.elapsed_s else ""
            line = {"done": f"{title(event['step'])}: done{took}",
                    "failed": f"{title(event['step'])}: FAILED" + (f": {step.error}" if step and step.error else ""),
                    "skipped": f"{title(event['step'])}: skipped"}[event["status"]]
        elif kind == "decision" and event["decision"].get("choice"):
            d = event["decision"]
            line = f"decision {d['gate']} on {d['columns'] or '-'}: {d['choice']} (by {d['by']})"
        elif kind == "transcript" and event["entry"]["kind"] in ("observe", "backtrack", "fallback", "error", "budget",
                                                                 "edit"):
            e = event["entry"]
            line = f"{e['kind']}: {e['text']}"
        elif kind == "awaiting_decision":
            d = event["decision"]
            line = f"waiting for a decision ({d['gate']}): {d['question']}"
        elif kind == "plan" and "planner" in event:  # a plan edit's event names steps by id: its transcript line says it
            titles = ", ".join(s["title"] for s in event["steps"][:6])
            line = f"plan ({event['planner']}): {titles}{' ...' if len(event['steps']) > 6 else ''}"
        elif kind == "activity":
            line = event["text"]
        if line is not None:  # one line each, whatever the names in it hold
            stream.write(f"{t} {one_line(line)}\n")
            stream.flush()

    return show


async def run_job(data: list[str], *, target: str | None, time_col: str | None = None,
                  task: str = "auto", entity: str | None = None, test: str | None = None,
                  index: str | None = None, engine: str = "pandas",
                  approve: str = "recommended", planner: str = "rules", out: str = "dcpilot-out",
                  stream: Any = None, interactive: bool | None = None,
                  budget: Any = None, impact: bool = False, force: bool = False, dictionary: str | None = None,
                  events: str | None = None) -> tuple[str, dict[str, Any]]:
    """Run the whole loop on files; returns (final state, report). ``budget``: seconds per
    kind of step (``["600", "impute=300"]``, a number or a mapping; see engine.budgets);
    ``impact``: estimate what each option of every gated decision does to the model before it
    is answered (report.json's ``decisions[].options[].impact``); ``force``: replace the outputs
    of an earlier run in ``out`` (see :mod:`jupyter_dcpilot.outputs`). ``dictionary``: the study's
    codebook (``events``: REDCap's instrument–event mapping); a Stata / SPSS / SAS file's own labels
    are its codebook when none is given."""
    # progress lines and prompts carry column names: a name's escape codes are shown, not obeyed
    stream = TerminalStream(stream if stream is not None else sys.stderr)
    Budgets.from_spec(budget)  # refused before anything starts
    started = time.perf_counter()
    # The kernel starts, importing what the first steps need (kernel_tools.warmup), while this
    # process checks the columns' values and prepares the notebook: one after the other, they
    # were the fixed cost of a small table. A refused input stops it before any step runs.
    # the files and column names first: a wrong one is refused in a second, with no kernel
    check_run_inputs([Path(p).resolve() for p in data], target=target, time=time_col, entity=entity, index=index,
                     test=Path(test).resolve() if test else None, folders=True, values=False)
    out_dir = Path(out).resolve()
    # a duration column asks for survival models: their libraries warm too
    host = HeadlessHost(out_dir / "notebook.ipynb", cwd=out_dir, warm=True,
                        task=task if task != "auto" else ("survival" if time_col else None))
    await host.launch()
    try:
        session, coordinator, out_dir = await _checked_run(
            host, data, stream, started, target=target, time_col=time_col, task=task, entity=entity, test=test,
            index=index, engine=engine, approve=approve, planner=planner, out=out, interactive=interactive,
            budget=budget, impact=impact, force=force, dictionary=dictionary, events=events)
        try:
            state = await coordinator.run_until_blocked()
        except Exception as exc:  # recorded in the transcript; the notebook and report still get written
            state = "failed"
            session.warnings.append(in_words(exc, "running the co-pilot"))
        session.flush()
        from jupyter_dcpilot.engine.report import write_reports
        from jupyter_dcpilot.engine.report_html import report_details

        report = coordinator.report()
        details = report_details(session, coordinator.model_report())
    finally:
        await host.stop()
    report["elapsed_s"] = round(time.perf_counter() - started, 1)
    report["state"] = state
    write_reports(report, out_dir, details)
    outputs.record(out_dir, outputs.OUTPUTS)
    if state == "blocked":
        waiting = session.open_decisions()
        what = f"{waiting[0].gate} on {waiting[0].columns}" if waiting else "a decision"
        stream.write(f"stopped: {one_line(what)} needs a domain expert. Rerun with --approve recommended, "
                     "--approve FILE (a JSON map of gates to choices), or on a terminal with --approve ask.\n")
    session.notify("activity", text=f"{state} in {minutes(report['elapsed_s'])}")
    session.notify("activity", text=f"notebook: {out_dir / 'notebook.ipynb'}")
    session.notify("activity", text=f"report: {out_dir / 'report.html'} (and report.json)")
    return state, report


async def _checked_run(host: HeadlessHost, data: list[str], stream: Any, started: float, *, target: str | None,
                       time_col: str | None, task: str, entity: str | None, test: str | None, index: str | None,
                       engine: str, approve: str, planner: str, out: str, interactive: bool | None, budget: Any,
                       impact: bool, force: bool, dictionary: str | None,
                       events: str | None) -> tuple[Session, Any, Path]:
    """Check the inputs, claim the output folder, open the session, load the data in ``host``'s
    kernel: the session and the coordinator ready to run, and the output folder."""
    # the engine's own imports (the coordinator pulls in scikit-learn through the model audit:
    # ~1.5 s) made here, while the kernel launched before starts on the other core
    from jupyter_dcpilot.engine import notebook as nb
    from jupyter_dcpilot.engine.factory import Request, build, open_session
    from jupyter_dcpilot.engine.gatekeeping import stdin_prompt

    given_paths = [Path(p).resolve() for p in data]
    paths = target_first(given_paths, target)
    test_path = Path(test).resolve() if test else None
    interactive = sys.stdin.isatty() if interactive is None else interactive
    names = frame_names(paths)
    warnings = check_run_inputs(paths, target=target, time=time_col, entity=entity, index=index,
                                test=test_path, folders=True)
    codebook, said = checked_codebook(paths, dictionary, events, engine)
    given = Given(target=target, time=time_col, id=entity, kind=task_kind(task), index=index)
    request = Request(frame="df", given=given, approve=approve, budget=budget, planner=planner, impact=impact,
                      inputs=Inputs(frames=names, data=[str(p) for p in paths], engine=engine,
                                    dictionary=codebook.get("dictionary"), events=codebook.get("events")))
    policy = request.policy(prompt=stdin_prompt(stream_out=stream) if interactive else None, files=True)
    for warning in warnings + said:
        stream.write(f"warning: {one_line(warning)}\n")
    approve_file = Path(approve) if policy.mode == "file" else None
    inputs = [*paths, test_path, approve_file, *(Path(p) for p in codebook.values())]
    out_dir = outputs.claim(Path(out), inputs, force)  # nothing of the user's replaced
    if test_path is not None and (not target or target in header(test_path)):
        request.inputs.test_path = str(test_path)
    # a headless run starts from the data, not from an older run
    session = open_session(request, out_dir / "notebook.ipynb", fresh=True)
    session.coalesce = True  # one write per burst of changes, not one per change
    session.subscribe(progress_printer(stream, started, session))
    llm = _claude_config() if planner == "claude" else None
    session.notify("activity", text="starting a Python kernel")
    # a probe (e.g. a step's checks) reads every row of a lazy frame: it waits longer on more rows
    host.timeout = PROBE_TIMEOUT_S * data_scale(parquet_rows(paths) if engine == "dask" else None, engine == "dask")
    await host.start()
    if paths != given_paths:
        session.notify("activity", text=f"the target {target!r} is in {paths[0].name}: it is read first, as df, "
                                        "the table the other files join to")
    files = ", ".join(f"{p.name} ({_size(p)})" for p in paths)
    session.notify("activity", text=f"loading {files}")
    loaded = await host.run_cell(nb.load_cell([str(p) for p in paths], names, engine, **codebook),
                                 {"dcpilot": {"step": "load"}})
    if loaded.error:
        raise RuntimeError(f"loading the data failed: {cell_error(loaded.error['ename'], loaded.error['evalue'])}")
    frames = await KernelCalls(host).frame_info(names)
    session.notify("activity", text="loaded " + ", ".join(_shape_text(n, f) for n, f in frames.items() if f))
    session.variables["imports"] = True
    coordinator = build(request, session, host, host, policy=policy, llm=llm, stop=host.interrupt)
    for warning in session.warnings:  # e.g. no API key for the Claude planner
        stream.write(f"warning: {one_line(warning)}\n")
    return session, coordinator, out_dir


def _claude_config() -> Any:
    """The Claude planner's configuration (the factory falls back to the rules without a key)."""
    from jupyter_dcpilot.config import load_llm_config

    return load_llm_config()


def checked_codebook(paths: list[Path], dictionary: str | None, events: str | None,
                     engine: str = "pandas") -> tuple[dict[str, str], list[str]]:
    """The codebook a run reads, as absolute paths (``dictionary`` and ``events``, else the labels
    of a Stata / SPSS / SAS data file, its own codebook; {} for neither), checked before any
    kernel starts, and the warnings of the check (InputError for a codebook it cannot use)."""
    if events is not None and dictionary is None:
        raise InputError("--events (REDCap's instrument-event mapping) needs --dictionary (the data dictionary)")
    found: dict[str, str] = {}
    if dictionary is None:
        labelled = next((p for p in paths if p.suffix.lower() in LABELLED), None)
        found = {"dictionary": str(labelled)} if labelled is not None else {}
    else:
        found = {"dictionary": str(Path(dictionary).resolve())}
        if events is not None:
            found["events"] = str(Path(events).resolve())
    if found and engine == "dask":
        raise InputError("a codebook (--dictionary, or a Stata/SPSS/SAS file's labels) is not read for Dask "
                         "frames yet: run with --engine pandas")
    if dictionary is None:
        return found, []
    return found, check_dictionary(Path(found["dictionary"]), paths, Path(events).resolve() if events else None)


DESCRIPTION = """\
Run the data-centric co-pilot without JupyterLab: it starts a kernel, loads your data,
diagnoses what makes it not ready for machine learning (leaked columns, several rows per
entity, missing values, outliers, noisy labels, ...), asks at each expert gate, fixes, and
fits and evaluates a model. It writes notebook.ipynb (every step a readable cell calling
kernel_tools), report.json and report.html."""

EXIT_CODES = """\
exit status:
  0  finished: the notebook and the reports are written
  1  failed, or an input was refused before any step ran (unknown column, unusable
     target, unreadable file, invalid decisions file, bad option); the error is one line
  2  stopped at an expert decision nobody answered (see --approve)"""

DECISIONS = """\
decisions file (--approve FILE), a JSON object of gate -> choice:
  {"*": "recommended",                        every gate not named: the recommended option
   "leakage": "drop",                         every leakage decision: option "drop"
   "outliers": {"age": "keep", "*": "clip"},  per column; "*" for the other columns
   "columns": {"bmi": "keep"}}                any gate on column bmi
""" + f"  gates: {', '.join(ANSWERABLE_GATES)}.\n" + """\
  A choice is an option id, "recommended" or "ask". Custom code is never approved by a file.
  The JSON Schema is in docs/demo.md; a file that does not satisfy it is refused at once."""

EXAMPLES = """\
examples:
  jupyter dcpilot run data.csv --target churned                 ask at every gate (on a terminal)
  jupyter dcpilot run visits.csv --target event --time follow_up --approve recommended --out out/
  jupyter dcpilot run train.csv labels.csv --target y --test test.csv --approve decisions.json
  jupyter dcpilot run data/ --target y --engine dask --approve recommended   a folder of Parquet files
  jupyter dcpilot run export.csv --target death --dictionary dictionary.csv --events mapping.csv
                                                                a REDCap export with its codebook
  jupyter dcpilot demo                                          the shipped demo, no data needed"""


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad command line exits 1 like any refused input: 2 means "stopped at
    a decision", which a script must be able to tell apart."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT["failed"], f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``jupyter dcpilot`` (``run`` and ``demo``)."""
    raw = argparse.RawDescriptionHelpFormatter
    parser = _Parser(prog="jupyter dcpilot", description=DESCRIPTION, formatter_class=raw,
                     epilog=f"{EXIT_CODES}\n\n{EXAMPLES}")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{run,demo,migrate-config}")
    run = sub.add_parser("run", help="run the co-pilot on data files; write a notebook and reports",
                         description=DESCRIPTION, formatter_class=raw,
                         epilog=f"{EXIT_CODES}\n\n{DECISIONS}\n\n{EXAMPLES}")
    run.add_argument("data", nargs="+", metavar="DATA", help="CSV, Parquet, Stata (.dta), SPSS (.sav, .zsav), "
                     "SAS (.sas7bdat, .xpt), R (.rds, .RData) or Excel (.xlsx, .xls) file(s), or a folder of Parquet "
                     "files (with --engine dask also of CSV files); several when they must be joined. An .RData "
                     "or a workbook with several tables: name one as FILE:NAME (cohort.RData:d, book.xlsx:data)")
    run.add_argument("--target", required=True, metavar="COLUMN",
                     help="the outcome column to predict (for survival data: the event indicator)")
    run.add_argument("--time", dest="time_col", metavar="COLUMN",
                     help="for survival data: the duration column (numbers, e.g. days to the event "
                          "or censoring)")
    run.add_argument("--task", default="auto", choices=["auto", "classification", "regression", "survival"],
                     help="what kind of prediction; auto: the co-pilot finds it and asks you to "
                          "confirm (default: %(default)s)")
    run.add_argument("--id", dest="entity", metavar="COLUMN",
                     help="the entity id column (patient, customer); a hint, the co-pilot also looks for one")
    run.add_argument("--index", metavar="WHEN",
                     help="when a prediction is made: 'first' (each entity's first record), 'row' (each "
                          "row's own time) or a date column; inferred when not given")
    run.add_argument("--dictionary", metavar="FILE",
                     help="the study's codebook: a REDCap data dictionary, a Frictionless Table Schema, a CSV or "
                          "Markdown table of names and descriptions, or a labelled Stata/SPSS/SAS file; what it "
                          "says of each column's timing and identity is weighed with the data (docs/codebooks.md). "
                          "A Stata, SPSS or SAS data file's own labels are read without it")
    run.add_argument("--events", metavar="FILE",
                     help="with a REDCap --dictionary: the instrument-event mapping CSV (the events in order, "
                          "the forms each holds)")
    run.add_argument("--test", metavar="FILE", help="a separate test file with the same columns: the fitted "
                                    "pipeline is scored on it")
    run.add_argument("--engine", default="pandas", choices=["pandas", "dask"],
                     help="pandas: the data in memory; dask: lazy Dask frames for data larger than memory, "
                          "on a LocalCluster (diagnosis counts every row, models fit on a sample; see "
                          "docs/scale.md) (default: %(default)s)")
    run.add_argument("--approve", default="ask", metavar="POLICY",
                     help="who answers the expert gates: ask (you, on a terminal; without one the run "
                          "stops at the first gate), recommended (the recommended option), none "
                          "(skip every gated step) or a decisions file, see below (default: %(default)s)")
    run.add_argument("--planner", default="rules", choices=["rules", "claude"],
                     help="rules: deterministic, offline; claude: an LLM (needs ANTHROPIC_API_KEY), "
                          "sees only the schema and statistics (default: %(default)s)")
    run.add_argument("--out", default="dcpilot-out", metavar="DIR",
                     help="output folder for notebook.ipynb, report.json, report.html: a new or empty folder, "
                          "or one an earlier run wrote (default: %(default)s)")
    run.add_argument("--force", action="store_true",
                     help="replace the outputs of an earlier run in --out (never a file the co-pilot did not write)")
    run.add_argument("--budget", action="append", metavar="[STEP=]SECONDS",
                     help="time budget per step, e.g. --budget train_evaluate=900 (repeatable; a bare "
                          "number sets every step not named); a step past 4x its budget is stopped and "
                          "rolled back; the run goes on without it, unless the step was approved (then it stops there)")
    run.add_argument("--impact", action="store_true", help="estimate what each option of a gate does to the model "
                     "before it is answered (report.json/html show it; a few seconds per gate)")
    demo = sub.add_parser("demo", help="run on demo data built from lifelines' Rossi dataset",
                          description="The whole loop on lifelines' Rossi recidivism data with "
                                      "documented, injected problems (see docs/demo.md).",
                          formatter_class=raw, epilog=EXIT_CODES)
    demo.add_argument("--approve", default="recommended", metavar="POLICY",
                      help="ask, recommended, none or a decisions file (default: %(default)s)")
    demo.add_argument("--planner", default="rules", choices=["rules", "claude"],
                      help="rules or claude (default: %(default)s)")
    demo.add_argument("--out", default="dcpilot-out/demo", metavar="DIR", help="output folder (default: %(default)s)")
    demo.add_argument("--force", action="store_true", help="replace the outputs of an earlier demo in --out")
    demo.add_argument("--budget", action="append", metavar="[STEP=]SECONDS", help="as for run")
    demo.add_argument("--impact", action="store_true", help="as for run")
    migrate = sub.add_parser("migrate-config", help="move the settings of an old dcpilot.json into "
                             "jupyter_server_config.json and its API key into the system keyring",
                             description="Earlier versions read ~/.jupyter/dcpilot.json; it is no longer "
                                         "read. This moves its settings into jupyter_server_config.json "
                                         "(c.DCPilot) and its API key into the system keyring, then "
                                         "deletes it. Exit status 1 when the key could not be moved.")
    migrate.add_argument("--file", metavar="FILE",
                         help="the old file (default: dcpilot.json in the Jupyter config folder)")
    return parser


def migrate_config(path: str | None) -> int:
    """``jupyter dcpilot migrate-config``: see :func:`jupyter_dcpilot.config.migrate_legacy_file`."""
    from jupyter_core.paths import jupyter_config_dir

    from jupyter_dcpilot.config import legacy_file, migrate_legacy_file

    found = Path(path) if path else legacy_file()
    if found is None or not found.is_file():
        print(f"nothing to migrate: {found or 'no dcpilot.json'} not found", file=sys.stderr)
        return 0 if path is None else 1
    for line in migrate_legacy_file(found, jupyter_config_dir()):
        print(line)
    return 1 if found.exists() else 0


def main(argv: list[str] | None = None) -> int:
    """``jupyter dcpilot``; ``argv`` None: this process's own command line, which ends with it."""
    code = _main(argv)
    if argv is None:
        # the interpreter's last collection walks every object of the ~1,800 modules a run
        # imports (~0.4-0.9 s after the run's last line, issue 31); they live until the
        # process ends, so it skips them
        gc.freeze()
    return code


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "migrate-config":
            return migrate_config(args.file)
        if args.command == "demo":
            from jupyter_dcpilot.engine.demo import DEMO_FILE, TARGET, TIME, write_demo

            out = outputs.claim(Path(args.out), force=args.force, names=(*outputs.OUTPUTS, DEMO_FILE))
            data = [str(write_demo(out))]
            outputs.record(out, [DEMO_FILE])
            state, report = asyncio.run(run_job(data, target=TARGET, time_col=TIME, task="survival",
                                                approve=args.approve, planner=args.planner, out=args.out,
                                                budget=args.budget, impact=args.impact,
                                                force=True))  # claimed just now
        else:
            state, report = asyncio.run(run_job(
                args.data, target=args.target, time_col=args.time_col, task=args.task,
                entity=args.entity, test=args.test, index=args.index, engine=args.engine,
                approve=args.approve, planner=args.planner, out=args.out, budget=args.budget,
                impact=args.impact, force=args.force, dictionary=args.dictionary, events=args.events))
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        return 1
    model = report.get("model") or {}
    print(json.dumps({"state": state, "valid": report["valid"], "metric": model.get("metric"),
                      "cv_score": model.get("cv_score"), "holdout_score": model.get("holdout_score"),
                      "elapsed_s": report["elapsed_s"], "out": str(Path(args.out).resolve())}))
    return EXIT[state]


if __name__ == "__main__":
    sys.exit(main())
