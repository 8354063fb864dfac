"""`upgrade-status`: print what `oc adm upgrade status` prints, from the insights alone.

Live: reads the insights from the ConfigMap API (`status-api-cm-prototype` and its shards).
Snapshot (`--mock-clusterversion PATH/NAME-cv.yaml`): computes the insights from an oc-style
snapshot with the same functions the controller uses. Dump (`--from PATH`): the same from a
must-gather or an Insights Operator archive (see `status.updatestatus.client.dump.layouts`),
assessed at the gather time, which the first line states. Either way the text comes from the insights only.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, NamedTuple

from status.updatestatus.api.names import NAMESPACE

if TYPE_CHECKING:
    from pathlib import Path

    from status.updatestatus.client.live import PublishedReads


class Options(NamedTuple):
    kubeconfig: str | None
    mock_clusterversion: Path | None
    dump: Path | None  # --from
    dump_format: str  # --format
    details: str
    now: int | None  # ns since the epoch; None: the snapshot's rule, or the wall clock
    namespace: str = NAMESPACE  # where the controller publishes (its --namespace); live reads only
    watch: bool = False  # --watch: shown again whenever the insights change, until Ctrl-C


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
        "--namespace",
        default=None,
        help="the namespace the update status controller publishes in: the value of its --namespace "
        f"(default {NAMESPACE}). Live cluster only",
    )
    parser.add_argument(
        "--watch",
        action="store_true",
        help="Keep watching: show the insights again whenever they are published anew (no polling), in "
        "place on a terminal and as appended blocks otherwise, with their age and every staleness warning "
        "kept current; Ctrl-C to stop. Live cluster only",
    )
    parser.add_argument(
        "--now",
        default=None,
        metavar="RFC3339",
        help="the time to assess at (default: for a dump its gather time; for a snapshot its newest "
        "ClusterVersion/ClusterOperator condition time + 368975ns, as oc; otherwise the current time)",
    )


def logs(args: argparse.Namespace) -> bool:
    """Whether the command logs (klog is set up): with -v, or while it watches (the informers
    log what goes wrong); reading once, it says everything on stdout and stderr itself."""
    return bool(args.v or args.watch)


def validate(args: argparse.Namespace) -> Options:
    from cvo_py.cli.common import UsageError, checked_namespace
    from cvo_py.runtime.gotext.durations import TimeFormatError
    from cvo_py.runtime.gotext.times import parse_time
    from status.updatestatus.client.details import DETAILS

    if args.details not in DETAILS:
        raise UsageError(
            f"invalid value for --details: {args.details} (must be one of none, all, nodes, health, operators)"
        )
    now = None
    if args.now is not None:
        try:
            now = parse_time(args.now)
        except TimeFormatError as exc:
            raise UsageError(f"--now: {exc}") from None
    if args.mock_clusterversion is not None or args.from_path:
        from pathlib import Path  # files are read: a live run does without pathlib
    mock = None
    if args.mock_clusterversion is not None:
        mock = Path(args.mock_clusterversion)
        if not mock.name.endswith("-cv.yaml"):
            raise UsageError(f"--mock-clusterversion: {mock} must name a NAME-cv.yaml file")
    if args.dump_format != "auto":  # the dump reader is imported only where a dump is read
        from status.updatestatus.client.dump.layouts import FORMATS

        if args.dump_format not in FORMATS:
            raise UsageError(f"invalid value for --format: {args.dump_format} (must be one of {', '.join(FORMATS)})")
    if args.from_path == "":
        raise UsageError("--from: empty path: name a must-gather, an Insights archive or a NAME-cv.yaml file")
    dump = Path(args.from_path) if args.from_path is not None else None
    if dump is not None and mock is not None:
        raise UsageError("--from and --mock-clusterversion cannot be used together")
    if dump is None and args.dump_format != "auto":
        raise UsageError("--format applies to --from only")
    if args.watch and (dump is not None or mock is not None):
        raise UsageError("--watch follows a live cluster: it cannot be used with --from or --mock-clusterversion")
    if args.namespace is not None and (dump is not None or mock is not None):
        raise UsageError(
            "--namespace names where a live cluster publishes: it cannot be used with --from or --mock-clusterversion"
        )
    namespace = checked_namespace(NAMESPACE if args.namespace is None else args.namespace)
    if args.watch and now is not None:
        raise UsageError("--watch shows the insights as time goes by: it cannot be used with --now")
    return Options(
        kubeconfig=args.kubeconfig,
        mock_clusterversion=mock,
        dump=dump,
        dump_format=args.dump_format,
        details=args.details,
        now=now,
        namespace=namespace,
        watch=args.watch,
    )


def run(options: Options) -> int:
    if options.watch:
        return _watch(options)
    from cvo_py.runtime import gcpause

    # One short burst of building (documents, insights, text) that leaves no garbage cycles behind.
    with gcpause.paused():
        return _run(options)


def _run(options: Options) -> int:
    if options.dump is None and options.mock_clusterversion is None:
        # the requests leave first: the server answers while the models and the renderer load
        reads = _start_live_reads(options)
        try:
            return _run_live(options, reads)
        finally:
            reads.close()  # also when the imports in between fail or are interrupted
    return _run_files(options)


def _run_live(options: Options, reads: PublishedReads) -> int:
    from status.updatestatus.api import staleness
    from status.updatestatus.client.live import ReadError
    from status.updatestatus.client.render import RenderError, render
    from status.updatestatus.insights.objects import InputError

    warnings: list[str] = []
    try:
        now = options.now if options.now is not None else _wall_clock()
        insights, warnings = reads.result(now)
        text = render(insights, now, options.details, caveat=staleness.health_caveat(warnings))
    except InputError as exc:  # from the cluster's ConfigMap
        return _fail(warnings, str(exc), 2)
    except (RenderError, ReadError) as exc:
        return _fail(warnings, str(exc).rstrip(), 1)
    return _print(warnings, text)


def _run_files(options: Options) -> int:
    from status.updatestatus.client import snapshot
    from status.updatestatus.client.render import RenderError, render
    from status.updatestatus.insights.objects import InputError

    try:
        if options.dump is not None:
            text = _from_dump(options)
        else:
            assert options.mock_clusterversion is not None
            snap = snapshot.load(options.mock_clusterversion)
            insights, now = snap.insights(options.now, wall_clock=_wall_clock())
            text = render(insights, now, options.details)
    except (snapshot.SnapshotError, InputError) as exc:
        return _fail([], str(exc), 2)
    except RenderError as exc:
        return _fail([], str(exc).rstrip(), 1)
    return _print([], text)


def _fail(warnings: list[str], message: str, code: int) -> int:
    from cvo_py.runtime.gotext.quoting import escape
    from status.updatestatus.client.render.warnings import warning_text

    sys.stderr.write(warning_text(warnings) + f"error: {escape(message)}\n")
    return code


def _print(warnings: list[str], text: str) -> int:
    from status.updatestatus.client.render.warnings import emit

    try:
        emit(warnings, text, sys.stdout, sys.stderr)
    except BrokenPipeError:  # the reader has what it wanted (`| head -1`) and left: nothing more to say
        pass
    return 0


def _watch(options: Options) -> int:
    from cvo_py.runtime.kube import connect
    from status.updatestatus.client import watch as watching

    client = connect(options.kubeconfig, user_agent="cvo-py (upgrade-status --watch)")
    tty = sys.stdout.isatty()
    return watching.watch(
        client, options.details, sys.stdout, namespace=options.namespace, tty=tty, size=watching.terminal_size
    )


def _start_live_reads(options: Options) -> PublishedReads:
    from cvo_py.runtime.kube import connect
    from status.updatestatus.client.live import PublishedReads

    return PublishedReads(connect(options.kubeconfig, user_agent="cvo-py (upgrade-status)"), options.namespace)


def _from_dump(options: Options) -> str:
    from status.updatestatus.client.dump import layouts as dumps
    from status.updatestatus.client.render import NOT_UPDATING, render

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
