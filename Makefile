# Every target bootstraps .venv when it is missing, so each is one command on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
INTENTION ?= Add OAuth login to the admin dashboard

.PHONY: run test check format diagrams bench bench-smoke fuzz clean

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
	$(BIN)/ruff check src tests benchmarks tools
	$(BIN)/ruff format --check src tests benchmarks tools
	$(BIN)/mypy src

format: $(STAMP)
	$(BIN)/ruff check --fix src tests benchmarks tools
	$(BIN)/ruff format src tests benchmarks tools

# Rewrites diagrams/ (the flow, an example session path, an example diff) and the generated parts
# of docs/flow.md from the transition table (the SVGs need Graphviz's dot).
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

# The Hypothesis properties (hostile answers, intentions and snapshots, digest-recomputed mutants,
# Unicode) with FUZZ_EXAMPLES inputs each (20,000 by default: tens of minutes); prints how many
# inputs each property tried. A crash is a failing test with its smallest input.
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -p no:cacheprovider -q \
		--hypothesis-show-statistics tests/test_properties.py tests/test_text.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
