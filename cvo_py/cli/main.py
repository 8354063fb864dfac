"""`cluster-version-operator`: cobra-style subcommands, each thin (options → validate → run).

A bad flag or value exits 2 with a one-line reason (a --kubeconfig that is missing, unreadable or
not a kubeconfig included); an unreachable API server, or no configuration found where none was
named, is one clear line naming it, exit 1. Each subcommand takes only the flags it uses:
`--listen` only where endpoints are served.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any, NoReturn

from cvo_py import __version__
from cvo_py.cli.common import UsageError
from cvo_py.runtime.errors import ConfigError, CvoError

INTERRUPTED = 130  # the exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells report it

# name → (module, one-line help). A process imports only the module of the subcommand it runs:
# the others pull in the API client, leader election or the controllers, which `upgrade-status`
# from a snapshot or dump never needs.
SUBCOMMANDS = {
    "start": ("cvo_py.cli.start", "Starts Cluster Version Operator"),
    "update-status-controller": (
        "cvo_py.cli.update_status_controller",
        "The Update Status Controller watches cluster state/health during the update process and "
        "exposes it through the UpdateStatus API (a ConfigMap for now).",
    ),
    "upgrade-status": (
        "cvo_py.cli.upgrade_status",
        "Display the status of the current cluster version update, from the update status insights",
    ),
    "version": ("cvo_py.cli.version", "Print the version of cvo-py and of the API server it would talk to"),
}


def terminal_columns() -> int:
    """The terminal's width as `shutil.get_terminal_size().columns` finds it: $COLUMNS, else the
    width of the terminal on stdout, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 80
    return columns


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's own, as wide as it would make itself, without loading `shutil` for the width:
    argparse builds a formatter for every flag it adds, and `shutil` loads the compression modules
    (off the fast path of `cvo_py.compose.upgrade_status`; its cost is in bench/README.md)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, terminal_columns() - 2 if width is None else width)


class _Parser(argparse.ArgumentParser):
    """Flags as Go's pflag takes them: whole names only (`--kube` is not `--kubeconfig`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {_shown(message)} (see --help)\n")
        raise SystemExit(2)


def _shown(message: str) -> str:
    """An error message as one printable line, whatever the flag values in it held (escaped as Go's
    `%q` escapes, without quotes; capped so a huge value cannot flood the terminal)."""
    from cvo_py.runtime.gotext.messages import bounded
    from cvo_py.runtime.gotext.quoting import escape

    return escape(bounded(message, 2000))


# Subcommands that serve /metrics, /healthz and /readyz on --listen.
SERVING = frozenset({"start", "update-status-controller"})


def common_flags(serves_endpoints: bool = True) -> _Parser:
    """The flags every subcommand takes; `--listen` only on those that serve endpoints (a
    subcommand that serves nothing refuses it rather than silently ignoring it)."""
    common = _Parser(add_help=False)
    common.add_argument(
        "--kubeconfig",
        default=None,
        type=_kubeconfig,
        metavar="PATH",
        help="kubeconfig file (default: in-cluster configuration, then $KUBECONFIG, then ~/.kube/config)",
    )
    common.add_argument(
        "-v",
        "--v",
        dest="v",
        type=_verbosity,
        default=0,
        metavar="N",
        help="log verbosity, as klog: 2 normal, 4 debug, 6 trace, 8 everything (default 0)",
    )
    if serves_endpoints:
        common.add_argument(
            "--listen",
            default="0.0.0.0:9099",
            metavar="HOST:PORT",
            help="address for /metrics, /healthz and /readyz; empty disables it (default 0.0.0.0:9099)",
        )
    return common


# klog's -v is an int32 level.
MAX_VERBOSITY = 2**31 - 1


def _verbosity(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) > MAX_VERBOSITY:
        raise argparse.ArgumentTypeError(f"invalid verbosity {text!r}: want a number from 0 to {MAX_VERBOSITY}")
    return int(text)


def _kubeconfig(path: str) -> str:
    """A kubeconfig named on the command line must be a readable regular file within bounds (a
    FIFO or a device is refused, never read); its content is checked when it is loaded (a bad one
    is a usage error too, see `main`)."""
    from cvo_py.runtime import safeload
    from cvo_py.runtime.clientconfig import KUBECONFIG_MAX_BYTES

    if not path:
        raise argparse.ArgumentTypeError("empty kubeconfig path: name a file, or leave the flag out")
    try:
        safeload.read_file(path, max_bytes=KUBECONFIG_MAX_BYTES, source=f"kubeconfig {path!r}")
    except safeload.DocumentError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return path


def _load_kubeconfig(path: str) -> None:
    """A --kubeconfig that is not a usable kubeconfig is a bad flag value (exit 2), found before
    anything runs; a default configuration that is missing or bad is not (exit 1, at run time)."""
    from cvo_py.runtime.clientconfig import load_config

    try:
        load_config(path)
    except ConfigError as exc:
        raise UsageError(" ".join(str(exc).split())) from None  # loader errors span lines


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line; with `only` (a subcommand's name) only that subcommand's module is
    imported and its flags defined (the others are listed, not built)."""
    parser = _Parser(
        prog="cluster-version-operator",
        description="Run Cluster Version Controller (cvo-py): payload retrieval, ClusterVersion status "
        "and update status insights for OpenShift.",
    )
    parser.add_argument("--version", action="version", version=f"ClusterVersionOperator cvo-py v{__version__}")
    subs = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (module_name, short_help) in SUBCOMMANDS.items():
        if only is not None and name != only:
            subs.add_parser(name, help=short_help)
            continue
        module = importlib.import_module(module_name)
        common = common_flags(serves_endpoints=name in SERVING)
        sub = subs.add_parser(name, parents=[common], help=short_help, description=short_help)
        module.add_arguments(sub)
        sub.set_defaults(_module=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv[0] if argv and argv[0] in SUBCOMMANDS else None)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    module = args._module
    # Logging is set up for commands that log; a one-shot `upgrade-status` never loads it.
    if getattr(module, "logs", lambda _args: True)(args):
        from cvo_py.runtime import klog

        klog.setup(args.v)
    try:
        options = module.validate(args)
        if args.kubeconfig is not None:
            _load_kubeconfig(args.kubeconfig)
    except ConfigError as exc:  # a flag, a file it names or the environment: a usage error
        sys.stderr.write(f"cluster-version-operator {args.command}: error: {_shown(str(exc))}\n")
        return 2
    try:
        return int(module.run(options) or 0)
    except KeyboardInterrupt:
        return INTERRUPTED
    except Exception as exc:
        message = _error_line(exc)
        if message is None:
            raise
        sys.stderr.write(f"error: {_shown(message)}\n")
        return 1


def entry() -> NoReturn:
    """The process's entry point (the `cluster-version-operator` script, `python -m cvo_py`): `main()`, then exit.

    The process ends without interpreter shutdown (`_end_process`): shutdown would wait for reads a
    command left in flight when it ended early (an error, Ctrl-C; `upgrade-status` reads the Lease
    beside the ConfigMaps) for up to the client's timeouts, and walk the whole heap once more to
    free it (what that cost is in bench/README.md). The long-running commands have
    stopped their own threads by the time `main()` returns. Ctrl-C at any moment is exit 130,
    without a traceback."""
    # No pydantic plugins: the commands' validation runs no third-party hooks found among whatever
    # else is installed, and pydantic does not read every installed package's metadata to look for
    # them when a command builds its first validator (measured in bench/README.md). An explicit
    # setting wins.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        code = main()
    except KeyboardInterrupt:  # before or after a command's own handling (parsing, loading modules)
        code = INTERRUPTED
    _end_process(code)


def _end_process(code: int) -> NoReturn:
    """What interpreter shutdown does that matters here, then `os._exit`: the exit handlers run
    (temporary files removed, logs flushed), a second Ctrl-C meanwhile ignored; then the standard
    streams are flushed, for at most `FLUSH_BOUND` seconds and never past a Ctrl-C: a pipe that
    nobody reads (a reader stopped, a terminal held with Ctrl-S) would otherwise hold the process
    there for ever. Output that could not be written all is a failure (exit 1 where it was 0)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    atexit._run_exitfuncs()
    if not _flushed():
        code = code or 1
    os._exit(code)


FLUSH_BOUND = 5.0  # seconds the last output may take to be taken by its reader


class _FlushAbandoned(Exception):
    """The last output was not taken in time, or Ctrl-C was pressed while it waited."""


def _flushed() -> bool:
    """Flush stdout and stderr within `FLUSH_BOUND` (False when the output could not all be
    written: abandoned, or the stream failed other than by a closed pipe)."""

    def abandon(_signum: int, _frame: object) -> None:
        raise _FlushAbandoned

    if _on_main_thread():
        signal.signal(signal.SIGINT, abandon)
        signal.signal(signal.SIGALRM, abandon)
        signal.setitimer(signal.ITIMER_REAL, FLUSH_BOUND)
    done = True
    try:
        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is not None:
                    stream.flush()
            except BrokenPipeError:  # the reader left: it had what it wanted (`| head -1`)
                pass
            except (OSError, ValueError):  # a closed stream: nothing more can be said there
                done = stream is not sys.stdout and done
    except _FlushAbandoned:
        done = False
    finally:
        if _on_main_thread():
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    return done


def _on_main_thread() -> bool:
    """Whether this is the main thread (the only one Python runs signal handlers on)."""
    return threading.current_thread() is threading.main_thread()


def _error_line(exc: Exception) -> str | None:
    """The one line a command ends with when one of cvo-py's errors (`cvo_py.runtime.errors`: a
    client, server or configuration error) escapes it; None for anything else (a bug: its
    traceback is shown). The API client is looked at only when it was loaded: a run that never
    imported it cannot have raised its errors."""
    if not isinstance(exc, CvoError):
        return None
    kube = sys.modules.get("cvo_py.runtime.kube")
    if kube is not None and isinstance(exc, kube.ApiError):
        return f"the API server at {exc.path or '?'} answered {exc.status}: {exc.message}"
    return str(exc)
