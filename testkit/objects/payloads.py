"""Release payload directories written for tests and benchmarks: the minimal synthetic payload of
the sync-worker facts (§8), one of about 900 manifests, and any payload from its files.

    root = write_section8(tmp_path / "payload")                   # 4.99.0: M = 19
    root = write_section8(tmp_path / "next", version="4.99.1")    # the update target: M = 20
    root = write_scale_payload(tmp_path / "big", manifests=900)   # a real release's size
    root = write_scale_payload(tmp_path / "big", operators=True)  # ... that can be applied

Each is a release image's root: `manifests/` (the CVO's own, rendered at load),
`release-manifests/` with its `release-metadata` and `image-references`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

SECTION8_VERSION = "4.99.0"
# The image the tests load the synthetic payload as (`.ReleaseImage`).
RELEASE_IMAGE = "registry.local/release@sha256:" + "ab" * 32
SECTION8_TARGET = "4.99.1"
PROFILE = "include.release.openshift.io/self-managed-high-availability"
INCLUDE = {PROFILE: "true"}
CVO_IMAGE_TAG = "cluster-version-operator"
# The namespaces the synthetic payload's objects live in.
CVO_NAMESPACE = "openshift-cluster-version"
NAMESPACE = "test-b"


def image_of(version: str) -> str:
    """The pull spec the synthetic payloads' image-references give their one tag."""
    return f"registry.local/release@sha256:{version.replace('.', '')[:8].ljust(64, '0')}"


def write_payload(
    root: Path,
    version: str,
    manifests: Mapping[str, str | bytes],
    release_manifests: Mapping[str, str | bytes],
    *,
    metadata: Mapping[str, Any] | None = None,
    image_references: Mapping[str, Any] | None = None,
) -> Path:
    """A payload directory at `root` with these files (relative names may name subdirectories);
    release-metadata and image-references for `version` unless given."""
    for sub, files in (("manifests", manifests), ("release-manifests", release_manifests)):
        (root / sub).mkdir(parents=True, exist_ok=True)
        for name, content in files.items():
            path = root / sub / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    if metadata is None:
        metadata = {
            "kind": "cincinnati-metadata-v0",
            "version": version,
            "metadata": {
                "url": f"https://example.com/{version}",
                "io.openshift.upgrades.graph.release.channels": "stable-4.99,fast-4.99",
            },
        }
    if image_references is None:
        image_references = {
            "apiVersion": "image.openshift.io/v1",
            "kind": "ImageStream",
            "metadata": {"name": version, "creationTimestamp": "2026-07-01T00:00:00Z"},
            "spec": {"tags": [{"name": CVO_IMAGE_TAG, "from": {"kind": "DockerImage", "name": image_of(version)}}]},
        }
    (root / "release-manifests" / "release-metadata").write_text(json.dumps(metadata))
    (root / "release-manifests" / "image-references").write_text(json.dumps(image_references))
    return root


def _meta(name: str, namespace: str | None = None, **annotations: str) -> str:
    lines = ["metadata:", f"  name: {name}"]
    if namespace:
        lines.append(f"  namespace: {namespace}")
    if annotations:
        lines.append("  annotations:")
        lines += [f'    {key}: "{value}"' for key, value in annotations.items()]
    return "\n".join(lines) + "\n"


def _configmap(name: str, namespace: str = NAMESPACE, data: str = "  key: value\n", **annotations: str) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\n{_meta(name, namespace, **annotations)}data:\n{data}"


def _crd(plural: str, kind: str, annotations: dict[str, str], schema: str) -> str:
    """A CRD of `<plural>.example.com`; `schema` continues its openAPIV3Schema (indented 8)."""
    return f"""apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
{_meta(f"{plural}.example.com", None, **annotations)}spec:
  group: example.com
  names: {{kind: {kind}, listKind: {kind}List, plural: {plural}, singular: {kind.lower()}}}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
{schema}"""


def _open_crd(plural: str, kind: str) -> str:
    """The synthetic payload's CRD: major version 4, any content."""
    annotations = {**INCLUDE, "release.openshift.io/major-version": "4"}
    return _crd(plural, kind, annotations, "        x-kubernetes-preserve-unknown-fields: true\n")


def _cluster_operator(name: str, version: str, namespace: str, spec: str = "") -> str:
    """A ClusterOperator manifest reporting `version` of its operator, relating to `namespace`."""
    return f"""apiVersion: config.openshift.io/v1
kind: ClusterOperator
{_meta(name, None, **INCLUDE)}{spec}status:
  versions:
  - name: operator
    version: "{version}"
  relatedObjects:
  - group: ""
    resource: namespaces
    name: {namespace}
"""


def section8_files(version: str = SECTION8_VERSION) -> tuple[dict[str, str], dict[str, str]]:
    """The files of the facts' synthetic payload (rows 1–3 in `manifests/`, the rest in
    `release-manifests/`); `version` SECTION8_TARGET is the update: `plain` changes, `f-op` reports
    the new version, a second CRD joins row 4, row 14 stays."""
    target = version != SECTION8_VERSION
    hosted = "exclude.release.openshift.io/internal-openshift-hosted"
    manifests = {
        "0000_00_cluster-version-operator_00_namespace.yaml": (
            f"apiVersion: v1\nkind: Namespace\n{_meta(CVO_NAMESPACE, None, **INCLUDE)}"
        ),
        "0000_00_cluster-version-operator_01_render.yaml": _configmap(
            "render",
            CVO_NAMESPACE,
            "  image: '{{.ReleaseImage}}'\n  profile: '{{.ClusterProfile}}'\n"
            "  prometheus: '{{ \"{{ x }}\" }}'\n  tag: '{{ index .Images \"cluster-version-operator\" }}'\n",
            **INCLUDE,
        ),
        "0000_00_cluster-version-operator_02_bad.yaml": _configmap(
            "bad", CVO_NAMESPACE, "  x: '{{.Nope}}'\n", **INCLUDE
        ),
    }
    crd = _open_crd("widgets", "Widget") + ("---\n" + _open_crd("gadgets", "Gadget") if target else "")
    plain = "  key: value\n" + ("  next: '4.99.1'\n" if target else "")
    release = {
        "0000_03_a-crd_00_crd.yaml": crd,
        "0000_03_b-ns_00_ns.yaml": f"apiVersion: v1\nkind: Namespace\n{_meta(NAMESPACE, None, **INCLUDE)}",
        "0000_10_c-config_00_cms.yaml": "---\n".join(
            [
                _configmap("plain", data=plain, **INCLUDE),
                _configmap("createonly", **INCLUDE, **{"release.openshift.io/create-only": "true"}),
                _configmap("tp", **INCLUDE, **{"release.openshift.io/feature-set": "TechPreviewNoUpgrade"}),
            ]
        ),
        "0000_10_c-config_01_filters.yaml": "---\n".join(
            [
                _configmap("no-profile", **{"description": "no include annotation"}),
                _configmap("gate-negated", **INCLUDE, **{"release.openshift.io/feature-gate": "-SomeGate"}),
                _configmap("hosted-excluded", **INCLUDE, **{hosted: "true"}),
                _configmap("capability", **INCLUDE, **{"capability.openshift.io/name": "Console+Insights"}),
            ]
        ),
        "0000_10_c-config_02_both.yaml": _configmap(
            "both",
            **INCLUDE,
            **{"release.openshift.io/feature-set": "Default", "release.openshift.io/feature-gate": "G"},
        ),
        "0000_20_d-workload_00_deploy.yaml": f"""apiVersion: apps/v1
kind: Deployment
{_meta("workload", NAMESPACE, **INCLUDE)}spec:
  selector:
    matchLabels: {{app: workload}}
  template:
    metadata:
      labels: {{app: workload}}
    spec:
      containers:
      - name: main
        image: registry.local/workload:1
""",
        "0000_20_d-workload_01_rbac.yaml": "---\n".join(
            [
                f"apiVersion: v1\nkind: ServiceAccount\n{_meta('workload', NAMESPACE, **INCLUDE)}",
                f"""apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
{_meta("test-workload", None, **INCLUDE)}rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get]
""",
                f"""apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
{_meta("test-workload", None, **INCLUDE)}roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: test-workload
subjects:
- kind: ServiceAccount
  name: workload
  namespace: {NAMESPACE}
""",
            ]
        ),
        "0000_30_e-job_00_job.yaml": f"""apiVersion: batch/v1
kind: Job
{_meta("migrate", NAMESPACE, **INCLUDE)}spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: registry.local/migrate:1
""",
        "0000_40_f-op_00_co.yaml": _cluster_operator("f-op", version, NAMESPACE),
        "0000_50_g-gen_00_widget.yaml": (
            f"apiVersion: example.com/v1\nkind: Widget\n{_meta('widget', NAMESPACE, **INCLUDE)}spec:\n  size: 3\n"
        ),
        "0000_50_g-gen_01_delete.yaml": _configmap("deleted", **INCLUDE, **{"release.openshift.io/delete": "true"}),
        "0000_60_h-ovr_00_cm.yaml": _configmap("overridden", **INCLUDE),
        "0000_70_i-json_00_cm.json": json.dumps(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "json", "namespace": NAMESPACE, "annotations": INCLUDE},
                "data": {"format": "json"},
            },
            indent=2,
        ),
        "notes.txt": "not a manifest\n",
        "sub/x.yaml": _configmap("in-a-subdirectory", **INCLUDE),
    }
    return manifests, release


def write_operators_payload(root: Path, version: str, operators: Sequence[str]) -> Path:
    """A release that holds only its ClusterOperators, one per name, each a component of its own
    at run level 50 (so a pass checks them side by side): the sync worker waits until each reports
    `version`, and "N of M done" counts those that do. Its release-metadata names no channels or
    URL (the update service's graph fills them in)."""
    manifests = {
        f"0000_50_{name}_00_clusteroperator.yaml": _cluster_operator(name, version, f"openshift-{name}")
        for name in operators
    }
    metadata = {"kind": "cincinnati-metadata-v0", "version": version}
    return write_payload(root, version, {}, manifests, metadata=metadata)


def write_section8(root: Path, version: str = SECTION8_VERSION) -> Path:
    """The facts' synthetic payload (§8) at `root`."""
    manifests, release = section8_files(version)
    return write_payload(root, version, manifests, release)


# -- a payload of a real release's size ------------------------------------------------------------------


def _scale_document(kind: str, name: str, namespace: str, index: int, version: str = SECTION8_VERSION) -> str:
    """A manifest of about 1–4 KB, shaped like a release's (CRDs with a schema, workloads, RBAC)."""
    annotations = {**INCLUDE, "capability.openshift.io/name": "Console"} if index % 17 == 0 else INCLUDE
    if kind == "CustomResourceDefinition":
        properties = "\n".join(
            f"""              field{i}:
                type: string
                description: "Field {i} of {name}: what it configures, with <defaults> & limits."
                maxLength: {64 + i}"""
            for i in range(24)
        )
        schema = "        properties:\n          spec:\n            type: object\n            properties:\n"
        return _crd(f"{name}s", f"K{index}", annotations, schema + properties + "\n")
    if kind == "Deployment":
        return f"""apiVersion: apps/v1
kind: Deployment
{_meta(name, namespace, **annotations)}spec:
  replicas: 1
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata:
      labels: {{app: {name}}}
      annotations: {{target.workload.openshift.io/management: '{{"effect": "PreferredDuringScheduling"}}'}}
    spec:
      serviceAccountName: {name}
      priorityClassName: system-cluster-critical
      containers:
      - name: operator
        image: registry.local/{name}@sha256:{index:064d}
        args: [--config=/etc/config/config.yaml, -v=2]
        env:
        - {{name: RELEASE_VERSION, value: "{version}"}}
        - {{name: POD_NAME, valueFrom: {{fieldRef: {{fieldPath: metadata.name}}}}}}
        resources: {{requests: {{cpu: 10m, memory: 50Mi}}}}
        volumeMounts: [{{name: config, mountPath: /etc/config}}]
      volumes: [{{name: config, configMap: {{name: {name}-config}}}}]
      tolerations: [{{key: node-role.kubernetes.io/master, operator: Exists, effect: NoSchedule}}]
"""
    if kind == "ClusterRole":
        return f"""apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
{_meta(name, None, **annotations)}rules:
- apiGroups: ["", apps]
  resources: [configmaps, secrets, deployments, daemonsets]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [config.openshift.io]
  resources: [clusteroperators, clusteroperators/status]
  verbs: [get, list, watch, update]
"""
    if kind == "Namespace":
        return f"apiVersion: v1\nkind: Namespace\n{_meta(name, None, **INCLUDE)}"
    if kind == "ClusterOperator":
        return _cluster_operator(name, version, namespace, "spec: {}\n")
    data = "\n".join(f"  key{i}: 'value {i} of {name}, on: yes, off: no'" for i in range(8))
    return f"apiVersion: v1\nkind: ConfigMap\n{_meta(name, namespace, **annotations)}data:\n{data}\n"


SCALE_JOB_NAMESPACE = "ns-jobs"


def scale_files(manifests: int = 900, *, operators: bool = False, version: str = SECTION8_VERSION) -> dict[str, str]:
    """`release-manifests/` files of about `manifests` documents: 60 components over 30 run levels
    (two per level, in parallel), each with files of one to three documents, a Job every 10 levels.

    With `operators`, the payload can be applied as a release is: each component's first file
    begins with its Namespace (`ns-<component>`, the Jobs' `ns-jobs` in the first), its last
    ends with its ClusterOperator (named after it, at `version`), both counted in `manifests`;
    the Deployments carry `version` in their RELEASE_VERSION, so an update changes them."""
    kinds = ("CustomResourceDefinition", "Deployment", "ClusterRole", "ConfigMap", "ConfigMap")
    files: dict[str, str] = {}
    index = 0
    level = 0
    while index < manifests:
        level += 1
        for component in (f"comp{level}a", f"comp{level}b"):
            namespace = f"ns-{component}"
            for part in range(5):
                if index >= manifests:
                    break
                documents = []
                if operators and part == 0:
                    names = [namespace] + ([SCALE_JOB_NAMESPACE] if index == 0 else [])
                    documents += [_scale_document("Namespace", n, "", index) for n in names]
                    index += len(names)
                for _ in range(1 + index % 3):
                    if index >= manifests:
                        break
                    kind = kinds[index % len(kinds)]
                    documents.append(_scale_document(kind, f"{component}-{index}", namespace, index, version))
                    index += 1
                if operators and (part == 4 or index >= manifests):
                    documents.append(_scale_document("ClusterOperator", component, namespace, index, version))
                    index += 1
                files[f"0000_{level:02d}_{component}_{part:02d}_manifests.yaml"] = "---\n".join(documents)
        if level % 10 == 0 and index < manifests:
            job = f"""apiVersion: batch/v1
kind: Job
{_meta(f"job-{level}", SCALE_JOB_NAMESPACE, **INCLUDE)}spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: job, image: registry.local/job:1}}]
"""
            files[f"0000_{level:02d}_zjob_00_job.yaml"] = job
            index += 1
    return files


def write_scale_payload(
    root: Path, manifests: int = 900, version: str = SECTION8_VERSION, *, operators: bool = False
) -> Path:
    """A payload of `manifests` documents (see `scale_files`) at `root`, the CVO's own two first."""
    cvo, _ = section8_files(version)
    del cvo["0000_00_cluster-version-operator_02_bad.yaml"]
    return write_payload(root, version, cvo, scale_files(manifests - len(cvo), operators=operators, version=version))
