"""What a user reads when something goes wrong: a sentence about their data or step.

Errors reach people through the panel, the transcript, the report and the command line. An
exception's class name and empty message (``Empty:``, ``TimeoutError:``) say nothing to them;
:func:`in_words` turns any exception into a sentence saying what was being done and what
happened, keeping the message of errors that already speak in words.
"""

from __future__ import annotations

import asyncio
import queue
import re


class StepOverBudget(RuntimeError):
    """A step ran far past its time budget and was stopped (see :mod:`.budgets`)."""


# errors whose message is already a sentence for the user (ours, and the kernel's own words)
_SPOKEN = ("ProbeError", "HostError", "KernelDiedError", "KernelBusyError", "NoKernelError",
           "StepOverBudget", "CheckpointError")
_WAITING = (queue.Empty, asyncio.TimeoutError, TimeoutError)


# numpy 2's reprs of scalars, as they leak into messages built with {value!r}: np.int64(6), np.True_
NUMPY_REPR = re.compile(r"\bnp\.(?:u?int\d*|float\d*|str_|bool_?)\((.*?)\)|\bnp\.(True|False)_")


def plain(text: str) -> str:
    """``text`` with numpy's scalar reprs as people write the values: ``np.int64(6)`` → ``6``,
    ``np.True_`` → ``True``."""
    return NUMPY_REPR.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), text)


def in_words(exc: BaseException, doing: str) -> str:
    """A sentence for ``exc`` raised while ``doing`` (e.g. "running step s4 (Impute missing
    values)"): never a bare class name or an empty message."""
    message = plain(" ".join(str(exc).split()))
    name = type(exc).__name__
    if isinstance(exc, _WAITING) and not message:
        return (f"the kernel did not answer while {doing}; it may still be busy or stuck: "
                "wait, or interrupt it and resume")
    if name in _SPOKEN and message:
        return message
    if not message:
        return f"{doing} stopped unexpectedly ({_spaced(name)})"
    return f"{doing} failed: {message}"


def cell_error(ename: str, evalue: str) -> str:
    """A step cell's error as a sentence: the kernel's message, its type only when it says more."""
    evalue = plain(" ".join(str(evalue or "").split()))
    if not evalue:
        return f"the cell stopped with {_spaced(ename) or 'an error'}"
    if ename == "KeyError":
        return f"{evalue} was not found (key error)"
    if ename in ("ValueError", "TypeError", "RuntimeError", "Exception", ""):
        return evalue
    return f"{evalue} ({_spaced(ename)})"


def _spaced(name: str) -> str:
    """``ZeroDivisionError`` → "zero division error"."""
    return re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()
