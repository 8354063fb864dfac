"""What runs on the local node: its Node object, the images in its registry, the cluster
bootstrapped from them as an installer bootstraps one, and the end-to-end run (`make e2e`).

`deploy` does what an installer does and no more: the ClusterVersion and ClusterOperator CRDs of
the installed release's API, the FeatureGate `cluster` and the ClusterVersion `version` as the
installer writes them, and `start`'s rendered Deployment with what it needs to run (its namespace,
ServiceAccounts and RBAC). `start` applies everything else from the release image's payload: the
rest of install/ (its Service, the admin-ack ConfigMaps, monitoring, the Update Status Controller
where the feature set selects it) and the release's other manifests. What a real OpenShift
cluster provides and this one lacks is played too: the cluster's own namespaces, the
serving-certificate Secrets and service CA ConfigMap the service CA operator makes
(`serve_certificates`), the UID the restricted-v2 SCC assigns (a MutatingAdmissionPolicy on Pods),
the `openshift-user-critical` PriorityClass, a ClusterOperator of the release.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from cvo_py.runtime.kube import CLUSTERVERSIONS, FEATUREGATES, JSON, SERVICES, ApiError, KubeClient, Resource
from syncworker.render import RenderData
from testkit.checkout import INSTALL, REPO
from testkit.harness import image, localcluster, localnode, localprometheus, usc
from testkit.harness import manifests as install
from testkit.harness import nodeconfig as cfg
from testkit.harness.cluster import ensure_namespace
from testkit.harness.localcluster import ClusterError
from testkit.harness.localnode import NodeInfo
from testkit.harness.nodeconfig import NodePaths

BUSYBOX = "/bin/busybox"  # Debian's busybox-static
SECRETS = Resource("v1", "Secret", "secrets", True)
CONFIGMAPS = Resource("v1", "ConfigMap", "configmaps", True)
DEPLOYMENTS = install.KINDS["Deployment"]
MUTATING_POLICIES = Resource(
    "admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy", "mutatingadmissionpolicies", False
)
MUTATING_BINDINGS = Resource(
    "admissionregistration.k8s.io/v1", "MutatingAdmissionPolicyBinding", "mutatingadmissionpolicybindings", False
)
CVO_IMAGE = "localhost/cvo-py:dev"
RELEASE_REPOSITORY = "cvo-py-release"
# restricted-v2 assigns the first UID of the namespace's range (openshift.io/sa.scc.uid-range).
RESTRICTED_UID = 1000650000
# A ClusterOperator of the release, as every cluster has (the Update Status Controller's insights
# read the operators' versions); not in the payload, so `start` does not wait for it.
RELEASE_OPERATOR = "kube-apiserver"
INCLUDE = {"include.release.openshift.io/self-managed-high-availability": "true"}
# The ClusterVersion CRD of each release's API (tests/crds): 4.13's capability enum lists only the
# 4.13 names, so a status written by 4.14 is rejected under it (openshift/release#43984).
API_4_13 = "clusterversion-4.13.yaml"
API_CURRENT = "clusterversion.yaml"
# What `start` installs: install/'s operator side, as the installer applies it. The rest of
# install/ is the payload's.
BOOTSTRAP_FILES = (
    "0000_00_cluster-version-operator_00_namespace.yaml",
    "0000_00_cluster-version-operator_02_serviceaccount.yaml",
    "0000_00_cluster-version-operator_03_rbac.yaml",
    "0000_00_cluster-version-operator_30_deployment.yaml",
)
# Synthetic operators of the 4.14 releases: each a Deployment of the local pause image and a
# ClusterOperator the tests report as its operator would (tests/e2e).
OPERATORS = ("e2e-alpha", "e2e-beta")
# The component of 4.14.1 that never becomes ready: a Deployment of an image the registry lacks,
# and its ClusterOperator.
STUCK = "e2e-stuck"
ABSENT_IMAGE_DIGEST = "sha256:" + "e" * 64


@dataclass(frozen=True)
class ReleaseSpec:
    """One release image the node's registry holds: its version and what its payload carries
    beside install/ (the ClusterVersion CRD of its API, synthetic operators, a stuck component)."""

    version: str
    api: str = API_CURRENT
    operators: tuple[str, ...] = ()
    stuck: bool = False


# The releases pushed to the local registry. The node installs the first; 4.13.1 to 4.13.3 are
# updates each first pulled by one test of tests/e2e/test_retrieval.py (an image the node has is
# not pulled again); 4.14.0 is the update with operators and 4.14.1 the one that gets stuck
# (tests/e2e/test_updates.py).
INSTALLED = ReleaseSpec("4.13.0", API_4_13)
UPDATE = ReleaseSpec("4.14.0", API_CURRENT, OPERATORS)
STUCK_UPDATE = ReleaseSpec("4.14.1", API_CURRENT, OPERATORS, stuck=True)
RELEASES = (
    INSTALLED,
    ReleaseSpec("4.13.1", API_4_13),
    ReleaseSpec("4.13.2", API_4_13),
    ReleaseSpec("4.13.3", API_4_13),
    UPDATE,
    STUCK_UPDATE,
)


# -- images -----------------------------------------------------------------------------------------


def push_images(registry: str, quiet: bool = False) -> dict[str, Any]:
    """Build the cvo-py image when its inputs changed, push it, build and push the release images.

    Returns {"cvo": pull spec by digest, "releases": [{"version", "image"}], "variants": {...}}:
    the variants are the broken release images the failure tests pull."""
    started = time.monotonic()
    image.build(CVO_IMAGE, "local", False)
    cvo = image.by_digest(f"{registry}/cvo-py:dev", image.push(CVO_IMAGE, f"{registry}/cvo-py:dev"))
    pause = push_pause(registry)
    releases = []
    for index, spec in enumerate(RELEASES):
        tag = f"localhost/{RELEASE_REPOSITORY}:{spec.version}"
        files = payload_files(spec, pause, f"{registry}/cvo-py-absent@{ABSENT_IMAGE_DIGEST}")
        previous = [r.version for r in RELEASES[:index]]
        image.build_release(CVO_IMAGE, tag, spec.version, previous, {"cluster-version-operator": cvo}, files)
        destination = f"{registry}/{RELEASE_REPOSITORY}:{spec.version}"
        releases.append({"version": spec.version, "image": image.by_digest(destination, image.push(tag, destination))})
    variants = push_variants(registry, releases[1]["version"])
    if not quiet:
        print(f"images pushed to {registry} in {time.monotonic() - started:.0f}s", file=sys.stderr)
    return {"cvo": cvo, "pause": pause, "releases": releases, "variants": variants}


# -- what a release's payload carries beside install/ ----------------------------------------------


def _crd(name: str) -> JSON:
    """A CRD of tests/crds, annotated to be included as a release's manifests are."""
    doc: JSON = yaml.safe_load((localcluster.CRD_DIR / name).read_text())
    annotations = doc["metadata"].setdefault("annotations", {})
    annotations.update(INCLUDE)
    return doc


def _dump(*docs: JSON) -> str:
    return yaml.safe_dump_all(list(docs), sort_keys=False)


def operator_manifests(name: str, version: str, image_ref: str) -> list[JSON]:
    """A synthetic operator as a release carries one: its namespace, its Deployment (one replica
    of `image_ref` on a master) and its ClusterOperator, which expects `operator` at `version`."""
    meta = {"annotations": dict(INCLUDE)}
    labels = {"app": name}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, **meta}},
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": name, **meta},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                # A rollout that cannot start is said within seconds, not 10 minutes.
                "progressDeadlineSeconds": 30,
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "nodeSelector": {"node-role.kubernetes.io/master": ""},
                        "tolerations": [
                            {"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"}
                        ],
                        "containers": [
                            {
                                "name": "operator",
                                "image": image_ref,
                                "env": [{"name": "RELEASE_VERSION", "value": version}],
                            }
                        ],
                    },
                },
            },
        },
        {
            "apiVersion": "config.openshift.io/v1",
            "kind": "ClusterOperator",
            "metadata": {"name": name, **meta},
            "spec": {},
            "status": {
                "versions": [{"name": "operator", "version": version}],
                "relatedObjects": [{"group": "", "resource": "namespaces", "name": name}],
            },
        },
    ]


def payload_files(spec: ReleaseSpec, pause_image: str, absent_image: str) -> dict[str, str]:
    """What the release image of `spec` carries beside the cvo-py image's /manifests (install/):
    in /manifests, the ClusterVersion and ClusterOperator CRDs of its API, where upstream's CVO
    image keeps them; in /release-manifests, other components' manifests (the FeatureGate,
    monitoring and MachineConfig CRDs) and its synthetic operators, the stuck one's Deployment
    pulling `absent_image`."""
    cvo = "manifests/0000_00_cluster-version-operator_01"
    files = {
        f"{cvo}_clusterversions.crd.yaml": _dump(_crd(spec.api)),
        f"{cvo}_clusteroperators.crd.yaml": _dump(_crd("clusteroperator.yaml")),
        "release-manifests/0000_03_config-operator_01_featuregates.crd.yaml": _dump(_crd("featuregate.yaml")),
        "release-manifests/0000_50_cluster-monitoring-operator_00_crds.yaml": _dump(
            _crd("servicemonitor.yaml"), _crd("prometheusrule.yaml")
        ),
        "release-manifests/0000_80_machine-config_01_crds.yaml": _dump(
            _crd("machineconfig.yaml"), _crd("machineconfigpool.yaml")
        ),
    }
    for name in spec.operators:
        files[f"release-manifests/0000_50_{name}_00_operator.yaml"] = _dump(
            *operator_manifests(name, spec.version, pause_image)
        )
    if spec.stuck:
        files[f"release-manifests/0000_60_{STUCK}_00_operator.yaml"] = _dump(
            *operator_manifests(STUCK, spec.version, absent_image)
        )
    return files


def push_variants(registry: str, version: str) -> dict[str, str]:
    """Release images that fail in the version Pod, each by digest: `no-release-manifests` (the
    copy step fails), `no-shell` (the first init container cannot start), `unsigned` (a release
    image in the repository the node's policy requires signatures for)."""
    import tempfile

    release_tag = f"localhost/{RELEASE_REPOSITORY}:{version}"
    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        manifests = image.write_release_manifests(Path(tmp), version, (), {})
        image.build_variant(CVO_IMAGE, "localhost/cvo-py-broken:no-release-manifests")
        image.build_variant(None, "localhost/cvo-py-broken:no-shell", copies=[(manifests, "/release-manifests")])
    for name in ("no-release-manifests", "no-shell"):
        destination = f"{registry}/cvo-py-broken:{name}"
        out[name] = image.by_digest(destination, image.push(f"localhost/cvo-py-broken:{name}", destination))
    destination = f"{registry}/{cfg.SIGNED_REPOSITORY}:{version}"
    out["unsigned"] = image.by_digest(destination, image.push(release_tag, destination))
    return out


def push_pause(registry: str) -> str:
    """The runtime's pause image (cfg.PAUSE_IMAGE), from Debian's static busybox: a sandbox whose
    namespaces must be held by a process sleeps in it."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        pause = Path(tmp) / "pause"
        pause.write_text("#!/bin/busybox sh\nexec /bin/busybox sleep 2147483647\n")
        pause.chmod(0o755)
        image.build_variant(
            None,
            "localhost/cvo-py-pause:3.10",
            user="65535",
            copies=[(Path(BUSYBOX), "/bin/busybox"), (pause, "/pause")],
            entrypoint=["/pause"],
        )
    destination = f"{registry}/{cfg.PAUSE_IMAGE}"
    return str(image.by_digest(destination, image.push("localhost/cvo-py-pause:3.10", destination)))


# -- the bootstrap ------------------------------------------------------------------------------------


def bootstrap_manifests(release_image: str) -> list[JSON]:
    """What an installer applies of install/: `start`'s namespace, ServiceAccounts, RBAC and
    Deployment, rendered as the CVO renders them for `release_image`."""
    data = RenderData(release_image=release_image)
    return [doc for name in BOOTSTRAP_FILES for doc in install.documents(install.rendered(INSTALL / name, data))]


def cluster_namespaces(release_image: str) -> list[str]:
    """The cluster's own namespaces install/ puts objects in (openshift-config-managed, ...): a
    real cluster has them before any release is applied."""
    docs = install.load(data=RenderData(release_image=release_image))
    named = {d["metadata"]["name"] for d in docs if d["kind"] == "Namespace"}
    return sorted({d["metadata"].get("namespace") for d in docs} - named - {None})


def installer_clusterversion(cluster_id: str) -> JSON:
    """ClusterVersion `version` as the installer writes it: the cluster's ID, no channel (this
    machine reaches no update service)."""
    return {
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "spec": {"clusterID": cluster_id},
    }


def restricted_uid_policy() -> list[JSON]:
    """What the restricted-v2 SCC does to the Pods that ask for it, as a MutatingAdmissionPolicy:
    the first UID of the namespace's range (there is no SCC admission here)."""
    name = "cvo-py-node-restricted-v2-uid"
    annotation = "openshift.io/required-scc"
    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {
                "matchConstraints": {
                    "resourceRules": [
                        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
                    ]
                },
                "matchConditions": [
                    {
                        "name": "restricted-v2",
                        "expression": (
                            f"has(object.metadata.annotations) && '{annotation}' in object.metadata.annotations"
                            f" && object.metadata.annotations['{annotation}'] == 'restricted-v2'"
                        ),
                    }
                ],
                "failurePolicy": "Fail",
                "reinvocationPolicy": "Never",
                "mutations": [
                    {
                        "patchType": "ApplyConfiguration",
                        "applyConfiguration": {
                            "expression": (
                                "Object{spec: Object.spec{securityContext: Object.spec.securityContext{"
                                f"runAsUser: {RESTRICTED_UID}}}}}}}"
                            )
                        },
                    }
                ],
            },
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": name},
            "spec": {"policyName": name},
        },
    ]


def serving_secrets(client: KubeClient, paths: NodePaths, services: list[JSON]) -> list[str]:
    """What the service CA operator makes for each Service annotated with a serving-cert Secret
    name (absent ones only), and the CA bundle ConfigMap `openshift-service-ca.crt` in each
    namespace; returns the Secrets made, as `namespace/name`."""
    import base64

    jobs = {job.name: job for job in localprometheus.jobs().values()}
    ca_cert, _ = localprometheus.serving_ca(paths.prometheus)
    namespaces = set()
    made = []
    for doc in services:
        secret_name = (doc["metadata"].get("annotations") or {}).get(
            "service.beta.openshift.io/serving-cert-secret-name"
        )
        if doc["kind"] != "Service" or not secret_name:
            continue
        namespace = doc["metadata"]["namespace"]
        namespaces.add(namespace)
        with contextlib.suppress(ApiError):
            client.get(SECRETS, secret_name, namespace)
            continue
        name = doc["metadata"]["name"]
        job = jobs.get(name) or localprometheus.Job(name, namespace, "", "30s", "https", f"{name}.{namespace}.svc")
        cert, key = localprometheus.serving_certificate(paths.prometheus, job)
        data = {
            name: base64.b64encode(Path(path).read_bytes()).decode()
            for name, path in (("tls.crt", cert), ("tls.key", key))
        }
        install.create_or_replace(
            client,
            SECRETS,
            {"metadata": {"name": secret_name, "namespace": namespace}, "type": "kubernetes.io/tls", "data": data},
        )
        made.append(f"{namespace}/{secret_name}")
    for namespace in namespaces:
        install.create_or_replace(
            client,
            CONFIGMAPS,
            {
                "metadata": {"name": "openshift-service-ca.crt", "namespace": namespace},
                "data": {"service-ca.crt": Path(ca_cert).read_text()},
            },
        )
    return made


def serve_certificates(client: KubeClient, paths: NodePaths) -> list[str]:
    """The service CA operator's part for the Services in the cluster now (those `start` applied
    included): their serving-certificate Secrets, made once."""
    services = [{**item, "kind": "Service"} for item in client.list(SERVICES)["items"]]  # a list's items name no kind
    return serving_secrets(client, paths, services)


def bootstrap(client: KubeClient, cluster: localcluster.Cluster, paths: NodePaths, release_image: str) -> None:
    """An installer's part, for the release `release_image` (INSTALLED): the CRDs of its API and
    the FeatureGate's, FeatureGate `cluster` (Default), ClusterVersion `version`, then `start`'s
    Deployment and what it needs; with what the cluster provides around them."""
    for namespace in cluster_namespaces(release_image):
        ensure_namespace(client, namespace)
    for crd in (INSTALLED.api, "clusteroperator.yaml", "featuregate.yaml"):
        localcluster.apply_crd(cluster, localcluster.CRD_DIR / crd)
    with contextlib.suppress(ApiError):  # exists after a previous deploy
        client.create(FEATUREGATES, {"metadata": {"name": "cluster"}, "spec": {}})
    with contextlib.suppress(ApiError):
        client.create(CLUSTERVERSIONS, installer_clusterversion(str(uuid.uuid4())))
    policies = {"MutatingAdmissionPolicy": MUTATING_POLICIES, "MutatingAdmissionPolicyBinding": MUTATING_BINDINGS}
    for doc in restricted_uid_policy():
        install.create_or_replace(client, policies[doc["kind"]], doc)
    with contextlib.suppress(ApiError):
        usc.create_operator(client, RELEASE_OPERATOR, INSTALLED.version, datetime.now(UTC))
    docs = bootstrap_manifests(release_image)
    install.apply(client, [d for d in docs if d["kind"] == "Namespace"])
    # start's serving certificate, which the service CA operator makes for the Service start applies.
    service = install.load("0000_00_cluster-version-operator_40_service.yaml")
    serving_secrets(client, paths, service)
    install.apply(client, [d for d in docs if d["kind"] != "Namespace"])


def deploy(cluster: localcluster.Cluster, info: NodeInfo, quiet: bool = False) -> NodeInfo:
    """Push the images, bootstrap the cluster with the first release image, and wait for `start`."""
    images = push_images(info.registry, quiet)
    release = images["releases"][0]["image"]
    client = localcluster.admin_client(cluster)
    paths = NodePaths(Path(info.data_dir))
    bootstrap(client, cluster, paths, release)
    info = NodeInfo(**{**info.__dict__, "release_images": images["releases"], "images": images})
    localnode.write_node_json(info)
    wait_available(client, install.CVO_NAMESPACE, "cluster-version-operator", paths)
    return info


def wait_available(client: KubeClient, namespace: str, name: str, paths: NodePaths, timeout: float = 300.0) -> JSON:
    deadline = time.monotonic() + timeout
    deployment: JSON = {}
    while time.monotonic() < deadline:
        deployment = client.get(DEPLOYMENTS, name, namespace)
        status = deployment.get("status") or {}
        if (
            status.get("availableReplicas", 0) >= (deployment["spec"].get("replicas") or 1)
            and status.get("observedGeneration", 0) >= deployment["metadata"]["generation"]
        ):
            return deployment
        time.sleep(1)
    raise ClusterError(
        f"Deployment {namespace}/{name} was not available within {timeout:.0f}s: "
        f"{json.dumps(deployment.get('status'))}\n"
        f"kubelet log ends:\n{localnode.log_tail(paths, 'kubelet')}"
    )


# -- make e2e -----------------------------------------------------------------------------------------


def e2e(pytest_args: list[str]) -> int:
    """Start the node, run tests/e2e against it, stop it: also when the tests fail, Ctrl-C ends
    them, or the run is terminated (SIGTERM, SIGHUP: a CI time limit, a closed terminal)."""
    started = time.monotonic()
    code = 1

    def interrupted(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupted)
    try:
        cluster, info = localnode.up()
        info = deploy(cluster, info)
        print(f"node-up took {time.monotonic() - started:.0f}s", flush=True)
        tests = time.monotonic()
        code = subprocess.call([sys.executable, "-m", "pytest", str(REPO / "tests" / "e2e"), "--node", *pytest_args])
        print(f"tests/e2e took {time.monotonic() - tests:.0f}s", flush=True)
    except KeyboardInterrupt:
        code = 130
    except ClusterError as exc:
        print(f"localnode: {exc}", file=sys.stderr)
    finally:
        stopping = time.monotonic()
        with localnode.interrupts_deferred():
            left = localnode.down()
        print(f"node-down took {time.monotonic() - stopping:.0f}s; make e2e took {time.monotonic() - started:.0f}s")
        if left and code == 0:
            code = 1
    return code


# -- command line ---------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="localnode.py", description=localnode.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("command", choices=["up", "down", "status", "build", "e2e", "leftovers", "restart-agents"])
    parser.add_argument("--no-deploy", action="store_true", help="up: start the node only (no images, no install)")
    parser.add_argument("pytest_args", nargs="*", help="e2e: arguments for pytest (after --)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        if args.command == "build":
            localnode.build()
        elif args.command == "up":
            cluster, info = localnode.up()
            if not args.no_deploy:
                info = deploy(cluster, info)
            print(f"local node {info.node} ready in {time.monotonic() - started:.0f}s: {localnode.node_json_path()}")
            print(json.dumps(info.__dict__, indent=2))
        elif args.command == "down":
            with localnode.interrupts_deferred():
                left = localnode.down()
            print(f"node-down took {time.monotonic() - started:.0f}s")
            return 1 if left else 0
        elif args.command == "leftovers":
            left = localnode.leftovers()
            print("\n".join(left) if left else "nothing of a local node is left on this machine")
            return 1 if left else 0
        elif args.command == "restart-agents":
            localnode.restart_agents()
        elif args.command == "e2e":
            return e2e(args.pytest_args)
        else:
            info_now = localnode.running()
            if info_now is None:
                print("no local node is running")
                return 1
            print(json.dumps(info_now.__dict__, indent=2))
            print(json.dumps(localnode.components(NodePaths(Path(info_now.data_dir))), indent=2))
    except ClusterError as exc:
        print(f"localnode: {exc}", file=sys.stderr)
        return 1
    return 0
