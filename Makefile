# Every target bootstraps .venv when it is missing, so each is one command on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
INTENTION ?= Add OAuth login to the admin dashboard

.PHONY: run test check format diagrams bench bench-smoke preflights-suite clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	@$(BIN)/preflight-fsm chat "$(INTENTION)"

test: $(STAMP)
	$(BIN)/python -m pytest

check: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy src

format: $(STAMP)
	$(BIN)/ruff check --fix src tests benchmarks
	$(BIN)/ruff format src tests benchmarks

# Rewrites diagrams/clarification.{dot,mmd,svg} and docs/flow.md from the machine (SVG needs Graphviz's dot).
diagrams: $(STAMP)
	$(BIN)/python -m preflight_fsm.diagrams

# Every figure of docs/performance.md, side by side with Preflights 1.1.4's mock, in one process
# (minutes: 1,000,000 sessions for the RSS figure; BENCH_ARGS="--sessions 100000" for less).
# Writes benchmarks/results.json and the figures block of docs/performance.md.
bench: $(STAMP)
	$(BIN)/python -m benchmarks $(BENCH_ARGS)

# The same figures on tiny counts: checks what each one measures, not its speed (also a test).
bench-smoke: $(STAMP)
	$(BIN)/python -m benchmarks --smoke

# Preflights 1.1.4's own test suite with its mock routed to preflight-fsm, in a venv of its own
# (the 1.x mcp SDK its server needs); downloads Preflights' sdist for its tests (docs/preflights.md).
preflights-suite:
	$(PYTHON) tests/preflights_suite/run.py

clean:
	rm -rf $(VENV) .venv-preflights-suite .preflights-suite .pytest_cache .mypy_cache .ruff_cache .hypothesis
