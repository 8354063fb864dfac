"""`start`: keep ClusterVersion status current, retrieve requested payloads, report the available
updates, serve CVO metrics.

Upstream's `start` flags that apply to cvo-py, with upstream's defaults and validation messages,
plus `--update-service` and `--use-dns-for-services` (as upstream) and `--promql-url` /
`--promql-ca-file` / `--promql-token-file` (the Prometheus/Thanos API conditional-update risks are
evaluated against, by default upstream's Thanos Querier URL; the same client and defaults as the
update status controller's `--alerts-*`). cvo-py applies no
manifests, so `--hypershift` is not offered; `--enable-auto-update` is accepted (upstream's
Deployment passes `=false`) but only as false.
"""

from __future__ import annotations

import argparse

from cvo_py import env
from cvo_py.cli import prometheus_flags
from cvo_py.compose.start import Options

# What Go's strconv.ParseBool accepts, as upstream's boolean flags do.
GO_BOOLS = {"1": True, "t": True, "true": True, "0": False, "f": False, "false": False}


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
    prometheus_flags.add_arguments(
        parser,
        "promql",
        "that conditional-update risks are evaluated against",
        default_url=prometheus_flags.CVO_DEFAULT_URL,
    )
    parser.add_argument(
        "--use-dns-for-services",
        action="store_true",
        help="resolve the --promql-url host with DNS; by default a host naming a Service "
        "(NAME.NAMESPACE.svc[.cluster.local]) is reached at the Service's cluster IP, read from the API "
        "before each query, as the node's resolver of the host network cannot resolve it",
    )
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
        use_dns_for_services=args.use_dns_for_services,
    )


def run(options: Options) -> int:
    from cvo_py import process
    from cvo_py.compose.start import build

    return process.run(build(options))
