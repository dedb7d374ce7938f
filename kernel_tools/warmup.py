"""The imports a kernel makes before the co-pilot's first steps, made ahead of them.

A fresh kernel pays ~1 s for pandas and kernel_tools, ~2 s for the detectors and ~1 s for the
scikit-learn models the first diagnosis fits (on a loaded 2-core machine: twice that). The
headless command line starts its kernel with :func:`warm_up` as a start-up line, so these
imports run while the command line is still checking the file and preparing its notebook,
instead of one after the other with them. Only a head start: nothing is bound in the user's
namespace, and a step that needs a module imports it as it always does.

In a notebook the kernel is already running when the panel opens: :func:`warm_up_in_background`
(the ``warm_up_json`` probe the server sends then) makes the same imports, and the model
step's, in a thread that gives way to the user's cells (:mod:`kernel_tools.background`), so the
first diagnosis and model fit do not pay for them and the user's cells do not wait for them.
"""

from __future__ import annotations

import gc
import importlib
import threading
from typing import Any

from kernel_tools.vocabulary import TaskKind

# what loading a table and the first kt.diagnose import (the detectors register on import)
FIRST_STEPS = (
    "pandas",
    "kernel_tools.findings",
    "kernel_tools.transforms",
    "sklearn.ensemble",
    "sklearn.model_selection",
    "sklearn.metrics",
)


# what the model step imports on top (scipy.stats, the candidates' pipelines), and its survival
# candidates' libraries: seconds on a loaded machine, so only in the background
MODEL_STEP = ("kernel_tools.models",)
SURVIVAL_MODELS = ("sksurv.linear_model", "xgboost")


def warm_up(names: tuple[str, ...] = FIRST_STEPS) -> list[str]:
    """Import the modules the first steps need; returns those imported. One that cannot be
    imported is left to the step that needs it, whose cell then says why in the notebook."""
    warmed = []
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a head start only: the step's own import reports it
            continue
        warmed.append(name)
    if "kernel_tools.findings" not in names:
        return warmed
    try:
        from kernel_tools.diagnosis.registry import load_detectors

        load_detectors()
    except Exception:  # noqa: BLE001 - as above
        return warmed
    return [*warmed, "kernel_tools.diagnosis"]


def warm_up_at_start() -> list[str]:
    """:func:`warm_up` as a kernel's start-up line runs it, before any cell, with the cyclic
    collector paused: imports make many objects and almost no garbage, and the collections
    they set off walk them all for nothing (~0.15 s of ~1.3 s CPU on the kernel's start, issue
    31). Not in the background warm-up: its pause would be the user's cells' too."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return warm_up()
    finally:
        if enabled:
            gc.enable()


class _Background:
    """The one warm-up thread of this kernel and what it has imported so far."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None
        self.warmed: list[str] = []
        self.asked: set[str] = set()

    def run(self, names: tuple[str, ...]) -> None:
        from kernel_tools.background import in_the_background

        with in_the_background():
            self.warmed += warm_up(names)


_BACKGROUND = _Background()


def warm_up_in_background(task: str | None = None) -> dict[str, Any]:
    """Start importing what the first steps and the model step of ``task`` need in a daemon
    thread of this kernel, once (a second call while one runs or after it adds only what is new:
    a survival task's libraries); returns at once with what is warm so far and whether it runs."""
    wanted = FIRST_STEPS + MODEL_STEP + (SURVIVAL_MODELS if task == TaskKind.SURVIVAL else ())
    state = _BACKGROUND
    with state.lock:
        names = tuple(n for n in wanted if n not in state.asked)
        running = state.thread is not None and state.thread.is_alive()
        if names and not running:
            state.asked.update(names)
            state.thread = threading.Thread(target=state.run, args=(names,), name="dcpilot-warm-up", daemon=True)
            state.thread.start()
            running = True
    return {"running": running, "warmed": list(state.warmed), "pending": [n for n in wanted if n not in state.asked]}


# the start-up line a kernel is given (IPython's exec_lines): binds no name, prints nothing
START_UP_LINE = "__import__('kernel_tools.warmup', fromlist=['_']).warm_up_at_start() and None"


def start_up_line(task: str | None = None) -> str:
    """:data:`START_UP_LINE`, then the model step's imports for ``task`` in the background
    (they overlap the first steps and the pauses between them instead of starting the model
    step); binds no name, prints nothing."""
    return (f"{START_UP_LINE}; __import__('kernel_tools.warmup', fromlist=['_'])"
            f".warm_up_in_background({task!r}) and None")
