"""Building blocks for a finding's options: each names the exact kernel_tools call."""

from __future__ import annotations

from kernel_tools.findings import Option


def call(function: str, **params) -> dict:
    """The action of an option: a kernel_tools public function and its keyword arguments."""
    return {"function": function, "params": params}


def keep(description: str, risk: str, recommended: bool = False, label: str = "Keep as is") -> Option:
    return Option("keep", label, description, risk, recommended, None)


def drop(columns: list[str], reason: str, risk: str, recommended: bool = True,
         label: str | None = None) -> Option:
    names = ", ".join(columns)
    return Option(
        "drop",
        label or f"Drop {names}",
        f"Remove {names} from the data before modelling ({reason}).",
        risk,
        recommended,
        call("drop_columns", columns=list(columns), reason=reason),
    )
