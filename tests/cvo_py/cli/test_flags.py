"""Every flag of every subcommand: a bad value exits 2 with one line naming the problem, before
anything runs (no connection, no log line, no traceback); a flag a subcommand does not use is refused."""

from __future__ import annotations

import argparse
import importlib
import os
import re
from pathlib import Path
from typing import Any

import pytest

from cvo_py.cli import main as cli
from cvo_py.runtime.gotext.quoting import escape
from testkit.corpus import flags as hostile_flags
from testkit.corpus.values import RAW_CONTROL

BASE = hostile_flags.BASE
SUBCOMMANDS = hostile_flags.SUBCOMMANDS
SERVING = hostile_flags.SERVING
FLAG_KINDS = hostile_flags.FLAG_KINDS
SWITCHES = hostile_flags.SWITCHES


@pytest.fixture
def files(tmp_path: Path, certificate: tuple[str, str]) -> dict[str, str]:
    """Paths for the file-valued flags: missing, a directory, not the right content, unreadable."""
    garbage = tmp_path / "garbage"
    garbage.write_text("{[ not: yaml")
    not_kubeconfig = tmp_path / "list.yaml"
    not_kubeconfig.write_text("- a\n- b\n")
    empty_config = tmp_path / "empty-config"
    empty_config.write_text("apiVersion: v1\nkind: Config\n")
    unreadable = tmp_path / "unreadable"
    unreadable.write_text("x")
    unreadable.chmod(0)
    return {
        "MISSING": str(tmp_path / "missing"),
        "DIR": str(tmp_path),
        "GARBAGE": str(garbage),
        "LIST": str(not_kubeconfig),
        "EMPTYCONFIG": str(empty_config),
        "UNREADABLE": str(unreadable),
        "CERT": certificate[0],
        "KEY": certificate[1],
    }


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse's own errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


# (subcommands, flag arguments, what the one line must say); FILE names come from `files`.
COMMON_CASES = [
    (["--kubeconfig", "{MISSING}"], "file not found"),
    (["--kubeconfig", "{DIR}"], "a directory, not a file"),
    (["--kubeconfig", ""], "empty kubeconfig path"),
    (["--kubeconfig", "{GARBAGE}"], "cannot load Kubernetes configuration from"),
    (["--kubeconfig", "{LIST}"], "cannot load Kubernetes configuration from"),
    (["--kubeconfig", "{EMPTYCONFIG}"], "cannot load Kubernetes configuration from"),
    (["--kubeconfig", "{UNREADABLE}"], "cannot read: Permission denied"),
    (["--v", "loud"], "invalid verbosity"),
    (["--v", "-1"], "invalid verbosity"),
    (["--v", ""], "invalid verbosity"),
    (["--v", "\u0663"], "invalid verbosity"),  # an Arabic-Indic digit
    (["--v", "99999999999"], "invalid verbosity"),
    (["--v"], "expected one argument"),
    (["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
]

LISTEN_CASES = hostile_flags.MALFORMED["listen"]

START_CASES = [
    (["--release-image", ""], "missing --release-image flag"),
    (["--node-name", ""], "node-name is required"),
    (["--enable-auto-update=maybe"], 'invalid argument "maybe" for "--enable-auto-update"'),
    (["--enable-auto-update="], 'invalid argument "" for "--enable-auto-update"'),
    (["--always-enable-capabilities", "Zed"], "unknown capabilities: [Zed]"),
    (["--tls-min-version", "VersionTLS99"], "unknown TLS version"),
    (["--tls-min-version", "1.2"], "unknown TLS version"),
    (["--tls-cipher-suites", "NOPE"], "unknown cipher suite"),
    (
        ["--tls-min-version", "VersionTLS12", "--tls-cipher-suites", "TLS_AES_128_GCM_SHA256"],
        "name only TLS 1.3 suites",
    ),
    (["--listen", "127.0.0.1:0"], "--serving-cert-file must be set"),
    (
        ["--listen", "127.0.0.1:0", "--serving-cert-file", "{MISSING}", "--serving-key-file", "{MISSING}"],
        "file not found",
    ),
    (
        ["--listen", "127.0.0.1:0", "--serving-cert-file", "{DIR}", "--serving-key-file", "{DIR}"],
        "a directory, not a file",
    ),
    (
        ["--listen", "127.0.0.1:0", "--serving-cert-file", "{GARBAGE}", "--serving-key-file", "{GARBAGE}"],
        "want a PEM certificate and its PEM private key",
    ),
]

USC_CASES = [
    *[
        ([flag, value], "invalid duration")
        for flag in (
            "--leader-elect-lease-duration",
            "--leader-elect-renew-deadline",
            "--leader-elect-retry-period",
            "--resync",
        )
        for value in ("abc", "", "0", "-5", "nan", "inf", "1e9", "15ss", "\uff11\uff15")
    ],
    (["--leader-elect-renew-deadline", "200"], "must be shorter than --leader-elect-lease-duration"),
    (["--leader-elect=maybe"], "ignored explicit argument"),
    (["--namespace", ""], 'invalid --namespace ""'),
    (["--namespace", "Bad_NS"], 'invalid --namespace "Bad_NS"'),
    (["--tls-min-version", "TLS1.3"], "unknown TLS version"),
    (["--tls-cipher-suites", "RC4"], "unknown cipher suite"),
    (["--listen", "127.0.0.1:0", "--serving-cert-file", "{GARBAGE}"], "--serving-key-file must be set"),
    (["--listen", "127.0.0.1:0", "--serving-key-file", "{GARBAGE}"], "--serving-cert-file must be set"),
]

UPGRADE_STATUS_CASES = [
    (["--details", "bogus"], "invalid value for --details: bogus"),
    (["--details", ""], "invalid value for --details"),
    (["--now", "yesterday"], "--now:"),
    (["--now", ""], "--now:"),
    (["--mock-clusterversion", "x.yaml"], "must name a NAME-cv.yaml file"),
    (["--mock-clusterversion", ""], "must name a NAME-cv.yaml file"),
    (["--listen", "0.0.0.0:9099"], "unrecognized arguments: --listen"),
    (["--listen", "garbage"], "unrecognized arguments: --listen"),
]

VERSION_CASES = [
    (["--listen", "garbage"], "unrecognized arguments: --listen"),
    (["--client=yes"], "ignored explicit argument"),
]

CASES = [
    *[(sub, args, msg) for sub in SUBCOMMANDS for args, msg in COMMON_CASES],
    *[
        (sub, ["--listen", value, "--serving-cert-file", "{CERT}", "--serving-key-file", "{KEY}"], "invalid --listen")
        for sub in SERVING
        for value in LISTEN_CASES
    ],
    *[("start", args, msg) for args, msg in START_CASES],
    *[("update-status-controller", args, msg) for args, msg in USC_CASES],
    *[("upgrade-status", args, msg) for args, msg in UPGRADE_STATUS_CASES],
    *[("version", args, msg) for args, msg in VERSION_CASES],
]


@pytest.mark.parametrize(("sub", "args", "message"), CASES, ids=[f"{c[0]}:{' '.join(c[1])!r}" for c in CASES])
def test_bad_value_exits_2_with_one_line(
    sub: str,
    args: list[str],
    message: str,
    files: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if "{UNREADABLE}" in args and os.geteuid() == 0:
        pytest.skip("running as root: a mode-000 file is still readable")
    monkeypatch.delenv("NODE_NAME", raising=False)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    argv = [sub, *BASE[sub], *(a.format(**files) for a in args)]
    code, out, err = _run(argv, capsys)
    assert code == 2, (argv, out, err)
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert message in lines[0], err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "value", ["0.0.0.0:9099", ":9099", "127.0.0.1:0", "[::1]:8443", "localhost:80", "metrics.example.com:9099"]
)
def test_good_listen_values_are_accepted(value: str) -> None:
    from cvo_py.runtime.serving.options import parse_listen

    host, port = parse_listen(value)
    assert f"{host}:{port}".endswith(value.rsplit(":", 1)[1]) and host


def test_listen_is_offered_only_where_endpoints_are_served(capsys: pytest.CaptureFixture[str]) -> None:
    for sub in SUBCOMMANDS:
        code, out, _err = _run([sub, "--help"], capsys)
        assert code == 0
        assert ("--listen" in out) == (sub in SERVING), sub
        assert "--kubeconfig" in out and "--v" in out


# --- every flag, by kind ------------------------------------------------------------------------

ACCEPTED = 99  # what a patched `run` returns: the value got through validation


def test_every_flag_has_a_kind() -> None:
    parser = cli.build_parser()
    (subparsers,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    offered = {
        (sub, flag) for sub, p in subparsers.choices.items() for a in p._actions for flag in a.option_strings
    }
    assert offered == set(FLAG_KINDS) | set(SWITCHES)


AUDIT = hostile_flags.cases()


@pytest.fixture(scope="module")
def hostile_files(tmp_path_factory: pytest.TempPathFactory, certificate: tuple[str, str]) -> dict[str, str]:
    files = hostile_flags.materialize(tmp_path_factory.mktemp("hostile-flags"))
    return {**files, "CERT": certificate[0], "KEY": certificate[1]}


@pytest.mark.parametrize(
    ("sub", "flag", "kind", "value"), AUDIT, ids=[f"{c[0]}:{c[1]}:{escape(c[3][:40])}" for c in AUDIT]
)
def test_every_malformed_value_of_every_flag_exits_2_with_one_escaped_line(
    sub: str,
    flag: str,
    kind: str,
    value: str,
    hostile_files: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NODE_NAME", raising=False)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", hostile_files["DIR"])  # no ~/.kube/config to fall back on
    module = importlib.import_module(cli.SUBCOMMANDS[sub][0])
    real_run = module.run

    def run(options: Any) -> int:
        # Reading a snapshot or a dump needs no cluster: those are run, and must fail there.
        if getattr(options, "dump", None) is not None or getattr(options, "mock_clusterversion", None) is not None:
            return int(real_run(options))
        return ACCEPTED

    monkeypatch.setattr(module, "run", run)
    argv = hostile_flags.argv(sub, flag, kind, value, hostile_files)
    code, out, err = _run(argv, capsys)
    shown = escape(err[-3000:])
    assert code == 2, (code, shown)
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, shown
    assert "Traceback" not in err
    assert not RAW_CONTROL.search(err), f"a raw control or bidi character reached the terminal: {shown}"
    assert len(err) < 2500, f"{len(err)} characters"
    assert re.search(hostile_flags.MENTIONS[kind], err), f"not about {flag}: {shown}"
