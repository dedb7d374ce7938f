"""Entry points for the co-pilot's silent probes: each returns a JSON string.

They run as user expressions (see ``jupyter_dcpilot.probe``), so they must bind no names in
the user's namespace and print nothing. They look the namespace up themselves because a
user expression cannot pass it in without naming it.
"""

from __future__ import annotations

import json
import os
from typing import Any


def _user_namespace() -> dict[str, Any]:
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:  # plain Python: nothing to look at
        return {}
    return shell.user_ns


def frames_json() -> str:
    """The DataFrames in the user's namespace, as :func:`kernel_tools.list_frames` lists them."""
    from kernel_tools.frames import list_frames

    return json.dumps(list_frames(_user_namespace()))


def profile_json(name: str) -> str:
    """The compact profile of the DataFrame bound to ``name`` in the user's namespace."""
    from kernel_tools.frames import profile

    namespace = _user_namespace()
    if name not in namespace:
        raise KeyError(f"no variable named {name!r} in this notebook's kernel")
    return json.dumps(profile(namespace[name]))


def sample_rows_json(name: str, n: int = 5) -> str:
    """A few random rows of the DataFrame ``name`` (only when the user shares sample rows)."""
    from kernel_tools.frames import sample_rows

    namespace = _user_namespace()
    if name not in namespace:
        raise KeyError(f"no variable named {name!r} in this notebook's kernel")
    return json.dumps(sample_rows(namespace[name], n))


# -- probes the co-pilot engine calls (jupyter_dcpilot.engine) ------------------------------
# The frames each checkpoint started from, so the post-step checks can compare before/after
# without another copy (transforms never mutate their input). Kernel-process state only.
_BEFORE: dict[str, dict[str, Any]] = {}


def _frame(namespace: dict[str, Any], name: str) -> Any:
    if name not in namespace:
        raise KeyError(f"no variable named {name!r} in this notebook's kernel")
    return namespace[name]


def _call_accepting(function: Any, *args: Any, **kwargs: Any) -> Any:
    """Call ``function`` with the keyword arguments it declares (hints it does not take are dropped)."""
    import inspect

    params = inspect.signature(function).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        kwargs = {k: v for k, v in kwargs.items() if k in params}
    return function(*args, **kwargs)


def diagnose_json(name: str, **hints: Any) -> str:
    """``kernel_tools.diagnose`` of the frame ``name`` as JSON (hints: target, time, task, id, ...)."""
    import kernel_tools as kt

    namespace = _user_namespace()
    hints = {k: v for k, v in hints.items() if v is not None}
    events = hints.pop("events", None)
    if hints.get("dictionary") is not None:  # the codebook's path (and REDCap's event mapping): read here
        hints["dictionary"] = kt.read_dictionary(hints["dictionary"], events=events)
    diagnosis = _call_accepting(kt.diagnose, _frame(namespace, name), **hints)
    return json.dumps(diagnosis.to_dict(), default=str)


def diagnose_join_json(names: list[str], **hints: Any) -> str:
    """``kernel_tools.diagnose_join`` of several frames, as JSON."""
    import kernel_tools as kt

    namespace = _user_namespace()
    frames = {n: _frame(namespace, n) for n in names}
    hints = {k: v for k, v in hints.items() if v is not None}
    result = _call_accepting(kt.diagnose_join, frames, **hints)
    if hasattr(result, "to_dict"):
        result = result.to_dict()
    elif isinstance(result, list):
        result = {"findings": [f.to_dict() if hasattr(f, "to_dict") else f for f in result]}
    return json.dumps(result, default=str)


def frame_info_json(names: list[str]) -> str:
    """Shape and columns of each named frame (``None`` for a name that is not bound); for a
    pandas frame also its memory (``memory_bytes``, strings included) and the memory this
    machine has left (``available_bytes``)."""
    import pandas as pd
    import psutil

    from kernel_tools.frames import frame_bytes

    namespace = _user_namespace()
    out: dict[str, Any] = {}
    for name in names:
        value = namespace.get(name)
        shape = getattr(value, "shape", None)
        columns = getattr(value, "columns", None)
        lazy = value is not None and _is_lazy(value)  # rows of a lazy frame are not counted here
        out[name] = None if value is None else {
            "type": type(value).__name__,
            "library": type(value).__module__.split(".")[0],
            "rows": int(shape[0]) if shape and not lazy else None,
            "cols": int(shape[1]) if shape is not None and len(shape) > 1 else None,
            "columns": [str(c) for c in columns] if columns is not None else None,
        }
        if isinstance(value, pd.DataFrame):
            out[name].update(memory_bytes=frame_bytes(value), available_bytes=int(psutil.virtual_memory().available))
    return json.dumps(out)


def fingerprint_json(names: list[str]) -> str:
    """:func:`kernel_tools.frames.fingerprint` of each named frame (``None`` when not bound or
    not a frame)."""
    from kernel_tools.frames import fingerprint

    namespace = _user_namespace()
    return json.dumps({name: fingerprint(namespace.get(name), name) for name in names})


def _is_lazy(value: Any) -> bool:
    from kernel_tools.lazy import is_lazy

    return is_lazy(value)


def report_json(name: str) -> str:
    """``to_dict()`` of a StepReport / ModelReport bound to ``name`` (what a step produced)."""
    value = _frame(_user_namespace(), name)
    if not hasattr(value, "to_dict"):
        raise TypeError(f"{name!r} is a {type(value).__name__}, not a kernel_tools report")
    return json.dumps(value.to_dict(), default=str)


def warm_json(functions: list[str]) -> str:
    """Import what the next step will call and open the checkpoint store, while the kernel
    waits for the expert's answer: the approved step then runs without paying for imports
    (a first transform or checkpoint costs a few hundred milliseconds, a model library seconds)."""
    import kernel_tools
    from kernel_tools.checkpoints import store

    store()
    warmed = [name for name in functions if name in kernel_tools.__all__ and getattr(kernel_tools, name)]
    return json.dumps({"warmed": warmed})


def warm_up_json(task: str | None = None) -> str:
    """Start importing what the first diagnosis and the model step of ``task`` need, in a
    background thread of the kernel (:func:`kernel_tools.warmup.warm_up_in_background`), while
    the user reads the panel; returns at once with what is warm so far."""
    from kernel_tools.warmup import warm_up_in_background

    return json.dumps(warm_up_in_background(task))


def chdir_json(path: str) -> str:
    """Move the kernel to ``path``, the folder of the notebook it runs (a headless kernel is
    started before its output folder exists, so that its start-up overlaps the input checks)."""
    os.chdir(path)
    return json.dumps({"cwd": os.getcwd()})


def parameters_json(function: str) -> str:
    """The parameter names of a public kernel_tools function, as this kernel has it (the engine
    passes newer keywords, e.g. ``budget``, only to a kernel_tools that takes them)."""
    import inspect

    import kernel_tools

    if function not in kernel_tools.__all__:
        raise KeyError(f"{function!r} is not a kernel_tools function")
    return json.dumps(list(inspect.signature(getattr(kernel_tools, function)).parameters))


def checkpoint_save_json(names: list[str], label: str) -> str:
    """Snapshot the named variables before a step (names not bound yet are removed on restore)."""
    from kernel_tools.checkpoints import store

    namespace = _user_namespace()
    present = {n: namespace[n] for n in names if n in namespace}
    # a store checkpoint even when every name is new (its restore unbinds them): it is spilled to
    # disk like the others, so an undo to it still works in a restarted kernel
    checkpoint_id = store().save(list(names), label)
    _BEFORE[checkpoint_id] = present
    return json.dumps({"id": checkpoint_id, "saved": sorted(present)})


def checkpoint_restore_json(checkpoint_id: str) -> str:
    """Put the snapshot back; the names the checkpointed step created are unbound."""
    from kernel_tools.checkpoints import store

    return json.dumps({"restored": list(store().restore(checkpoint_id))})


def checkpoint_problem_json(checkpoint_id: str) -> str:
    """Why the checkpoint cannot be restored (``{"problem": null}`` when it can), asked before
    an undo touches anything: after a kernel death, what is gone and what is left."""
    from kernel_tools.checkpoints import store

    try:
        problem = store().problem(checkpoint_id)
    except KeyError as error:
        problem = (f"this kernel has no checkpoint {checkpoint_id!r}: it restarted and the checkpoint "
                   f"was not on disk ({error.args[0]})")
    return json.dumps({"problem": problem})


def checkpoint_discard_json(checkpoint_id: str) -> str:
    from kernel_tools.checkpoints import store

    store().discard(checkpoint_id)
    _BEFORE.pop(checkpoint_id, None)
    return json.dumps({"discarded": checkpoint_id})


def checkpoint_list_json() -> str:
    from kernel_tools.checkpoints import store

    return json.dumps(store().list(), default=str)


def split_audit_json(train: str = "train", test: str = "test", groups: str | None = None,
                     same_source: bool = True) -> str:
    """``kernel_tools.checks.split_overlap`` of the frames named ``train`` and ``test``."""
    from kernel_tools.checks import split_overlap
    from kernel_tools.lazy import is_lazy

    namespace = _user_namespace()
    train_df, test_df = _frame(namespace, train), _frame(namespace, test)
    if is_lazy(train_df) or is_lazy(test_df):
        from kernel_tools.lazy.checks import split_overlap_lazy

        return json.dumps(split_overlap_lazy(train_df, test_df, groups))
    return json.dumps(split_overlap(train_df, test_df, groups, same_source))


def validate_json(
    checkpoint_id: str,
    before: str,
    after: str,
    target: str | None = None,
    expect: dict[str, Any] | None = None,
    train_test: list[str] | None = None,
) -> str:
    """``kernel_tools.validate_step`` between the frame saved at a checkpoint and its current value."""
    from kernel_tools.checks import validate_step

    namespace = _user_namespace()
    saved = _BEFORE.get(checkpoint_id, {})
    if before not in saved:
        raise KeyError(f"checkpoint {checkpoint_id!r} holds no frame named {before!r}")
    expect = dict(expect or {})
    if train_test:
        expect["train_test"] = tuple(_frame(namespace, n) for n in train_test)
    from kernel_tools.frames import to_pandas
    from kernel_tools.lazy import is_lazy

    old, new = saved[before], _frame(namespace, after)
    old = old if is_lazy(old) else to_pandas(old)  # the frame before a polars one's conversion
    if target is not None and target not in getattr(old, "columns", ()):
        target = None
    if is_lazy(old) or is_lazy(new):  # counts, computed in one pass
        from kernel_tools.lazy.checks import validate_lazy

        failures, info = validate_lazy(old, new, target=target, expect=expect)
        return json.dumps({"failures": failures, **info}, default=str)
    failures = validate_step(old, new, target=target, expect=expect)
    info = {"rows_before": int(old.shape[0]), "rows_after": int(new.shape[0]),
            "cols_before": int(old.shape[1]), "cols_after": int(new.shape[1])}
    return json.dumps({"failures": failures, **info}, default=str)


# -- what each answer to a decision would do (kernel_tools.impact), in the background ----------
_IMPACT_JOBS: dict[str, Any] = {}
_MAX_IMPACT_JOBS = 16  # finished jobs kept for a late poll; the oldest go first
_CANCELLED: dict[str, bool] = {}  # jobs cancelled before their start arrived


def impact_start_json(name: str, options: list[dict[str, Any]], job: str | None = None, **context: Any) -> str:
    """Start estimating the impact of each option on the frame ``name`` in a background thread
    (see :class:`kernel_tools.impact.ImpactJob`), as job ``job`` (the caller's id, so it can
    cancel a job whose start it never heard back from); returns at once."""
    import uuid

    from kernel_tools.impact import ImpactJob

    job_id = job or uuid.uuid4().hex[:12]
    if _CANCELLED.pop(job_id, False):  # cancelled before it started
        return json.dumps({"job": job_id, "sample_rows": 0, "status": "cancelled"})
    estimate = ImpactJob(_frame(_user_namespace(), name), options, **context)
    finished = [k for k, j in _IMPACT_JOBS.items() if j.status != "running"]
    for old in finished[: max(0, len(_IMPACT_JOBS) + 1 - _MAX_IMPACT_JOBS)]:
        del _IMPACT_JOBS[old]
    _IMPACT_JOBS[job_id] = estimate.start()
    return json.dumps({"job": job_id, "sample_rows": len(estimate.sample), "status": "running"})


def impact_poll_json(job_id: str) -> str:
    """What an impact job has found so far: ``status`` (running, done, cancelled, failed) and
    the ``results`` of the options done."""
    job = _IMPACT_JOBS.get(job_id)
    if job is None:
        raise KeyError(f"no impact estimate {job_id!r} in this kernel (it restarted?)")
    return json.dumps(job.state(), default=str)


def impact_cancel_json(job_id: str) -> str:
    """Stop an impact job before its next model fit."""
    job = _IMPACT_JOBS.get(job_id)
    if job is not None:
        job.cancel()
    else:  # its start is still on the way: it will not start
        _CANCELLED[job_id] = True
        while len(_CANCELLED) > _MAX_IMPACT_JOBS:
            _CANCELLED.pop(next(iter(_CANCELLED)))
    return json.dumps({"cancelled": job_id, "known": job is not None})
