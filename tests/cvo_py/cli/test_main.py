"""The command line: subcommands, help, exit codes and one-line errors (run as real processes)."""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from cvo_py.cli import main
from cvo_py.runtime.errors import ServerError
from cvo_py.runtime.httpget import GetError
from cvo_py.runtime.kube import ApiError, ServerUnreachable
from cvo_py.runtime.tlstrust import TrustError
from testkit.checkout import REPO
from testkit.harness import cluster as local


def cvo(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cvo_py", *args], cwd=REPO, capture_output=True, text=True, timeout=60, env=env
    )


def test_help_lists_the_four_subcommands() -> None:
    result = cvo("--help")
    assert result.returncode == 0
    for name in ("start", "update-status-controller", "upgrade-status", "version"):
        assert name in result.stdout


@pytest.mark.parametrize("sub", ["start", "update-status-controller", "upgrade-status", "version"])
def test_every_subcommand_has_help_with_common_flags(sub: str) -> None:
    result = cvo(sub, "--help")
    assert result.returncode == 0, result.stderr
    for flag in ("--kubeconfig", "--v"):
        assert flag in result.stdout
    # Only the subcommands that serve endpoints take --listen.
    assert ("--listen" in result.stdout) == (sub in ("start", "update-status-controller"))


@pytest.mark.parametrize("columns", [None, "100", "33", "0", "-5", "wide", ""])
def test_help_is_as_wide_as_argparse_would_make_it(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.delenv("LINES", raising=False)
    assert main.terminal_columns() == shutil.get_terminal_size().columns

    def usage(formatter: type[argparse.HelpFormatter]) -> str:
        parser = argparse.ArgumentParser(prog="cluster-version-operator upgrade-status", formatter_class=formatter)
        parser.add_argument("--mock-clusterversion", metavar="PATH/NAME-cv.yaml", help="a snapshot " * 20)
        return parser.format_help()

    assert usage(main._HelpFormatter) == usage(argparse.HelpFormatter)


def test_help_on_a_terminal_is_as_wide_as_the_terminal() -> None:
    """On a pseudo-terminal 50 columns wide, without $COLUMNS: no line of help is wider."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 50, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "cvo_py", "upgrade-status", "--help"],
            cwd=REPO, stdout=follower, stderr=subprocess.PIPE, env=env, timeout=60, check=False,
        )
        os.close(follower)
        follower = -1
        out = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            out += chunk
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    assert done.returncode == 0, done.stderr
    lines = out.decode().splitlines()
    assert len(lines) > 10 and "--mock-clusterversion" in out.decode()
    assert max(len(line) for line in lines) <= 50


def test_unknown_flag_exits_2_with_one_line() -> None:
    result = cvo("version", "--no-such-flag")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "unrecognized arguments: --no-such-flag" in result.stderr


def test_bad_verbosity_exits_2() -> None:
    result = cvo("version", "--v=loud")
    assert result.returncode == 2
    assert "invalid verbosity 'loud'" in result.stderr


def test_missing_kubeconfig_is_a_clear_error(tmp_path: Path) -> None:
    result = cvo("version", "--kubeconfig", str(tmp_path / "nope"))
    assert result.returncode == 2  # a bad flag value
    assert "file not found" in result.stdout + result.stderr
    assert "Traceback" not in result.stderr


def test_unreachable_server_names_the_server(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n"
        "users:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context:\n    cluster: c\n"
        "    user: u\ncurrent-context: x\n"
    )
    result = cvo("version", "--kubeconfig", str(kubeconfig))
    assert result.returncode == 1
    assert "cannot reach the Kubernetes API server at https://127.0.0.1:1: connection refused" in result.stdout
    assert "Traceback" not in result.stderr


def test_a_listen_address_in_use_ends_the_command_with_one_line(cluster: local.LocalCluster) -> None:
    """The server's error (an address it cannot listen on) is said in one line, exit 1, as a client
    or configuration error is: never a traceback."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        listen = f"127.0.0.1:{taken.getsockname()[1]}"
        result = cvo(
            "update-status-controller", "--kubeconfig", cluster.kubeconfig, "--no-leader-elect", "--listen", listen
        )
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines()[-1] == f"error: cannot listen on {listen}: Address already in use"
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (ApiError(403, '{"reason": "Forbidden", "message": "no"}', "GET", "/version"),
         "the API server at /version answered 403: no"),
        (ServerUnreachable("https://127.0.0.1:1", ConnectionRefusedError(111, "Connection refused")),
         "cannot reach the Kubernetes API server at https://127.0.0.1:1: connection refused"),
        (GetError("request", "dial tcp 127.0.0.1:9: connect: connection refused"),
         "dial tcp 127.0.0.1:9: connect: connection refused"),
        (ServerError("cannot listen on 127.0.0.1:9099: Address already in use"),
         "cannot listen on 127.0.0.1:9099: Address already in use"),
        (TrustError("CA file /x: file not found"), "CA file /x: file not found"),
        (ValueError("a bug"), None),
    ],
    ids=["api", "unreachable", "get", "server", "config", "bug"],
)
def test_an_error_of_any_branch_ends_a_command_with_its_line_and_a_bug_with_its_traceback(
    error: Exception, line: str | None
) -> None:
    assert main._error_line(error) == line
