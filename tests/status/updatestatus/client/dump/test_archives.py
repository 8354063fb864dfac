"""Hostile and broken dumps: read without writing anything, ignoring what climbs out or links
elsewhere, within bounds, and failing with one line (exit 2), never a traceback or a hang."""

from __future__ import annotations

import io
import os
import random
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from cvo_py.cli import main as cli
from status.updatestatus.client.dump import archives
from status.updatestatus.client.snapshot import Snapshot
from testkit.objects import dumps as conv
from testkit.objects.insight_objects import clusterversion, node, operator, pool

CV_PATH = "cluster-scoped-resources/config.openshift.io/clusterversions/version.yaml"


def run(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str, str]:
    code = cli.main(["upgrade-status", "--from", str(path), "--now", "2024-01-01T12:00:00Z"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line_error(code: int, err: str, *fragments: str) -> None:
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err


def tar_of(tmp_path: Path, entries: list[tarfile.TarInfo], data: dict[str, bytes], mode: str = "w:gz") -> Path:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tar:  # type: ignore[call-overload]
        for info in entries:
            payload = data.get(info.name)
            tar.addfile(info, io.BytesIO(payload) if payload is not None else None)
    path = tmp_path / "dump.tar.gz"
    path.write_bytes(buf.getvalue())
    return path


def regular(name: str, payload: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(payload)
    return info, payload


def test_traversal_and_absolute_names_are_ignored_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cv = b"kind: ClusterVersion\nmetadata: {name: version}\n"
    entries = []
    data = {}
    for name in (f"../../escape/{CV_PATH}", f"/abs/{CV_PATH}", f"mg/a/../../../{CV_PATH}"):
        info, payload = regular(name, cv)
        entries.append(info)
        data[name] = payload
    path = tar_of(tmp_path, entries, data)
    before = sorted(p for p in tmp_path.parent.rglob("*"))
    code, out, err = run(capsys, path)
    one_line_error(code, err, "neither a must-gather")
    assert out == ""
    assert sorted(p for p in tmp_path.parent.rglob("*")) == before


def test_symlinks_hard_links_and_devices_in_a_tar_are_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = []
    for i, kind in enumerate((tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.CHRTYPE, tarfile.FIFOTYPE)):
        info = tarfile.TarInfo(f"mg/img/{CV_PATH}" if i == 0 else f"mg/img/{CV_PATH}.{i}.yaml")
        info.type = kind
        info.linkname = "/etc/passwd"
        entries.append(info)
    path = tar_of(tmp_path, entries, {})
    code, _, err = run(capsys, path)
    one_line_error(code, err, "neither a must-gather")


def test_symlinks_in_a_directory_are_not_followed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text("kind: ClusterVersion\nmetadata: {name: version}\n")
    target = tmp_path / "mg" / "img" / CV_PATH
    target.parent.mkdir(parents=True)
    os.symlink(outside, target)
    os.symlink(tmp_path, tmp_path / "mg" / "img" / "loop")  # a directory link: not walked
    code, _, err = run(capsys, tmp_path / "mg")
    one_line_error(code, err, "neither a must-gather")


def test_zip_symlink_entries_are_ignored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        info = zipfile.ZipInfo(f"mg/img/{CV_PATH}")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(info, "/etc/passwd")
        z.writestr(f"../{CV_PATH}", "kind: ClusterVersion\nmetadata: {name: version}\n")
    path = tmp_path / "mg.zip"
    path.write_bytes(buf.getvalue())
    code, _, err = run(capsys, path)
    one_line_error(code, err, "neither a must-gather")


def test_a_compression_bomb_stops_at_the_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archives, "MAX_SCANNED_BYTES", 4 * 1024 * 1024)
    info, payload = regular("mg/img/host_service_logs/zeros.log", b"\0" * (16 * 1024 * 1024))
    path = tar_of(tmp_path, [info], {info.name: payload})
    assert path.stat().st_size < 100_000  # a real bomb: tiny archive, large content
    code, _, err = run(capsys, path)
    one_line_error(code, err, "decompresses to more than")


def test_a_member_too_large_to_read_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archives, "MAX_MEMBER_BYTES", 1024)
    info, payload = regular(f"mg/img/{CV_PATH}", b"# padding\n" * 1000)
    path = tar_of(tmp_path, [info], {info.name: payload})
    code, _, err = run(capsys, path)
    one_line_error(code, err, "larger than")


def test_too_many_members(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archives, "MAX_MEMBERS", 100)
    entries = [regular(f"mg/img/f{i}", b"")[0] for i in range(150)]
    path = tar_of(tmp_path, entries, {})
    code, _, err = run(capsys, path)
    one_line_error(code, err, "more than 100 entries")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for i in range(150):
            z.writestr(f"mg/f{i}", b"")
    (tmp_path / "mg.zip").write_bytes(buf.getvalue())
    code, _, err = run(capsys, tmp_path / "mg.zip")
    one_line_error(code, err, "more than 100 entries")


def _valid_must_gather() -> dict[str, bytes]:
    snap = Snapshot(
        name="x",
        clusterversion=clusterversion(),
        operators=[],
        machineconfigs=[],
        pools=[],
        nodes=[],
        alerts=None,
        mco_deployment=None,
    )
    files = conv.must_gather_files(snap, 0)
    files["zz-padding/big.log"] = os.urandom(200_000)  # incompressible: a cut lands in data
    return files


@pytest.mark.parametrize("mode", ["w:gz", "w:xz", "w"])
@pytest.mark.parametrize("keep", [0.3, 0.6, 0.95])
def test_truncated_archives(tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str, keep: float) -> None:
    whole = conv.tar_bytes(_valid_must_gather(), prefix="mg/", mode=mode)
    path = tmp_path / "cut.tar.gz"
    path.write_bytes(whole[: int(len(whole) * keep)])
    code, _, err = run(capsys, path)
    one_line_error(code, err)


def test_truncated_zip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for rel, data in _valid_must_gather().items():
            z.writestr(f"mg/{rel}", data)
    path = tmp_path / "cut.zip"
    path.write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    code, _, err = run(capsys, path)
    one_line_error(code, err)


@pytest.mark.parametrize(
    "content",
    [b"", b"not an archive at all", b"\x1f\x8b\x08garbage", b"PK\x03\x04garbage", b"\xfd7zXZ\x00garbage"],
    ids=["empty", "text", "bad-gzip", "bad-zip", "bad-xz"],
)
def test_garbage_files(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes) -> None:
    path = tmp_path / "dump.tar.gz"
    path.write_bytes(content)
    code, _, err = run(capsys, path)
    one_line_error(code, err)


def test_a_missing_path_and_a_bad_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, tmp_path / "nope")
    one_line_error(code, err, "cannot read")
    code = cli.main(["upgrade-status", "--from", str(tmp_path), "--format", "omc"])
    err = capsys.readouterr().err
    assert code == 2 and "--format" in err and err.count("\n") == 1


def test_unprintable_names_are_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "dump\x1b[31m.tar.gz"
    path.write_bytes(b"junk")
    code, _, err = run(capsys, path)
    one_line_error(code, err)
    assert "\x1b" not in err and "\\x1b" in err


def test_a_broken_object_names_its_member(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _valid_must_gather()
    files[f"{conv.IMAGE_DIR}/cluster-scoped-resources/core/nodes/n1.yaml"] = b"kind: Node\nmetadata: [1, 2\n"
    path = tmp_path / "mg.tar.gz"
    path.write_bytes(conv.tar_bytes(files, prefix="mg/"))
    code, _, err = run(capsys, path)
    one_line_error(code, err, "core/nodes/n1.yaml", "cannot parse")


@pytest.mark.parametrize(
    ("member", "problem"),
    [
        (b"kind: Node\nmetadata: {name: n1}\nx: !!bool maybe\n", '!!bool cannot hold "maybe" at line 3'),
        (b"kind: Node\nmetadata: {name: !!int ''}\n", '!!int cannot hold "" at line 2'),
        (b'{"kind": "Node", "metadata": {"name": "n1"}, "x": 1e400}', "cannot unmarshal number 1e400"),
    ],
)
def test_a_member_holding_what_no_type_can_hold_names_it_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], member: bytes, problem: str
) -> None:
    files = _valid_must_gather()
    files[f"{conv.IMAGE_DIR}/cluster-scoped-resources/core/nodes/n1.yaml"] = member
    path = tmp_path / "mg.tar.gz"
    path.write_bytes(conv.tar_bytes(files, prefix="mg/"))
    code, out, err = run(capsys, path)
    one_line_error(code, err, "core/nodes/n1.yaml", problem)
    assert out == ""


def _small_snapshot() -> Snapshot:
    return Snapshot(name="x", clusterversion=clusterversion(), operators=[operator("a")], machineconfigs=[],
                    pools=[], nodes=[], alerts=None, mco_deployment=None)


def test_a_deeply_nested_insights_gathers_file_is_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = conv.insights_files(_small_snapshot())
    files["insights-operator/gathers.json"] = b"[" * 200_000 + b"]" * 200_000
    root = conv.write_tree(files, tmp_path / "insights")
    code, out, err = run(capsys, root)
    assert code == 0, err  # the rest of the archive still reads; the file only says whether names are obfuscated
    assert "Traceback" not in err


def test_an_insights_clusterversion_list_without_items_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = conv.insights_files(_small_snapshot())
    files["config/version.json"] = b'{"kind": "ClusterVersionList", "items": []}'
    code, _, err = run(capsys, conv.write_tree(files, tmp_path / "insights"))
    one_line_error(code, err, "no ClusterVersion in config/version.json")


@pytest.mark.parametrize(
    ("flag_bits", "method"), [(0x1, zipfile.ZIP_DEFLATED), (0, 99)], ids=["encrypted", "method 99"]
)
def test_zip_members_that_cannot_be_read_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag_bits: int, method: int
) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr(CV_PATH, b"kind: ClusterVersion\nmetadata: {name: version}\n")
    raw = bytearray(buf.getvalue())
    # Rewrite the member's flags and method in its local header and its central directory entry.
    for signature, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = raw.find(signature)
        raw[at + flags_at:at + flags_at + 2] = (int.from_bytes(raw[at + flags_at:at + flags_at + 2], "little")
                                               | flag_bits).to_bytes(2, "little")
        if method != zipfile.ZIP_DEFLATED:
            raw[at + flags_at + 2:at + flags_at + 4] = method.to_bytes(2, "little")
    path = tmp_path / "dump.zip"
    path.write_bytes(bytes(raw))
    code, _, err = run(capsys, path)
    one_line_error(code, err, "not a readable archive")


def test_a_huge_tar_long_name_header_is_refused_before_it_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A GNU long-name header claiming 400 MiB: tarfile would read it into memory whole.
    header = tarfile.TarInfo("././@LongLink")
    header.type = tarfile.GNUTYPE_LONGNAME
    header.size = 400 * 1024 * 1024
    block = header.tobuf(format=tarfile.GNU_FORMAT)
    import gzip

    path = tmp_path / "dump.tar.gz"
    with gzip.open(path, "wb") as out:
        out.write(block)
        zeros = b"\0" * (1024 * 1024)
        for _ in range(8):
            out.write(zeros)
    code, _, err = run(capsys, path)
    one_line_error(code, err, "extended header of 419430400 bytes")


# -- a tar that ends where it should not ---------------------------------------------------------------


def _must_gather_tar() -> tuple[bytes, list[tarfile.TarInfo]]:
    """A valid uncompressed must-gather tar whose Nodes come last, and its members (with offsets)."""
    snap = Snapshot(name="x", clusterversion=clusterversion(), operators=[operator("a")], machineconfigs=[],
                    pools=[pool("worker")], nodes=[node(f"w{i}") for i in range(3)], alerts=None,
                    mco_deployment=None)  # fmt: skip
    files = conv.must_gather_files(snap, 0)
    nodes = {k: v for k, v in files.items() if "/core/nodes/" in k}
    ordered = {**{k: v for k, v in files.items() if k not in nodes}, **nodes}
    whole = conv.tar_bytes(ordered, prefix="mg/", mode="w")
    with tarfile.open(fileobj=io.BytesIO(whole)) as tar:
        return whole, tar.getmembers()


def _variants(whole: bytes, members: list[tarfile.TarInfo]) -> dict[str, bytes]:
    """The archive cut at block boundaries (before a header, after a member's data, before the
    end-of-archive blocks) and with a header halfway overwritten (a bad checksum)."""
    middle = members[len(members) // 2]
    last = members[-1]
    end_of_data = last.offset_data + -(-last.size // 512) * 512
    corrupt = bytearray(whole)
    corrupt[middle.offset : middle.offset + 100] = b"x" * 100
    flipped = bytearray(whole)
    flipped[middle.offset] ^= 0x01  # one bit of the name: the checksum no longer holds
    return {
        "cut before a header halfway": whole[: middle.offset],
        "cut inside a member's data at a block": whole[: middle.offset_data + 512] if middle.size > 512 else
        whole[: middle.offset + 512],
        "cut before the end-of-archive blocks": whole[:end_of_data],
        "a header halfway overwritten": bytes(corrupt),
        "one bit of a header halfway flipped": bytes(flipped),
    }  # fmt: skip


@pytest.mark.parametrize("compressed", [False, True], ids=["tar", "tar.gz"])
def test_a_tar_cut_at_a_block_or_with_a_corrupt_header_is_refused_not_half_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], compressed: bool
) -> None:
    import gzip

    whole, members = _must_gather_tar()
    path = tmp_path / ("mg.tar.gz" if compressed else "mg.tar")
    path.write_bytes(gzip.compress(whole) if compressed else whole)
    code, out, err = run(capsys, path)
    assert code == 0 and "no Nodes" not in out, err  # the whole archive reads
    for what, data in _variants(whole, members).items():
        path.write_bytes(gzip.compress(data) if compressed else data)
        code, out, err = run(capsys, path)
        one_line_error(code, err, "not a readable archive")
        assert out == "", (what, out)


def test_a_tar_ending_with_one_zero_block_reads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole, members = _must_gather_tar()
    last = members[-1]
    end_of_data = last.offset_data + -(-last.size // 512) * 512
    path = tmp_path / "mg.tar"
    path.write_bytes(whole[:end_of_data] + b"\0" * 512)  # GNU tar reads this too (a lone zero block)
    code, out, err = run(capsys, path)
    assert code == 0 and "no Nodes" not in out, err


# -- memory: what is refused is refused before it is held (each run in a child under an rlimit) -------

ADDRESS_SPACE = 448 * 1024 * 1024  # far below what reading any of these whole would take


def run_limited(path: Path) -> tuple[int, str]:
    """`upgrade-status --from path` in a child process whose address space is ADDRESS_SPACE."""
    import resource
    import subprocess
    import sys

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    done = subprocess.run(
        [sys.executable, "-m", "cvo_py", "upgrade-status", "--from", str(path)],
        preexec_fn=limit, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    return done.returncode, done.stderr


WANTED = "mg/img/cluster-scoped-resources/core/nodes/n{}.yaml"


def test_a_member_past_the_parser_limit_is_refused_unread(tmp_path: Path) -> None:
    path = conv.write_tar_bomb(tmp_path / "mg.tar.gz", {WANTED.format(0): 200 * 1024 * 1024})
    assert path.stat().st_size < 1_000_000
    code, err = run_limited(path)
    one_line_error(code, err, "is larger than 64 MiB: not read")


def test_many_members_under_the_parser_limit_stop_at_the_kept_bound(tmp_path: Path) -> None:
    # JSON objects padded with spaces: four at the parser's limit fill the kept bound, the fifth passes it
    members = {WANTED.format(i): 64 * 1024 * 1024 for i in range(4)} | {WANTED.format(4): 1024 * 1024}
    path = conv.write_tar_bomb(tmp_path / "mg.tar.gz", members, head=b"{", tail=b"}")
    assert path.stat().st_size < 1_000_000
    code, err = run_limited(path)
    one_line_error(code, err, "the documents to read exceed 256 MiB: not read")


def test_zip_entries_sharing_their_data_are_refused(tmp_path: Path) -> None:
    path = conv.write_overlapping_zip(tmp_path / "mg.zip", WANTED.format(0), 128 * 1024 * 1024, 4)
    assert path.stat().st_size < 1_000_000
    code, err = run_limited(path)
    one_line_error(code, err, "overlap")


def test_a_path_given_twice_is_read_once_the_later_wins(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole, _ = _must_gather_tar()
    cv_path = f"mg/{conv.IMAGE_DIR}/{CV_PATH}"
    target = clusterversion()
    target["status"]["history"][0]["version"] = "4.99.0"
    later = conv.tar_bytes({cv_path: conv._yaml(target)}, mode="w")
    members_only = whole.rstrip(b"\0")
    members_only += b"\0" * (-len(members_only) % 512)
    path = tmp_path / "mg.tar"
    path.write_bytes(members_only + later)
    with tarfile.open(path) as tar:  # the archive holds both, the later last
        assert [m.name for m in tar.getmembers()].count(cv_path) == 2
    code, out, err = run(capsys, path)
    assert code == 0, err
    assert "4.99.0" in out and "4.14.1" not in out.split("= Worker")[0], out


# -- what GNU tar warns about or refuses, the reader refuses; what it reads whole, the reader reads -----


def _gnu_tar() -> str:
    import shutil
    import subprocess

    tar = shutil.which("tar")
    version = subprocess.run([tar, "--version"], capture_output=True, text=True).stdout if tar else ""
    if tar is None or "GNU tar" not in version:
        pytest.skip("GNU tar is not installed: the archives cannot be compared with what it reads")
    return tar


def _gnu_listing(tar: str, path: Path) -> tuple[bool, int, list[str]]:
    """(GNU tar read `path` without a warning or an error, the entries it listed, the regular
    files among them)."""
    import subprocess

    done = subprocess.run([tar, "-tvf", str(path)], capture_output=True, text=True, timeout=60)
    lines = done.stdout.splitlines()
    regular = [line.split(maxsplit=5)[-1] for line in lines if line.startswith("-")]
    return done.returncode == 0 and not done.stderr, len(lines), regular


def _ours(path: Path) -> list[str] | None:
    """The members the reader reads from `path` (every regular one), or None when it refuses it."""
    from status.updatestatus.client.snapshot import SnapshotError

    try:
        return ["/".join(parts) for parts, _, _, _ in archives.read_archive(path, "dump", lambda parts: "member")]
    except SnapshotError:
        return None


def _mutations(rng: random.Random, data: bytes, blocks: bool) -> Iterator[tuple[str, bytes]]:
    """`data` cut, with bytes flipped, with garbage after it and (for a tar) a zero block inserted
    at a header, each at random places."""
    for _ in range(40):
        at = rng.randrange(len(data))
        yield f"cut at {at}", data[:at]
        yield f"byte {at} flipped", data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1 :]
    yield "garbage after it", data + b"garbage" * 100
    yield "zeros after it", data + b"\0" * 4096
    if blocks:
        for at in range(0, len(data), 512):
            if data[at : at + 512].strip(b"\0"):  # a block that is not zero: insert a zero block before it
                yield f"a zero block before block {at // 512}", data[:at] + b"\0" * 512 + data[at:]


@pytest.mark.parametrize("compression", ["tar", "gzip", "xz"])
def test_a_tar_reads_whole_exactly_when_gnu_tar_reads_it_whole(tmp_path: Path, compression: str) -> None:
    """Cuts, flipped bits, garbage and lone zero blocks, in the tar or in its compressed stream:
    when GNU tar lists fewer members (with a warning, an error, or silently, as for a tar cut inside
    a header), the reader refuses the archive: a view without those members would look whole. When
    GNU tar reads every member without a word, the reader reads them all. When it warns yet lists
    every member, the reader may read them or refuse."""
    import gzip
    import lzma

    gnu = _gnu_tar()
    whole, members = _must_gather_tar()
    all_files = [m.name for m in members if m.isreg()]
    compress = {"tar": bytes, "gzip": gzip.compress, "xz": lzma.compress}[compression]
    rng = random.Random({"tar": 1, "gzip": 2, "xz": 3}[compression])
    path = tmp_path / "mg.archive"
    checked = refused = 0
    for what, data in _mutations(rng, compress(whole), blocks=compression == "tar"):
        path.write_bytes(data)
        clean, entries, listed = _gnu_listing(gnu, path)
        ours = _ours(path)
        checked += 1
        refused += ours is None
        if entries < len(members):  # some members lost, whether GNU tar said so or not
            assert ours is None, f"{what}: GNU tar read only {entries} of {len(members)} members"
        elif clean:
            assert ours == listed == all_files, f"{what}: GNU tar read it whole"
        # else: GNU tar warned yet read every entry (a lone zero block at the very end, an unknown
        # pax keyword whose member keeps its ustar name): reading it or refusing it are both right.
    assert checked > 80 and 0 < refused < checked


def test_a_lone_zero_block_before_the_nodes_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """GNU tar stops at it with "A lone zero block"; read as the end, the dump would be said to have
    no Nodes."""
    whole, members = _must_gather_tar()
    first_node = next(m for m in members if "/core/nodes/" in m.name)
    path = tmp_path / "mg.tar"
    path.write_bytes(whole[: first_node.offset] + b"\0" * 512 + whole[first_node.offset :])
    code, out, err = run(capsys, path)
    one_line_error(code, err, "not a readable archive", f"a lone zero block at block {first_node.offset // 512}")
    assert out == "" and "no Nodes" not in err


@pytest.mark.parametrize("damage", ["crc", "trailer cut"])
def test_a_gzip_whose_checksum_fails_after_the_tar_end_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    """The tar's end-of-archive blocks come before gzip's CRC and length: the stream is read to its
    end, where gzip (and GNU tar through it) checks them."""
    import gzip

    whole, _ = _must_gather_tar()
    data = bytearray(gzip.compress(whole))
    if damage == "crc":
        data[-8] ^= 0xFF
    else:
        del data[-4:]
    path = tmp_path / "mg.tar.gz"
    path.write_bytes(bytes(data))
    code, out, err = run(capsys, path)
    one_line_error(code, err, "not a readable archive")
    assert out == ""


def test_a_zip_member_with_a_bad_crc_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    buf = io.BytesIO()
    cv = b"kind: ClusterVersion\nmetadata: {name: version}\n"
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(CV_PATH, cv)
    raw = bytearray(buf.getvalue())
    at = raw.find(cv)
    raw[at + len(cv) - 2] ^= 0x01  # the data, not the CRC the headers record for it
    path = tmp_path / "dump.zip"
    path.write_bytes(bytes(raw))
    code, out, err = run(capsys, path)
    one_line_error(code, err, "not a readable archive", "Bad CRC-32")
