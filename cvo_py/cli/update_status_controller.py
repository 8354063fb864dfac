"""`update-status-controller`: publish update status insights in the ConfigMap API."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable

from cvo_py.cli import prometheus_flags
from cvo_py.compose.update_status_controller import Options
from cvo_py.runtime.gotext.quoting import go_quote
from cvo_py.runtime.leader import LeaseTimings
from status.updatestatus.api.names import LEASE
from status.updatestatus.api.names import NAMESPACE as DEFAULT_NAMESPACE

SA_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
NAMESPACE_FILE_MAX_BYTES = 4096


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from cvo_py.runtime.serving.options import add_serving_arguments

    parser.add_argument(
        "--namespace",
        default=None,
        help="namespace of the ConfigMap API and the leader Lease (auto-detected when run in a pod; "
        f"default {DEFAULT_NAMESPACE})",
    )
    parser.add_argument(
        "--leader-elect",
        default=True,
        action=argparse.BooleanOptionalAction,
        help=f"run only while holding the Lease {LEASE} (default true)",
    )
    defaults = LeaseTimings()
    parser.add_argument(
        "--leader-elect-lease-duration",
        type=_seconds_from(MIN_LEASE_DURATION),
        default=defaults.lease_duration,
        metavar="DURATION",
        help=f"how long a standby waits before taking an unrenewed Lease (default {defaults.lease_duration:g}s, "
        f"at least {MIN_LEASE_DURATION:g}s)",
    )
    parser.add_argument(
        "--leader-elect-renew-deadline",
        type=_seconds_from(MIN_RENEW_DEADLINE),
        default=defaults.renew_deadline,
        metavar="DURATION",
        help=f"how long the leader keeps trying to renew before it stops (default {defaults.renew_deadline:g}s, "
        f"at least {MIN_RENEW_DEADLINE:g}s)",
    )
    parser.add_argument(
        "--leader-elect-retry-period",
        type=_seconds_from(MIN_RETRY_PERIOD),
        default=defaults.retry_period,
        metavar="DURATION",
        help=f"interval between Lease attempts (default {defaults.retry_period:g}s, at least {MIN_RETRY_PERIOD:g}s)",
    )
    parser.add_argument(
        "--resync",
        type=_seconds_from(MIN_RESYNC),
        default=30.0,
        metavar="DURATION",
        help=f"recompute at least this often, for time-based thresholds (default 30s, at least {MIN_RESYNC:g}s)",
    )
    prometheus_flags.add_arguments(parser, "alerts", "whose firing alerts become Update Health insights")
    parser.add_argument(
        "--alerts-interval",
        type=_seconds_from(MIN_ALERTS_INTERVAL),
        default=30.0,
        metavar="DURATION",
        help=f"how often to read the alerts (default 30s, at least {MIN_ALERTS_INTERVAL:g}s)",
    )
    add_serving_arguments(parser, cert_required=False)


# The longest duration a flag takes (a day): longer Lease or resync periods are typing mistakes.
MAX_SECONDS = 86400.0
# The shortest: below these, a typo (1e-300) would spin the controller on the API server or the
# alerts API (hundreds of requests a second) rather than configure it.
MIN_LEASE_DURATION = 2.0
MIN_RENEW_DEADLINE = 1.0
MIN_RETRY_PERIOD = 0.5
MIN_RESYNC = 1.0
MIN_ALERTS_INTERVAL = 1.0


def _seconds_from(minimum: float) -> Callable[[str], float]:
    """The flag's parser: seconds (`15`, `15s`, `0.5`) or a Go duration (`2m17s`), from `minimum`
    up to a day."""

    def parse(text: str) -> float:
        value = _seconds(text)
        if not minimum <= value <= MAX_SECONDS:
            raise argparse.ArgumentTypeError(
                f"invalid duration {go_quote(text)}: want at least {minimum:g}s and at most {MAX_SECONDS:g}s"
            )
        return value

    return parse


_SECONDS = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?s?", re.ASCII)


def _seconds(text: str) -> float:
    """Seconds as a number (ASCII digits, optionally `s`), else a Go duration; ArgumentTypeError otherwise."""
    from cvo_py.runtime.gotext.durations import SECOND, parse_duration

    try:
        if _SECONDS.fullmatch(text):
            return float(text.removesuffix("s"))
        return parse_duration(text) / SECOND
    except (ValueError, OverflowError):  # TimeFormatError is a ValueError
        raise argparse.ArgumentTypeError(
            f"invalid duration {go_quote(text)}: want seconds (15 or 15s) or a Go duration (2m17s)"
        ) from None


def detect_namespace(explicit: str | None, sa_file: str = SA_NAMESPACE_FILE) -> str:
    """`explicit`, else the Pod's namespace (its service account's namespace file), else the default."""
    from cvo_py.cli.common import UsageError
    from cvo_py.runtime import safeload

    if explicit is not None:
        return explicit  # an explicit empty value is refused by validate(), not replaced
    try:
        # A namespace name is at most 63 bytes: a file of more is not the kubelet's.
        detected = safeload.read_file(sa_file, max_bytes=NAMESPACE_FILE_MAX_BYTES).decode("utf-8", "replace").strip()
    except safeload.FileMissing:
        return DEFAULT_NAMESPACE
    except safeload.DocumentError as exc:
        raise UsageError(f"cannot read the Pod's namespace from {exc}") from None
    return detected or DEFAULT_NAMESPACE


def validate(args: argparse.Namespace) -> Options:
    """The options the flags give; a UsageError, or another ConfigError (a serving flag, a file it
    names), for the first value that cannot be used."""
    from cvo_py.cli.common import UsageError, checked_namespace
    from cvo_py.runtime.serving.options import serving_options

    timings = LeaseTimings(
        lease_duration=args.leader_elect_lease_duration,
        renew_deadline=args.leader_elect_renew_deadline,
        retry_period=args.leader_elect_retry_period,
    )
    if timings.renew_deadline >= timings.lease_duration:
        raise UsageError("--leader-elect-renew-deadline must be shorter than --leader-elect-lease-duration")
    if timings.retry_period >= timings.renew_deadline:
        raise UsageError("--leader-elect-retry-period must be shorter than --leader-elect-renew-deadline")
    serving = serving_options(args, cert_required=False)  # a ConfigError is a usage error (main)
    alerts = prometheus_flags.api(args, "alerts")
    namespace = checked_namespace(detect_namespace(args.namespace))
    pod = os.environ.get("POD_NAME")
    return Options(
        kubeconfig=args.kubeconfig,
        listen=args.listen,
        namespace=namespace,
        leader_elect=args.leader_elect,
        timings=timings,
        identity=f"{pod}_{os.urandom(4).hex()}" if pod else None,
        resync=args.resync,
        serving=serving,
        alerts=alerts,
        alerts_interval=args.alerts_interval,
    )


def run(options: Options) -> int:
    from cvo_py.compose.update_status_controller import build
    from cvo_py.runtime import process

    return process.run(build(options))
