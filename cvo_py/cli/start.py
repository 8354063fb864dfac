"""`start`: apply the running release's payload, keep ClusterVersion status current, retrieve
requested payloads, report the available updates, serve CVO metrics.

Upstream's `start` flags that apply to cvo-py, with upstream's defaults and validation messages,
plus `--update-service` and `--use-dns-for-services` (as upstream) and `--promql-url` /
`--promql-ca-file` / `--promql-token-file` (the Prometheus/Thanos API conditional-update risks are
evaluated against, by default upstream's Thanos Querier URL; the same client and defaults as the
update status controller's `--alerts-*`). `--hypershift` is not offered (EXCLUDE_MANIFESTS
selects what a hosted control plane leaves out); `--enable-auto-update` is accepted (upstream's
Deployment passes `=false`) but only as false.
"""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING

from cvo_py.cli import prometheus_flags
from cvo_py.runtime import env

if TYPE_CHECKING:
    # The composition root imports everything `start` runs: only a valid command line loads it.
    from cvo_py.compose.start import Options

# What Go's strconv.ParseBool accepts (exactly these spellings), as upstream's boolean flags do.
GO_BOOLS = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}
# A node's name is a DNS subdomain (RFC 1123): the version Pod's spec.nodeName must be one.
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
# A cluster profile names the annotation include.release.openshift.io/<profile>: the name part of a
# qualified name.
_PROFILE = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from cvo_py.runtime.serving.options import add_serving_arguments

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
    """The options the flags and the environment give; a UsageError, or another ConfigError (a
    serving flag, a file it names), for the first value that cannot be used, in upstream's order."""
    from cvo_py.cli.common import UsageError
    from cvo_py.runtime.safeload import DocumentError
    from cvo_py.runtime.serving.options import check_serving_files_given, serving_options
    from payload.release import read_release_metadata, release_from_metadata

    _check_node_and_release(args)
    # Upstream's order: the serving files named, the capabilities, then everything about TLS.
    check_serving_files_given(args)
    always = _always_enabled(args)
    serving = serving_options(args, cert_required=True)
    profile = _cluster_profile()
    exclude = _exclude_manifests()
    interval = _reconcile_interval()
    if args.update_service:
        from cvo_py.runtime.urls import http_url_problem

        problem = http_url_problem(args.update_service)
        if problem:
            raise UsageError(f"--update-service: {problem}: want an http:// or https:// URL")
    promql = prometheus_flags.api(args, "promql")
    payload_dir = env.payload_override()
    try:
        metadata = read_release_metadata(payload_dir) or {}  # none: not running from a release image
    except DocumentError as exc:
        raise UsageError(f"cannot read the release metadata {exc}") from None
    from cvo_py.compose.start import Options

    return Options(
        kubeconfig=args.kubeconfig,
        listen=args.listen,
        release=release_from_metadata(args.release_image, metadata),
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
        cluster_profile=profile,
        exclude_manifests=exclude,
        reconcile_interval=interval,
    )


def _check_node_and_release(args: argparse.Namespace) -> None:
    """--node-name, --release-image and --enable-auto-update, as upstream checks them first."""
    from cvo_py.cli.common import UsageError
    from cvo_py.runtime.gotext.quoting import go_quote

    if not args.node_name:
        raise UsageError("node-name is required")
    if len(args.node_name) > 253 or not _DNS_SUBDOMAIN.fullmatch(args.node_name):
        raise UsageError(f"invalid --node-name {go_quote(args.node_name)}: want a node's name (a DNS subdomain)")
    if not args.release_image:
        raise UsageError("missing --release-image flag, it is required")
    if not args.release_image.isascii() or not all(c.isprintable() and not c.isspace() for c in args.release_image):
        raise UsageError(
            f"invalid --release-image {go_quote(args.release_image)}: want a pull spec (printable ASCII, no spaces)"
        )
    if args.enable_auto_update not in GO_BOOLS:
        raise UsageError(
            f"invalid argument {go_quote(args.enable_auto_update)} for \"--enable-auto-update\" flag: "
            "want true or false"
        )
    if GO_BOOLS[args.enable_auto_update]:
        raise UsageError("--enable-auto-update=true is not supported: cvo-py never starts an update itself")


def _always_enabled(args: argparse.Namespace) -> tuple[str, ...]:
    """--always-enable-capabilities: known capability names."""
    from cvo_py.cli.common import UsageError
    from cvo_py.runtime.serving.options import comma_separated
    from status.clusterversion import capabilities

    try:
        always = tuple(comma_separated(args.always_enable_capabilities, "capability"))
    except ValueError as exc:
        raise UsageError(f"--always-enable-capabilities: {exc}") from None
    unknown = capabilities.unknown_names(always)
    if unknown:
        raise UsageError(f"--always-enable-capabilities: unknown capabilities: [{' '.join(unknown)}]")
    return always


def _cluster_profile() -> str:
    """CLUSTER_PROFILE, when it can name a profile."""
    from cvo_py.cli.common import UsageError
    from cvo_py.runtime.gotext.quoting import go_quote

    profile = env.cluster_profile()
    if not _PROFILE.fullmatch(profile):
        raise UsageError(
            f"invalid CLUSTER_PROFILE {go_quote(profile)}: want a cluster profile name (letters, digits, '-', '_' "
            "and '.', at most 63, as in include.release.openshift.io/<profile>)"
        )
    return profile


def _exclude_manifests() -> str:
    """EXCLUDE_MANIFESTS, when it can name the identifier of an exclude annotation ("" for none)."""
    from cvo_py.cli.common import UsageError
    from cvo_py.runtime.gotext.quoting import go_quote

    exclude = env.exclude_manifests()
    if exclude and not _PROFILE.fullmatch(exclude):
        raise UsageError(
            f"invalid EXCLUDE_MANIFESTS {go_quote(exclude)}: want an identifier (letters, digits, '-', '_' and '.', "
            "at most 63, as in exclude.release.openshift.io/<identifier>)"
        )
    return exclude


def _reconcile_interval() -> float | None:
    """CVO_PY_RECONCILE_INTERVAL in seconds, from 0.1 to 3600 (None when unset: upstream's)."""
    from cvo_py.cli.common import UsageError
    from cvo_py.runtime.gotext.quoting import go_quote

    interval_text = env.reconcile_interval()
    if not interval_text:
        return None
    try:
        interval = float(interval_text)
    except ValueError:
        interval = float("nan")
    if not 0.1 <= interval <= 3600:  # NaN fails too
        raise UsageError(f"invalid CVO_PY_RECONCILE_INTERVAL {go_quote(interval_text)}: want seconds from 0.1 to 3600")
    return interval


def run(options: Options) -> int:
    from cvo_py.compose.start import build
    from cvo_py.runtime import process

    return process.run(build(options))
