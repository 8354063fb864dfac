"""Driving a payload retrieval against the real API server while the test plays the kubelet."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cvo_py.runtime.kube import CLUSTERVERSIONS, PODS, ApiError, KubeClient, Resource
from payload.acceptance import ReleaseAcceptance
from payload.classify import Limits
from payload.metrics import PayloadMetrics
from payload.podspec import POD_LABEL_SELECTOR, target_dir
from payload.release import Release
from payload.retrieval import PayloadRetriever, RetrieverOptions
from payload.verify.verifier import cluster_verifier
from testkit.harness.manifests import ServiceAccountFiles

if TYPE_CHECKING:
    from cvo_py.compose.start import ClusterVersionSide

PRIORITYCLASSES = Resource("scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", False)
NODE = "test-node"
IMAGE = "quay.io/openshift-release-dev/ocp-release@sha256:" + "5d" * 32


def ensure_priority_class(kube: KubeClient, name: str = "openshift-user-critical") -> None:
    """The Priority admission plugin rejects Pods naming a PriorityClass that does not exist."""
    try:
        kube.create(PRIORITYCLASSES, {"metadata": {"name": name}, "value": 1000000000})
    except ApiError as exc:
        if not exc.is_already_exists():
            raise


def options(namespace: str, payload_dir: Path, **overrides: Any) -> RetrieverOptions:
    values: dict[str, Any] = {
        "namespace": namespace,
        "node_name": NODE,
        "release_image": "quay.io/openshift-release-dev/ocp-release@sha256:" + "00" * 32,
        "payload_dir": str(payload_dir),
        "retrieve_timeout": 60.0,
        "limits": Limits(not_started_after=10.0, stuck_after=30.0),
        "prune_timeout": 5.0,
    }
    values.update(overrides)
    return RetrieverOptions(**values)


def write_payload(
    payload_dir: Path, image: str, version: str = "4.19.1", arch: str | None = None, *, source: Path | None = None
) -> Path:
    """What the version Pod's containers would leave on the node: a copy of the release image's
    `/manifests` and `/release-manifests` (`source`, a payload root), or by default a payload of
    `version` that holds no manifests (the sync worker loads it and has nothing to apply)."""
    import shutil

    final = Path(target_dir(image, str(payload_dir)))
    if source is not None:
        final.mkdir(parents=True)
        for sub in ("manifests", "release-manifests"):
            shutil.copytree(source / sub, final / sub)
        return final
    (final / "manifests").mkdir(parents=True)
    (final / "release-manifests").mkdir()
    metadata: dict[str, Any] = {"kind": "cincinnati-metadata-v0", "version": version}
    if arch:
        metadata["metadata"] = {"release.openshift.io/architecture": arch}
    (final / "release-manifests" / "release-metadata").write_text(json.dumps(metadata))
    image_stream = {"apiVersion": "image.openshift.io/v1", "kind": "ImageStream", "metadata": {"name": version}}
    (final / "release-manifests" / "image-references").write_text(json.dumps(image_stream))
    return final


class Retrieval:
    """`retrieve()` on a thread, collecting every report with the time it arrived."""

    def __init__(
        self,
        kube: KubeClient,
        opts: RetrieverOptions,
        image: str = IMAGE,
        version: str = "4.19.1",
        force: bool = False,
        verification_namespace: str | None = None,
    ) -> None:
        """With `verification_namespace`, the release is verified with the configuration found
        there first; without, only the Pod is run (verification has its own tests)."""
        self.kube = kube
        self.options = opts
        self.reports: list[ReleaseAcceptance] = []
        self.report_times: list[float] = []
        self._changed = threading.Condition()
        metrics = PayloadMetrics()
        verifier = (
            cluster_verifier(kube, verification_namespace, opts.operator_name, metrics)
            if verification_namespace is not None
            else None
        )
        self.retriever = PayloadRetriever(kube, opts, self._collect, verifier=verifier, metrics=metrics)
        self.result: ReleaseAcceptance | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(image, version, force), daemon=True)

    def _collect(self, acceptance: ReleaseAcceptance) -> None:
        with self._changed:
            self.reports.append(acceptance)
            self.report_times.append(time.monotonic())
            self._changed.notify_all()

    def _run(self, image: str, version: str, force: bool) -> None:
        try:
            self.result = self.retriever.retrieve(image, version, force)
        except BaseException as exc:  # surfaced by finish()
            self.error = exc

    def start(self) -> Retrieval:
        self._thread.start()
        return self

    def finish(self, timeout: float = 30.0) -> ReleaseAcceptance:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), f"retrieval still running; reports so far: {self.reports}"
        if self.error is not None:
            raise self.error
        assert self.result is not None
        assert self.reports and self.reports[-1] == self.result, "the last report must equal the result"
        return self.result

    def wait_report(self, predicate: Callable[[ReleaseAcceptance], bool], timeout: float = 15.0) -> ReleaseAcceptance:
        with self._changed:
            ok = self._changed.wait_for(lambda: any(predicate(r) for r in self.reports), timeout)
            assert ok, f"no matching report; reports so far: {self.reports}"
            return next(r for r in self.reports if predicate(r))

    def wait_pod(self, timeout: float = 15.0, exclude: tuple[str, ...] = ()) -> dict[str, Any]:
        """The version Pod this retrieval created (once it exists and is not being deleted)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self._thread.is_alive() or self.result is None, f"retrieval ended early: {self.result}"
            pods = [
                p
                for p in version_pods(self.kube, self.options.namespace)
                if not p["metadata"].get("deletionTimestamp") and p["metadata"]["name"] not in exclude
            ]
            if pods:
                assert len(pods) == 1, f"more than one version pod: {[p['metadata']['name'] for p in pods]}"
                return pods[0]
            time.sleep(0.02)
        raise AssertionError(f"no version pod appeared; reports: {self.reports}")


def version_pods(kube: KubeClient, namespace: str) -> list[dict[str, Any]]:
    return list(kube.list(PODS, namespace, label_selector=POD_LABEL_SELECTOR).get("items") or [])


RUNNING_IMAGE = "quay.io/openshift-release-dev/ocp-release@sha256:" + "1" * 64


class StartProcess:
    """`cluster-version-operator start` as its Deployment runs it (the manifest's command line, see
    testkit/harness/manifests.py), in `namespace`, with the running release's payload and the node's
    payload directory in `workdir`, serving on a free port with a self-signed certificate."""

    def __init__(
        self,
        kubeconfig: str,
        namespace: str,
        workdir: Path,
        running_version: str = "4.14.1",
        *extra: str,
        node: str = NODE,
        verbosity: int = 2,
        release_image: str = RUNNING_IMAGE,
        service_account: ServiceAccountFiles | None = None,
        payload: Path | None = None,
        env: dict[str, str] | None = None,
        log_name: str = "start.log",
    ) -> None:
        """`extra`: more flags after the manifest's (the last of a repeated flag wins), e.g. another
        `--listen` and serving certificate for a Prometheus to scrape. `service_account`: the
        Deployment's own Prometheus (see `manifests.start_argv`). `payload`: the running release's
        payload root (`PAYLOAD_OVERRIDE`; by default one holding only release-metadata of
        `running_version`, with nothing to apply). `env`: more environment, e.g.
        `CVO_PY_RECONCILE_INTERVAL`. Two processes in one `workdir` share the node's payload
        directory and need their own `log_name`."""
        import os
        import subprocess

        from testkit.harness.certs import self_signed
        from testkit.harness.cluster import free_port
        from testkit.harness.manifests import start_argv, start_env

        self.workdir = workdir
        self.payload_dir = workdir / "updatepayloads"
        self.payload_dir.mkdir(parents=True, exist_ok=True)
        local = payload if payload is not None else workdir / "running-release"
        if payload is None:
            (local / "release-manifests").mkdir(parents=True, exist_ok=True)
            (local / "release-manifests" / "release-metadata").write_text(json.dumps({"version": running_version}))
        cert, key = self_signed(workdir)
        self.port = free_port()
        self.argv = start_argv(
            {
                "--release-image": release_image,
                "--listen": f"127.0.0.1:{self.port}",
                "--serving-cert-file": cert,
                "--serving-key-file": key,
            },
            kubeconfig,
            service_account=service_account,
        ) + [f"--v={verbosity}", *extra]
        environment = dict(os.environ)
        environment.update(start_env(node))
        # Where this machine keeps what a node would: the running release's payload, the host path.
        environment.update(
            CVO_NAMESPACE=namespace, PAYLOAD_OVERRIDE=str(local), UPDATE_PAYLOADS_DIR=str(self.payload_dir)
        )
        environment.update(env or {})
        self.log_path = workdir / log_name
        self._log = self.log_path.open("ab")  # a restart in the same workdir keeps the earlier log
        self.proc = subprocess.Popen(self.argv, env=environment, stdout=self._log, stderr=subprocess.STDOUT)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> int | None:
        """SIGTERM, as the kubelet stops the Pod; the exit code (None if it had to be killed)."""
        import signal

        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except Exception:
                self.proc.kill()
                self.proc.wait(5)
                self._log.close()
                return None
        self._log.close()
        return self.proc.returncode


class SignatureStore:
    """A real HTTP signature store: `<url>/sha256=<hex>/signature-<n>` answered from `signatures`
    (200) or `statuses` (that status, its standard reason, no body), 404 for anything else; a path
    in `faults` misbehaves instead:
    - `hang`: no answer at all until the store closes;
    - `drip`: a 200 announcing DRIP_LENGTH bytes, then one byte every DRIP_SECONDS until the store
      closes or the client hangs up (then `abandoned` is set).
    `asked` lists the paths requested, `answered` those given a whole answer, in order."""

    DRIP_LENGTH = 4096  # small enough for any size bound; at DRIP_SECONDS a byte, over three minutes
    DRIP_SECONDS = 0.05

    def __init__(self) -> None:
        self.signatures: dict[str, bytes] = {}
        self.statuses: dict[str, int] = {}
        self.faults: dict[str, str] = {}
        self.asked: list[str] = []
        self.answered: list[str] = []
        self.abandoned = threading.Event()
        self._closing = threading.Event()
        store = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                store.asked.append(self.path)
                fault = store.faults.get(self.path)
                if fault == "hang":
                    store._closing.wait()
                    return
                if fault == "drip":
                    store._drip(self)
                    return
                body = store.signatures.get(self.path)
                status = 200 if body is not None else store.statuses.get(self.path, 404)
                self.send_response(status)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")
                store.answered.append(self.path)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/sigs"

    def path(self, hexpart: str, n: int) -> str:
        """The path of signature `n` of sha256:`hexpart` (a key of `signatures`, `statuses`, `faults`)."""
        return f"/sigs/sha256={hexpart}/signature-{n}"

    def _drip(self, handler: BaseHTTPRequestHandler) -> None:
        try:
            handler.send_response(200)
            handler.send_header("Content-Length", str(self.DRIP_LENGTH))
            handler.end_headers()
            for _ in range(self.DRIP_LENGTH):
                handler.wfile.write(b"\x00")
                handler.wfile.flush()
                if self._closing.wait(self.DRIP_SECONDS):
                    return
        except OSError:  # the client hung up
            self.abandoned.set()

    def close(self) -> None:
        self._closing.set()
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> SignatureStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def sign_release(key: Any, image: str) -> bytes:
    """A release signature ("simple signing" JSON in an OpenPGP signed message) by `key`."""
    import pysequoia

    digest = image.rsplit("@", 1)[1]
    doc = {
        "critical": {
            "type": "atomic container signature",
            "image": {"docker-manifest-digest": digest},
            "identity": {"docker-reference": image},
        },
        "optional": {},
    }
    return bytes(pysequoia.sign(key.signer(), json.dumps(doc).encode(), armor=False))


class ClusterVerification:
    """The verification ConfigMap in openshift-config-managed with a throwaway key and a local
    store; `sign(image)` publishes a valid signature for an image. `remove()` undoes it all."""

    NAMESPACE = "openshift-config-managed"

    def __init__(self, kube: KubeClient) -> None:
        import pysequoia

        from cvo_py.runtime.kube import CONFIGMAPS, NAMESPACES
        from payload.verify.config import CONFIG_ANNOTATION

        self.kube = kube
        self.key = pysequoia.Tsk.generate("test release key <release@example.com>")
        self.store = SignatureStore()
        try:
            kube.create(NAMESPACES, {"metadata": {"name": self.NAMESPACE}})
        except ApiError as exc:
            if not exc.is_already_exists():
                raise
        self.remove_configmaps()
        kube.create(
            CONFIGMAPS,
            {
                "metadata": {
                    "name": "release-verification",
                    "namespace": self.NAMESPACE,
                    "annotations": {CONFIG_ANNOTATION: ""},
                },
                "data": {
                    "verifier-public-key-test": str(self.key.extract_certificate()),
                    "store-local": self.store.url,
                },
            },
        )

    def sign(self, image: str) -> None:
        hexpart = image.rsplit(":", 1)[1]
        self.store.signatures[self.store.path(hexpart, 1)] = sign_release(self.key, image)

    def remove_configmaps(self) -> None:
        """Every ConfigMap of the namespace but the release's admin gates, which every cluster has
        (without them Upgradeable is False)."""
        from cvo_py.runtime.kube import CONFIGMAPS
        from status.clusterversion.upgradeable import ADMIN_GATES

        for cm in self.kube.list(CONFIGMAPS, self.NAMESPACE).get("items") or []:
            if (self.NAMESPACE, cm["metadata"]["name"]) != ADMIN_GATES:
                self.kube.delete(CONFIGMAPS, cm["metadata"]["name"], self.NAMESPACE)

    def remove(self) -> None:
        self.remove_configmaps()
        self.store.close()


def signature_rejected(image: str) -> str:
    """The kubelet's message when the node's image policy finds no signature for `image`."""
    return (
        f"image pull failed for {image} because the signature validation failed: Source image rejected: "
        "A signature was required, but no signature exists"
    )


def request_update(kube: KubeClient, image: str, version: str = "") -> None:
    """What `oc adm upgrade --to-image` does: set spec.desiredUpdate."""
    kube.patch(CLUSTERVERSIONS, "version", {"spec": {"desiredUpdate": {"image": image, "version": version}}})


def release_accepted(kube: KubeClient) -> dict[str, Any]:
    for c in (kube.get(CLUSTERVERSIONS, "version").get("status") or {}).get("conditions") or []:
        if c.get("type") == "ReleaseAccepted":
            return dict(c)
    return {}


def status_operator(
    kubeconfig: str,
    namespace: str,
    agent: str,
    *,
    retrieval_retry: float,
    verification_namespace: str | None = None,
    show_failure_within: float = 2.0,
) -> ClusterVersionSide:
    """An in-process ClusterVersion side (ClusterVersion 4.14.1), composed as `start` composes it,
    that retrieves requested payloads, retrying a failed one every `retrieval_retry` seconds (the
    version Pod is created in `namespace`; a failed retrieval waits up to `show_failure_within`
    seconds for its failure to be written before it deletes the Pod). With
    `verification_namespace`, a change of the ConfigMaps there retries a failed verification."""
    from cvo_py.compose.start import build_caches, build_clusterversion, build_retrieval, build_verifier
    from cvo_py.runtime.kube import connect
    from status.clusterversion.controller import ClusterVersionOptions
    from testkit.harness.clusterversion import IMG_4141, nothing_to_apply

    client = connect(kubeconfig, user_agent=agent)
    options = RetrieverOptions(namespace=namespace, node_name=NODE, release_image=IMG_4141)
    metrics = PayloadMetrics()
    caches = build_caches(client, "version")
    release = Release(version="4.14.1", image=IMG_4141)
    worker = nothing_to_apply(client, release, caches)
    retrieval = build_retrieval(
        client,
        options,
        build_verifier(client, options.operator_name, metrics),
        metrics,
        caches.clusterversion,
        retry_after=retrieval_retry,
        show_failure_within=show_failure_within,
        verification_namespace=verification_namespace,
        load_manifests=worker.load,
    )
    return build_clusterversion(
        client,
        caches,
        ClusterVersionOptions(release=release, namespace=namespace, min_interval=0.0),
        retrieval=retrieval,
        syncworker=worker,
    )
