"""Helpers for the ClusterVersion status tests: objects, ClusterOperators, the audit log, waiting."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cvo_py.runtime.kube import CLUSTEROPERATORS, CLUSTERVERSIONS, CRDS, FEATUREGATES, ApiError, KubeClient
from payload.release import Release
from status.clusterversion import capabilities, upgradeable
from status.clusterversion.progress import WorkerState
from syncworker.modes import Mode
from syncworker.passes import Report
from testkit.harness.cluster import put_configmap
from testkit.harness.wait import wait_until

if TYPE_CHECKING:
    from cvo_py.compose.start import ClusterVersionSide
    from cvo_py.compose.start_syncworker import SyncWorkerSide

IMG_4141 = "quay.io/openshift-release-dev/ocp-release@sha256:" + "1" * 64
IMG_4142 = "quay.io/openshift-release-dev/ocp-release@sha256:" + "2" * 64
IMG_41310 = "quay.io/openshift-release-dev/ocp-release@sha256:" + "3" * 64


def create_cv(kube: KubeClient, spec: dict[str, Any], status: dict[str, Any] | None) -> dict[str, Any]:
    created = kube.create(CLUSTERVERSIONS, {"metadata": {"name": "version"}, "spec": spec})
    if status is not None:
        created["status"] = status
        created = kube.replace_status(CLUSTERVERSIONS, created)
    return created


def condition(cv: dict[str, Any], type_: str) -> dict[str, Any] | None:
    for c in (cv.get("status") or {}).get("conditions") or []:
        if c.get("type") == type_:
            return dict(c)
    return None


def progress_count(cv: dict[str, Any], total: int) -> int:
    """Operators done, from Progressing's `Working towards X: N of M done`; `total` once it says
    the update completed (`Cluster version is X`); else 0."""
    message = str((condition(cv, "Progressing") or {}).get("message") or "")
    match = re.search(r": (\d+) of (\d+) done", message)
    return int(match.group(1)) if match else total if message.startswith("Cluster version is") else 0


def completed(cv: dict[str, Any], version: str) -> bool:
    """Whether the newest history entry is `version`, Completed."""
    history = (cv.get("status") or {}).get("history") or [{}]
    return bool(history[0].get("version") == version and history[0].get("state") == "Completed")


def history_entry(version: str, image: str, state: str, started: str, completed: str | None) -> dict[str, Any]:
    return {
        "state": state,
        "startedTime": started,
        "completionTime": completed,
        "version": version,
        "image": image,
        "verified": False,
    }


def status_414(enabled: list[str] | None = None) -> dict[str, Any]:
    """What a 4.14 CVO leaves behind: 4.14 capability names, history, conditions."""
    caps = capabilities.compute(None, "4.14.1")
    return {
        "desired": {"version": "4.14.1", "image": IMG_4141},
        "history": [history_entry("4.14.1", IMG_4141, "Completed", "2024-01-01T00:00:00Z", "2024-01-01T01:00:00Z")],
        "observedGeneration": 1,
        "versionHash": "abc=",
        "availableUpdates": None,
        "capabilities": {
            "enabledCapabilities": enabled if enabled is not None else list(caps.enabled),
            "knownCapabilities": list(caps.known),
        },
        "conditions": [
            {
                "type": "Available",
                "status": "True",
                "lastTransitionTime": "2024-01-01T01:00:00Z",
                "message": "Done applying 4.14.1",
            },
            {"type": "Failing", "status": "False", "lastTransitionTime": "2024-01-01T00:00:00Z"},
            {
                "type": "Progressing",
                "status": "False",
                "lastTransitionTime": "2024-01-01T01:00:00Z",
                "message": "Cluster version is 4.14.1",
            },
            {"type": "Upgradeable", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"},
        ],
    }


RELEASE_ANNOTATIONS = {"include.release.openshift.io/self-managed-high-availability": "true"}


def worker_state(
    release: Release, *, done: int = 0, total: int = 10, completed: bool = False, mode: Mode = Mode.UPDATING
) -> WorkerState:
    """What a sync worker applying `release` reported last, for the status computation's tests:
    `done` of `total` manifests, or a pass that `completed`."""
    from datetime import UTC, datetime

    at = datetime(2024, 5, 1, tzinfo=UTC)
    report = Report(
        release, "hash-of-a-payload=", 1, mode, 0, total, total if completed else done, at,
        completed=completed, completed_passes=int(completed), started=at,
    )
    return WorkerState(report)


def release_co(
    name: str,
    version: str,
    available: str = "True",
    degraded: str = "False",
    progressing: str = "False",
    since: str = "2024-01-01T00:00:00Z",
) -> dict[str, Any]:
    """A ClusterOperator of the release reporting `version`, its conditions last changed at `since`."""
    return {
        "metadata": {"name": name, "annotations": dict(RELEASE_ANNOTATIONS)},
        "spec": {},
        "status": {
            "versions": [{"name": "operator", "version": version}],
            "conditions": [
                {"type": "Available", "status": available, "lastTransitionTime": since, "reason": "AsExpected"},
                {"type": "Degraded", "status": degraded, "lastTransitionTime": since, "reason": "AsExpected"},
                {"type": "Progressing", "status": progressing, "lastTransitionTime": since},
            ],
        },
    }


def put_co(kube: KubeClient, name: str, version: str, available: str = "True", degraded: str = "False") -> None:
    """Create or update a release ClusterOperator reporting `version` (as its operator would)."""
    wanted = release_co(name, version, available, degraded)
    body = {"metadata": wanted["metadata"], "spec": {}}
    try:
        obj = kube.create(CLUSTEROPERATORS, body)
    except ApiError as exc:
        if not exc.is_already_exists():
            raise
        obj = kube.get(CLUSTEROPERATORS, name)
    for _ in range(10):  # as an operator does: read again when someone else wrote it meanwhile
        obj["status"] = wanted["status"]
        try:
            kube.replace_status(CLUSTEROPERATORS, obj)
            return
        except ApiError as exc:
            if not exc.is_conflict():
                raise
        obj = kube.get(CLUSTEROPERATORS, name)
    raise AssertionError(f"ClusterOperator {name}: 10 conflicts in a row")


def put_admin_acks(kube: KubeClient, gates: dict[str, str], acks: dict[str, str]) -> None:
    """The admin-ack gates (`openshift-config-managed/admin-gates`) and acks
    (`openshift-config/admin-acks`) as given, created or replaced (as the CVO's manifests and the
    admin leave them on a real cluster)."""
    for (namespace, name), data in ((upgradeable.ADMIN_GATES, gates), (upgradeable.ADMIN_ACKS, acks)):
        put_configmap(kube, namespace, name, data)


class AuditLog:
    """Reads the API server's audit log from a starting offset: what was asked and answered."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.offset = self.path.stat().st_size if self.path.exists() else 0

    def status_writes(self, user_agent: str, at_least: int = 0) -> list[tuple[str, int]]:
        """(verb, HTTP code) of every ClusterVersion /status write by `user_agent`, in order, once
        there are `at_least` of them: the API server writes its audit log behind its answers."""
        if at_least:
            wait_until(
                lambda: len(self._status_writes(user_agent)) >= at_least, what=f"{at_least} audited status writes"
            )
        return self._status_writes(user_agent)

    def _status_writes(self, user_agent: str) -> list[tuple[str, int]]:
        out: list[tuple[str, int]] = []
        with self.path.open("rb") as f:
            f.seek(self.offset)
            for line in f:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                ref = event.get("objectRef") or {}
                if (
                    event.get("stage") == "ResponseComplete"
                    and event.get("userAgent", "").startswith(user_agent)
                    and ref.get("resource") == "clusterversions"
                    and ref.get("subresource") == "status"
                    and event.get("verb") in ("update", "patch")
                ):
                    out.append((event["verb"], int((event.get("responseStatus") or {}).get("code") or 0)))
        return out


# A 4.14 cluster installed with baselineCapabilitySet v4.11 (which 4.14 expands with MachineAPI)
# plus Build, DeploymentConfig and ImageRegistry.
ENABLED_414 = sorted(
    ["baremetal", "marketplace", "openshift-samples", "MachineAPI", "Build", "DeploymentConfig", "ImageRegistry"]
)


def status_rejected(kube: KubeClient, enabled: list[str]) -> bool:
    """Whether the API server now rejects (422) a status with these enabled capabilities (dry run;
    the list is reordered so that even a ratcheting API server validates every item)."""
    cv = kube.get(CLUSTERVERSIONS, "version")
    cv["status"].setdefault("capabilities", {})["enabledCapabilities"] = sorted(enabled, reverse=True)
    path = CLUSTERVERSIONS.path(name="version", subresource="status")
    try:
        kube.request("PUT", path, query={"dryRun": "All"}, body=cv)
    except ApiError as exc:
        if exc.status == 422 and "status.capabilities.enabledCapabilities" in exc.message:
            return True
        raise
    return False


def roll_back_to_413(kube: KubeClient, crds: Any, enabled_414: list[str] = ENABLED_414) -> None:
    """That 4.14 cluster, rolled back to 4.13.10 with the 4.13 CRD back in place, and an admin
    change to the enabled list so that even a ratcheting API server validates every item."""
    import uuid

    crds.install_clusterversion("current")
    status = status_414(enabled_414)
    status["desired"] = {"version": "4.13.10", "image": IMG_41310}
    status["history"].insert(0, history_entry("4.13.10", IMG_41310, "Partial", "2024-02-01T00:00:00Z", None))
    create_cv(kube, {"clusterID": str(uuid.uuid4()), "capabilities": {"baselineCapabilitySet": "v4.11"}}, status)
    put_co(kube, "etcd", "4.13.10")
    put_co(kube, "dns", "4.14.1")
    # The 4.13 payload re-applies its CRD: its enum knows none of the 4.14 names.
    crds.install_clusterversion("4.13")
    # The API server swaps a CRD's validation asynchronously: start from a state where it rejects.
    wait_until(lambda: status_rejected(kube, enabled_414), what="the 4.13 schema in effect")
    # The admin enables Console. The enabled list changes, so even an API server that ratchets
    # unchanged values (Kubernetes >= 1.33) validates every item of this atomic list again.
    kube.patch(
        CLUSTERVERSIONS,
        "version",
        {"spec": {"capabilities": {"baselineCapabilitySet": "v4.11", "additionalEnabledCapabilities": ["Console"]}}},
    )


# -- the ClusterVersion CRD's schema of conditional updates, as openshift/api has it ---------------

_CONDITION_REASON = "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
_CONDITION_TYPE = (
    "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)


def upstream_update_schema(crd: dict[str, Any]) -> dict[str, Any]:
    """`crd` (the test ClusterVersion CRD, which accepts any risk) with openshift/api's schema of
    `status.conditionalUpdates`: at most 500; each with 1–200 risks, a map keyed by name, every
    field required and non-empty, a URL; Recommended conditions as metav1.Condition checks them."""
    out = copy.deepcopy(crd)
    for version in out["spec"]["versions"]:
        status = version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]
        updates = status["conditionalUpdates"]
        updates["maxItems"] = 500
        item = updates["items"]["properties"]
        item["risks"] = {
            "type": "array",
            "minItems": 1,
            "maxItems": 200,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "required": ["matchingRules", "message", "name", "url"],
                "properties": {
                    "matchingRules": {
                        "type": "array",
                        "minItems": 1,
                        "x-kubernetes-list-type": "atomic",
                        "items": {
                            "type": "object",
                            "required": ["type"],
                            "properties": {
                                "type": {"type": "string", "enum": ["Always", "PromQL"]},
                                "promql": {
                                    "type": "object",
                                    "required": ["promql"],
                                    "properties": {"promql": {"type": "string"}},
                                },
                            },
                        },
                    },
                    "message": {"type": "string", "minLength": 1},
                    "name": {"type": "string", "minLength": 1},
                    "url": {"type": "string", "minLength": 1, "format": "uri"},
                },
            },
        }
        conditions = item["conditions"]
        conditions["x-kubernetes-list-type"] = "map"
        conditions["x-kubernetes-list-map-keys"] = ["type"]
        fields = conditions["items"]["properties"]
        fields["type"].update(maxLength=316, pattern=_CONDITION_TYPE)
        fields["status"]["enum"] = ["True", "False", "Unknown"]
        fields["reason"].update(minLength=1, maxLength=1024, pattern=_CONDITION_REASON)
        fields["message"]["maxLength"] = 32768
        conditions["items"]["required"] = ["lastTransitionTime", "message", "reason", "status", "type"]
    return out


def featuregate_api_exists(kube: KubeClient) -> bool:
    """Whether the FeatureGate API (config.openshift.io) is served (its CRD exists)."""
    try:
        kube.get(CRDS, "featuregates.config.openshift.io")
    except ApiError as exc:
        if exc.is_not_found():
            return False
        raise
    return True


def enable_feature_gates(kube: KubeClient, version: str, *gates: str) -> None:
    """The cluster's FeatureGate (TechPreviewNoUpgrade) enabling `gates` for `version`, as the
    cluster's config operator publishes it in status.featureGates."""
    spec = {"featureSet": "TechPreviewNoUpgrade"}
    created = kube.create(FEATUREGATES, {"metadata": {"name": "cluster"}, "spec": spec})
    enabled = [{"name": gate} for gate in gates]
    created["status"] = {"featureGates": [{"version": version, "enabled": enabled, "disabled": []}]}
    kube.replace_status(FEATUREGATES, created)



def clusterversion_side(
    client: KubeClient, release: Release, scripted: ScriptedWorker | None = None, **options: Any
) -> ClusterVersionSide:
    """The ClusterVersion side as `start` composes it (caches, writer, controller, and a sync worker
    whose running payload holds nothing to apply: each pass of it completes at once; or the
    `scripted` one the test plays), without payload retrieval, running `release`, with these
    `ClusterVersionOptions`; not started."""
    from cvo_py.compose.start import build_caches, build_clusterversion
    from status.clusterversion.controller import ClusterVersionOptions

    settings = ClusterVersionOptions(release=release, **options)
    caches = build_caches(client, settings.name)
    worker = scripted.side(client) if scripted is not None else nothing_to_apply(client, release, caches)
    return build_clusterversion(client, caches, settings, syncworker=worker)


def retrieving_side(
    client: KubeClient,
    namespace: str,
    payloads: Path,
    release: Release,
    scripted: ScriptedWorker | None = None,
    **settings: Any,
) -> ClusterVersionSide:
    """As `clusterversion_side`, with payload retrieval as `start` composes it: version Pods in
    `namespace`, the payloads already on the node in `payloads` (`testkit.harness.payload.write_payload`),
    no signature verification, a refused or failed target retried only after a minute; not started."""
    from cvo_py.compose.start import build_caches, build_clusterversion, build_retrieval
    from payload.metrics import PayloadMetrics
    from status.clusterversion.controller import ClusterVersionOptions
    from testkit.harness.payload import options

    config = ClusterVersionOptions(release=release, namespace=namespace, **settings)
    caches = build_caches(client, config.name)
    worker = scripted.side(client) if scripted is not None else nothing_to_apply(client, release, caches)
    retrieval = build_retrieval(
        client,
        options(namespace, payloads, release_image=release.image),
        None,
        PayloadMetrics(),
        caches.clusterversion,
        retry_after=60.0,
        verification_namespace=None,
        load_manifests=worker.load,
    )
    return build_clusterversion(client, caches, config, retrieval=retrieval, syncworker=worker)


NO_PAYLOAD_ROOT = "/nonexistent/cvo-py-tests/no-release-image"


def nothing_to_apply(client: KubeClient, release: Release, caches: Any) -> SyncWorkerSide:
    """A sync worker for `release` whose payload root is not a release image's: M = 0, so the
    status side sees its passes complete at once, as on a cluster where the release is applied."""
    from cvo_py.compose.start_syncworker import build_syncworker
    from syncworker.passes import Timing
    from syncworker.select import Selection

    return build_syncworker(
        client, release, NO_PAYLOAD_ROOT, Selection(), caches.clusteroperators, timing=Timing(interval=5.0)
    )


class ScriptedWorker:
    """A sync worker the test plays, for tests of the status side: it applies nothing, keeps the
    work it is handed, and reports what the test says (`report`), at once (no throttle)."""

    def __init__(self, release: Release) -> None:
        from syncworker.channel import ReportChannel

        self.release = release
        self.channel = ReportChannel(interval=0.0)
        self.works: list[Any] = []

    def update(self, work: Any, mode: Any) -> None:
        self.works.append((work, mode))

    def start(self) -> ScriptedWorker:
        return self

    def stop(self) -> None:
        pass

    def report(
        self,
        done: int,
        total: int,
        *,
        completed: bool = False,
        release: Release | None = None,
        mode: Mode = Mode.UPDATING,
        generation: int = 1,
    ) -> None:
        """A report of a pass of `release` (the running one by default): `done` of `total`."""
        from datetime import UTC, datetime

        at = datetime.now(UTC)
        self.channel.publish(
            Report(
                release or self.release, "scripted-hash", generation, mode, 0, total, total if completed else done, at,
                completed=completed, completed_passes=int(completed), started=at,
            )
        )

    def side(self, client: KubeClient) -> SyncWorkerSide:
        """As `build_clusterversion` takes a sync worker."""
        from cvo_py.compose.start_syncworker import SyncWorkerSide
        from syncworker.applier import Applier
        from syncworker.load import Payload, version_hash
        from syncworker.select import Selection

        local = Payload(NO_PAYLOAD_ROOT, self.release, {}, "", (), version_hash(()))
        return SyncWorkerSide(self, Applier(client), self.channel, local, Selection(), lambda _d, _i: local)
