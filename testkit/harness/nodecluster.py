"""What runs on the local node: its Node object, the images in its registry, install/ deployed
from them, and the end-to-end run (`make e2e`).

`deploy` applies install/ as it is, plus only what a real OpenShift cluster provides and this one
lacks: the serving-certificate Secrets and the service CA ConfigMap the service CA operator would
make, the `openshift-user-critical` PriorityClass, the UID the restricted-v2 SCC would assign to
Pods that ask for it, and `{{.ReleaseImage}}` rendered to the release image in the local registry.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cvo_py.runtime.kube import JSON, ApiError, KubeClient, Resource
from syncworker.render import RenderData
from testkit.checkout import REPO
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
CVO_IMAGE = "localhost/cvo-py:dev"
# The releases pushed to the local registry: the node runs the first; the others are updates,
# each first pulled by one test of tests/e2e (the real retrieval, the stopped registry, the
# deleted start Pod), since an image the node has is not pulled again.
RELEASES = ("4.21.0", "4.21.1", "4.21.2", "4.21.3")
RELEASE_REPOSITORY = "cvo-py-release"
# restricted-v2 assigns the first UID of the namespace's range (openshift.io/sa.scc.uid-range).
RESTRICTED_UID = 1000650000
# A ClusterOperator of the release, as every cluster has: `start` judges an update's progress from
# the operators' versions, and with none an update would never complete.
RELEASE_OPERATOR = "kube-apiserver"


# -- images -----------------------------------------------------------------------------------------


def push_images(registry: str, quiet: bool = False) -> dict[str, Any]:
    """Build the cvo-py image when its inputs changed, push it, build and push the release images.

    Returns {"cvo": pull spec by digest, "releases": [{"version", "image"}], "variants": {...}}:
    the variants are the broken release images the failure tests pull."""
    started = time.monotonic()
    image.build(CVO_IMAGE, "local", False)
    cvo = image.by_digest(f"{registry}/cvo-py:dev", image.push(CVO_IMAGE, f"{registry}/cvo-py:dev"))
    releases = []
    for index, version in enumerate(RELEASES):
        tag = f"localhost/{RELEASE_REPOSITORY}:{version}"
        image.build_release(CVO_IMAGE, tag, version, RELEASES[:index], {"cluster-version-operator": cvo})
        destination = f"{registry}/{RELEASE_REPOSITORY}:{version}"
        releases.append({"version": version, "image": image.by_digest(destination, image.push(tag, destination))})
    variants = push_variants(registry, releases[1]["version"])
    push_pause(registry)
    if not quiet:
        print(f"images pushed to {registry} in {time.monotonic() - started:.0f}s", file=sys.stderr)
    return {"cvo": cvo, "releases": releases, "variants": variants}


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


# -- install/ ---------------------------------------------------------------------------------------


def render(release_image: str) -> list[JSON]:
    """install/ rendered as the CVO renders it for `release_image`, plus the UID restricted-v2 assigns."""
    rendered = install.load(data=RenderData(release_image=release_image))
    for doc in rendered:
        if doc["kind"] != "Deployment":
            continue
        template = doc["spec"]["template"]
        scc = (template["metadata"].get("annotations") or {}).get("openshift.io/required-scc")
        if scc == "restricted-v2":
            template["spec"].setdefault("securityContext", {}).setdefault("runAsUser", RESTRICTED_UID)
    return rendered


def serving_secrets(client: KubeClient, paths: NodePaths, docs: list[JSON]) -> None:
    """What the service CA operator makes for each Service annotated with a serving-cert Secret
    name, and the CA bundle ConfigMap `openshift-service-ca.crt` in each namespace."""
    import base64

    jobs = {job.name: job for job in localprometheus.jobs().values()}
    ca_cert, _ = localprometheus.serving_ca(paths.prometheus)
    namespaces = set()
    for doc in docs:
        secret_name = (doc["metadata"].get("annotations") or {}).get(
            "service.beta.openshift.io/serving-cert-secret-name"
        )
        if doc["kind"] != "Service" or not secret_name:
            continue
        namespace = doc["metadata"]["namespace"]
        namespaces.add(namespace)
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
    for namespace in namespaces:
        install.create_or_replace(
            client,
            CONFIGMAPS,
            {
                "metadata": {"name": "openshift-service-ca.crt", "namespace": namespace},
                "data": {"service-ca.crt": Path(ca_cert).read_text()},
            },
        )


def deploy(cluster: localcluster.Cluster, info: NodeInfo, quiet: bool = False) -> NodeInfo:
    """Push the images, apply install/ with the first release image, and wait for its Deployments."""
    images = push_images(info.registry, quiet)
    release = images["releases"][0]["image"]
    client = localcluster.admin_client(cluster)
    paths = NodePaths(Path(info.data_dir))
    docs = render(release)
    namespaces = [d for d in docs if d["kind"] == "Namespace"]
    # The cluster's own namespaces install/ puts objects in (openshift-config-managed, ...).
    named = {d["metadata"]["name"] for d in namespaces}
    for namespace in sorted({d["metadata"].get("namespace") for d in docs} - named - {None}):
        ensure_namespace(client, namespace)
    install.apply(client, namespaces)
    serving_secrets(client, paths, docs)
    with contextlib.suppress(ApiError):  # exists after a previous deploy
        usc.create_operator(client, RELEASE_OPERATOR, RELEASES[0], datetime.now(UTC))
    install.apply(client, [d for d in docs if d["kind"] != "Namespace"])
    info = NodeInfo(**{**info.__dict__, "release_images": images["releases"], "images": images})
    localnode.write_node_json(info)
    for doc in docs:
        if doc["kind"] == "Deployment":
            wait_available(client, doc["metadata"]["namespace"], doc["metadata"]["name"], paths)
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
    parser.add_argument("--no-deploy", action="store_true", help="up: start the node only (no images, no install/)")
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
