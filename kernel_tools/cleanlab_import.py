"""cleanlab without HuggingFace ``datasets`` until someone asks for its Datalab.

cleanlab's package ``__init__`` imports Datalab, and Datalab imports HuggingFace ``datasets``
(with pyarrow's dataset layer, fsspec, huggingface_hub…): ~5 s of CPU from source and ~1.5 s
from bytecode on a loaded 2-core machine (issue 31), for a part the co-pilot never uses — the
label checks need only ``cleanlab.filter`` and ``cleanlab.rank``. :func:`load_cleanlab` imports
cleanlab with ``datasets`` held back (cleanlab then leaves Datalab out, as on an install without
it) and puts Datalab back as a lazy attribute, so that a user's ``from cleanlab import Datalab``
in the same kernel still imports it, then.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from types import ModuleType

HELD_BACK = "datasets"
# cleanlab's attributes that import Datalab, and cleanlab's factories that make them
LAZY = {"Datalab": "_datalab_import_factory", "IssueManager": "_issue_manager_import_factory"}


def load_cleanlab() -> ModuleType:
    """Import cleanlab (once) without ``datasets``; returns the package. Where ``datasets`` or
    cleanlab is already imported, a plain import."""
    if "cleanlab" in sys.modules or HELD_BACK in sys.modules:
        return importlib.import_module("cleanlab")
    sys.modules[HELD_BACK] = None  # type: ignore[assignment]  # its import raises ImportError
    try:
        cleanlab = importlib.import_module("cleanlab")
    finally:
        if sys.modules.get(HELD_BACK, ModuleType(HELD_BACK)) is None:
            del sys.modules[HELD_BACK]
    factories: dict[str, Callable[[], object]] = {
        name: getattr(cleanlab, factory) for name, factory in LAZY.items() if callable(getattr(cleanlab, factory, None))}
    if len(factories) < len(LAZY):  # another cleanlab than 2.x: leave it as it imported itself
        return cleanlab
    for name in factories:
        delattr(cleanlab, name)

    def __getattr__(name: str) -> object:  # PEP 562: read only for attributes the module lacks
        if name not in factories:
            raise AttributeError(f"module 'cleanlab' has no attribute {name!r}")
        value = factories[name]()
        setattr(cleanlab, name, value)
        return value

    setattr(cleanlab, "__getattr__", __getattr__)  # noqa: B010 - a module's own hook (PEP 562)
    return cleanlab
