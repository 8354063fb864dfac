# cvo-py image: cluster-version-operator (start, update-status-controller, upgrade-status, version).
# Build:  make image      (buildah, no daemon; tags localhost/cvo-py:dev; see docs/deploying.md "Container image")
#    or:  docker build -t registry.example.com/openshift/cvo-py:dev .
# Run:    docker run --rm registry.example.com/openshift/cvo-py:dev version --client
#
# BASE_IMAGE is any Debian-based image with Python 3.11 and its venv module. The default is the
# local base `make image` builds from Debian bookworm's packages (python3 and python3-venv are
# Python 3.11), so a build reaches no image registry; name your own with --build-arg BASE_IMAGE=.
ARG BASE_IMAGE=localhost/cvo-py-base:bookworm

# --- build stage: make a wheel and install it with its dependencies into a venv ---------------
FROM ${BASE_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY cvo_py ./cvo_py
COPY payload ./payload
COPY status ./status
COPY syncworker ./syncworker
COPY updateservice ./updateservice
# Some dependencies ship their test suites or test helpers (kubernetes/test, kubernetes/e2e_test,
# kubernetes/dynamic/test_*.py, aiohttp/test_utils.py, annotated_types/test_cases.py); nothing
# imports them at run time, so they are left out with pip's byte code. What is left is then
# compiled once, here: the container cannot write byte code at run time (PYTHONDONTWRITEBYTECODE,
# and OpenShift may mount the root file system read-only), so without it every process would
# compile each module it imports from source again (unchecked-hash: the image never changes).
RUN python3 -m venv /opt/cvo-py \
 && /opt/cvo-py/bin/pip install --upgrade pip wheel \
 && /opt/cvo-py/bin/pip wheel --no-deps --wheel-dir /wheels . \
 && /opt/cvo-py/bin/pip install /wheels/*.whl \
 && /opt/cvo-py/bin/pip uninstall -y pip wheel setuptools \
 && find /opt/cvo-py \( -name __pycache__ -o -name tests -o -name test -o -name e2e_test \) -type d \
      -prune -exec rm -rf {} + \
 && find /opt/cvo-py \( -name 'test_*.py' -o -name conftest.py \) -type f -delete \
 && /opt/cvo-py/bin/python -m compileall -q -j 0 --invalidation-mode unchecked-hash /opt/cvo-py/lib

# --- runtime stage: the venv (with its byte code) and the manifests; no compilers, no caches --
FROM ${BASE_IMAGE}
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="cvo-py" \
      org.opencontainers.image.description="What an OpenShift update is doing and why it is stuck: payload retrieval, ClusterVersion status, update status insights" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      io.k8s.display-name="cvo-py" \
      io.openshift.tags="openshift,cluster-version-operator"
ENV PATH=/opt/cvo-py/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HOME=/var/lib/cvo-py
COPY --from=build /opt/cvo-py /opt/cvo-py
# Manifests where the CVO image keeps them.
COPY install /manifests
# A numeric non-root user; group 0 owns the writable home so that an arbitrary UID in group 0
# (OpenShift's restricted SCC) works too.
RUN useradd --uid 1001 --gid 0 --home-dir /var/lib/cvo-py --no-create-home --shell /sbin/nologin cvo \
 && mkdir -p /var/lib/cvo-py \
 && chown -R 1001:0 /var/lib/cvo-py \
 && chmod -R g=u /var/lib/cvo-py \
 && rm -rf /root/.cache /var/lib/apt/lists/*
USER 1001
EXPOSE 9099
ENTRYPOINT ["cluster-version-operator"]
CMD ["--help"]
