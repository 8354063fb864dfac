"""Every shared oc example, turned into a must-gather (tree, list files, image directory, .tar.gz,
.tar.xz, .tar, .zip) and an Insights archive (.tar.gz and extracted, objects without TypeMeta as
the operator writes them, names obfuscated or not), prints through `upgrade-status --from` exactly
what the snapshot prints for the same objects, at both detail levels, after a first line saying
when it was assessed; a 4.7-era Insights archive (no pools, MachineConfigs or alerts) gives the
best answer the rest allows, with a line for each missing piece."""

from __future__ import annotations

import dataclasses
import io
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from cvo_py.cli import main as cli
from cvo_py.runtime.gotext.durations import HOUR, SECOND, truncate_duration
from cvo_py.runtime.gotext.times import format_time
from status.updatestatus.client import snapshot
from status.updatestatus.client.render import NOT_UPDATING, render
from testkit.checkout import EXAMPLES
from testkit.objects import dumps as conv

CASES = (
    sorted(p.name.removesuffix("-cv.yaml") for p in EXAMPLES.glob("*-cv.yaml")) if EXAMPLES.is_dir() else []
)
VARIANTS = [("none", ".output"), ("all", ".detailed-output")]
ALERTS_LINE = "Unable to fetch alerts, ignoring alerts in 'Update Health':  "


def upgrade_status(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["upgrade-status", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def expected(snap: snapshot.Snapshot, now: int, details: str) -> str:
    insights, at = snap.insights(now)
    return render(insights, at, details)


def check(out: str, want: str, now: int, *, alerts_line: bool) -> None:
    """`out` is `want` after the preamble: the assessment time first, then one line per note."""
    assert out.endswith(want), out
    preamble = out[: len(out) - len(want)].splitlines()
    assert preamble and preamble[0].startswith(f"Assessed at {format_time(now, nanos=False)}"), preamble
    assert (want != NOT_UPDATING and alerts_line) == any(line.startswith(ALERTS_LINE) for line in preamble)


def assert_prints(
    capsys: pytest.CaptureFixture[str], path: Path, now: int, want: Callable[[str, str], str]
) -> None:
    """`--from path` at both detail levels prints `want(details, golden suffix)` after its preamble."""
    for details, suffix in VARIANTS:
        code, out, err = upgrade_status(capsys, "--from", str(path), "--details", details)
        assert code == 0, f"{path}: {err}"
        check(out, want(details, suffix), now, alerts_line=True)


def golden(name: str, suffix: str) -> str:
    return (EXAMPLES / f"{name}{suffix}").read_text(encoding="utf-8")


def load(name: str) -> snapshot.Snapshot:
    return snapshot.load(EXAMPLES / f"{name}-cv.yaml")


def test_there_are_examples() -> None:
    if not EXAMPLES.is_dir():
        pytest.skip(f"../shared/oc-examples not found (looked in {EXAMPLES.resolve()})")
    assert len(CASES) >= 5


@pytest.mark.parametrize("name", CASES)
def test_must_gather_list_files_print_the_golden_output(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """List files keep the snapshot's order, so the output is oc's own golden output."""
    snap = load(name)
    now = snap.mock_now()
    top = conv.write_tree(conv.must_gather_files(snap, now, lists=True), tmp_path / "must-gather.local.42")
    assert_prints(capsys, top, now, lambda _, suffix: golden(name, suffix))


def _archives(snap: snapshot.Snapshot, now: int, tmp_path: Path) -> dict[str, Path]:
    files = conv.must_gather_files(snap, now)
    top = conv.write_tree(files, tmp_path / "must-gather.local.7")
    out = {"tree": top, "image-dir": top / conv.IMAGE_DIR}
    for ext, mode in ((".tar.gz", "w:gz"), (".tar.xz", "w:xz"), (".tar", "w")):
        path = tmp_path / f"must-gather{ext}"
        path.write_bytes(conv.tar_bytes(files, prefix="must-gather.local.7/", mode=mode))
        out[ext] = path
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for rel, data in files.items():
            z.writestr(f"must-gather.local.7/{rel}", data)
    (tmp_path / "must-gather.zip").write_bytes(buf.getvalue())
    out[".zip"] = tmp_path / "must-gather.zip"
    return out


@pytest.mark.parametrize("name", CASES)
def test_must_gather_in_every_form_prints_what_the_snapshot_prints(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = load(name)
    now = snap.mock_now()
    in_name_order = [conv._name(n) for n in snap.nodes] == sorted(conv._name(n) for n in snap.nodes)
    for details, suffix in VARIANTS:
        if in_name_order:  # then what the snapshot prints in name order is oc's golden output itself
            assert expected(conv.by_name(snap), now, details) == golden(name, suffix)
    for path in _archives(snap, now, tmp_path).values():
        assert_prints(capsys, path, now, lambda details, _: expected(conv.by_name(snap), now, details))


@pytest.mark.parametrize("name", CASES)
def test_insights_archive_prints_what_the_snapshot_prints(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = load(name)
    now = _insights_now(snap)
    file_name = _insights_name(now)
    files = conv.insights_files(snap)
    archive = tmp_path / file_name
    archive.write_bytes(conv.tar_bytes(files))
    extracted = conv.write_tree(files, tmp_path / file_name.removesuffix(".tar.gz"))
    for path in (archive, extracted):
        assert_prints(capsys, path, now, lambda details, _: expected(conv.by_name(snap), now, details))


@pytest.mark.parametrize("name", CASES)
def test_an_obfuscated_insights_archive_prints_what_the_snapshot_prints(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = conv.anonymized(load(name))
    now = _insights_now(snap)
    archive = tmp_path / _insights_name(now)
    archive.write_bytes(conv.tar_bytes(conv.insights_files(snap, obfuscated=True)))
    assert_prints(capsys, archive, now, lambda details, _: expected(conv.by_name(snap), now, details))


@pytest.mark.parametrize("name", CASES)
def test_a_47_era_insights_archive_gives_the_best_answer_with_the_missing_pieces(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = conv.anonymized(load(name))
    now = _insights_now(snap)
    archive = tmp_path / _insights_name(now)
    archive.write_bytes(conv.tar_bytes(conv.insights_47_files(snap)))
    partial = conv.by_name(dataclasses.replace(snap, pools=[], machineconfigs=[], alerts=None))
    assert_prints(capsys, archive, now, lambda details, _: expected(partial, now, details))
    code, out, err = upgrade_status(capsys, "--from", str(archive))
    assert code == 0, err
    assert "\nno MachineConfigPools in the dump: nodes and pools are not assessed\n" in out
    assert "\nno MachineConfigs in the dump: node versions are unknown (shown as ?)\n" in out


def _insights_now(snap: snapshot.Snapshot) -> int:
    """A gather time an Insights archive's name can carry (it holds seconds)."""
    return truncate_duration(snap.mock_now(), SECOND) + SECOND


def _insights_name(now: int) -> str:
    stamp = format_time(now, nanos=False)
    return f"insights-{stamp[:10]}-{stamp[11:19].replace(':', '')}.tar.gz"


@pytest.mark.parametrize("name", CASES)
def test_now_overrides_the_gather_time(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snap = load(name)
    gathered = snap.mock_now()
    top = conv.write_tree(conv.must_gather_files(snap, gathered), tmp_path / "mg")
    later = gathered + 3 * HOUR
    code, out, err = upgrade_status(capsys, "--from", str(top), "--now", format_time(later))
    assert code == 0, err
    check(out, expected(conv.by_name(snap), later, "none"), later, alerts_line=True)
    assert f"gathered at {format_time(gathered, nanos=False)}" in out.splitlines()[0]


@pytest.mark.parametrize("name", CASES)
def test_from_a_snapshot_is_the_mock_clusterversion_output(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    for details, suffix in VARIANTS:
        code, out, err = upgrade_status(capsys, "--from", str(EXAMPLES / f"{name}-cv.yaml"), "--details", details)
        assert code == 0, err
        assert out == golden(name, suffix)
