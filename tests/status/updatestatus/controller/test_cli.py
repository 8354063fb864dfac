"""`update-status-controller` options: namespace detection and flag validation (exit 2 with a reason)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cvo_py.cli import update_status_controller as usc
from cvo_py.cli.common import UsageError
from cvo_py.cli.main import build_parser, main


def test_namespace_is_explicit_then_the_pods_then_the_default(tmp_path: Path) -> None:
    sa_file = tmp_path / "namespace"
    assert usc.detect_namespace("mine", str(sa_file)) == "mine"
    assert usc.detect_namespace(None, str(sa_file)) == "openshift-update-status-controller"
    sa_file.write_text("from-the-pod\n")
    assert usc.detect_namespace(None, str(sa_file)) == "from-the-pod"


@pytest.mark.parametrize("kind", ["fifo", "device", "huge"])
def test_a_namespace_file_that_is_no_namespace_is_one_line(tmp_path: Path, kind: str) -> None:
    sa_file = tmp_path / "namespace"
    if kind == "fifo":
        os.mkfifo(sa_file)  # opening it to read would block
    elif kind == "device":
        sa_file.symlink_to("/dev/zero")  # would be read until memory runs out
    else:
        sa_file.write_bytes(b"n" * (usc.NAMESPACE_FILE_MAX_BYTES + 1))
    with pytest.raises(UsageError) as caught:
        usc.detect_namespace(None, str(sa_file))
    assert str(caught.value).startswith(f"cannot read the Pod's namespace from {sa_file}: ")


def test_defaults() -> None:
    options = usc.validate(build_parser().parse_args(["update-status-controller", "--namespace", "ns"]))
    assert options.namespace == "ns"
    assert options.leader_elect is True
    assert (options.timings.lease_duration, options.timings.renew_deadline, options.timings.retry_period) == (
        137.0,
        107.0,
        26.0,
    )
    assert options.listen == "0.0.0.0:9099"


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (
            ["--leader-elect-lease-duration=10", "--leader-elect-renew-deadline=10"],
            "--leader-elect-renew-deadline must be shorter than --leader-elect-lease-duration",
        ),
        (
            ["--leader-elect-renew-deadline=5", "--leader-elect-retry-period=5"],
            "--leader-elect-retry-period must be shorter than --leader-elect-renew-deadline",
        ),
        (["--namespace", "Not_A_Label"], 'invalid --namespace "Not_A_Label": want a DNS label'),
        (["--listen", "nowhere"], "invalid --listen address 'nowhere'"),
    ],
)
def test_unusable_values_exit_2_with_a_reason(
    args: list[str], reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["update-status-controller", *args]) == 2
    err = capsys.readouterr().err
    assert reason in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("value", ["0", "-3", "soon"])
def test_durations_must_be_positive_seconds(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["update-status-controller", f"--leader-elect-retry-period={value}"])
    assert exc.value.code == 2
    assert "--leader-elect-retry-period" in capsys.readouterr().err


def test_no_leader_election_flag() -> None:
    args = build_parser().parse_args(["update-status-controller", "--no-leader-elect", "--resync=5s"])
    options = usc.validate(args)
    assert options.leader_elect is False
    assert options.resync == 5.0
