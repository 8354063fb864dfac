"""`upgrade-status`: print what `oc adm upgrade status` prints, from the insights alone.

Live: reads the insights from the ConfigMap API (`status-api-cm-prototype` and its shards).
Snapshot (`--mock-clusterversion PATH/NAME-cv.yaml`): computes the insights from an oc-style
snapshot with the same functions the controller uses. Dump (`--from PATH`): the same from a
must-gather or an Insights Operator archive (see `status.updatestatus.dump`), assessed at the gather time,
which the first line states. Either way the text comes from the insights only.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cvo_py.kube import KubeClient
    from status.updatestatus.insights.metadata import LeaseState
    from status.updatestatus.insights.models import Insight


@dataclass(frozen=True)
class Options:
    kubeconfig: str | None
    mock_clusterversion: Path | None
    dump: Path | None  # --from
    dump_format: str  # --format
    details: str
    now: int | None  # ns since the epoch; None: the snapshot's rule, or the wall clock


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--details",
        default="none",
        metavar="SECTION",
        help="Show detailed output in selected section. One of: none, all, nodes, health, operators",
    )
    parser.add_argument(
        "--mock-clusterversion",
        default=None,
        metavar="PATH/NAME-cv.yaml",
        help="Read an oc-style snapshot instead of the cluster: NAME-co.yaml, -mc.yaml, -mcp.yaml and "
        "-node.yaml beside it are required, -alerts.json and -mco-deployment.yaml optional",
    )
    parser.add_argument(
        "--from",
        dest="from_path",
        default=None,
        metavar="PATH",
        help="Read a dump instead of the cluster: a must-gather (directory, .tar, .tar.gz, .tar.xz or .zip), "
        "an Insights Operator archive (.tar.gz or extracted) or an oc snapshot (NAME-cv.yaml)",
    )
    parser.add_argument(
        "--format",
        dest="dump_format",
        default="auto",
        metavar="FORMAT",
        help="the layout of --from: auto, must-gather, insights or snapshot (default auto: detected)",
    )
    parser.add_argument(
        "--now",
        default=None,
        metavar="RFC3339",
        help="the time to assess at (default: for a dump its gather time; for a snapshot its newest "
        "ClusterVersion/ClusterOperator condition time + 368975ns, as oc; otherwise the current time)",
    )


def validate(args: argparse.Namespace) -> Options:
    from cvo_py import gotext
    from cvo_py.cli.common import UsageError
    from status.updatestatus.render import DETAILS

    if args.details not in DETAILS:
        raise UsageError(
            f"invalid value for --details: {args.details} (must be one of none, all, nodes, health, operators)"
        )
    now = None
    if args.now is not None:
        try:
            now = gotext.parse_time(args.now)
        except gotext.TimeFormatError as exc:
            raise UsageError(f"--now: {exc}") from None
    mock = None
    if args.mock_clusterversion is not None:
        mock = Path(args.mock_clusterversion)
        if not mock.name.endswith("-cv.yaml"):
            raise UsageError(f"--mock-clusterversion: {mock} must name a NAME-cv.yaml file")
    if args.dump_format != "auto":  # the dump reader is imported only where a dump is read
        from status.updatestatus.dump import FORMATS

        if args.dump_format not in FORMATS:
            raise UsageError(f"invalid value for --format: {args.dump_format} (must be one of {', '.join(FORMATS)})")
    dump = Path(args.from_path) if args.from_path is not None else None
    if dump is not None and mock is not None:
        raise UsageError("--from and --mock-clusterversion cannot be used together")
    if dump is None and args.dump_format != "auto":
        raise UsageError("--format applies to --from only")
    return Options(
        kubeconfig=args.kubeconfig,
        mock_clusterversion=mock,
        dump=dump,
        dump_format=args.dump_format,
        details=args.details,
        now=now,
    )


def run(options: Options) -> int:
    from cvo_py import gcpause

    # One short burst of building (documents, insights, text) that leaves no garbage cycles behind.
    with gcpause.paused():
        return _run(options)


def _run(options: Options) -> int:
    from cvo_py.gotext import escape
    from status.updatestatus import snapshot
    from status.updatestatus.insights import metadata
    from status.updatestatus.insights.objects import InputError
    from status.updatestatus.render import RenderError, render
    from status.updatestatus.render.warnings import emit, warning_text

    warnings: list[str] = []
    try:
        if options.dump is not None:
            text = _from_dump(options)
        elif options.mock_clusterversion is not None:
            snap = snapshot.load(options.mock_clusterversion)
            insights, now = snap.insights(options.now, wall_clock=_wall_clock())
            text = render(insights, now, options.details)
        else:
            now = options.now if options.now is not None else _wall_clock()
            insights, warnings = _live_insights(options, now)
            text = render(insights, now, options.details, caveat=metadata.health_caveat(warnings))
    except (snapshot.SnapshotError, InputError) as exc:  # InputError: from the cluster's ConfigMap
        sys.stderr.write(warning_text(warnings) + f"error: {escape(str(exc))}\n")
        return 2
    except RenderError as exc:
        sys.stderr.write(warning_text(warnings) + f"error: {escape(str(exc).rstrip())}\n")
        return 1
    emit(warnings, text, sys.stdout, sys.stderr)
    return 0


def _from_dump(options: Options) -> str:
    from status.updatestatus import dump as dumps
    from status.updatestatus.render import NOT_UPDATING, render

    assert options.dump is not None
    d = dumps.load(options.dump, options.dump_format)
    if d.layout == "snapshot":  # exactly what --mock-clusterversion prints
        insights, now = d.snapshot.insights(options.now, wall_clock=_wall_clock())
        return render(insights, now, options.details)
    at = options.now if options.now is not None else d.gathered_at
    insights, now = d.snapshot.insights(at)  # None: the snapshot rule (newest condition time)
    text = render(insights, now, options.details)
    return dumps.preamble(d, now, explicit_now=options.now is not None, updating=text != NOT_UPDATING) + text


def _wall_clock() -> int:
    import time

    return time.time_ns()


# Concurrent reads of the Lease and the shard ConfigMaps (a 5,000-node cluster has about 18 shards).
SHARD_READERS = 4


def _live_insights(options: Options, now: int) -> tuple[list[Insight], list[str]]:
    """The insights of every readable key, and the warnings about them (age, Lease, omissions,
    unreadable keys)."""
    from concurrent.futures import ThreadPoolExecutor

    from cvo_py.kube import CONFIGMAPS, ApiError, connect
    from status.updatestatus import configmap
    from status.updatestatus.insights import metadata
    from status.updatestatus.render import RenderError

    client = connect(options.kubeconfig, user_agent="cvo-py (upgrade-status)")
    try:
        main = client.get(CONFIGMAPS, configmap.CONFIGMAP, namespace=configmap.NAMESPACE)
    except ApiError as exc:
        if exc.is_not_found():
            raise RenderError(
                f"ConfigMap {configmap.NAMESPACE}/{configmap.CONFIGMAP} does not exist: "
                "no update status insights "
                "are published (create it to opt in)"
            ) from None
        raise
    data: dict[str, str] = dict(main.get("data") or {})
    meta: metadata.PublicationMetadata | None = None
    meta_problem = ""
    if metadata.META_KEY in data:
        try:
            meta = metadata.decode(data[metadata.META_KEY])
        except metadata.MetadataError as exc:
            meta_problem = str(exc)
    try:
        shards = configmap.shard_names(data)
    except configmap.DecodeError as exc:
        shard_problem = f"unreadable, node insights in shards not shown: {exc}"
        shards = []
    else:
        shard_problem = ""
    # The Lease and the shards are independent reads: in flight together, the server's time overlaps.
    pool = ThreadPoolExecutor(max_workers=SHARD_READERS, thread_name_prefix="upgrade-status-read")
    try:
        lease = pool.submit(_lease, client)
        shard_reads = [pool.submit(client.get, CONFIGMAPS, name, namespace=configmap.NAMESPACE) for name in shards]
        warnings = metadata.warnings(meta, now, lease.result(), meta_problem=meta_problem)
        if shard_problem:
            warnings.append(shard_problem)
        for name, read in zip(shards, shard_reads, strict=True):
            try:
                shard = read.result()
            except ApiError as exc:
                if exc.is_not_found():
                    raise RenderError(
                        f"ConfigMap {configmap.NAMESPACE}/{name} (a listed shard) does not exist"
                    ) from None
                raise
            data.update(shard.get("data") or {})
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # after an error: nothing more is read
    insights, errors = configmap.decode_readable(data)
    warnings.extend(f"unreadable, not shown: {exc}" for exc in errors)
    return insights, warnings


def _lease(client: KubeClient) -> LeaseState:
    """The controller's leader-election Lease, or a one-line reason why it could not be read."""
    from cvo_py.kube import LEASES, ApiError
    from status.updatestatus import configmap
    from status.updatestatus.insights import metadata

    where = f"{configmap.NAMESPACE}/{metadata.LEASE}"
    try:
        lease = client.get(LEASES, metadata.LEASE, namespace=configmap.NAMESPACE)
    except ApiError as exc:
        if exc.is_not_found():
            return metadata.LeaseState(missing=True)
        if exc.status in (401, 403):
            return metadata.LeaseState(
                problem=f"cannot read the update status controller's Lease {where} ({exc.status} {exc.reason}): "
                "whether the controller is running is not known"
            )
        return metadata.LeaseState(problem=f"cannot read the update status controller's Lease {where}: {exc.status}")
    return metadata.lease_state(lease)
