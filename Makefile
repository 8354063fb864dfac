# cvo-py: `make demo` and `make test` are all a new user needs (see README.md).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CLUSTER := $(PY) hack/localcluster.py
export CVO_PY_CLUSTER_DIR ?= $(CURDIR)/.local-cluster
# The container image (buildah, vfs storage). BASE_IMAGE empty: the Dockerfile's public base when
# it can be pulled, else a local Debian base; `local` forces that; any other value is used as is.
IMAGE ?= localhost/cvo-py:dev
BASE_IMAGE ?=

.PHONY: all venv build-apiserver cluster-up cluster-down cluster-restart cluster-status lint test test-unit demo bench image image-test clean

all: test

# Installs the project and its test tools into .venv; redone when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

venv: $(VENV)/.installed

build-apiserver: venv
	$(CLUSTER) build

cluster-up: venv
	$(CLUSTER) up

cluster-down: venv
	$(CLUSTER) down

cluster-restart: venv
	$(CLUSTER) restart

cluster-status: venv
	$(CLUSTER) status

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/mypy --strict hack/localcluster.py hack/demo.py hack/gen_dashboard.py hack/image.py tests/support tests/image
	$(PY) hack/gen_dashboard.py --check
	$(VENV)/bin/lint-imports

test-unit: venv
	$(PY) -m pytest -m "not integration"

test: venv build-apiserver lint
	$(PY) -m pytest

demo: venv build-apiserver
	$(PY) hack/demo.py $(DEMO_ARGS)

# Builds the Dockerfile with buildah (installed with apt-get when missing and run as root).
image:
	@$(PYTHON) hack/image.py build --tag $(IMAGE) $(if $(BASE_IMAGE),--base $(BASE_IMAGE))

# Runs the built image against the local API server; ends with "N passed, N failed".
image-test: venv build-apiserver image
	$(PY) -m pytest tests/image --image=$(IMAGE) -v -rs -p no:cacheprovider

bench: venv build-apiserver
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean: cluster-down
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache *.egg-info
