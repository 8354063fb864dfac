# cvo-py image: cluster-version-operator (start, update-status-controller, upgrade-status, version).
# Build:  docker build -t registry.example.com/openshift/cvo-py:dev .
# Run:    docker run --rm registry.example.com/openshift/cvo-py:dev version --client

# --- build stage: make a wheel and install it with its dependencies into a venv ---------------
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY cvo_py ./cvo_py
COPY payload ./payload
COPY status ./status
RUN python -m venv /opt/cvo-py \
 && /opt/cvo-py/bin/pip install --upgrade pip wheel \
 && /opt/cvo-py/bin/pip wheel --no-deps --wheel-dir /wheels . \
 && /opt/cvo-py/bin/pip install /wheels/*.whl \
 && find /opt/cvo-py -name '__pycache__' -prune -exec rm -rf {} + \
 && /opt/cvo-py/bin/pip uninstall -y pip wheel setuptools

# --- runtime stage: the venv and the manifests only; no compilers, no caches ----------------
FROM python:3.11-slim
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
