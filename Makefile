# Every target bootstraps .venv when it is missing, so each is one command on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Preflights 1.1.4's own MCP server crashes on the 2.x SDK: the MCP benchmark runs it from an
# environment of its own, pinned to the SDK release of its lock file.
PF_MCP_VENV := .venv-preflights-mcp
PF_MCP_STAMP := $(PF_MCP_VENV)/.installed
INTENTION ?= Add OAuth login to the admin dashboard
# `make run` needs only the package: a venv of its own with no dev extra, installed with pip's
# progress shown (D250), so the first run is seconds, not the whole
# development toolchain behind a silent `--quiet`.
RUN_VENV := .venv-run
RUN_STAMP := $(RUN_VENV)/.installed

.PHONY: run test test-core bench-check check format dist diagrams bench bench-instructions bench-smoke fuzz \
	sim preflights-suite clean

# The virtualenv, and beside it the wheels the README and packaging tests install from, offline
# (its wheelhouse, made from the same pyproject.toml: tests/built_package.py, D300).
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python tests/built_package.py
	touch $(STAMP)

$(PF_MCP_STAMP):
	test -x $(PF_MCP_VENV)/bin/python || $(PYTHON) -m venv $(PF_MCP_VENV)
	$(PF_MCP_VENV)/bin/python -m pip install --quiet 'preflights==1.1.4' 'mcp==1.25.0'
	touch $(PF_MCP_STAMP)

$(RUN_STAMP): pyproject.toml
	@echo "make run: installing preflight-fsm alone into $(RUN_VENV) (first run only; make test and make check use .venv)"
	test -x $(RUN_VENV)/bin/python || $(PYTHON) -m venv $(RUN_VENV)
	$(RUN_VENV)/bin/python -m pip install --progress-bar on --disable-pip-version-check -e .
	touch $(RUN_STAMP)

run: $(RUN_STAMP)
	@$(RUN_VENV)/bin/preflight-fsm chat "$(INTENTION)"

# Pytest writes bytecode where it runs (the test modules' rewritten asserts, the plugins', the
# package's), even where PYTHONDONTWRITEBYTECODE is set, as on the team's machines: recompiled at
# every start, they cost each run and each xdist worker about 1.5 s of CPU (D260).
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest

# The whole suite on one worker more than the machine has cores (pytest-xdist; `make test
# TEST_WORKERS=n` to choose), the package's doctests included, but the tests marked bench_check
# (the benchmarks' smoke runs, callgrind's, and the exhaustive Unicode scans): `make bench-check`
# runs those. Some of a worker's time its tests wait (a deadline, a page, a server coming up) with
# nothing to run; a worker more runs tests then, for its start (about 4 s of CPU collecting the
# suite, and what its tests use first: Chromium, PostgreSQL, the LLM SDKs' imports). On the 2-core
# idle machine the whole suite took 89 and 89 s wall with three workers, 96 and 98 s with two,
# for about 8 s of CPU more (D291, D313). `--dist load`
# sends each worker tests in batches; `loadgroup` (needed by no test here: only bench_check tests
# have an xdist_group) sends them one at a time, and a worker waited on the controller between
# tests: 1.2-1.9 x the wall time on a loaded machine, for no less CPU (D280); `worksteal` ends no
# sooner (idle, interleaved with `load`, 27 November: 62.1 and 64.3 s against 62.9 and 64.6 s),
# nor does `loadscope` (measured: no CPU saved by keeping each module on one worker). Every
# Hypothesis property runs, on the `dev` profile's 50 inputs each (tests/conftest.py), on CI too
# (D314: CI runs the README's command as a person does); `make bench-check` runs them again on 250
# (D283, D323).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test: $(STAMP)
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-dev} \
		$(PYTEST) -n $(TEST_WORKERS) --dist load -m "not bench_check" tests README.md docs src/preflight_fsm

# What `make test` leaves out (CI runs both): every benchmark group on tiny counts, checked for
# what each figure measures (tests/test_benchmarks_smoke.py; `loadgroup` keeps a group's run on
# one worker, so it runs once), the scans of all 1,114,112 code points (tests/test_text.py), and
# every Hypothesis property (the `hypothesis` marker) at the `ci` profile's full count of 250.
bench-check: $(STAMP)
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} \
		$(PYTEST) -n auto --dist loadgroup -m "bench_check or hypothesis"

# The engine's own tests (machine, table, guards, text rules, snapshots, contract, properties) and
# the doctests of the engine's modules: no subprocess, server or store, each property on a few
# inputs (the `core` Hypothesis profile; `make test` runs 50, `make bench-check` 250); the loop
# to run while changing the core, under 10 s.
CORE_TESTS := $(addprefix tests/test_,$(addsuffix .py,engine table guards trigger turn patch \
	answers states session machine keywords flow snapshot snapshot_json contract adapter \
	exported_members text properties))
CORE_DOCTESTS := $(addprefix src/preflight_fsm/,$(addsuffix .py,adapter bounded contract/__init__ \
	contract/patch machine option_names text store/secrets))
test-core: $(STAMP)
	HYPOTHESIS_PROFILE=core $(PYTEST) -m "not bench_check" $(CORE_TESTS) $(CORE_DOCTESTS)

# mypy strict on the package, then on the tests, then on the benchmarks and tools (pyproject.toml
# [tool.mypy]). Three runs: the tests import their helpers as top-level modules (redis_server), the
# benchmarks, run from the repository root, as tests.redis_server, and one run cannot give a file
# two module names.
check: $(STAMP)
	$(BIN)/ruff check src tests benchmarks tools
	$(BIN)/ruff format --check src tests benchmarks tools
	$(BIN)/mypy src
	$(BIN)/mypy tests
	$(BIN)/mypy benchmarks tools

format: $(STAMP)
	$(BIN)/ruff check --fix src tests benchmarks tools
	$(BIN)/ruff format src tests benchmarks tools

# The wheel and sdist in dist/, checked as PyPI would render them (twine check).
dist: $(STAMP)
	rm -rf dist
	$(BIN)/uv build --out-dir dist .
	$(BIN)/twine check --strict dist/*

# Rewrites diagrams/ (the flow, an example session path, an example diff) and the generated parts
# of docs/flow.md from the transition table (the SVGs need Graphviz's dot).
diagrams: $(STAMP)
	$(BIN)/python -m preflight_fsm.diagrams

# Every figure of docs/performance.md beside its floor and its peer (Preflights 1.1.4's mock, pf
# and MCP server, the last from $(PF_MCP_VENV)), interleaved, on CPU time
# (minutes: 1,000,000 sessions for the RSS figure; BENCH_ARGS="--sessions 100000" for less).
# Writes benchmarks/results.json and the figures block of docs/performance.md.
bench: $(STAMP) $(PF_MCP_STAMP)
	$(BIN)/python -m benchmarks $(BENCH_ARGS)

# The engine figures in CPU instructions per call (callgrind, needs valgrind): the same count on
# any load, so an A/B of a change reads off one run (about 30 s).
bench-instructions: $(STAMP)
	$(BIN)/python -m benchmarks --only instructions

# The same figures on tiny counts: checks what each one measures, not its speed (also a test).
bench-smoke: $(STAMP)
	$(BIN)/python -m benchmarks --smoke

# The Hypothesis properties (hostile answers, intentions and snapshots, digest-recomputed mutants,
# Unicode, crafted flow files, the LLM ports given input of any shape) with FUZZ_EXAMPLES inputs
# each (20,000 by default: tens of minutes); prints how many inputs each property tried. A crash
# is a failing test with its smallest input.
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -p no:cacheprovider -q \
		--hypothesis-show-statistics tests/test_properties.py tests/test_properties_adapters.py \
		tests/test_properties_flows.py tests/test_text.py

# The seeded fault simulator of the session layer (tests/sim.py): SEEDS seeded runs per backend,
# SIM_SESSIONS random sessions each, under injected store faults; prints what the runs did and
# every failure with its seed (the same seed repeats it exactly). `make test` runs a few. Then its
# LLM mode (tests/sim_llm.py): SIM_LLM_SEEDS runs of Preflights' rounds through the LLM guard, the
# provider dripping, stalling or failing (each fault costs a deadline, hence fewer seeds).
SEEDS ?= 200
SIM_SESSIONS ?= 40
SIM_BACKENDS ?= memory,sqlite,redis
SIM_LLM_SEEDS ?= 20
sim: $(STAMP)
	$(BIN)/python tests/sim.py --seeds $(SEEDS) --sessions $(SIM_SESSIONS) --backends $(SIM_BACKENDS)
	$(BIN)/python tests/sim.py --llm --seeds $(SIM_LLM_SEEDS) --sessions 6 --backends memory,sqlite

# Preflights 1.1.4's own test suite with its mock routed to preflight-fsm, in a venv of its own
# (the 1.x mcp SDK its server needs); downloads Preflights' sdist for its tests (docs/preflights.md).
preflights-suite:
	$(PYTHON) tests/preflights_suite/run.py

clean:
	rm -rf dist $(VENV) $(RUN_VENV) $(PF_MCP_VENV) .venv-preflights-suite .preflights-suite .pytest_cache .mypy_cache .ruff_cache .hypothesis
