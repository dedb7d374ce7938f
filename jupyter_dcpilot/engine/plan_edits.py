"""The expert steers the plan: skip, move, add, params and reopen — one implementation for the
panel, the REST API, the magics, the chat and the decisions file.

An edit is a small JSON object, ``{"op": ..., "step": ..., ...}``:

- ``skip``: a proposed step will not run (its findings count as handled);
- ``move``: a proposed step goes ``before`` or ``after`` another of the same stage;
- ``add``: a step of an ``episode`` from the library, on ``columns``, with ``params``;
- ``params``: the parameters of a proposed step (only those its episode lists in
  ``edit_params``: columns in scope, outlier method and threshold, imputation method,
  aggregation rule and landmark, test size, model candidates);
- ``reopen``: a done step is undone to its checkpoint and the plan is made again (the
  coordinator does the undo; a skipped step simply becomes proposed again).

Edits are checked first (:func:`check`): ``KeyError`` for an unknown step, ``ValueError`` for
a malformed edit (a parameter an episode does not take, a column the frame lacks),
:class:`EditRefused` for an edit the session's state does not allow (the HTTP API answers 409).
No edit lets a gated step run without its decision: a skipped step does not run at all, an added
gated step gets its own open decision, changed parameters reopen a decision already answered,
and the coordinator still refuses to execute an undecided gated step. Every edit is recorded,
"by user" with the host it came through (``via``: panel, chat, magic, decisions file, agent
<name>), in :attr:`Session.plan_edits` (the decision log), in the transcript and, by the
coordinator, as a markdown cell in the notebook.

What an edit changes lives on the steps themselves (``user_params``, ``by_user``, a status), so
a checkpoint restores it with the plan; :func:`after_merge` keeps it when a planner proposes the
pending steps again (:mod:`.plan_merge` carries an edited step over to the re-planned step of
its episode, or records that the edit lapsed, and why). A decisions file's ``"plan"`` list holds edits given ahead of time, matched
by episode and columns (step ids are not known then), applied whenever a matching step appears.
"""

from __future__ import annotations

import uuid
from typing import Any

from kernel_tools.vocabulary import StepStatus

from .edit_checks import check_edit, check_params
from .episodes import AGGREGATIONS, IMPUTE_METHODS, OUTLIER_METHODS, STAGES, Episode
from .episodes import library as episode_library
from .hosts import Via, agent_name, by_whom
from .session import Decision, EditRecord, Session, Step
from .validation import did_you_mean
from .wire import DecisionOption, skip_option

OPS = ("skip", "move", "add", "params", "reopen")

# keywords the step's call needs from the task when a step is added by hand
_CONTEXT = {"impute": ("target",), "handle_outliers": ("target",), "handle_label_issues": ("target",),
            "aggregate_per_entity": ("id", "time")}
_TASK_KEY = {"time": "visit"}  # aggregation orders an entity's records by its visit column


class EditRefused(Exception):
    """The edit is well formed but the session's state does not allow it now (HTTP 409)."""


# -- what the panel lists ------------------------------------------------------------------
def library(session: Session, episodes: dict[str, Episode]) -> list[dict[str, Any]]:
    """Every episode with one line on what it does, whether it can be added now (and why not),
    whether its steps may be skipped (``required``: never), and the parameters an edit may set."""
    out = []
    for ep in sorted(episodes.values(), key=lambda e: e.order):
        why = _why_not_addable(session, ep, episodes)
        out.append({"id": ep.id, "name": ep.name, "stage": ep.stage, "gate": ep.gate,
                    "line": ep.coordinator.split(". ")[0].rstrip(".") + ".",
                    "addable": why is None, "why_not": why, "required": ep.required,
                    "params": ep.edit_params})
    return out


def _why_not_addable(session: Session, ep: Episode, episodes: dict[str, Episode]) -> str | None:
    if ep.not_addable:
        return ep.not_addable
    if ep.when.get("always") and any(st.episode == ep.id and (st.pending or st.status == StepStatus.DONE)
                                     for st in session.plan):
        return "it is in the plan already"
    later = _later_stage_done(session, ep.stage, episodes)
    if later is not None:
        return f"{later.title} has run: reopen it to add a step before it"
    return None


def _later_stage_done(session: Session, stage: str, episodes: dict[str, Episode]) -> Step | None:
    """A done step of a later stage (the final explain and report steps do not count)."""
    rank = STAGES.index(stage)
    return next((st for st in session.plan if st.status == StepStatus.DONE
                 and STAGES.index(_stage(st, episodes)) > rank and _stage(st, episodes) != "final"), None)


def _required(episode: str, episodes: dict[str, Episode]) -> bool:
    """Whether a valid model needs steps of this episode (they are never skipped)."""
    ep = episodes.get(episode)
    return ep is not None and ep.required


def _specs(episode: str, episodes: dict[str, Episode]) -> dict[str, dict[str, Any]]:
    """The parameters an edit may set on steps of this episode."""
    ep = episodes.get(episode)
    return ep.edit_params if ep is not None else {}


def _stage(step: Step, episodes: dict[str, Episode]) -> str:
    ep = episodes.get(step.episode)
    return ep.stage if ep is not None else "pre_split"


# -- checking and applying ---------------------------------------------------------------------
def check(session: Session, edit: dict[str, Any], episodes: dict[str, Episode],
          parameters: list[str] | None = None) -> None:
    """Raise (KeyError, ValueError, :class:`EditRefused`) unless ``edit`` can be applied now.

    ``parameters``: the keywords the kernel's ``fit_evaluate`` takes (asked of the kernel before
    a ``candidates`` edit; None when not asked)."""
    check_edit(edit, episodes)  # no control character, numbers finite and in range (edit_checks.py)
    op = edit.get("op")
    if op not in OPS:
        raise ValueError(f"op must be one of {list(OPS)}, not {op!r}{did_you_mean(str(op), OPS)}")
    if op == "add":
        _check_add(session, edit, episodes)
        return
    step = session.step(_text(edit, "step"))  # KeyError naming it
    if op == "skip":
        if not step.pending:
            raise EditRefused(f"{step.id} ({step.title}) is {step.status}: only a proposed step can be "
                              "skipped" + ("; reopen it to change it" if step.status == StepStatus.DONE else ""))
        if _required(step.episode, episodes):
            raise EditRefused(f"{step.id} ({step.title}) cannot be skipped: a valid model needs it")
    elif op == "move":
        _check_move(session, step, edit, episodes)
    elif op == "params":
        if not step.pending:
            raise EditRefused(f"{step.id} ({step.title}) is {step.status}: parameters change only before "
                              "a step runs" + ("; reopen it first" if step.status == StepStatus.DONE else ""))
        _check_params(session, step.episode, edit.get("params"), episodes, parameters)
    elif op == "reopen":
        if step.status == StepStatus.SKIPPED:
            later = _later_stage_done(session, _stage(step, episodes), episodes)
            if later is not None:
                raise EditRefused(f"{later.title} has run since {step.id} was skipped: reopen "
                                  f"{later.id} first")
        elif step.status != StepStatus.DONE:
            raise EditRefused(f"{step.id} ({step.title}) is {step.status}: only a done or skipped step "
                              "can be reopened")
        elif not step.checkpoint_id:
            raise EditRefused(f"{step.id} ({step.title}) changed no data, so there is no checkpoint to "
                              "go back to")


def apply(session: Session, edit: dict[str, Any], episodes: dict[str, Episode], *,
          via: str, parameters: list[str] | None = None) -> EditRecord:
    """Check and apply one edit that came through the host ``via``; returns its record, added to
    :attr:`Session.plan_edits` — except for the ``reopen`` of a done step, which is only checked:
    the coordinator undoes the step, then adds the record (``record.checkpoint``) with :func:`note`."""
    check(session, edit, episodes, parameters)
    op = edit["op"]
    record = EditRecord(op=op, via=via, text="", by="agent" if agent_name(via) else "user",
                        reason=str(edit["reason"]) if edit.get("reason") else None)
    if op == "add":
        step = _add(session, edit, episodes)
        record.step, record.episode, record.columns = step.id, step.episode, list(step.columns)
        record.params = dict(step.user_params)
        text = f"added {step.id} ({step.title})"
    else:
        step = session.step(edit["step"])
        record.step, record.episode, record.title = step.id, step.episode, step.title
        if op == "skip":
            _skip(session, step, f"skipped {by_whom(via)}")
            text = f"skipped {step.id} ({step.title})"
        elif op == "move":
            anchor = session.step(edit.get("before") or edit["after"])  # check() made sure one is given
            where = "before" if edit.get("before") else "after"
            _move(session, step, anchor, where)
            setattr(record, where, anchor.id)
            text = f"moved {step.id} ({step.title}) {where} {anchor.id} ({anchor.title})"
        elif op == "params":
            record.params = _set_params(session, step, dict(edit["params"]), episodes)
            text = f"set {_params_text(record.params)} on {step.id} ({step.title})"
        elif step.status == StepStatus.SKIPPED:
            _unskip(session, step)
            text = f"reopened the skipped {step.id} ({step.title})"
        else:
            record.checkpoint = step.checkpoint_id
            text = f"reopened {step.id} ({step.title}): undone to its checkpoint, then planned again"
    record.text = text + (f" — {record.reason}" if record.reason else "")
    if record.checkpoint is None:
        note(session, record)
    return record


def note(session: Session, record: EditRecord) -> None:
    """Add an edit's record to the decision log and the transcript."""
    session.plan_edits.append(record)
    session.log("edit", f"{by_whom(record.via).removeprefix('by ')} {record.text}", step_id=record.step,
                op=record.op, via=record.via)


def lapse(session: Session, step: Step, why: str) -> list[EditRecord]:
    """The expert's edits of ``step`` no longer apply (a re-plan left no step of its kind): each
    record says why, and so does the transcript; the coordinator notes them in the notebook."""
    lapsed = [r for r in session.plan_edits if r.step == step.id and r.lapsed is None and r.op != "skip"]
    for record in lapsed:
        record.lapsed = why
        session.log("edit", f"an edit no longer applies: {record.text} — {why}",
                    step_id=step.id, op=record.op, lapsed=True)
    return lapsed


def _text(edit: dict[str, Any], key: str) -> str:
    value = edit.get(key)
    if not isinstance(value, str) or not value:
        raise ValueError(f"a {edit.get('op')} edit needs {key!r} (a step id such as 's4')")
    return value


def _check_move(session: Session, step: Step, edit: dict[str, Any], episodes: dict[str, Episode]) -> None:
    if bool(edit.get("before")) == bool(edit.get("after")):
        raise ValueError("a move edit needs either 'before' or 'after' (a step id)")
    anchor = session.step(edit.get("before") or edit["after"])  # check() made sure one is given
    for st in (step, anchor):
        if not st.pending:
            raise EditRefused(f"{st.id} ({st.title}) is {st.status}: only proposed steps move")
    if step.id == anchor.id:
        raise ValueError("a step cannot move before or after itself")
    a, b = _stage(step, episodes), _stage(anchor, episodes)
    if a != b:
        raise EditRefused(f"{step.id} ({step.title}) belongs to the {a.replace('_', '-')} steps and "
                          f"{anchor.id} to the {b.replace('_', '-')} steps: a step moves only among "
                          "the steps of its stage (what is learned on train stays after the split)")


def _check_add(session: Session, edit: dict[str, Any], episodes: dict[str, Episode]) -> None:
    name = edit.get("episode")
    if not isinstance(name, str) or name not in episodes:
        raise ValueError(f"unknown episode {name!r}{did_you_mean(str(name), list(episodes))}; "
                         f"the library has {sorted(episodes)}")
    ep = episodes[name]
    why = _why_not_addable(session, ep, episodes)
    if why is not None:
        raise EditRefused(f"cannot add {ep.id} ({ep.name}): {why}")
    columns = edit.get("columns")
    if columns is not None:
        _check_columns(session, ep, columns)
    elif ep.function == "drop_columns":
        raise ValueError(f"adding {ep.id} needs 'columns': which columns to drop")
    if ep.function == "aggregate_per_entity" and not session.task.id:
        raise EditRefused("aggregating needs the entity id: none is known for this task")
    if edit.get("params"):
        _check_params(session, ep.id, edit["params"], episodes, None)


def _frame_columns(session: Session, ep: Episode) -> list[str]:
    v = session.variables
    if ep.stage in ("post_split", "model"):
        return list(v.get("train_columns") or v.get("columns") or [])
    return list(v.get("columns") or [])


def _check_columns(session: Session, ep: Episode, columns: Any) -> None:
    if not isinstance(columns, list) or not columns or not all(isinstance(c, str) for c in columns):
        raise ValueError("'columns' must be a non-empty list of column names")
    known = _frame_columns(session, ep)
    if known:
        for column in columns:
            if column not in known:
                raise ValueError(f"{column!r} is not a column of the data{did_you_mean(column, known)}")
    target = session.task.target
    if target in columns and ep.function == "drop_columns":
        raise ValueError(f"{target!r} is the target: it cannot be dropped")


def _check_params(session: Session, episode: str, params: Any, episodes: dict[str, Episode],
                  parameters: list[str] | None) -> None:
    """The values by their specs (:func:`.edit_checks.check_params`), then the columns against
    the frame and the kernel's ``fit_evaluate`` against a ``candidates`` edit."""
    check_params(episode, params, _specs(episode, episodes))
    for key, value in params.items():
        if _specs(episode, episodes)[key]["kind"] == "columns":
            _check_columns(session, episodes[episode], value)
    if "candidates" in params and parameters is not None and "candidates" not in parameters:
        raise EditRefused("this kernel's fit_evaluate chooses among its candidates itself (it takes no "
                          "'candidates'); update kernel_tools in the kernel to name them")


# -- the edits ---------------------------------------------------------------------------------
def _mark(step: Step, what: str) -> None:
    if what not in step.by_user:
        step.by_user.append(what)


def _skip(session: Session, step: Step, note: str) -> None:
    step.status, step.note = StepStatus.SKIPPED, note
    _mark(step, "skipped")
    session.handled += [f for f in step.finding_ids if f not in session.handled]
    session.changed("step", step=step.id, status=step.status, note=step.note)


def _unskip(session: Session, step: Step) -> None:
    step.status, step.note = StepStatus.PROPOSED, "reopened by the user"
    step.by_user = [b for b in step.by_user if b != "skipped"]
    session.handled = [f for f in session.handled if f not in step.finding_ids]
    if step.decision_id:
        decision = session.decision(step.decision_id)
        if decision.decided:
            decision.reopen("reopened by the user")
            step.titled_by(None)
    session.changed("step", step=step.id, status=step.status, note=step.note)


def _move(session: Session, step: Step, anchor: Step, where: str) -> None:
    plan = [st for st in session.plan if st is not step]
    at = plan.index(anchor) + (1 if where == "after" else 0)
    plan.insert(at, step)
    session.plan = plan
    _mark(step, "moved")
    session.changed("plan", steps=[st.id for st in plan if st.pending], moved=step.id)


def _set_params(session: Session, step: Step, params: dict[str, Any],
                episodes: dict[str, Episode]) -> dict[str, Any]:
    """Set the user's parameters; an answer already given to the step's question was given to
    another question, so it is asked again."""
    step.user_params.update(params)
    _mark(step, "params")
    if step.decision_id:
        decision = session.decision(step.decision_id)
        if decision.decided:
            decision.reopen(f"the user changed the parameters ({_params_text(params)})")
            step.titled_by(None)
        _refresh_options(decision, step, episodes)
        session.changed("decision", decision=decision.to_dict())
    session.changed("step", step=step.id, status=step.status, params=step.user_params)
    return params


def _refresh_options(decision: Decision, step: Step, episodes: dict[str, Episode]) -> None:
    """Show the user's parameters in the options' calls; their impact is estimated again."""
    for option in decision.options:
        action = option.action
        if action and action.get("function"):
            action["params"] = call_params(step, action["function"], action.get("params") or {},
                                           episodes.get(step.episode))
    decision.clear_impact()


def _add(session: Session, edit: dict[str, Any], episodes: dict[str, Episode]) -> Step:
    ep = episodes[edit["episode"]]
    columns = list(edit.get("columns") or [])
    params = dict(ep.params)
    for key in _CONTEXT.get(ep.function or "", ()):
        value = getattr(session.task, _TASK_KEY.get(key, key))
        if value:
            params[key] = value
    if columns and ep.function:
        keyword = ep.edit_params.get("columns", {}).get("param", "columns")
        params[keyword] = columns
    if ep.function == "drop_columns":
        params.setdefault("reason", "chosen by the user")
    title = f"{ep.name}: {', '.join(columns)}" if columns else ep.name
    step = Step(id=session.new_id("s"), episode=ep.id, title=title, gate=ep.gate, function=ep.function,
                columns=columns, params=params, reason=str(edit.get("reason") or "added by the user"),
                note="added by the user", by_user=["added"])
    step.user_params = dict(edit.get("params") or {})
    pending = [st for st in session.plan if st.pending]
    after = [st for st in pending if episodes.get(st.episode, ep).order <= ep.order]
    at = session.plan.index(after[-1]) + 1 if after else (
        session.plan.index(pending[0]) if pending else len(session.plan))
    session.plan.insert(at, step)
    if step.gate:
        _ask(session, step, ep)
    session.changed("plan", steps=[st.id for st in session.plan if st.pending], added=step.id)
    return step


def _ask(session: Session, step: Step, ep: Episode) -> None:
    """The open decision of a gated step the user added: run it, or skip it after all."""
    action = {"function": ep.function, "params": call_params(step, ep.function or "", step.params, ep)}
    on = f" on {', '.join(step.columns)}" if step.columns else ""
    options = [DecisionOption(id="run", label=f"Run {ep.name.lower()}", risk="",
                              description=f"kernel_tools.{ep.function}{on}, as you added it.",
                              recommended=True, action=action), skip_option()]
    decision = Decision(id=f"{session.new_id('d')}-{uuid.uuid4().hex[:8]}", step_id=step.id,
                        gate=step.gate or "", question=f"Run the step you added: {step.title}?",
                        evidence={"added_by": "the user"}, options=options, recommended="run",
                        columns=list(step.columns))
    session.decisions.append(decision)
    step.decision_id = decision.id
    session.changed("decision", decision=decision.to_dict())


def _params_text(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items())


# -- where the step's call takes them ----------------------------------------------------------
def call_params(step: Step, function: str, params: dict[str, Any], episode: Episode | None) -> dict[str, Any]:
    """``params`` of the step's kernel_tools call with the user's parameters over them (only when
    the call is the ``episode``'s own: an option that calls something else keeps its own)."""
    if not step.user_params or episode is None or function != episode.function:
        return dict(params)
    out = dict(params)
    specs = episode.edit_params
    for key, value in step.user_params.items():
        keyword = specs.get(key, {}).get("param", key)
        if value is None:
            out.pop(keyword, None)
        else:
            out[keyword] = value
    return out


# -- keeping edits when the plan is made again ---------------------------------------------------
def after_merge(session: Session, episodes: dict[str, Episode], previous: list[str],
                standing: list[dict[str, Any]] | None = None) -> None:
    """Called by the coordinator after a planner replaced the pending steps: steps the user added
    go back to their stage's place, an order the user chose is kept, and a decisions file's edits
    are applied to the steps they match."""
    pending = [st for st in session.plan if st.pending]
    added = [st for st in pending if "added" in st.by_user]
    planned = [st for st in pending if "added" not in st.by_user]
    for st in added:  # each at its episode's place among the planner's steps
        order = episodes[st.episode].order if st.episode in episodes else 9
        before = [p for p in planned if episodes.get(p.episode) is not None
                  and episodes[p.episode].order <= order]
        at = planned.index(before[-1]) + 1 if before else 0
        planned.insert(at, st)
    if any("moved" in st.by_user for st in session.plan):  # the user's order wins over the planner's
        rank = {sid: i for i, sid in enumerate(previous)}
        slots = [i for i, st in enumerate(planned) if st.id in rank]
        ordered = sorted((planned[i] for i in slots), key=lambda st: rank[st.id])
        for i, st in zip(slots, ordered):
            planned[i] = st
    session.plan = keep_places(session.plan, planned)
    for edit in standing or []:
        _standing(session, edit, episodes)


def _standing(session: Session, edit: dict[str, Any], episodes: dict[str, Episode]) -> None:
    """One edit of a decisions file, applied to the proposed steps it matches."""
    op, name = edit.get("op"), edit.get("episode")
    columns = set(edit.get("columns") or [])

    def matches(st: Step) -> bool:
        return st.pending and st.episode == name and (not columns or bool(columns & set(st.columns)))

    if op == "add":
        done = any(r.via == Via.DECISIONS_FILE and r.op == "add" and r.episode == name
                   and set(r.columns or []) == columns for r in session.plan_edits)
        if not done and _why_not_addable(session, episodes[edit["episode"]], episodes) is None:
            apply(session, {k: v for k, v in edit.items() if k != "step"}, episodes, via=Via.DECISIONS_FILE)
        return
    for st in [st for st in session.plan if matches(st)]:
        if op == "skip" and not _required(st.episode, episodes):
            apply(session, {"op": "skip", "step": st.id}, episodes, via=Via.DECISIONS_FILE)
        elif op == "params" and any(st.user_params.get(k) != v for k, v in (edit.get("params") or {}).items()):
            apply(session, {"op": "params", "step": st.id, "params": edit["params"]}, episodes,
                  via=Via.DECISIONS_FILE)


def check_standing(edits: Any, episodes: dict[str, Episode], source: str) -> list[dict[str, Any]]:
    """A decisions file's ``"plan"`` list, checked beyond its JSON Schema as every edit is
    (:func:`.edit_checks.check_edit`: known episodes and parameters, finite numbers in range, no
    control characters), and no skip of a step a valid model needs (ValueError in one line)."""
    for i, edit in enumerate(edits or []):
        where = f"{source}: plan[{i}]"
        check_edit(edit, episodes, where)
        if edit.get("op") == "params" and not edit.get("params"):
            raise ValueError(f"{where}: a params edit needs 'params'")
        name = edit["episode"]
        if edit.get("op") == "skip" and episodes[name].required:
            raise ValueError(f"{where}: {name} cannot be skipped: a valid model needs it")
    return list(edits or [])


# -- in words ----------------------------------------------------------------------------------
def parse_pairs(episode: str, pairs: list[str], episodes: dict[str, Episode] | None = None) -> dict[str, Any]:
    """``key=value`` words (a magic's, a chat message's) as the ``params`` of an edit: numbers as
    numbers, lists of names comma-separated, ``none`` for no value; ValueError in one line.
    ``episodes``: the library the step's episode is in (default: the built-in one)."""
    specs = _specs(episode, episodes if episodes is not None else episode_library())
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"{pair!r} is not key=value (e.g. threshold=3)")
        kind = specs.get(key, {}).get("kind")
        if value.lower() in ("none", "null"):
            out[key] = None
        elif kind in ("columns", "names"):
            out[key] = [v for v in value.split(",") if v]
        elif kind == "number":
            try:
                out[key] = float(value) if any(c in value for c in ".eE") else int(value)
            except ValueError:
                raise ValueError(f"{key} must be a number, not {value!r}") from None
        else:
            out[key] = value
    return out


def edit_markdown(record: EditRecord) -> str:
    """The notebook's note of one edit."""
    return f"### Plan edited {by_whom(record.via)}\n\n{record.text[0].upper()}{record.text[1:]}, at {record.at}."


def lapse_markdown(record: EditRecord) -> str:
    """The notebook's note that an edit no longer applies, and why."""
    return (f"### A plan edit no longer applies\n\nThe edit made {by_whom(record.via)} at {record.at} — "
            f"{record.text} — no longer applies: {record.lapsed}.")


def keep_places(plan: list[Step], pending: list[Step]) -> list[Step]:
    """``plan`` with its pending steps replaced by ``pending``, in order, while every step that
    is not pending (done, skipped, undone ...) keeps its place among them: a skipped step stays
    where the expert skipped it rather than jumping to the top."""
    queue = list(pending)
    out: list[Step] = []
    for st in plan:
        if not st.pending:
            out.append(st)
        elif queue:
            out.append(queue.pop(0))
    return out + queue


__all__ = ["AGGREGATIONS", "EditRefused", "IMPUTE_METHODS", "OPS", "OUTLIER_METHODS", "after_merge", "apply",
           "call_params", "check", "keep_places", "lapse", "lapse_markdown",
           "check_standing", "edit_markdown", "library", "note", "parse_pairs"]
