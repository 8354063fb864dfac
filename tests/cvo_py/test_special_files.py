"""A FIFO, /dev/zero or a symlink to either, wherever a file is named: refused at once with one line
(exit 2 for a flag), never a hang, never memory without end. Each case runs the real command in a
child under a 1 GiB address-space rlimit and a timeout (`run_limited`), so a regression fails here
instead of taking the machine's memory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cvo_py.testing.hostile.files import SPECIAL_KINDS, cli, kubeconfig, run_limited, special_file
from cvo_py.testing.insight_objects import write_snapshot

TIMEOUT = 60.0  # a child that reads nothing it should not finishes in about a second
PEAK_RSS_BOUND = 200 << 20
PROMQL = "https://127.0.0.1:1"  # an interpreter's start-up and the command's imports: about 40-60 MB


def _start(*args: str) -> list[str]:
    return ["start", "--node-name", "n", "--release-image", "x", "--listen", "", *args]


def _usc(*args: str) -> list[str]:
    return ["update-status-controller", "--listen", "", *args]


# name → (command line given the special file's path and a directory, the file's name)
Case = Callable[[Path, Path, tuple[str, str]], list[str]]


def _kubeconfig_naming(field: str, section: str) -> Case:
    def argv(special: Path, directory: Path, cert: tuple[str, str]) -> list[str]:
        user: dict[str, object] = {"token": "t"}
        cluster: dict[str, object] = {"server": "https://127.0.0.1:6443"}
        if section == "cluster":
            cluster[field] = str(special)
        elif field == "client-certificate":
            user = {"client-certificate": str(special), "client-key": cert[1]}
        elif field == "client-key":
            user = {"client-certificate": cert[0], "client-key": str(special)}
        else:
            user = {field: str(special)}
        if "certificate-authority" not in cluster:
            cluster["insecure-skip-tls-verify"] = True
        path = kubeconfig(directory, cluster=cluster, user=user)
        return ["version", "--kubeconfig", str(path)]

    return argv


def _snapshot(suffix: str) -> Case:
    def argv(special: Path, directory: Path, _cert: tuple[str, str]) -> list[str]:
        cv = write_snapshot(directory)
        target = Path(str(cv).replace("-cv.yaml", suffix))
        target.unlink(missing_ok=True)
        target.symlink_to(special)
        return ["upgrade-status", "--mock-clusterversion", str(cv)]

    return argv


CASES: dict[str, Case] = {
    "--kubeconfig": lambda s, _d, _c: ["version", "--kubeconfig", str(s)],
    "kubeconfig certificate-authority": _kubeconfig_naming("certificate-authority", "cluster"),
    "kubeconfig tokenFile": _kubeconfig_naming("tokenFile", "user"),
    "kubeconfig client-certificate": _kubeconfig_naming("client-certificate", "user"),
    "kubeconfig client-key": _kubeconfig_naming("client-key", "user"),
    "start --serving-cert-file": lambda s, _d, c: _start(
        "--listen", "127.0.0.1:0", "--serving-cert-file", str(s), "--serving-key-file", c[1]
    ),
    "start --serving-key-file": lambda s, _d, c: _start(
        "--listen", "127.0.0.1:0", "--serving-cert-file", c[0], "--serving-key-file", str(s)
    ),
    "update-status-controller --serving-cert-file": lambda s, _d, c: _usc(
        "--listen", "127.0.0.1:0", "--serving-cert-file", str(s), "--serving-key-file", c[1]
    ),
    "start --promql-ca-file": lambda s, _d, _c: _start("--promql-url", PROMQL, "--promql-ca-file", str(s)),
    "start --promql-token-file": lambda s, _d, _c: _start("--promql-url", PROMQL, "--promql-token-file", str(s)),
    "update-status-controller --alerts-ca-file": lambda s, _d, _c: _usc("--alerts-ca-file", str(s)),
    "update-status-controller --alerts-token-file": lambda s, _d, _c: _usc("--alerts-token-file", str(s)),
    "--mock-clusterversion NAME-cv.yaml": _snapshot("-cv.yaml"),
    "--mock-clusterversion NAME-node.yaml": _snapshot("-node.yaml"),
    "--mock-clusterversion NAME-alerts.json": _snapshot("-alerts.json"),
    "--from NAME-cv.yaml": lambda s, d, _c: ["upgrade-status", "--from", str(_link(d / "x-cv.yaml", s))],
}


def _link(path: Path, target: Path) -> Path:
    path.symlink_to(target)
    return path


@pytest.mark.parametrize("kind", SPECIAL_KINDS)
@pytest.mark.parametrize("case", list(CASES))
def test_a_special_file_is_refused_in_one_line(
    case: str, kind: str, tmp_path: Path, certificate: tuple[str, str]
) -> None:
    special = special_file(tmp_path, kind, "special")
    work = tmp_path / "work"
    work.mkdir()
    argv = CASES[case](special, work, certificate)
    result = run_limited(cli(*argv), timeout=TIMEOUT, env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert not result.timed_out, f"still running after {TIMEOUT:g}s: {result.stderr[-500:]}"
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr[-2000:]
    assert "not a regular file" in result.stderr, result.stderr
    assert result.peak_rss_bytes < PEAK_RSS_BOUND, f"peak RSS {result.peak_rss_bytes >> 20} MiB"
