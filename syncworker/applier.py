"""Applying one task of a pass to the cluster, as upstream's resource builder applies it: the I/O
edge around the decisions of `syncworker.merge`, `health` and `operators`.

    applier = Applier(client)                         # client: user agent `user_agent(version)`
    error = applier.apply(manifest, mode, owner_uid, operators.get)   # one try: None or a TaskError
    applier.precreate(manifest, owner_uid)            # a ClusterOperator, before its node's tasks
    applier.pending_deletions()                       # requested, still present (for Upgradeable)

One try of a task (`apply`), in upstream's order:

1. the manifest with the ClusterVersion owner reference (`merge.with_owner`);
2. a ClusterOperator is never written but while Reconciling (its metadata, from the informer's
   copy); its check reads the same copy (`operators.check`): never a GET;
3. `release.openshift.io/delete: "true"`: in Updating passes a GET, then a DELETE once (recorded
   in memory, as upstream records it); other passes send nothing;
4. the mutations, with what they read, only when the manifest asks for it: the Proxy `cluster`
   (inject-proxy), the Infrastructure `cluster` (the CVO's own Deployment), the APIServer
   `cluster` (inject-tls), each a GET where upstream makes one;
5. where the kind lives: upstream's typed kinds at their REST paths; any other kind through
   discovery (cached; forgotten every minute and on a kind it does not know; the namespace
   dropped for a cluster-scoped kind); a kind the server does not serve is
   UpdatePayloadResourceTypeMissing;
6. GET, then `merge.plan`: POST when absent, PUT of the whole merged object only when something
   changed, nothing otherwise (never a PATCH); after each write the applier keeps the
   fingerprint `plan` uses to send nothing while the object stays as that write left it;
7. `health.check` on what the write returned, or on the live object when nothing was sent.

Every failure is a `TaskError` with upstream's reason (`errors.from_api_error`,
`from_missing_mapping`, `from_other`); nothing raises. `PayloadErrors` counts failed tries per
version, for `cluster_operator_payload_errors`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from cvo_py.runtime import klog
from cvo_py.runtime.gotext.quoting import escape, go_quote
from cvo_py.runtime.kube import CLUSTEROPERATORS, PROXIES, ApiError, KubeClient, Resource, ServerUnreachable
from syncworker import errors, health, merge, operators
from syncworker.errors import TaskError, TaskRef
from syncworker.manifest import Manifest
from syncworker.merge import Action, ApplyProblem
from syncworker.merge.metadata import annotations_of
from syncworker.merge.mutations import INJECT_PROXY, INJECT_TLS, PROXY_KINDS, is_cvo_deployment, tls_settings
from syncworker.modes import Mode

log = logging.getLogger(__name__)

JSON = dict[str, Any]
OperatorCache = Callable[[str], JSON | None]

USER_AGENT = "cluster-version-operator"
INFRASTRUCTURES = Resource("config.openshift.io/v1", "Infrastructure", "infrastructures", False)
APISERVERS = Resource("config.openshift.io/v1", "APIServer", "apiservers", False)
CLUSTER = "cluster"  # the name of the cluster's Proxy, Infrastructure and APIServer
DISCOVERY_TTL = 60.0


def user_agent(version: str) -> str:
    """The user agent of the applier's requests, as upstream's (`cluster-version-operator/<v>`)."""
    return f"{USER_AGENT}/{version}"


def _typed(api_version: str, kind: str, plural: str, namespaced: bool) -> tuple[tuple[str, str], Resource]:
    return (api_version, kind), Resource(api_version, kind, plural, namespaced)


# Upstream's typed kinds (merge.TYPED) at their REST paths: reached without discovery.
TYPED_RESOURCES: dict[tuple[str, str], Resource] = dict(
    [
        _typed(
            "admissionregistration.k8s.io/v1",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
            False,
        ),
        _typed("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", False),
        _typed("apps/v1", "Deployment", "deployments", True),
        _typed("apps/v1", "DaemonSet", "daemonsets", True),
        _typed("batch/v1", "Job", "jobs", True),
        _typed("batch/v1", "CronJob", "cronjobs", True),
        _typed("v1", "ConfigMap", "configmaps", True),
        _typed("v1", "Namespace", "namespaces", False),
        _typed("v1", "Service", "services", True),
        _typed("v1", "ServiceAccount", "serviceaccounts", True),
        _typed("image.openshift.io/v1", "ImageStream", "imagestreams", True),
        _typed("operators.coreos.com/v1", "OperatorGroup", "operatorgroups", True),
        _typed("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", False),
        _typed("rbac.authorization.k8s.io/v1", "Role", "roles", True),
        _typed("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", False),
        _typed("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", True),
        _typed("security.openshift.io/v1", "SecurityContextConstraints", "securitycontextconstraints", False),
    ]
)


def task_ref(manifest: Manifest) -> TaskRef:
    """The task of `manifest`, as errors and logs name it."""
    return TaskRef(manifest.kind, manifest.namespace, manifest.name, manifest.task, manifest.total)


def api_error(task: TaskRef, exc: ApiError) -> TaskError:
    """An API server's refusal as upstream's task error (a body that is not a Status: unexpected)."""
    unexpected = exc.status_object.get("kind") != "Status"
    return errors.from_api_error(task, exc.status, exc.reason, unexpected=unexpected, detail=exc.message)


class Discovery:
    """Where the server serves a kind, from its discovery documents (`/api/v1`,
    `/apis/<group>/<version>`), cached: forgotten every `ttl` seconds, and on a kind not found
    (then asked once more), as upstream's deferred REST mapper."""

    def __init__(self, client: KubeClient, *, ttl: float = DISCOVERY_TTL, clock: Callable[[], float] = time.monotonic):
        self.client = client
        self.ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._served: dict[str, dict[str, Resource]] = {}  # group/version → kind → resource
        self._since = clock()

    def resource(self, api_version: str, kind: str) -> Resource | None:
        """The kind's resource; None when the server does not serve it. Raises ApiError and
        ServerUnreachable when discovery itself fails."""
        with self._lock:
            if self._clock() - self._since >= self.ttl:
                self._forget()
        found = self._lookup(api_version, kind)
        if found is None:
            with self._lock:
                self._forget()
            found = self._lookup(api_version, kind)
        return found

    def _forget(self) -> None:
        self._served = {}
        self._since = self._clock()

    def _lookup(self, api_version: str, kind: str) -> Resource | None:
        with self._lock:
            kinds = self._served.get(api_version)
        if kinds is None:
            kinds = self._fetch(api_version)
            with self._lock:
                self._served[api_version] = kinds
        return kinds.get(kind)

    def _fetch(self, api_version: str) -> dict[str, Resource]:
        if api_version.count("/") > 1 or not api_version.strip("/"):
            return {}
        path = "/api/v1" if api_version == "v1" else f"/apis/{quote(api_version, safe='/')}"
        try:
            document = self.client.request("GET", path)
        except ApiError as exc:
            if exc.is_not_found():
                return {}
            raise
        listed = document.get("resources") if isinstance(document, dict) else None
        kinds: dict[str, Resource] = {}
        for entry in listed if isinstance(listed, list) else ():
            if not isinstance(entry, dict):
                continue
            name, entry_kind = entry.get("name"), entry.get("kind")
            if isinstance(name, str) and isinstance(entry_kind, str) and "/" not in name:
                kinds.setdefault(entry_kind, Resource(api_version, entry_kind, name, bool(entry.get("namespaced"))))
        return kinds


class PayloadErrors:
    """Failed tries of tasks, by release version (`cluster_operator_payload_errors{version}`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def add(self, version: str) -> None:
        with self._lock:
            self._counts[version] = self._counts.get(version, 0) + 1

    def counts(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)


@dataclass(frozen=True)
class Deletion:
    """A manifest's object the applier was asked to remove: `name` as Upgradeable names it
    (`deployment "ns/n"` for a typed kind, `Secret "ns/n"` for any other), and whether it is gone."""

    name: str
    gone: bool


class Applier:
    """Applies tasks to the cluster through `client`; safe to use from a pass's worker threads."""

    def __init__(self, client: KubeClient, *, discovery: Discovery | None = None) -> None:
        self.client = client
        self.discovery = discovery or Discovery(client)
        self.payload_errors = PayloadErrors()
        self._lock = threading.Lock()
        self._applied: dict[tuple[str, str, str, str], str] = {}  # object → fingerprint after our last write
        self._deletions: dict[tuple[str, str, str, str], Deletion] = {}

    # -- a task ------------------------------------------------------------------------------------

    def apply(self, manifest: Manifest, mode: Mode, owner_uid: str, operators_cache: OperatorCache) -> TaskError | None:
        """One try of the task of `manifest` in a pass in `mode` (module docstring): None when it is
        done, else its error."""
        task = task_ref(manifest)
        try:
            required = merge.with_owner(manifest.obj, owner_uid)
            if operators.is_cluster_operator(required):
                return self._operator(manifest, required, mode, task, operators_cache)
            if merge.delete_requested(required):
                return self._delete(manifest, mode, task)
            required = self._mutated(required)
            resource = self._resource(manifest)
            if resource is None:
                return _missing(manifest, task)
            return self._apply(manifest, resource, required, mode, task)
        except ApiError as exc:
            return api_error(task, exc)
        except (ApplyProblem, ServerUnreachable) as exc:
            return errors.from_other(task, str(exc))

    def _resource(self, manifest: Manifest) -> Resource | None:
        api_version = str(manifest.obj.get("apiVersion"))
        typed = TYPED_RESOURCES.get((api_version, manifest.kind))
        return typed if typed is not None else self.discovery.resource(api_version, manifest.kind)

    def _apply(
        self, manifest: Manifest, resource: Resource, required: JSON, mode: Mode, task: TaskRef
    ) -> TaskError | None:
        namespace = manifest.namespace if resource.namespaced else None
        if not resource.namespaced and "namespace" in required["metadata"]:
            # a cluster-scoped object has none: the server would drop it, and the merge would see
            # it differ on every pass
            required = {**required, "metadata": {k: v for k, v in required["metadata"].items() if k != "namespace"}}
        key = (resource.api_version, resource.kind, namespace or "", manifest.name)
        live = self._get(resource, manifest.name, namespace)
        with self._lock:
            applied = self._applied.get(key)
        decision = merge.plan(required, live, applied)
        if decision.action is Action.CREATE:
            checked = self.client.create(resource, decision.body, namespace)
        elif decision.action is Action.UPDATE:
            klog.v(klog.NORMAL).info(
                "Updating %s %s due to diff: %s",
                escape(resource.kind),
                escape(f"{namespace}/{manifest.name}" if namespace else manifest.name),
                escape(", ".join(decision.changes)),
            )
            checked = self.client.replace(resource, decision.body)
        else:
            if not decision.check_health:
                return None
            return health.check(decision.body, mode, task)
        with self._lock:
            self._applied[key] = merge.fingerprint(required, checked)
        return health.check(checked, mode, task)

    def _get(self, resource: Resource, name: str, namespace: str | None) -> JSON | None:
        try:
            return self.client.get(resource, name, namespace)
        except ApiError as exc:
            if exc.is_not_found():
                return None
            raise

    # -- ClusterOperators --------------------------------------------------------------------------

    def _operator(
        self, manifest: Manifest, required: JSON, mode: Mode, task: TaskRef, operators_cache: OperatorCache
    ) -> TaskError | None:
        live = operators_cache(manifest.name)
        if mode is Mode.RECONCILING and live is not None:
            result = operators.reconcile_metadata(required, live)
            if result.changed:
                klog.v(klog.NORMAL).info(
                    "Updating ClusterOperator %s due to diff: %s",
                    escape(manifest.name),
                    escape(", ".join(result.changes)),
                )
                live = self.client.replace(CLUSTEROPERATORS, result.merged)
        return operators.check(manifest.obj, live, mode, task)

    def precreate(self, manifest: Manifest, owner_uid: str) -> None:
        """Create the ClusterOperator of `manifest` if it does not exist yet, with only its related
        objects in status, so the operator can report on it before its task runs. That it exists
        (409) is fine; any other problem is logged, never fatal: the task's check will say."""
        task = task_ref(manifest)
        try:
            required = merge.with_owner(manifest.obj, owner_uid)
            # Upstream sends its Go type, whose `spec` is never omitted: the API requires one.
            required.setdefault("spec", {})
            try:
                created = self.client.create(CLUSTEROPERATORS, required)
            except ApiError as exc:
                if not exc.is_already_exists():
                    raise
            else:
                try:
                    self.client.replace_status(CLUSTEROPERATORS, operators.precreated_status(manifest.obj, created))
                except ApiError as exc:
                    if not exc.is_conflict():
                        raise
        except Exception as exc:  # an answer that is not an object included: only logged, as upstream's
            why = str(exc) or type(exc).__name__
            klog.v(klog.NORMAL).info("Unable to precreate resource %s: %s", task, escape(why))
            return
        klog.v(klog.NORMAL).info("Precreated resource %s", task)

    # -- the delete annotation ---------------------------------------------------------------------

    def _delete(self, manifest: Manifest, mode: Mode, task: TaskRef) -> TaskError | None:
        """An object the release removes: in Updating passes, GET, and DELETE once if present;
        recorded either way. Other passes send nothing."""
        if mode is not Mode.UPDATING:
            return None
        resource = self._resource(manifest)
        if resource is None:
            return _missing(manifest, task)
        namespace = manifest.namespace if resource.namespaced else None
        key = (resource.api_version, resource.kind, namespace or "", manifest.name)
        where = f"{namespace}/{manifest.name}" if namespace else manifest.name
        typed = (resource.api_version, resource.kind) in TYPED_RESOURCES
        name = f"{resource.kind.lower() if typed else resource.kind} {go_quote(where)}"
        live = self._get(resource, manifest.name, namespace)
        with self._lock:
            recorded = self._deletions.get(key)
        if live is None:
            if recorded is None:
                log.info(
                    "%s not found. It either has already been removed or it has never been installed on this cluster.",
                    escape(name),
                )
            elif not recorded.gone:
                log.info("Delete of %s completed.", escape(name))
            with self._lock:
                self._deletions[key] = Deletion(name, gone=True)
            return None
        if recorded is None:
            self.client.delete(resource, manifest.name, namespace)
            log.info("Delete requested for %s.", escape(name))
            with self._lock:
                self._deletions[key] = Deletion(name, gone=False)
        return None

    def pending_deletions(self) -> list[str]:
        """The objects whose removal was requested and that still existed when last looked at."""
        with self._lock:
            return sorted(d.name for d in self._deletions.values() if not d.gone)

    # -- mutations ---------------------------------------------------------------------------------

    def _mutated(self, required: JSON) -> JSON:
        """The manifest with the cluster's proxy, API server address and TLS profile where it asks
        for them, each read only then."""
        kind = (str(required.get("apiVersion")), str(required.get("kind")))
        annotations = annotations_of(required)
        if kind in PROXY_KINDS:
            if is_cvo_deployment(required):
                infrastructure = self._cluster_object(INFRASTRUCTURES)
                url = _status_string(infrastructure, "apiServerInternalURL") if infrastructure is not None else None
                required = merge.cvo_service_env(required, url or None)
            if annotations.get(INJECT_PROXY):
                proxy = self._cluster_object(PROXIES)
                required = merge.inject_proxy(
                    required,
                    _status_string(proxy, "httpProxy"),
                    _status_string(proxy, "httpsProxy"),
                    _status_string(proxy, "noProxy"),
                )
        elif kind == ("v1", "ConfigMap") and annotations.get(INJECT_TLS) == "true":
            required = merge.inject_tls(required, tls_settings(self._cluster_object(APISERVERS)))
        return required

    def _cluster_object(self, resource: Resource) -> JSON | None:
        """The cluster's configuration object of `resource`; None when there is none (or no such
        API): upstream then leaves the manifest as it is."""
        return self._get(resource, CLUSTER, None)


def _missing(manifest: Manifest, task: TaskRef) -> TaskError:
    api_version = str(manifest.obj.get("apiVersion"))
    detail = f"no matches for kind {go_quote(manifest.kind)} in version {go_quote(api_version)}"
    return errors.from_missing_mapping(task, detail)


def _status_string(obj: JSON | None, key: str) -> str:
    status = obj.get("status") if obj is not None else None
    value = status.get(key) if isinstance(status, dict) else None
    return value if isinstance(value, str) else ""
