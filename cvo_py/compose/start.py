"""What `start` builds: the client, the metrics registry, payload retrieval and its verifier, the
ClusterVersion status operator, the available-updates poller, the leader elector and the metrics
server (only the cluster's Prometheus, by client certificate, may read /metrics)."""

from __future__ import annotations

import dataclasses
import logging
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cvo_py.runtime.process import Parts, Stoppable
    from cvo_py.runtime.promapi import PrometheusAPI
    from cvo_py.runtime.serving.tls import TLSOptions
    from payload.release import Release

log = logging.getLogger(__name__)

# Seconds a thread runs before CPython lets a waiting one in (default 0.005).
SWITCH_INTERVAL = 0.0005


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


def build(options: Options) -> Parts:
    from prometheus_client import CollectorRegistry, ProcessCollector

    from cvo_py import __version__
    from cvo_py.runtime.kube import connect
    from cvo_py.runtime.leader import LeaderElector
    from cvo_py.runtime.process import Parts
    from cvo_py.runtime.serving.certificates import ServingContext, watch_client_ca
    from cvo_py.runtime.serving.server import MetricsServer
    from payload.acceptance import ReleaseAcceptance
    from payload.coordinator import Retriever
    from payload.metrics import PayloadMetrics
    from payload.release import MULTI
    from payload.retrieval import PayloadRetriever, PruneError, RetrieverOptions, prune_version_pods
    from payload.verify.config import DEFAULT_NAMESPACE as VERIFICATION_NAMESPACE
    from payload.verify.verifier import cluster_verifier
    from status.clusterversion.controller import StatusOperator, StatusOptions
    from status.clusterversion.featuregates import RELEASE_ARCHITECTURE_GATE
    from status.clusterversion.features import FeatureGateWatch, read_features
    from status.clusterversion.metrics import (
        ConditionTransitions,
        InstallerWatch,
        StatusCollector,
        payload_creation_time,
    )
    from status.clusterversion.validation import ACCEPT_RISKS_GATE
    from updateservice.client import fetch_graph
    from updateservice.cluster import cluster_transport
    from updateservice.clusterrisks import ClusterRisk
    from updateservice.metrics import UpdatesCollector
    from updateservice.poller import AvailableUpdatesPoller, PollerOptions, updates_status
    from updateservice.prometheus import promql_query, service_connect_host, service_of

    # The operator is I/O-bound and its latency is thread hand-offs (Pod watch → retrieval →
    # status loop): a thread woken by an event must not wait out CPython's default 5 ms switch
    # interval while another thread parses JSON.
    sys.setswitchinterval(SWITCH_INTERVAL)
    version = options.release.version or "unknown"
    log.info(
        "ClusterVersionOperator cvo-py v%s, running release %s (%s)",
        __version__,
        version,
        options.release.image,
    )
    client = connect(options.kubeconfig, user_agent="cvo-py/start")
    client.server_version()  # fail fast, with one clear line, when the server is unreachable

    features = read_features(client, options.release.version)
    accept_risks = ACCEPT_RISKS_GATE in features.features.gates
    release_architecture = RELEASE_ARCHITECTURE_GATE in features.features.gates
    restart = threading.Event()

    def features_changed(how: str) -> None:
        log.info("The cluster's features changed (%s): exiting, to be started again with them", how)
        restart.set()

    # As upstream: the gates are read once; a change ends the process, which its Deployment restarts.
    watches = (
        (FeatureGateWatch(client, options.release.version, features.features, features_changed),)
        if features.served
        else ()
    )
    promql = options.promql
    service = service_of(promql.url) if promql is not None and not options.use_dns_for_services else None
    if promql is not None and service is not None:
        # The host network's resolver cannot resolve Service names: connect to the cluster IP.
        promql = dataclasses.replace(promql, connect_host=service_connect_host(client, *service))

    registry = CollectorRegistry()
    # process_* as upstream's default registry has them (same names as Go's process collector).
    ProcessCollector(registry=registry)
    payload_metrics = PayloadMetrics(registry)
    retriever_options = RetrieverOptions(
        namespace=options.namespace,
        operator_name=options.name,
        node_name=options.node_name,
        release_image=options.release.image,
        local_payload_dir=options.local_payload_dir,
    )

    # One verifier for the process, so a digest verified once is not fetched and checked again.
    verifier = cluster_verifier(client, VERIFICATION_NAMESPACE, retriever_options.operator_name, payload_metrics)

    def make_retriever(report: Callable[[ReleaseAcceptance], None]) -> Retriever:
        return PayloadRetriever(client, retriever_options, report, verifier=verifier, metrics=payload_metrics)

    operator = StatusOperator(
        client,
        StatusOptions(
            name=options.name,
            release=options.release,
            always_enabled=options.always_enable_capabilities,
            create_missing=True,
            namespace=options.namespace,
            verification_namespace=VERIFICATION_NAMESPACE,
            accept_risks=accept_risks,
            release_architecture=release_architecture,
        ),
        retriever_factory=make_retriever,
        available_updates=lambda spec: updates_status(poller.state(), spec),
        # With the gate, the risks behind Upgradeable are merged into the updates to a higher minor or major.
        upgradeable_risks=(
            (lambda found: poller.set_upgradeable_risks([ClusterRisk(r.name, r.message, r.url) for r in found]))
            if accept_risks else None
        ),
    )
    user_agent = f"ClusterVersionOperator/{version}"
    # Available updates on a thread of their own: a slow or stalled update service never holds up
    # payload retrieval or the status loop, which only read what the poller last found.
    poller = AvailableUpdatesPoller(
        lambda: operator.cv_informer.get(options.name) if operator.cv_informer.has_synced else None,
        fetch=lambda url, transport, total: fetch_graph(
            url, user_agent=user_agent, transport=transport, total_timeout=total
        ),
        transport=lambda: cluster_transport(client),
        query=promql_query(promql) if promql is not None else None,
        on_change=operator.loop.poke,
        # With the gate, firing alerts are in-cluster risks of every update (through the same client).
        alerts=promql.alerts if promql is not None and accept_risks else None,
        options=PollerOptions(
            user_agent=user_agent,
            update_service=options.update_service,
            accept_risks=accept_risks,
            running_multi=options.release.architecture == MULTI,
        ),
    )
    operator.cv_informer.add_handler(lambda _type, _obj, _old: poller.poke())
    installer = InstallerWatch(client)
    transitions = ConditionTransitions()
    operator.co_informer.add_handler(transitions.observe)
    registry.register(
        StatusCollector(
            operator.observed,
            lambda: operator.running,
            options.always_enable_capabilities,
            options.update_service,
            payload_created=payload_creation_time(options.local_payload_dir),
            installer=installer.state,
            transitions=transitions.counts,
        )
    )
    registry.register(
        UpdatesCollector(
            poller.state, lambda: operator.cv_informer.get(options.name), lambda: poller.options.accept_risks
        )
    )

    def serve(ready: Callable[[], bool]) -> Sequence[Stoppable]:
        if not options.listen:
            return ()
        # As upstream: only the cluster's Prometheus, by client certificate, may read /metrics.
        serving = ServingContext(options.serving_cert_file, options.serving_key_file, options.tls, client_auth=True)
        server = MetricsServer(options.listen, registry, ready=ready, serving=serving)  # binds: may fail
        return (server.start(), watch_client_ca(client, serving))

    def prune_earlier_pods() -> None:
        # Version Pods left by an earlier run would compete with ours: remove them first.
        try:
            prune_version_pods(client, retriever_options, deadline=time.monotonic() + 30.0)
        except PruneError as exc:
            log.warning("Could not prune version Pods left by an earlier run: %s", exc)

    return Parts(
        # The poller starts with the operator when leading, and stops before it.
        controllers=(operator, poller, installer),
        # The leader is ready once it has synced status at least once.
        synced=operator.synced.is_set,
        serve=serve,
        elector=LeaderElector(client, options.namespace, options.name),
        before_leading=prune_earlier_pods,
        farewell=f"Graceful shutdown complete for {version}.",
        watches=watches,
        restart=restart,
        freeze_startup=True,  # a kubelet write must reach ReleaseAccepted within tens of ms
    )
