"""The operator's environment as upstream's Deployment sets it, with upstream's defaults.

Read when asked (not at import), so tests and the harnesses can set them per process.
"""

from __future__ import annotations

import os

DEFAULT_NAMESPACE = "openshift-cluster-version"
DEFAULT_NAME = "version"
DEFAULT_CLUSTER_PROFILE = "self-managed-high-availability"


def _env(name: str, default: str) -> str:
    return os.environ.get(name) or default


def namespace() -> str:
    """$CVO_NAMESPACE: where the operator, its Pods and its Events live."""
    return _env("CVO_NAMESPACE", DEFAULT_NAMESPACE)


def operator_name() -> str:
    """$CVO_NAME: the ClusterVersion's name and the operator's Pod prefix."""
    return _env("CVO_NAME", DEFAULT_NAME)


def node_name() -> str:
    """$NODE_NAME: the node this operator runs on ("" when unset)."""
    return _env("NODE_NAME", "")


def payload_override() -> str:
    """$PAYLOAD_OVERRIDE: the root under which the running release's manifests are found."""
    return _env("PAYLOAD_OVERRIDE", "/")


def update_payloads_dir(default: str) -> str:
    """$UPDATE_PAYLOADS_DIR: where version Pods leave payloads (moved for testing without a node)."""
    return _env("UPDATE_PAYLOADS_DIR", default)


def cluster_profile() -> str:
    """$CLUSTER_PROFILE: which release manifests the cluster takes (`include.release.openshift.io/<profile>`)."""
    return _env("CLUSTER_PROFILE", DEFAULT_CLUSTER_PROFILE)


def exclude_manifests() -> str:
    """$EXCLUDE_MANIFESTS: manifests annotated `exclude.release.openshift.io/<this>: "true"` are
    not loaded ("" for none; HyperShift sets `internal-openshift-hosted`)."""
    return os.environ.get("EXCLUDE_MANIFESTS", "")


def reconcile_interval() -> str:
    """$CVO_PY_RECONCILE_INTERVAL: the sync worker's minimum reconcile interval in seconds, for
    tests and demos ("" when unset: upstream's 2 minutes times a factor in [1, 2)). The command
    that reads it checks it."""
    return os.environ.get("CVO_PY_RECONCILE_INTERVAL", "")
