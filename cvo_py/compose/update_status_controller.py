"""What `update-status-controller` builds: the client, the metrics registry, the controller, the
leader elector (unless --no-leader-elect) and the metrics server."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cvo_py.runtime.leader import LeaseTimings

if TYPE_CHECKING:
    from cvo_py.runtime.process import Parts, Stoppable
    from cvo_py.runtime.promapi import PrometheusAPI
    from cvo_py.runtime.serving.options import ServingOptions

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Options:
    kubeconfig: str | None
    listen: str
    namespace: str
    leader_elect: bool
    timings: LeaseTimings
    identity: str | None
    resync: float
    serving: ServingOptions
    alerts: PrometheusAPI | None = None
    alerts_interval: float = 30.0


def build(options: Options) -> Parts:
    from prometheus_client import CollectorRegistry

    from cvo_py.runtime.kube import connect
    from cvo_py.runtime.leader import LeaderElector, default_identity
    from cvo_py.runtime.process import Parts
    from cvo_py.runtime.serving.certificates import ServingContext, watch_client_ca
    from cvo_py.runtime.serving.server import MetricsServer
    from status.updatestatus.api.names import LEASE
    from status.updatestatus.controller.sync import UpdateStatusController
    from status.updatestatus.insights import models

    client = connect(options.kubeconfig, user_agent="cvo-py/update-status-controller")
    client.server_version()  # fail fast, with one clear line, when the server is unreachable
    registry = CollectorRegistry()
    identity = options.identity or default_identity()
    controller = UpdateStatusController(
        client,
        options.namespace,
        resync=options.resync,
        registry=registry,
        identity=identity,
        alerts_api=options.alerts,
        alerts_interval=options.alerts_interval,
    )

    def serve(ready: Callable[[], bool]) -> Sequence[Stoppable]:
        if not options.listen:
            return ()
        serving = options.serving
        if not serving.https:
            # Allowed (local runs, tests), but in a cluster the endpoints belong behind TLS.
            server = MetricsServer(options.listen, registry, ready=ready).start()
            log.warning(
                "Serving /metrics, /healthz and /readyz over plain HTTP on %s: "
                "set --serving-cert-file and --serving-key-file to serve HTTPS",
                options.listen,
            )
            return (server,)
        # As `start`: over HTTPS only the cluster's Prometheus, by client certificate, reads /metrics.
        context = ServingContext(serving.cert_file, serving.key_file or None, serving.tls, client_auth=True)
        server = MetricsServer(options.listen, registry, ready=ready, serving=context)  # binds: may fail
        return (server.start(), watch_client_ca(client, context))

    models.build_schemas()
    return Parts(
        controllers=(controller,),
        # The leader is ready once its caches are listed.
        synced=controller.synced.is_set,
        serve=serve,
        elector=(
            LeaderElector(client, options.namespace, LEASE, identity=identity, timings=options.timings)
            if options.leader_elect
            else None
        ),
    )
