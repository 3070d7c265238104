# The two commands: `make demo` (the main job, against local sandboxes) and `make test`.
# Everything else they need (a virtualenv, the control-plane build) is made on first use.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test lint setup system-packages clean-sandboxes

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

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

test: setup system-packages lint
	$(BIN)/kueue-gitops sandbox build --tool promtool --tool kubeconform --tool argocd
	$(BIN)/pytest

clean-sandboxes: setup
	$(BIN)/kueue-gitops sandbox down --all
