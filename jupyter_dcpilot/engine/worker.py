"""The worker: turns one planned step into one readable ``kernel_tools`` cell and runs it.

Before any change it checkpoints the variables the step may change (in the kernel's
checkpoint store, through a silent probe). It writes the cell (a one-line comment saying why,
then the call), runs it in the notebook, and on an error restores the checkpoint, removes the
failed cell and retries with repaired (LLM) or safer (episode fallback) parameters, at most
``max_attempts`` times. Then it reads what the step produced and runs the post-step checks.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import kernel_tools
from jupyter_dcpilot.probe import ProbeError
from kernel_tools.dictionary import LABELLED
from kernel_tools.vocabulary import StepStatus, TaskKind
from kernel_tools.workbooks import is_workbook

from .budgets import Budgets, data_scale, minutes
from .episodes import CALL_EXPECT, Episode
from .errors import cell_error
from .groups import chosen_groups, step_groups
from .hosts import CellResult, KernelProbe, NotebookHost
from .join_cells import join_files_code
from .kernel_calls import KernelCalls
from .notebook import IMPORTS
from .plan_edits import call_params
from .progress import Progress
from .session import Checkpoint, Session, Step, now
from .task import PredictionIndex

# kernel_tools calls whose report can replay the fitted step on new data (test split/file)
REPLAYABLE = {"drop_columns", "impute", "handle_outliers", "normalize_categories",
              "convert_units", "fix_dtypes", "aggregate_per_entity", "to_intervals", "redcap_baseline",
              "recode_status", "number_blocks", "rank_levels",
              "first_transition"}
INTERVAL_MODEL_PARAMS = ("cv", "random_state")  # what fit_evaluate_intervals takes of a step's params
PUBLIC = set(kernel_tools.__all__)
Repair = Callable[[Step, str, dict[str, Any]], Awaitable[dict[str, Any] | None]]
Stop = Callable[[], Awaitable[Any]]


def py(value: Any) -> str:
    """A JSON-like value as Python source."""
    return repr(value)


def call_args(params: dict[str, Any]) -> str:
    return "".join(f", {k}={py(v)}" for k, v in params.items())


def _code(text: str) -> int | float | str:
    """A status code as the task says it ("2") in the cell: a whole number when it is one; the
    label itself for a status stored as text ("alive")."""
    try:
        value = float(text)
    except ValueError:
        return text
    return int(value) if value.is_integer() else value


def comment(text: str, limit: int = 110) -> str:
    line = " ".join(str(text).split())
    return "# " + (line if len(line) <= limit else line[: limit - 1] + "…")


class Worker:
    """Executes steps; see the module docstring."""

    def __init__(self, session: Session, kernel: KernelProbe, notebook: NotebookHost,
                 episodes: dict[str, Episode], *, repair: Repair | None = None,
                 max_attempts: int = 3, interrupted: Callable[[], bool] | None = None,
                 budgets: Budgets | None = None, stop: Stop | None = None, tick: float | None = None) -> None:
        self.session = session
        self.kernel = kernel
        self.calls = KernelCalls(kernel)
        self.notebook = notebook
        self.episodes = episodes
        self.repair = repair
        self.max_attempts = max_attempts
        self.interrupted = interrupted or (lambda: False)
        self.budgets = budgets or Budgets()
        self.stop = stop  # interrupts the kernel: how a step past its budget's limit is stopped
        self.tick = tick

    # -- what to call --------------------------------------------------------------------
    def resolve(self, step: Step) -> tuple[str | None, dict[str, Any]]:
        """The kernel_tools call: the decided option's action, else the step's own call; the
        parameters the expert set on the step over either (see :func:`.plan_edits.call_params`)."""
        episode = self.episodes.get(step.episode)
        answers_task = episode is not None and episode.runs == "task"  # its answer is no call
        if step.decision_id and step.code is None and not answers_task:
            chosen = self.session.decision(step.decision_id).option()
            action = chosen.action if chosen is not None else None
            if not action:
                return None, {}
            function = action["function"]
            return function, self._by_entity(episode, function, call_params(step, function, action.get("params") or {},
                                                                            episode))
        if episode is not None and episode.stage == "model" and step.code is None and self.intervals():
            return "fit_evaluate_intervals", dict(step.params)
        params = self._by_entity(episode, step.function, call_params(step, step.function or "", step.params, episode))
        if step.function == "recode_status" and self.session.task.censored is not None:
            params = {**params, "censored": _code(self.session.task.censored)}  # the code the task card read
        return step.function, params

    def _by_entity(self, episode: Episode | None, function: str | None, params: dict[str, Any]) -> dict[str, Any]:
        """``params`` with the entity id under the episode's ``entity_param`` when its own call
        runs and the work is grouped by entity, or with the column grouping subjects that the
        expert chose to group the split by (a value already there is kept)."""
        if episode is None:
            return params
        if not self.grouping():
            chosen = self.chosen_groups()
            return params if chosen is None else episode.with_entity(function, params, chosen)
        task = self.session.task
        if function == "aggregate_per_entity" and task.missing_ids and params.get("id") == task.id:
            params = {**params, "missing_ids": params.get("missing_ids", task.missing_ids)}  # as the task card said
        return episode.with_entity(function, params, task.id)

    def intervals(self) -> tuple[str, str] | None:
        """The (start, stop] columns when the rows are intervals of a survival follow-up, else None.

        They are intervals when ``to_intervals`` made them (it sets the task's ``start`` and
        ``stop``), or when they came that way (the diagnosis found a counting-process layout:
        ``index.start``) and were kept rather than aggregated. Such rows need the interval model:
        counted from 0, a later interval would know its entity survived until its start.
        """
        task = self.session.task
        start = task.start or task.index.get("start")
        stop = task.stop or task.time
        columns = self.session.variables.get("columns") or []
        aggregated = any(s.status == StepStatus.DONE and s.result.get("function") == "aggregate_per_entity"
                         for s in self.session.plan)
        if (task.kind != TaskKind.SURVIVAL or not start or not stop or not self.grouping() or aggregated
                or (columns and start not in columns)):
            return None
        return start, stop

    def report_var(self, step: Step) -> str:
        ep = self.episodes[step.episode]
        if step.result.get("var"):
            return step.result["var"]
        used = {s.result.get("var") for s in self.session.plan if s.id != step.id and s.status == StepStatus.DONE}
        name, n = ep.report_var, 1
        while name in used:
            n += 1
            name = f"{ep.report_var}_{n}"
        return name

    def preprocess_vars(self) -> list[str]:
        """Reports of the learned post-split steps, in order: the model's preprocess list."""
        return [s.result["var"] for s in self.session.plan
                if s.status == StepStatus.DONE and self.episodes.get(s.episode)
                and self.episodes[s.episode].stage == "post_split"
                and s.result.get("var") and s.result.get("function") in REPLAYABLE
                and s.result.get("transformer")]

    def code(self, step: Step, function: str | None, params: dict[str, Any]) -> str | None:
        """The cell source for a step (None when there is nothing to run)."""
        ep = self.episodes[step.episode]
        why = comment(step.reason or ep.name)
        var = self.report_var(step)
        lines: list[str] = []
        if not self.session.variables.get("imports"):
            lines += IMPORTS
        library = self.session.variables.get("frame_library")
        # e.g. polars: the tools work on pandas, converted once; a Dask frame stays lazy (docs/scale.md)
        if library not in (None, "pandas", "dask"):
            lines.append(f"{self.session.frame} = kt.to_pandas({self.session.frame})  # {library} to pandas")
        if step.code is not None:
            body = [step.code.rstrip()]
        elif ep.stage == "split":
            body = self._split_code(var, params)
        elif ep.stage == "model":
            body = self._model_code(params, self.budgets.of(step.episode))
        elif ep.source:
            body = [ep.source]
        elif function is None:
            return None
        elif function == "join_files":
            inputs = self.session.inputs
            body = join_files_code(self.session.frame, var, params, list(inputs.frames), list(inputs.data))
        elif function == "join_frames" or (function == "summarize_records" and ep.combines_frames):
            body = self._join_code(var, function, params)
        elif ep.stage == "post_split":
            body = [f"train, {var} = kt.{function}(train{call_args(params)})"]
            if function in REPLAYABLE and "test" in ep.changes:
                body.append(f"test = {var}.apply(test)")
            body.append(var)
        else:
            body = [f"{self.session.frame}, {var} = kt.{function}({self.session.frame}{call_args(params)})", var]
        return "\n".join([why, *lines, *body])

    def _join_code(self, var: str, function: str, params: dict[str, Any]) -> list[str]:
        """The join of two frames; records over time (``summarize_records``) are summarised per
        entity up to the index first, then joined on the entity's id: one row per subject."""
        params = dict(params)
        frames: list[str | None] = [*self.session.inputs.frames] or [self.session.frame, None]
        left = params.pop("left", None) or frames[0]
        right = params.pop("records" if function == "summarize_records" else "right", None) or frames[1]
        join = f"{self.session.frame}, {var} = kt.join_frames({left}, {right}"
        if function == "join_frames":
            return [f"{join}{call_args(params)})", var]
        # clock-time records count from an anchor column of the left frame, passed as the frame itself
        index = f", index={left}" if params.pop("index", None) == "left" else ""
        return [f"{right}, records = kt.summarize_records({right}{call_args(params)}{index})",
                f"{join}, on={py(params['id'])}, how='left')", var]

    def _split_code(self, var: str, params: dict[str, Any]) -> list[str]:
        task = self.session.task
        frame = self.session.frame
        test_path = self.session.inputs.test_path
        if test_path:
            replay = [s.result["var"] for s in self.session.plan
                      if s.status == StepStatus.DONE and self.episodes[s.episode].stage == "pre_split"
                      and s.result.get("transformer") and s.result.get("var")]
            reader = "read_parquet" if str(test_path).endswith(".parquet") else "read_csv"
            library = "dd" if self.session.inputs.engine == "dask" else "pd"  # lazy like the data
            kt_read = Path(test_path).suffix.lower() in LABELLED or is_workbook(test_path)  # R, Excel: kt too
            read = (f"test, _ = kt.read_file({py(test_path)})" if kt_read
                    else f"test = {library}.{reader}({py(test_path)})")  # a labelled file: its labels as the data's
            lines = [f"train = {frame}", read]
            if replay:
                lines += [f"for step_report in [{', '.join(replay)}]:  # replay the fitted pre-split steps",
                          "    test = step_report.apply(test)"]
            return lines + ["print(f'train {train.shape}, test {test.shape}')"]
        kwargs: dict[str, Any] = {"target": task.target}
        if self.grouping():
            kwargs["groups"] = task.id
            if task.missing_ids:  # the task card said what rows without an id are
                kwargs["missing_ids"] = task.missing_ids
        elif (chosen := self.chosen_groups()) is not None:  # a row outside every group is a group of its own
            kwargs.update(groups=chosen, missing_ids="own")
        kwargs.update(params)
        return [f"train, test, {var} = kt.split({frame}{call_args(kwargs)})", var]

    def _model_code(self, params: dict[str, Any], budget: float | None = None) -> list[str]:
        task = self.session.task
        intervals = self.intervals()
        if intervals is not None:
            kwargs: dict[str, Any] = {"id": task.id, "start": intervals[0], "stop": intervals[1],
                                      "event": task.target}
            kwargs.update({k: v for k, v in params.items() if k in INTERVAL_MODEL_PARAMS})
            function = "fit_evaluate_intervals"
        else:
            kwargs = {"target": task.target, "task": task.kind.value if task.kind else None}
            if task.kind == TaskKind.SURVIVAL:
                kwargs["time"] = task.time
            if groups := self.groups():
                kwargs["groups"] = groups
            if budget is not None and "budget" in self.session.variables.get("fit_evaluate_parameters", []):
                kwargs["budget"] = round(budget)  # fit_evaluate cuts its work to fit, and says what
            kwargs.update(params)
            function = "fit_evaluate"
        pre = self.preprocess_vars()
        # columns a train-only step added (e.g. label-issue flags) are notes, not features
        notes = [c for s in self.session.plan if s.status == StepStatus.DONE and s.result.get("function")
                 and s.result["function"] not in REPLAYABLE
                 and self.episodes[s.episode].stage == "post_split"
                 for c in (s.result.get("report") or {}).get("columns_added", [])]
        frame = f"train.drop(columns={py(notes)})" if notes else "train"
        return [f"model = kt.{function}({frame}{call_args(kwargs)}, test=test, "
                f"preprocess=[{', '.join(pre)}])", "model"]

    async def _with_budget(self, step: Step, function: str | None, params: dict[str, Any]) -> dict[str, Any]:
        """``params`` with the step's budget (whole seconds) under its episode's ``budget_param``
        when its own call runs and the kernel's kernel_tools takes that keyword (a value the
        expert set is kept): the call then keeps to its budget itself, and says what it cut."""
        ep = self.episodes.get(step.episode)
        if ep is None or not ep.budget_param or function is None or function != ep.function or step.code is not None:
            return params
        known = f"{function}_parameters"
        if known not in self.session.variables:
            self.session.variables[known] = await self.calls.parameters(function)
        if ep.budget_param not in (self.session.variables.get(known) or []):
            return params
        return {**params, ep.budget_param: params.get(ep.budget_param, round(self.budgets.of(step.episode)))}

    def grouping(self) -> bool:
        """Group splits and folds by the entity id whenever it is known and still a column.

        Grouping also keeps the id out of the features (fit_evaluate never uses groups as one);
        after aggregation (one row per entity) it is harmless.
        """
        entity = self.session.task.id
        columns = self.session.variables.get("columns") or []
        return bool(entity) and (not columns or entity in columns)

    def groups(self) -> str | None:
        """The column every grouped step keeps together (:func:`.groups.step_groups`)."""
        return step_groups(self.session, self.session.variables.get("columns") or [])

    def chosen_groups(self) -> str | None:
        """A column grouping subjects (a matched set, a site) that the expert chose to group the
        split and the folds by, while it is still a column; None when none was."""
        return chosen_groups(self.session, self.session.variables.get("columns") or [])

    # -- running -------------------------------------------------------------------------
    def changes(self, step: Step) -> list[str]:
        """The variables a step may change: its episode's, where ``df`` stands for the session's
        frame (a session may work on ``visits``)."""
        return [self.session.frame if name == "df" else name for name in self.episodes[step.episode].changes]

    async def checkpoint(self, step: Step) -> str | None:
        names = self.changes(step)
        if step.code is not None:
            names = sorted(set(names) | {self.session.frame, "train", "test"} | set(step.params.get("changes", [])))
        if not names:
            return None
        if step.code is None and self.report_var(step) not in names:
            names.append(self.report_var(step))  # so an undo also unbinds the report it creates
        saved = await self.calls.checkpoint_save(names, f"before {step.id}: {step.title}")
        return saved["id"]

    async def execute(self, step: Step, cell_mark: int,
                      before_cell: Callable[[], Awaitable[Any]] | None = None) -> str:
        """Run a step; returns ``"done"``, ``"kept"`` (nothing to run), ``"failed"`` or
        ``"interrupted"`` (the user interrupted the kernel: restored, not retried).
        ``before_cell`` is awaited after the checkpoint, before the cell (the decision's
        markdown cell, written meanwhile)."""
        function, params = self.resolve(step)
        if function is not None and function not in PUBLIC:
            step.error = f"{function!r} is not a kernel_tools function"
            return "failed"
        await self._check_imports()
        if self.episodes[step.episode].stage == "model" and "fit_evaluate_parameters" not in self.session.variables:
            # asked of the kernel, whose kernel_tools runs the cell (importing the models there
            # is no extra cost: the cell needs them; here it would cost seconds)
            self.session.variables["fit_evaluate_parameters"] = await self.calls.parameters("fit_evaluate")
        params = await self._with_budget(step, function, params)
        source = self.code(step, function, params)
        if source is None:
            step.note = "kept as is: nothing to run"
            return "kept"
        step.status, step.started = StepStatus.RUNNING, now()
        step.budget_s = self.budgets.of(step.episode)
        checkpoint_id = await self._record_checkpoint(step, cell_mark)
        self.session.changed("step", step=step.id, status=StepStatus.RUNNING)
        if before_cell is not None:
            await before_cell()
        fallbacks = list(self.episodes[step.episode].fallback_params)
        last_error: dict[str, Any] | None = None
        for attempt in range(1, self.max_attempts + 1):
            step.attempts = attempt
            result, over_budget = await self._run(step, source)
            # the user's interrupt may reach an idle kernel (before the cell starts, or after it
            # ends): the step they stopped is rolled back all the same, never carried on from
            stopped = self.interrupted() or (result.error or {}).get("ename") == "KeyboardInterrupt"
            if result.error is None and not stopped:
                await self._keep(step, result, function, params)
                return "done"
            last_error = result.error
            await self._roll_back(step, result, attempt, checkpoint_id)
            if over_budget:  # stopped by its budget, not by the user: the run goes on without it
                step.error = (f"stopped after {minutes(step.elapsed_s or 0)}, far past its time budget "
                              f"of {minutes(step.budget_s or 0)}; its variables are as before it. "
                              f"To give it more time: --budget {step.episode}=SECONDS, or the "
                              "budgets in the co-pilot's settings")
                return "failed"
            if stopped:
                step.error = "interrupted by the user"
                return "interrupted"
            if attempt == self.max_attempts or step.code is not None:
                break
            assert result.error is not None  # a success or a stop returned above
            new_params = await self._retry_params(step, source, params, result.error, fallbacks)
            if new_params is None:
                break
            params = new_params
            source = self.code(step, function, params) or source
        step.error = cell_error(last_error["ename"], last_error["evalue"]) if last_error else "failed"
        return "failed"

    async def _record_checkpoint(self, step: Step, cell_mark: int) -> str | None:
        """Checkpoint the step's variables and record it with the session as it was before the
        step (the step itself proposed again), so an undo puts both back; None when the step
        changes no variables."""
        checkpoint_id = await self.checkpoint(step)
        if checkpoint_id is None:
            return None
        snapshot = self.session.snapshot()
        for s in snapshot.plan:
            if s.id == step.id:
                s.status = StepStatus.PROPOSED
        self.session.checkpoints.append(Checkpoint(
            id=checkpoint_id, step_id=step.id, label=step.title,
            names=self.changes(step), cell_count=cell_mark,
            snapshot=snapshot))
        step.checkpoint_id = checkpoint_id
        return checkpoint_id

    async def _keep(self, step: Step, result: CellResult, function: str | None, params: dict[str, Any]) -> None:
        """A cell that ran: record what it called and printed, then read its results."""
        step.cell_ids.append(result.cell_id)
        step.result.update({"var": self.report_var(step), "function": function,
                            "params": params, "outputs": result.text()[-2000:]})
        if function == "to_intervals":  # the model fits these intervals (see intervals())
            self.session.task.start, self.session.task.stop = params.get("time"), params.get("duration")
        if function == "first_transition":  # one row per subject: its time counts from its start
            task = self.session.task
            task.time, task.start, task.visit = params.get("stop"), None, None
            task.index = PredictionIndex(kind="row", column=None, given=False, start=None,
                                         label=f"each '{params.get('id')}''s entry into state {params.get('initial')}",
                                         reason="one row per subject, its time counted from its entry into the state")
            self.session.diagnosed_version = -1
        if function == "number_blocks":  # the block number is the entity the task card said the blocks are
            task = self.session.task
            task.id = task.given.id = params.get("column", "block")
            self.session.diagnosed_version = -1
        self.session.variables["imports"] = True  # the first cell imported them
        await self._read_results(step, function)
        step.error = None

    async def _roll_back(self, step: Step, result: CellResult, attempt: int, checkpoint_id: str | None) -> None:
        """A failed or stopped attempt leaves no trace: its error logged, its cell removed, the
        variables restored from the checkpoint."""
        if result.error is not None:
            self.session.log("error", f"{step.id} ({step.title}) attempt {attempt} failed: "
                             f"{cell_error(result.error['ename'], result.error['evalue'])}",
                             step_id=step.id)
        await self.notebook.delete_cells([result.cell_id])
        self.session.cells = [c for c in self.session.cells if c["id"] != result.cell_id]
        if checkpoint_id is not None:
            await self.calls.checkpoint_restore(checkpoint_id)

    async def _retry_params(self, step: Step, source: str, params: dict[str, Any], error: dict[str, Any],
                            fallbacks: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The parameters of the next attempt: the LLM's repair of the error, else the episode's
        next safer fallback (taken off ``fallbacks``); None when there is neither."""
        new_params = None
        if self.repair is not None:
            repaired = await self.repair(step, source, error)
            if repaired is not None:
                new_params = {**params, **repaired}
                self.session.log("repair", f"{step.id}: the LLM proposed new parameters "
                                 f"{json.dumps(new_params, default=str)}", step_id=step.id)
        if new_params is None and fallbacks:
            new_params = {**params, **fallbacks.pop(0)}
            self.session.log("fallback", f"{step.id}: retrying with safer parameters "
                             f"{json.dumps(new_params, default=str)}", step_id=step.id)
        return new_params

    async def _check_imports(self) -> None:
        """Import kernel_tools again in the next cell if the kernel lost the names (a kernel
        restarted after it died, or an undo back to before the cell that imported them)."""
        if not self.session.variables.get("imports"):
            return
        bound = await self.calls.frame_info(["kt", "pd"])
        if not all(bound.get(name) for name in ("kt", "pd")):
            self.session.variables["imports"] = False

    async def _run(self, step: Step, source: str) -> tuple[CellResult, bool]:
        """Run the step's cell, reporting progress against its budget; ``(result, over_budget)``:
        True when the budget's limit interrupted it."""
        meta = {"dcpilot": {"step": step.id, "checkpoint": step.checkpoint_id,
                            "episode": step.episode}}
        budget = step.budget_s or self.budgets.of(step.episode)
        rows = (self.session.variables.get("initial_shape") or [None])[0]
        scale = data_scale(rows, lazy=self.session.variables.get("frame_library") == "dask")
        progress = Progress(self.session, f"{step.id} {step.title}", step=step.id, budget=budget,
                            stop_after=self.budgets.stop_after(step.episode, scale), stop=self.stop,
                            **({"tick": self.tick} if self.tick else {}))
        result = await progress.run(self.notebook.run_cell(source, meta))
        step.elapsed_s = round(progress.elapsed, 2)
        self.session.cells.append({"id": result.cell_id, "step": step.id, "kind": "code"})
        self.session.changed("cell", step=step.id, cell_id=result.cell_id,
                             error=result.error is not None)
        return result, progress.stopped

    async def _read_results(self, step: Step, function: str | None) -> None:
        """Read the step's report, the frames' shapes, and run the post-step checks."""
        ep = self.episodes[step.episode]
        var = step.result["var"]
        if ep.stage in ("pre_split", "post_split", "split", "model") and step.code is None:
            try:
                report = await self.calls.report(var)
                step.result["report"] = _trim(report)
                step.result["transformer"] = report.get("transformer")
            except ProbeError:
                step.result["report"] = None
        info = await self.calls.frame_info([self.session.frame, "train", "test"])
        frame = info.get(self.session.frame) or {}
        self.session.variables["frame_library"] = frame.get("library")
        self.session.variables["columns"] = frame.get("columns") or []
        self.session.variables["shape"] = [frame.get("rows"), frame.get("cols")]
        if info.get("train"):
            self.session.variables["train_shape"] = [info["train"]["rows"], info["train"]["cols"]]
            self.session.variables["train_columns"] = info["train"]["columns"]
        if info.get("test"):
            self.session.variables["test_shape"] = [info["test"]["rows"], info["test"]["cols"]]
        if step.checkpoint_id and ep.stage in ("pre_split", "post_split", "split"):
            step.checks = await self._validate(step)
        if ep.stage == "model":
            step.result["split_audit"] = await self._split_audit()

    async def _split_audit(self) -> dict[str, Any]:
        """What train and test share, for the verdict (empty when it could not be checked)."""
        groups = self.groups()
        try:
            return await self.calls.split_audit("train", "test", groups=groups,
                                                same_source=not self.session.inputs.test_path)
        except ProbeError as exc:
            self.session.log("error", f"could not compare train and test: {exc}")
            return {}

    async def _validate(self, step: Step) -> list[dict[str, Any]]:
        ep = self.episodes[step.episode]
        expect = dict(ep.expect)
        function = step.result.get("function")
        if function and function != ep.function:
            # the expert chose another kind of call: the generic checks, and what that call may do
            expect = dict(CALL_EXPECT.get(function, {}))
        if expect.get("rows") == "one_per_entity":
            expect["id"] = step.result.get("params", {}).get("id") or self.session.task.id
        target = self.session.task.target
        if ep.stage == "split":
            if self.session.inputs.test_path:
                return []
            before, after, expect = self.session.frame, "train", {"rows": "fewer", "min_row_retention": 0.3}
            train_test: list[str] | None = ["train", "test"]
        elif ep.stage == "post_split":
            before = after = "train"
            train_test = ["train", "test"] if "test" in ep.changes else None
        else:
            before = after = self.session.frame
            train_test = None
        assert step.checkpoint_id is not None  # taken before the step ran
        result = await self.calls.validate(step.checkpoint_id, before, after,
                                           target=target, expect=expect, train_test=train_test)
        step.result["rows_before"], step.result["rows_after"] = result["rows_before"], result["rows_after"]
        return result["failures"]


# what the verdict, the report and the panel read from a step's report: never trimmed away
KEPT = ("features", "metric", "cv_score", "cv_sd", "cv_se", "cv_interval", "cv_repeats", "estimate", "cv_scores",
        "cv_shared_scores", "cv_fold_skill", "cv_fold_suspects",
        "holdout_score", "holdout_ci", "grouped", "warnings",
        "model_name", "n_train", "n_test", "sampled", "degraded", "candidates_tried", "selection", "model_card",
        "columns_removed", "columns_added", "details", "operation", "rows_in", "rows_out",
        "risk_groups", "calibration", "time")  # the last three: the report's curves


def _trim(report: dict[str, Any], limit: int = 4000) -> dict[str, Any]:
    """Keep a report small enough for the sidecar file: the fields others read, the top of the
    importance list, and whatever else is small."""
    text = json.dumps(report, default=str)
    if len(text) <= limit:
        return report
    keep = {k: v for k, v in report.items()
            if k in KEPT or len(json.dumps(v, default=str)) < 800}
    if isinstance(report.get("importance"), list):
        keep["importance"] = report["importance"][:15]
    keep["truncated"] = True
    return keep
