# cvo-py: `make demo` and `make test` are all a new user needs (see README.md).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CLUSTER := $(PY) hack/localcluster.py
PROMETHEUS := $(PY) hack/localprometheus.py
NODE := $(PY) hack/localnode.py
export CVO_PY_CLUSTER_DIR ?= $(CURDIR)/.local-cluster
# The container image (buildah, vfs storage). BASE_IMAGE empty: the local Debian base (the
# Dockerfile's default; no image registry is contacted); any other value is used as is.
IMAGE ?= localhost/cvo-py:dev
BASE_IMAGE ?=

.PHONY: build-node node-up node-down node-status e2e image-push all venv check-shared build-apiserver build-prometheus cluster-up cluster-down cluster-restart cluster-status prometheus-up prometheus-down prometheus-status check-rules lint test test-unit demo bench image image-test clean

all: test

# Installs the project and its test tools into .venv; redone when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]' --config-settings editable_mode=compat  # a path entry: no import hook to load in every process
	touch $@

venv: $(VENV)/.installed

build-apiserver: venv
	$(CLUSTER) build

cluster-up: venv
	$(CLUSTER) up

# Prometheus and promtool from the Go modules pinned in hack/prometheus/ (cached like the API server).
build-prometheus: venv
	$(PROMETHEUS) build

# A real Prometheus beside the local API server on 127.0.0.1, with install/'s scrape jobs and
# rules; `make prometheus-up PROMETHEUS_ARGS="--scrape-interval 5s --evaluation-interval 5s"`.
prometheus-up: venv
	$(PROMETHEUS) up $(PROMETHEUS_ARGS)

prometheus-down: venv
	$(PROMETHEUS) down

prometheus-status: venv
	$(PROMETHEUS) status

# promtool check rules (install/'s PrometheusRules) and promtool test rules (tests/rules/).
check-rules: venv
	$(PROMETHEUS) check

cluster-down: venv
	$(PROMETHEUS) down
	$(CLUSTER) down

cluster-restart: venv
	$(CLUSTER) restart

cluster-status: venv
	$(CLUSTER) status

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/mypy --strict hack/*.py bench tests/image tests/e2e
	$(PY) hack/gen_dashboard.py --check
	$(PY) hack/gen_plain_insights.py --check
	$(PY) hack/check_docs.py
	$(VENV)/bin/lint-imports

test-unit: venv
	$(PY) -m pytest -m "not integration"

# Refused at once without ../shared (oc's real outputs), whose comparisons would otherwise be
# skipped; CVO_PY_WITHOUT_SHARED=1 runs without them on purpose. The check needs only the standard
# library, so it runs before the virtualenv is built.
test: check-shared venv build-apiserver build-prometheus lint check-rules
	$(PY) -m pytest

check-shared:
	@$(PYTHON) -m testkit.checkout

demo: venv build-apiserver build-prometheus
	$(PY) hack/demo.py $(DEMO_ARGS)

# Builds the Dockerfile with buildah (installed with apt-get when missing and run as root); with a
# local node up, pushes it to the node's registry as cvo-py:dev.
image: venv
	@$(PY) hack/image.py build --tag $(IMAGE) $(if $(BASE_IMAGE),--base $(BASE_IMAGE))
	@if [ -f $(CVO_PY_CLUSTER_DIR)/node.json ]; then \
	  registry=$$($(PYTHON) -c 'import json,sys; print(json.load(open(sys.argv[1]))["registry"])' $(CVO_PY_CLUSTER_DIR)/node.json); \
	  echo "pushing $(IMAGE) to $$registry/cvo-py:dev"; \
	  $(PY) hack/image.py push --tag $(IMAGE) --to $$registry/cvo-py:dev; \
	else echo "no local node (make node-up): $(IMAGE) not pushed"; fi

# A real single-node cluster on this machine (root): control plane, kubelet, CRI-O, CNI, a local
# registry; the images pushed there and start installed from them as an installer does, start
# applying the rest (docs/local-cluster.md "A real node").
build-node: venv
	$(NODE) build

node-up: venv build-prometheus
	$(NODE) up

node-down: venv
	$(NODE) down

node-status: venv
	$(NODE) status

# node-up, tests/e2e, node-down: the node is stopped and checked for leftovers even when the
# tests fail or are interrupted; E2E_ARGS go to pytest.
e2e: venv build-prometheus
	$(NODE) e2e -- $(E2E_ARGS)

# Runs the built image against the local API server; ends with "N passed, N failed".
image-test: venv build-apiserver image
	$(PY) -m pytest tests/image --image=$(IMAGE) -v -rs -p no:cacheprovider

bench: venv build-apiserver build-prometheus
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean: cluster-down
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache *.egg-info
