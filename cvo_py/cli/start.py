"""`start`: keep ClusterVersion status current, retrieve requested payloads, report the available
updates, serve CVO metrics.

Upstream's `start` flags that apply to cvo-py, with upstream's defaults and validation messages,
plus `--update-service` (as upstream) and `--promql-url` / `--promql-ca-file` /
`--promql-token-file` (the Prometheus/Thanos API conditional-update risks are evaluated against;
the same client and defaults as the update status controller's `--alerts-*`). cvo-py applies no
manifests, so `--hypershift` is not offered; `--enable-auto-update` is accepted (upstream's
Deployment passes `=false`) but only as false.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cvo_py import env
from cvo_py.cli import prometheus_flags

if TYPE_CHECKING:
    from cvo_py.promapi import PrometheusAPI
    from cvo_py.serving.tls import TLSOptions


# What Go's strconv.ParseBool accepts, as upstream's boolean flags do.
GO_BOOLS = {"1": True, "t": True, "true": True, "0": False, "f": False, "false": False}

log = logging.getLogger(__name__)

# Seconds a thread runs before CPython lets a waiting one in (default 0.005).
SWITCH_INTERVAL = 0.0005


@dataclass(frozen=True)
class Options:
    kubeconfig: str | None
    listen: str
    release_image: str
    release_version: str
    release_url: str
    release_channels: tuple[str, ...]
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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from cvo_py.serving.options import add_serving_arguments

    parser.add_argument("--release-image", default="", help="pull spec of the release this operator runs (required)")
    parser.add_argument(
        "--node-name",
        default=env.node_name(),
        help="name of the node this operator runs on (required; default $NODE_NAME)",
    )
    add_serving_arguments(parser, cert_required=True)
    parser.add_argument(
        "--enable-auto-update",
        nargs="?",
        const="true",
        default="false",
        metavar="BOOL",
        help="accepted for upstream's Deployment arguments; only false: cvo-py never starts an update itself",
    )
    parser.add_argument(
        "--update-service",
        default="",
        metavar="URL",
        help="the update service to ask for available updates instead of spec.upstream (default: spec.upstream, "
        "else the public OpenShift update service)",
    )
    prometheus_flags.add_arguments(parser, "promql", "that conditional-update risks are evaluated against")
    parser.add_argument(
        "--always-enable-capabilities",
        action="append",
        default=[],
        metavar="NAME[,NAME...]",
        help="capabilities to keep enabled whatever the spec says (comma-separated; may be repeated)",
    )


def validate(args: argparse.Namespace) -> Options:
    from cvo_py.cli.common import UsageError
    from cvo_py.serving.options import (
        ListenAddressError,
        ServingConfigError,
        check_serving_files_given,
        serving_options,
    )
    from status.clusterversion import capabilities
    from status.clusterversion.controller import read_release_metadata, release_from_metadata

    if not args.node_name:
        raise UsageError("node-name is required")
    if not args.release_image:
        raise UsageError("missing --release-image flag, it is required")
    auto_update = str(args.enable_auto_update).lower()
    if auto_update not in GO_BOOLS:
        raise UsageError(
            f'invalid argument "{args.enable_auto_update}" for "--enable-auto-update" flag: want true or false'
        )
    if GO_BOOLS[auto_update]:
        raise UsageError("--enable-auto-update=true is not supported: cvo-py never starts an update itself")
    # Upstream's order: the serving files named, the capabilities, then everything about TLS.
    try:
        check_serving_files_given(args)
    except ServingConfigError as exc:
        raise UsageError(str(exc)) from None
    always = tuple(n.strip() for value in args.always_enable_capabilities for n in value.split(",") if n.strip())
    unknown = capabilities.unknown_names(always)
    if unknown:
        raise UsageError(f"--always-enable-capabilities: unknown capabilities: [{' '.join(unknown)}]")
    try:
        serving = serving_options(args, cert_required=True)
    except (ListenAddressError, ServingConfigError) as exc:
        raise UsageError(str(exc)) from None
    if args.update_service:
        from updates.retrieval import url_problem

        problem = url_problem(args.update_service)
        if problem or "://" not in args.update_service:
            raise UsageError(f"--update-service: {problem or 'want an http:// or https:// URL'}")
    promql = prometheus_flags.api(args, "promql")
    payload_dir = env.payload_override()
    try:
        release = release_from_metadata(args.release_image, read_release_metadata(payload_dir))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return Options(
        kubeconfig=args.kubeconfig,
        listen=args.listen,
        release_image=args.release_image,
        release_version=release.version,
        release_url=release.url,
        release_channels=release.channels,
        node_name=args.node_name,
        serving_cert_file=serving.cert_file,
        serving_key_file=serving.key_file,
        tls=serving.tls,
        always_enable_capabilities=always,
        name=env.operator_name(),
        namespace=env.namespace(),
        local_payload_dir=payload_dir,
        update_service=args.update_service,
        promql=promql,
    )


def run(options: Options) -> int:
    from prometheus_client import CollectorRegistry

    from cvo_py import __version__
    from cvo_py.cli.common import stop_on_signals
    from cvo_py.kube import connect
    from cvo_py.leader import LeaderElector
    from cvo_py.serving.certificates import ServingContext, watch_client_ca
    from cvo_py.serving.server import MetricsServer
    from payload.acceptance import ReleaseAcceptance
    from payload.coordinator import Retriever
    from payload.metrics import PayloadMetrics
    from payload.retrieval import PayloadRetriever, PruneError, RetrieverOptions
    from payload.verify.verifier import cluster_verifier
    from status.clusterversion.controller import StatusOperator, StatusOptions
    from status.clusterversion.metrics import StatusCollector
    from updates.client import fetch_graph
    from updates.cluster import cluster_transport
    from updates.metrics import UpdatesCollector
    from updates.poller import AvailableUpdatesPoller, PollerOptions, updates_status

    # The operator is I/O-bound and its latency is thread hand-offs (Pod watch → retrieval →
    # status loop): a thread woken by an event must not wait out CPython's default 5 ms switch
    # interval while another thread parses JSON.
    sys.setswitchinterval(SWITCH_INTERVAL)
    version = options.release_version or "unknown"
    log.info(
        "ClusterVersionOperator cvo-py v%s, running release %s (%s)",
        __version__,
        version,
        options.release_image,
    )
    client = connect(options.kubeconfig, user_agent="cvo-py/start")
    client.server_version()  # fail fast, with one clear line, when the server is unreachable

    registry = CollectorRegistry()
    payload_metrics = PayloadMetrics(registry)
    retriever_options = RetrieverOptions(
        namespace=options.namespace,
        operator_name=options.name,
        node_name=options.node_name,
        release_image=options.release_image,
        local_payload_dir=options.local_payload_dir,
    )

    # One verifier for the process, so a digest verified once is not fetched and checked again.
    verifier = cluster_verifier(
        client, retriever_options.verification_namespace, retriever_options.operator_name, payload_metrics
    )

    def make_retriever(report: Callable[[ReleaseAcceptance], None]) -> Retriever:
        return PayloadRetriever(client, retriever_options, report, verifier=verifier, metrics=payload_metrics)

    operator = StatusOperator(
        client,
        StatusOptions(
            name=options.name,
            release_image=options.release_image,
            release_version=options.release_version,
            release_url=options.release_url,
            release_channels=options.release_channels,
            always_enabled=options.always_enable_capabilities,
            create_missing=True,
            namespace=options.namespace,
            verification_namespace=retriever_options.verification_namespace,
        ),
        retriever_factory=make_retriever,
        available_updates=lambda spec: updates_status(poller.state(), spec),
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
        query=_promql_query(options.promql) if options.promql is not None else None,
        on_change=operator.loop.poke,
        options=PollerOptions(user_agent=user_agent, update_service=options.update_service),
    )
    operator.cv_informer.add_handler(lambda _type, _obj, _old: poller.poke())
    registry.register(StatusCollector(operator.snapshot, lambda: operator.running, options.always_enable_capabilities))
    registry.register(UpdatesCollector(poller.state, lambda: operator.cv_informer.get(options.name)))
    elector = LeaderElector(client, options.namespace, options.name)

    def ready() -> bool:
        # A standby is healthy; the leader is ready once it has synced status at least once.
        return not elector.leading.is_set() or operator.synced.is_set()

    server = client_ca = None
    if options.listen:
        # As upstream: only the cluster's Prometheus, by client certificate, may read /metrics.
        serving = ServingContext(options.serving_cert_file, options.serving_key_file, options.tls, client_auth=True)
        client_ca = watch_client_ca(client, serving)
        server = MetricsServer(options.listen, registry, ready=ready, serving=serving).start()
    stop = stop_on_signals()
    code = 0
    try:

        def on_started_leading() -> None:
            # Version Pods left by an earlier run would compete with ours: remove them first.
            try:
                PayloadRetriever(client, retriever_options, lambda _: None, metrics=payload_metrics).prune(
                    deadline=time.monotonic() + 30.0
                )
            except PruneError as exc:
                log.warning("Could not prune version Pods left by an earlier run: %s", exc)
            if not elector.stopping:  # a shutdown during the prune: do not start what is being stopped
                operator.start()
                poller.start()

        elector.start(on_started_leading)
        while not stop.wait(0.5):
            if elector.lost.is_set():
                code = 1  # as upstream: a leader that lost its Lease exits and is restarted
                break
    finally:
        elector.stop()  # first: a start-up still under way must not start the operator after this
        poller.stop()
        operator.stop()
        elector.release()
        if server is not None:
            server.stop()
        if client_ca is not None:
            client_ca.stop()
    log.info("Graceful shutdown complete for %s.", version)
    return code


def _promql_query(api: PrometheusAPI) -> Callable[[str], bool]:
    """A risk's PromQL rule → match or not, through the shared Prometheus client; one-line
    evaluation errors (reported in the Recommended condition, never hidden)."""
    from cvo_py.promapi import APIError
    from updates.recommend import EvaluationError, sample_verdict

    def query(expr: str) -> bool:
        try:
            return sample_verdict(api.query(expr))
        except APIError as exc:
            raise EvaluationError(str(exc)) from None

    return query
