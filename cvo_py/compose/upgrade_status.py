"""What `upgrade-status` builds for each of its sources: the controller's publication read live
(one-shot or `--watch`), an oc snapshot (`--mock-clusterversion`) or a dump (`--from`). Whichever
it is, the text comes from the insights alone (`status.updatestatus.client.render`).

The fast path. A live one-shot run is a process of a tenth of a second, most of it start-up, so
what it loads is declared and held:

- this module is the one place that imports by source: each branch imports, inside the function
  that runs it, what only that source reads (the live reads leave before the renderer and the
  insight classes load, and a snapshot or dump run loads no API client);
- `status.updatestatus.client.details` is a module without imports, so `--details` is checked
  before anything heavy loads;
- everything else a live run loads imports at module level, and may not import pydantic, PyYAML,
  urllib3, the kubernetes package or the insight models (import-linter's contract "upgrade-status'
  fast path", whose `ignore_imports` names the few lazy fallbacks that a good run never takes);
- `tests/status/updatestatus/client/test_imports.py` lists, module by module, what a live run, a
  snapshot, a must-gather and an Insights archive load, and what they must not.

What these cost and saved is measured in bench/README.md (`upgrade_status_client.py`).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NamedTuple, TextIO

from status.updatestatus.api.names import NAMESPACE

if TYPE_CHECKING:
    from status.updatestatus.client.live import PublishedReads

# The exit code of a command that SIGTERM ended, as a shell reports it (128 + 15).
TERMINATED = 143


class Options(NamedTuple):
    kubeconfig: str | None
    mock_clusterversion: str | None  # PATH/NAME-cv.yaml
    dump: str | None  # --from
    dump_format: str  # --format
    details: str
    now: int | None  # ns since the epoch; None: the snapshot's rule, or the wall clock
    namespace: str = NAMESPACE  # where the controller publishes (its --namespace); live reads only
    watch: bool = False  # --watch: shown again whenever the insights change, until Ctrl-C


def run(options: Options) -> int:
    out = sys.stdout
    if out is None:  # started with stdout closed (`>&-`): nothing could be shown
        return _fail([], "write /dev/stdout: bad file descriptor", 1)
    if options.watch:
        return _watch(options, out)
    from cvo_py.runtime import gcpause

    # One short burst of building (documents, insights, text) that leaves no garbage cycles behind.
    with gcpause.paused():
        if options.dump is None and options.mock_clusterversion is None:
            # the requests leave first: the server answers while the models and the renderer load
            reads = _start_live_reads(options)
            try:
                return _run_live(options, reads, out)
            finally:
                reads.close()  # also when the imports in between fail or are interrupted
        return _run_files(options, out)


def _run_live(options: Options, reads: PublishedReads, out: TextIO) -> int:
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
    return _print(warnings, text, out)


def _run_files(options: Options, out: TextIO) -> int:
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
    return _print([], text, out)


def _fail(warnings: list[str], message: str, code: int) -> int:
    from cvo_py.runtime.gotext import escape
    from status.updatestatus.client.render.warnings import warning_text

    sys.stderr.write(warning_text(warnings) + f"error: {escape(message)}\n")
    return code


def _print(warnings: list[str], text: str, out: TextIO) -> int:
    """Write the warnings and the text; a reader that left (`| head -1`) is no error, a stdout that
    cannot be written is (one line, exit 1), as oc's write would fail."""
    from status.updatestatus.client.render.warnings import emit

    try:
        emit(warnings, text, out, sys.stderr)
        out.flush()
    except BrokenPipeError:  # the reader has what it wanted and left: nothing more to say
        pass
    except OSError as exc:
        return _fail([], f"write /dev/stdout: {_os_reason(exc)}", 1)
    return 0


def _os_reason(exc: OSError) -> str:
    from cvo_py.runtime.connections import os_text

    return os_text(exc.strerror or str(exc))


def _watch(options: Options, out: TextIO) -> int:
    from cvo_py.runtime.kube import connect
    from status.updatestatus.client import watch as watching

    client = connect(options.kubeconfig, user_agent="cvo-py (upgrade-status --watch)")
    try:
        return watching.watch(
            client, options.details, out, namespace=options.namespace, tty=out.isatty(), size=watching.terminal_size
        )
    except watching.Terminated:
        return TERMINATED
    except OSError as exc:  # BrokenPipeError is handled where frames are written
        return _fail([], f"write /dev/stdout: {_os_reason(exc)}", 1)


def _start_live_reads(options: Options) -> PublishedReads:
    from cvo_py.runtime.kube import connect
    from status.updatestatus.client.live import PublishedReads

    return PublishedReads(connect(options.kubeconfig, user_agent="cvo-py (upgrade-status)"), options.namespace)


def _from_dump(options: Options) -> str:
    from pathlib import Path

    from status.updatestatus.client.dump import layouts as dumps
    from status.updatestatus.client.render import NOT_UPDATING, render

    assert options.dump is not None
    d = dumps.load(Path(options.dump), options.dump_format)
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
