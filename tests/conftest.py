"""Shared pytest configuration: the Jupyter server fixtures from pytest-jupyter, with this
extension enabled, and the fixtures every server test of the co-pilot uses."""

from __future__ import annotations

import os
import sys
import tempfile

import pytest

pytest_plugins = ["pytest_jupyter.jupyter_server"]


def kept_bytecode_cache() -> str | None:
    """A bytecode cache in the venv that runs the tests (``make clean`` removing the venv removes
    it), where that venv can be written; the sources' paths key it, so checkouts share it safely
    and a changed source is compiled again (its time stamp no longer matches)."""
    if sys.prefix == sys.base_prefix:  # no venv: never write into a system Python's tree
        return None
    cache = os.path.join(sys.prefix, "dcpilot-test-pycache")
    try:
        os.makedirs(cache, exist_ok=True)
    except OSError:
        return None
    return cache if os.access(cache, os.W_OK) else None


# Where Python is told not to write bytecode (PYTHONDONTWRITEBYTECODE, set on the project's
# machines) and the venv ships none (uv installs none), every kernel, server and CLI run the suite
# starts compiles pandas, scikit-learn and this tree from source: ~3 s of a kernel's ~4 s start.
# The run compiles each module into a cache outside the tree that the processes it starts,
# pytest-xdist's workers included, inherit; kept in the venv between runs (a cold cache cost a
# collection 31.6 s of CPU, a warm one 9.5 s), else a temporary one removed when the run ends.
if sys.dont_write_bytecode and not sys.pycache_prefix:
    _cache = kept_bytecode_cache()
    if _cache is None:
        _PYCACHE = tempfile.TemporaryDirectory(prefix="dcpilot-test-pycache-")
        _cache = _PYCACHE.name
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix = _cache
    sys.dont_write_bytecode = False

# pytest-xdist's processes share the machine's cores with the kernels they start: a thread per core
# for each one's OpenMP and OpenBLAS oversubscribes them, and spinning threads collapse under
# contention (ENVIRONMENT.md: a 5-fold CV 12 s -> 42 s). One thread each (set before a worker
# imports either library; its kernels inherit it); a test of thread limits sets its own.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    for _threads in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_threads, "1")

# Kernels spill checkpoints to the user's cache by default: the kernels tests start inherit a
# cache of their own, removed when the run ends, so a test run leaves nothing in ~/.cache.
_CACHE = tempfile.TemporaryDirectory(prefix="dcpilot-test-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE.name
# The per-user secret that signs sidecars lives in the Jupyter data dir: a test run uses its own
# (pytest-jupyter's server fixtures point JUPYTER_DATA_DIR at one per test)
_DATA = tempfile.TemporaryDirectory(prefix="dcpilot-test-data-")
os.environ["JUPYTER_DATA_DIR"] = _DATA.name
# The API key may come from the system keyring: tests never read the developer's (a test that
# needs one installs a keyring of its own).
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"


@pytest.fixture
def jp_server_config():
    return {"ServerApp": {"jpserver_extensions": {"jupyter_dcpilot": True}}}


@pytest.fixture
def jp_configurable_serverapp(jp_server_config, jp_configurable_serverapp):
    """pytest-jupyter's server factory, its kernels killed at once when the test's server stops:
    asked to shut down, each had up to ``shutdown_wait_time`` to exit, ~2.6 s idle teardown per
    server test with a kernel. Every module's ``jp_server_config`` gets it (the factory reads
    that dict when called); a test that sets its own wait keeps it."""
    jp_server_config.setdefault("KernelManager", {}).setdefault("shutdown_wait_time", 0.0)
    return jp_configurable_serverapp


@pytest.fixture
def registry(jp_serverapp):
    """The server's sessions; a test closes it (awaits) so no coordinator task outlives it."""
    return jp_serverapp.web_app.settings["dcpilot_sessions"]


@pytest.fixture
def no_llm(monkeypatch, tmp_path):
    """No Claude configured: the rule planner, whatever the developer's machine has."""
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "jupyter-config"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def pytest_collection_modifyitems(config, items):
    """The modules that hold end-to-end (``slow``) tests first, each module kept whole (its
    module-scoped fixtures are made once): pytest-xdist hands tests out in this order, so the
    longest start while the short ones are left to fill both processes at the end, instead of a
    minute-long run starting last on one process while the other waits."""
    slow_modules = {item.module.__name__ for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.module.__name__ not in slow_modules)  # stable: order kept within
