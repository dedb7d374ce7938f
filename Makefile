# Two commands set everything up on a fresh machine:
#   make demo   install, then run the co-pilot headless on shipped demo data (no API key)
#   make test   install, then run every suite (pytest, jest, browser tests)

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(abspath $(VENV))/bin
export PATH := $(BIN):$(PATH)

# pytest processes (pytest-xdist): tests mostly wait on kernels and servers, two keep 2 cores busy
TEST_WORKERS ?= 2
export TEST_WORKERS

.PHONY: install install-python lock demo test test-fast test-python test-js test-ui bench generated clean

# independent prerequisites are made at once (the two JavaScript installs wait on the registry
# and the disk, not the CPU); each output line stays whole
MAKEFLAGS += --jobs=2 --output-sync=line

install: $(VENV)/.installed $(VENV)/.ui-tests-installed
install-python: $(VENV)/.python-installed

# The Python side: both distributions of this tree (kernel_tools is its own,
# kernel_tools/pyproject.toml), editable, with every extra and CPU torch (requirements/dev.in),
# every version pinned by requirements/dev.lock, installed with uv (pip where uv cannot be had),
# which is handed pip's find-links, indexes and constraints (scripts/install_python.py).
$(VENV)/.python-installed: pyproject.toml kernel_tools/pyproject.toml requirements/dev.in requirements/dev.lock scripts/install_python.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python scripts/install_python.py $(BIN)/python
	touch $@

# Then the JupyterLab extension: its packages, its bundle, and the bundle linked into the venv
# once (a rebuild updates the linked folder in place); beside it the browser tests' packages
$(VENV)/.js-installed: $(VENV)/.python-installed package.json yarn.lock
	$(BIN)/jlpm install
	touch $@

# the bundle, built once on a fresh install and again only when a frontend source changed
FRONTEND := $(shell find labextension -type f -not -path '*/__tests__/*') package.json tsconfig.json
$(VENV)/.built: $(VENV)/.js-installed $(FRONTEND)
	$(BIN)/jlpm build
	touch $@

$(VENV)/.installed: $(VENV)/.js-installed | $(VENV)/.built
	$(BIN)/jupyter-builder develop --overwrite .
	$(BIN)/jupyter server extension enable --sys-prefix jupyter_dcpilot
	touch $@

$(VENV)/.ui-tests-installed: $(VENV)/.python-installed ui-tests/package.json ui-tests/yarn.lock
	cd ui-tests && $(BIN)/jlpm install
	touch $@

# re-pin requirements/dev.lock after a dependency changed (commit it): the pins there are kept
# where they still fit dev.in, both pyproject.toml files and the machine's constraints, and what
# is new gets its newest version; `make lock UPGRADE=--upgrade` moves every pin to its newest
lock:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python scripts/install_python.py $(BIN)/python --lock $(UPGRADE)

# headless: the Python side is all it needs
demo: install-python
	$(BIN)/jupyter dcpilot demo --out dcpilot-out/demo --force

# the browser tests load the built bundle: rebuilt first if a frontend source changed
test: install $(VENV)/.built
	$(BIN)/python scripts/run_all_tests.py

# the inner loop: every test not marked slow, on both cores (no browser, no end-to-end runs)
test-fast: install
	$(BIN)/python -m pytest -m "not slow" -n $(TEST_WORKERS) -q

test-python: install
	$(BIN)/python -m pytest -n $(TEST_WORKERS) -m "not serial"
	$(BIN)/python -m pytest -m serial

test-js: install $(VENV)/.built
	$(BIN)/jlpm test

test-ui: install $(VENV)/.built
	cd ui-tests && $(BIN)/jlpm playwright test

# Quality (co-pilot vs naive vs oracle), speed (diagnose vs Datalab vs ydata-profiling),
# checkpoint benchmarks, end to end at scale (bench_scale.py) and Dask on data larger than memory
# (bench_dask.py: generates ~4 GB of Parquet in /tmp, an hour or more) -> docs/benchmarks.md
# (generated; ~2 h on 2 cores).
# ydata-profiling would downgrade numpy, so it gets its own venv in /tmp/ydata-venv (skipped,
# and reported "not available", when it cannot be installed). BENCH_ARGS: e.g. "--no-peers".
bench: install
	$(BIN)/python scripts/install_python.py $(BIN)/python --also ".[bench]"
	test -x /tmp/ydata-venv/bin/python || ($(PYTHON) -m venv /tmp/ydata-venv && \
		/tmp/ydata-venv/bin/pip install --quiet ydata-profiling pandas pyarrow) || true
	$(BIN)/python benchmarks/run_all.py --out docs/benchmarks.md $(BENCH_ARGS)

# the files generated from Python declarations (tests fail until they are regenerated): the panel's
# vocabulary and finding/decision types, and the JSON Schema of findings and decisions
generated: install
	$(BIN)/python -m kernel_tools.vocabulary --typescript > labextension/src/vocabulary.ts
	$(BIN)/python -m jupyter_dcpilot.engine.schema --json > jupyter_dcpilot/engine/findings.schema.json
	$(BIN)/python -m jupyter_dcpilot.engine.schema --typescript > labextension/src/findingTypes.ts

clean:
	rm -rf lib jupyter_dcpilot/labextension tsconfig.tsbuildinfo dcpilot-out ui-tests/test-results $(VENV)/.built
