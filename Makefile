# The two commands of the README: `make demo` and `make test`. Both install what is missing.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
SCENARIO ?= stale-stats-lock-chain
PYTEST_ARGS ?=

.PHONY: demo test deps system-deps venv bench-reset lint crds clean

demo: deps
	$(BIN)/dbabench run $(SCENARIO) --agent reference

test: deps
	$(BIN)/lint-imports
	$(BIN)/pytest $(PYTEST_ARGS)

deps: system-deps venv

system-deps:
	scripts/install-system-deps.sh

venv: $(BIN)/.installed

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $@

bench-reset: deps
	$(BIN)/python benchmarks/reset.py

crds: venv
	$(BIN)/dbabench crds --out crds
	$(BIN)/dbabench crds --out charts/dbabench/crds

lint: deps
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) .dbabench build *.egg-info
