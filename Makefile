# The two commands: `make demo` (the main job, against local sandboxes) and `make test`.
# Everything else they need (a virtualenv, the control-plane build) is made on first use.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# `make test` fails below this share of auditor/'s lines and branches run (README, "Tests").
COVERAGE_FLOOR ?= 75

.PHONY: demo test test-fast lint lock setup system-packages clean-sandboxes docs dist

setup: $(VENV)/.installed

# Within requirements-dev.lock: every package of the development environment at one version.
$(VENV)/.installed: pyproject.toml requirements-dev.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c requirements-dev.lock -e '.[test]'
	touch $@

# Rewrite the lock from pyproject.toml's ranges, resolved afresh in a throwaway venv.
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/pip install --quiet --upgrade pip
	.lock-venv/bin/pip install --quiet -e '.[test]'
	{ echo "# The development environment, pinned: \`make lock\` writes it from pyproject.toml; \`make setup\` installs within it."; \
	  .lock-venv/bin/pip freeze --exclude-editable; } > requirements-dev.lock
	rm -rf .lock-venv

# The distribution's services the sandbox runs (Redis, for Argo CD): installed when missing and
# allowed (root or passwordless sudo), else named.
system-packages:
	./scripts/system-packages.sh

demo: setup system-packages
	PATH="$(abspath $(BIN)):$$PATH" ./scripts/demo.sh

# What pre-commit runs, in the same order.
lint: setup
	$(BIN)/ruff check auditor tests bench
	$(BIN)/ruff format --check auditor tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

# The docs made from the rules files: docs/rules.md, and the rules tables of docs/usage.md
# (between their markers). tests/unit/test_rules.py fails while either is stale.
docs: setup
	$(BIN)/kueue-gitops rules -o markdown > docs/rules.md
	$(BIN)/python -c "from pathlib import Path; from auditor.rules import render; \
	  p = Path('docs/usage.md'); p.write_text(render.with_stage_tables(p.read_text()))"

# Two pytest workers (xdist): each takes whole modules (--dist loadfile), so a module's fixtures
# stay in one process; the integration modules spend much of their time waiting on the servers
# they start, which the other worker's tests fill. JOBS=1 runs them one after another.
JOBS ?= 2

test: setup system-packages lint
	$(BIN)/kueue-gitops sandbox build
	$(BIN)/kueue-gitops sandbox build --tool promtool --tool kubeconform --tool argocd --tool toxiproxy --tool kustomize --tool helm
	$(BIN)/pytest -n $(JOBS) --dist loadfile --cov --cov-report= --cov-fail-under=$(COVERAGE_FLOOR) --durations=30

# The inner loop (CONTRIBUTING.md): the linters, then the unit, acceptance and fuzz tests; no
# control plane, no build.
test-fast: lint
	$(BIN)/pytest -n $(JOBS) --dist loadfile tests/unit tests/acceptance tests/fuzz

clean-sandboxes: setup
	$(BIN)/kueue-gitops sandbox down --all

# Every wheel a release publishes for this machine's platform, into dist/ (CONTRIBUTING.md,
# "Releases"): kueue-gitops's sdist and pure wheel, and kueue-gitops-sim's platform wheel, the
# replay simulator compiled with Go from the pinned modules for each supported Kueue release.
# Its build hook runs our build code in this virtualenv (packages/kueue-gitops-sim/setup.py).
dist: setup
	rm -rf dist
	$(BIN)/python -m build --outdir dist
	KUEUE_GITOPS_PYTHON=$(abspath $(BIN)/python) $(BIN)/python -m build --wheel --outdir dist packages/kueue-gitops-sim
