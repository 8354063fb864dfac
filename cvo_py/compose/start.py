"""What `start` builds, one builder per subsystem: the client, the cluster's features, the
ClusterVersion caches, the release verifier, payload retrieval (retriever, coordinator, and the
watch that retries a failed verification), the sync worker (`cvo_py.compose.start_syncworker`:
the running release's payload, the applier, the loop of passes and the channel of its reports),
the ClusterVersion controller (writer, Event recorder), the available-updates poller, the
metrics, the leader elector and the metrics server (only the cluster's Prometheus, by client
certificate, may read /metrics).

The ClusterVersion controller computes status from immutable inputs the other builders provide:
the caches, the payload-retrieval snapshot (`payload.channel`), the sync worker's latest report
(`syncworker.channel`), what the poller last found; after each write it hands the worker its work.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, ProcessCollector

from cvo_py import __version__
from cvo_py.compose.start_syncworker import SyncWorkerSide, build_syncworker, load_selection
from cvo_py.runtime.env import DEFAULT_CLUSTER_PROFILE
from cvo_py.runtime.informer import Informer
from cvo_py.runtime.kube import CLUSTEROPERATORS, CLUSTERVERSIONS, CONFIGMAPS, CRDS, KubeClient, connect
from cvo_py.runtime.leader import LeaderElector
from cvo_py.runtime.process import Controller, Parts, Stoppable
from cvo_py.runtime.promapi import PrometheusAPI
from cvo_py.runtime.serving.certificates import ServingContext, watch_client_ca
from cvo_py.runtime.serving.server import MetricsServer
from cvo_py.runtime.serving.tls import TLSOptions
from payload.acceptance import ReleaseAcceptance
from payload.coordinator import RetrievalCoordinator, Retriever
from payload.metrics import PayloadMetrics
from payload.release import MULTI, Release
from payload.retrieval import (
    ManifestLoader,
    PayloadRetriever,
    PruneError,
    RetrieverOptions,
    prune_version_pods,
)
from payload.reverify import retry_on_verification_changes, slim_configmap
from payload.verify.config import DEFAULT_NAMESPACE as VERIFICATION_NAMESPACE
from payload.verify.errors import Verifier
from payload.verify.verifier import cluster_verifier
from status.clusterversion import crdpolicy, upgradeable
from status.clusterversion.caches import (
    ADMIN_CONFIGMAPS,
    CLUSTERVERSION_CRD,
    ClusterVersionCaches,
    slim_clusteroperator,
)
from status.clusterversion.controller import ClusterVersionController, ClusterVersionOptions
from status.clusterversion.events import EventRecorder
from status.clusterversion.featuregates import RELEASE_ARCHITECTURE_GATE, Features
from status.clusterversion.features import FeatureGateWatch, read_features
from status.clusterversion.metrics import (
    ConditionTransitions,
    InstallerWatch,
    StatusCollector,
    payload_creation_time,
)
from status.clusterversion.validation import ACCEPT_RISKS_GATE
from status.clusterversion.workermetrics import SyncWorkerCollector
from status.clusterversion.writer import ClusterVersionStatusWriter
from syncworker.channel import STATUS_INTERVAL
from syncworker.passes import Timing
from updateservice.client import fetch_graph
from updateservice.cluster import cluster_transport
from updateservice.clusterrisks import ClusterRisk
from updateservice.metrics import UpdatesCollector
from updateservice.poller import AvailableUpdatesPoller, PollerOptions, updates_status
from updateservice.prometheus import promql_query, service_connect_host, service_of

log = logging.getLogger(__name__)

# Seconds a thread runs before CPython lets a waiting one in (default 0.005).
SWITCH_INTERVAL = 0.0005
# Upstream's bound on a graceful shutdown: two minutes.
SHUTDOWN_WITHIN = 120.0


@dataclass(frozen=True)
class Options:
    kubeconfig: str | None
    listen: str
    release: Release  # the running release, as --release-image and the payload's metadata say
    node_name: str
    serving_cert_file: str
    serving_key_file: str
    tls: TLSOptions
    always_enable_capabilities: tuple[str, ...]
    name: str
    namespace: str
    local_payload_dir: str
    update_service: str = ""
    promql: PrometheusAPI | None = None
    use_dns_for_services: bool = False
    # $CLUSTER_PROFILE, as upstream: which of the release's manifests apply to this cluster (for
    # the sync worker, which selects them).
    cluster_profile: str = DEFAULT_CLUSTER_PROFILE
    # $EXCLUDE_MANIFESTS: manifests annotated exclude.release.openshift.io/<this>: "true" are not loaded.
    exclude_manifests: str = ""
    # The sync worker's minimum reconcile interval (None: upstream's 2 minutes × rand[1, 2)).
    reconcile_interval: float | None = None
    # Status syncs the worker's reports cause: one per this many seconds, two at once (edges at once).
    status_interval: float = STATUS_INTERVAL
    # The last status sync at shutdown ends within this many seconds.
    final_sync_timeout: float = 30.0


@dataclass(frozen=True)
class PayloadRetrieval:
    """Payload retrieval as `start` runs it: the coordinator, and the cache of the verification
    ConfigMaps whose changes retry a failed verification at once."""

    coordinator: RetrievalCoordinator
    verification_configmaps: Informer | None = None

    def start(self) -> PayloadRetrieval:
        if self.verification_configmaps is not None:
            self.verification_configmaps.start()
        self.coordinator.start()
        return self

    def stop(self) -> None:
        self.coordinator.stop()  # a retrieval in flight is cancelled, its Pod deleted
        if self.verification_configmaps is not None:
            self.verification_configmaps.stop()


@dataclass(frozen=True)
class ClusterVersionSide:
    """What runs for ClusterVersion, started in this order and stopped in the reverse: the
    caches, payload retrieval, the sync worker, the controller. Stopping cuts the worker's pass
    short (a cancellation is no failure), then the controller writes status once more, within
    `final_sync_timeout`."""

    caches: ClusterVersionCaches
    controller: ClusterVersionController
    retrieval: PayloadRetrieval | None = None
    syncworker: SyncWorkerSide | None = None
    final_sync_timeout: float = 30.0

    def start(self) -> ClusterVersionSide:
        self.caches.informers().start()
        if self.retrieval is not None:
            self.retrieval.start()
        if self.syncworker is not None:
            self.syncworker.worker.start()
        self.controller.start()
        return self

    def stop(self) -> None:
        """Nothing of it runs, writes or logs after this returns."""
        if self.syncworker is not None:
            self.syncworker.worker.stop()
        self.controller.stop()
        if self.syncworker is not None:
            self.controller.final_sync(self.final_sync_timeout)
        if self.retrieval is not None:
            self.retrieval.stop()
        self.caches.informers().stop()


def build_caches(client: KubeClient, name: str, *, admin_acks: bool = True) -> ClusterVersionCaches:
    """The ClusterVersion `name`, the ClusterOperators (slimmed), the ClusterVersion CRD (slimmed)
    and, with `admin_acks` (upstream always reads them), the admin-ack ConfigMaps."""
    return ClusterVersionCaches(
        clusterversion=Informer(client, CLUSTERVERSIONS, field_selector=f"metadata.name={name}"),
        clusteroperators=Informer(client, CLUSTEROPERATORS, transform=slim_clusteroperator),
        crd=Informer(client, CRDS, field_selector=f"metadata.name={CLUSTERVERSION_CRD}", transform=crdpolicy.slim_crd),
        admin={
            (namespace, configmap): Informer(
                client, CONFIGMAPS, namespace=namespace, field_selector=f"metadata.name={configmap}"
            )
            for namespace, configmap in (ADMIN_CONFIGMAPS if admin_acks else ())
        },
    )


def build_verifier(client: KubeClient, operator_name: str, metrics: PayloadMetrics) -> Verifier:
    """One verifier for the process, so a digest verified once is not fetched and checked again."""
    return cluster_verifier(client, VERIFICATION_NAMESPACE, operator_name, metrics)


def build_retrieval(
    client: KubeClient,
    options: RetrieverOptions,
    verifier: Verifier | None,
    metrics: PayloadMetrics,
    clusterversions: Informer,
    *,
    retry_after: float = 60.0,
    show_failure_within: float = 2.0,
    verification_namespace: str | None = VERIFICATION_NAMESPACE,
    load_manifests: ManifestLoader | None = None,
) -> PayloadRetrieval:
    """The coordinator of retrievals of the release images requested, each by a PayloadRetriever
    that verifies with `verifier` first (None: no verification); a failed one is retried every
    `retry_after` at most, and, with `verification_namespace`, as soon as a ConfigMap there or
    spec.signatureStores changes. A failure waits up to `show_failure_within` seconds for the
    status that shows it before its Pod is deleted."""

    def make_retriever(report: Callable[[ReleaseAcceptance], None]) -> Retriever:
        return PayloadRetriever(
            client, options, report, verifier=verifier, metrics=metrics, load_manifests=load_manifests
        )

    coordinator = RetrievalCoordinator(
        make_retriever,
        retry_after=retry_after,
        local_image=options.release_image,
        show_failure_within=show_failure_within,
    )
    if verification_namespace is None:
        return PayloadRetrieval(coordinator)
    configmaps = Informer(client, CONFIGMAPS, namespace=verification_namespace, transform=slim_configmap)
    retry_on_verification_changes(coordinator, configmaps, clusterversions)
    return PayloadRetrieval(coordinator, configmaps)


def build_clusterversion(
    client: KubeClient,
    caches: ClusterVersionCaches,
    options: ClusterVersionOptions,
    *,
    retrieval: PayloadRetrieval | None = None,
    available_updates: Callable[[Mapping[str, Any]], Mapping[str, Any] | None] | None = None,
    upgradeable_risks: Callable[[Sequence[upgradeable.Risk]], None] | None = None,
    syncworker: SyncWorkerSide | None = None,
    final_sync_timeout: float = 30.0,
) -> ClusterVersionSide:
    """The ClusterVersion controller with its writer and, when it has retrievals or updates to
    tell of, its Event recorder; with `syncworker`, the worker it reads and hands work to."""
    writer = ClusterVersionStatusWriter(client, options.name)
    recorder = (
        EventRecorder(client, options.namespace)
        if retrieval is not None or available_updates is not None or syncworker is not None
        else None
    )
    controller = ClusterVersionController(
        client,
        caches,
        writer,
        options,
        retrieval=retrieval.coordinator if retrieval is not None else None,
        recorder=recorder,
        available_updates=available_updates,
        upgradeable_risks=upgradeable_risks,
        worker=syncworker.link() if syncworker is not None else None,
    )
    return ClusterVersionSide(caches, controller, retrieval, syncworker, final_sync_timeout)


def build_features(client: KubeClient, version: str) -> tuple[Features, Sequence[Controller], threading.Event]:
    """The feature set and gates enabled, the watch that ends the process when they change (as
    upstream: read once; the Deployment starts it again), and the event it sets."""
    features = read_features(client, version)
    restart = threading.Event()

    def features_changed(how: str) -> None:
        log.info("The cluster's features changed (%s): exiting, to be started again with them", how)
        restart.set()

    watches = (FeatureGateWatch(client, version, features.features, features_changed),) if features.served else ()
    return features.features, watches, restart


def build_updates(
    client: KubeClient,
    options: Options,
    caches: ClusterVersionCaches,
    on_change: Callable[[], None],
    accept_risks: bool,
) -> AvailableUpdatesPoller:
    """Available updates on a thread of their own: a slow or stalled update service never holds up
    payload retrieval or the status loop, which only read what the poller last found."""
    promql = options.promql
    service = service_of(promql.url) if promql is not None and not options.use_dns_for_services else None
    if promql is not None and service is not None:
        # The host network's resolver cannot resolve Service names: connect to the cluster IP.
        promql = dataclasses.replace(promql, connect_host=service_connect_host(client, *service))
    user_agent = f"ClusterVersionOperator/{options.release.version or 'unknown'}"
    clusterversions = caches.clusterversion
    poller = AvailableUpdatesPoller(
        lambda: clusterversions.get(options.name) if clusterversions.has_synced else None,
        fetch=lambda url, transport, total: fetch_graph(
            url, user_agent=user_agent, transport=transport, total_timeout=total
        ),
        transport=lambda: cluster_transport(client),
        query=promql_query(promql) if promql is not None else None,
        on_change=on_change,
        # With the gate, firing alerts are in-cluster risks of every update (through the same client).
        alerts=promql.alerts if promql is not None and accept_risks else None,
        options=PollerOptions(
            user_agent=user_agent,
            update_service=options.update_service,
            accept_risks=accept_risks,
            running_multi=options.release.architecture == MULTI,
        ),
    )
    clusterversions.add_handler(lambda _type, _obj, _old: poller.poke())
    return poller


def build_metrics(
    registry: CollectorRegistry,
    client: KubeClient,
    options: Options,
    side: ClusterVersionSide,
    poller: AvailableUpdatesPoller,
) -> InstallerWatch:
    """ClusterVersion's and the updates' metrics in `registry` (computed at scrape time from the
    caches), and the installer watch they read."""
    installer = InstallerWatch(client)
    transitions = ConditionTransitions()
    side.caches.clusteroperators.add_handler(transitions.observe)
    registry.register(
        StatusCollector(
            side.controller.observed,
            lambda: options.release,
            options.always_enable_capabilities,
            options.update_service,
            payload_created=payload_creation_time(options.local_payload_dir),
            installer=installer.state,
            transitions=transitions.counts,
        )
    )
    clusterversions = side.caches.clusterversion
    registry.register(
        UpdatesCollector(poller.state, lambda: clusterversions.get(options.name), lambda: poller.options.accept_risks)
    )
    if side.syncworker is not None:
        registry.register(
            SyncWorkerCollector(side.syncworker.channel.payload_counts, side.syncworker.applier.payload_errors.counts)
        )
    return installer


def build_server(
    client: KubeClient, options: Options, registry: CollectorRegistry
) -> Callable[[Callable[[], bool]], Sequence[Stoppable]]:
    """What serves /metrics, /healthz and /readyz (nothing without --listen)."""

    def serve(ready: Callable[[], bool]) -> Sequence[Stoppable]:
        if not options.listen:
            return ()
        # As upstream: only the cluster's Prometheus, by client certificate, may read /metrics.
        serving = ServingContext(options.serving_cert_file, options.serving_key_file, options.tls, client_auth=True)
        server = MetricsServer(options.listen, registry, ready=ready, serving=serving)  # binds: may fail
        return (server.start(), watch_client_ca(client, serving))

    return serve


def build_pruner(client: KubeClient, options: RetrieverOptions) -> Callable[[], None]:
    """Version Pods left by an earlier run would compete with ours: remove them before leading."""

    def prune_earlier_pods() -> None:
        try:
            prune_version_pods(client, options, deadline=time.monotonic() + 30.0)
        except PruneError as exc:
            log.warning("Could not prune version Pods left by an earlier run: %s", exc)

    return prune_earlier_pods


def clusterversion_options(options: Options, gates: frozenset[str]) -> ClusterVersionOptions:
    """What the ClusterVersion side is told of the command line and the feature gates."""
    return ClusterVersionOptions(
        name=options.name,
        release=options.release,
        always_enabled=options.always_enable_capabilities,
        create_missing=True,
        namespace=options.namespace,
        accept_risks=ACCEPT_RISKS_GATE in gates,
        release_architecture=RELEASE_ARCHITECTURE_GATE in gates,
        feature_gates=gates,
    )


def build_side(
    client: KubeClient,
    options: Options,
    features: Features,
    payload_metrics: PayloadMetrics,
    retriever_options: RetrieverOptions,
) -> tuple[ClusterVersionSide, AvailableUpdatesPoller]:
    """The ClusterVersion side (caches, the sync worker, retrieval, the controller) and the
    available-updates poller the controller reads."""
    gates = features.gates
    accept_risks = ACCEPT_RISKS_GATE in gates
    caches = build_caches(client, options.name)
    timing = Timing(interval=options.reconcile_interval) if options.reconcile_interval else None
    syncworker = build_syncworker(
        client,
        options.release,
        options.local_payload_dir,
        load_selection(options.cluster_profile, options.exclude_manifests, features),
        caches.clusteroperators,
        timing=timing,
        status_interval=options.status_interval,
    )
    verifier = build_verifier(client, options.name, payload_metrics)
    retrieval = build_retrieval(
        client, retriever_options, verifier, payload_metrics, caches.clusterversion, load_manifests=syncworker.load
    )
    side = build_clusterversion(
        client,
        caches,
        clusterversion_options(options, gates),
        retrieval=retrieval,
        # The poller is built next (it pokes the controller): these read it once it exists.
        available_updates=lambda spec: updates_status(poller.state(), spec),
        # With the gate, the risks behind Upgradeable are merged into the updates to a higher minor or major.
        upgradeable_risks=(
            (lambda found: poller.set_upgradeable_risks([ClusterRisk(r.name, r.message, r.url) for r in found]))
            if accept_risks
            else None
        ),
        syncworker=syncworker,
        final_sync_timeout=options.final_sync_timeout,
    )
    poller = build_updates(client, options, caches, side.controller.loop.poke, accept_risks)
    return side, poller


def build(options: Options) -> Parts:
    # The operator is I/O-bound and its latency is thread hand-offs (Pod watch → retrieval →
    # status loop): a thread woken by an event must not wait out CPython's default 5 ms switch
    # interval while another thread parses JSON.
    sys.setswitchinterval(SWITCH_INTERVAL)
    version = options.release.version or "unknown"
    log.info("ClusterVersionOperator cvo-py v%s, running release %s (%s)", __version__, version, options.release.image)
    client = connect(options.kubeconfig, user_agent="cvo-py/start")
    client.server_version()  # fail fast, with one clear line, when the server is unreachable
    features, watches, restart = build_features(client, options.release.version)

    registry = CollectorRegistry()
    ProcessCollector(registry=registry)  # process_* as upstream's default registry has them
    payload_metrics = PayloadMetrics(registry)
    retriever_options = RetrieverOptions(
        namespace=options.namespace, operator_name=options.name, node_name=options.node_name,
        release_image=options.release.image, local_payload_dir=options.local_payload_dir,
    )
    side, poller = build_side(client, options, features, payload_metrics, retriever_options)
    installer = build_metrics(registry, client, options, side, poller)
    return Parts(
        # The poller starts with the ClusterVersion side when leading, and stops before it.
        controllers=(side, poller, installer),
        # The leader is ready once it has synced status at least once.
        synced=side.controller.synced.is_set,
        serve=build_server(client, options, registry),
        elector=LeaderElector(client, options.namespace, options.name),
        before_leading=build_pruner(client, retriever_options),
        farewell=f"Graceful shutdown complete for {version}.",
        watches=watches,
        restart=restart,
        freeze_startup=True,  # a kubelet write must reach ReleaseAccepted within tens of ms
        shutdown_within=SHUTDOWN_WITHIN,
    )
