"""The JSON files of a payload directory (release-metadata, image-references), read within bounds
and decoded as Go decodes them: what a release image or a hostPath holds is outside input."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from cvo_py.cli import main as cli
from cvo_py.runtime.safeload import DocumentError, FileMissing
from payload.release import RELEASE_METADATA, read_payload_json, read_release_metadata, release_metadata_problem
from status.clusterversion.metrics import payload_creation_time
from testkit.oracles import goprogram

BAD_JSON = [
    ("{", "unexpected end of JSON input"),
    ('{"version": NaN}', "invalid character 'N' at offset 13: looking for beginning of value"),
    ('{"version": Infinity}', "invalid character 'I' at offset 13: looking for beginning of value"),
    ('{"version": -Infinity}', "invalid character 'I' at offset 14: in numeric literal"),
    ("[" * 100_000 + "]" * 100_000, "exceeded max depth"),
]


def metadata_file(root: Path) -> Path:
    path = root / RELEASE_METADATA
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def test_release_metadata_is_an_object_or_nothing(tmp_path: Path) -> None:
    assert read_release_metadata(tmp_path) is None  # not running from a release image
    path = metadata_file(tmp_path)
    path.write_text('{"kind": "cincinnati-metadata-v0", "version": "4.13.7", "note": "NaN is text here"}')
    assert read_release_metadata(tmp_path) == {
        "kind": "cincinnati-metadata-v0",
        "version": "4.13.7",
        "note": "NaN is text here",
    }
    path.write_text("[1]")
    with pytest.raises(DocumentError) as caught:
        read_release_metadata(tmp_path)
    assert str(caught.value) == f"{path}: not a JSON object"


@pytest.mark.parametrize(("content", "problem"), BAD_JSON)
def test_what_go_would_not_decode_is_one_line_naming_the_file(tmp_path: Path, content: str, problem: str) -> None:
    path = metadata_file(tmp_path)
    path.write_text(content)
    with pytest.raises(DocumentError) as caught:
        read_release_metadata(tmp_path)
    assert str(caught.value) == f"{path}: {problem}"


@pytest.mark.parametrize("kind", ["fifo", "device", "huge"])
def test_no_file_is_read_without_a_bound(tmp_path: Path, kind: str) -> None:
    path = metadata_file(tmp_path)
    if kind == "fifo":
        os.mkfifo(path)  # opening it to read would block until a writer came
        problem = "not a regular file (a FIFO)"
    elif kind == "device":
        path.symlink_to("/dev/zero")  # its size reads as 0, and it never ends
        problem = "not a regular file (a character device)"
    else:
        with path.open("wb") as f:
            f.truncate(2 << 20)
        problem = "2097152 bytes, more than the limit of 1048576 bytes"
    with pytest.raises(DocumentError) as caught:
        read_release_metadata(tmp_path)
    assert str(caught.value) == f"{path}: {problem}"


def test_a_missing_file_is_told_apart(tmp_path: Path) -> None:
    with pytest.raises(FileMissing):
        read_payload_json(tmp_path, RELEASE_METADATA, 1024)


def test_payload_creation_time_reads_image_references_within_bounds(tmp_path: Path) -> None:
    refs = tmp_path / "release-manifests" / "image-references"
    refs.parent.mkdir()
    os.mkfifo(refs)
    assert payload_creation_time(str(tmp_path)) == 0.0  # at once: a FIFO is not opened
    refs.unlink()
    refs.write_text('{"kind": "ImageStream", "metadata": {"creationTimestamp": NaN}}')
    assert payload_creation_time(str(tmp_path)) == 0.0


def test_start_refuses_unreadable_release_metadata_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = metadata_file(tmp_path)
    os.mkfifo(path)
    monkeypatch.setenv("PAYLOAD_OVERRIDE", str(tmp_path))
    code = cli.main(
        ["start", "--release-image", "quay.io/x/y@sha256:" + "a" * 64, "--node-name", "node-1", "--listen", ""]
    )
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == (
        f"cluster-version-operator start: error: cannot read the release metadata {path}: not a regular file (a FIFO)\n"
    )


# with "release": into the fields of release-metadata the CVO reads
GO_JSON = Path(__file__).parents[1] / "cvo_py" / "runtime" / "gotext" / "gojson" / "main.go"


@pytest.mark.parametrize(
    ("metadata", "problem"),
    [
        (
            {"kind": "cincinnati-metadata-v0", "version": "4.14.1\x1b]0;x\x07"},
            'invalid Cincinnati metadata version "4.14.1\\x1b]0;x\\a": Invalid character(s) found in patch number '
            '"1\\x1b]0;x\\a"',
        ),
        ({"version": "4.14"}, 'invalid Cincinnati metadata version "4.14": No Major.Minor.Patch elements found'),
        ({"version": "v4.14.1"}, 'invalid Cincinnati metadata version "v4.14.1": Invalid character(s) found in major '
                                 'number "v4"'),
        ({"kind": "cincinnati-metadata-v0"}, "missing required Cincinnati metadata version"),
        ({"version": ""}, "missing required Cincinnati metadata version"),
        ({"version": None}, "missing required Cincinnati metadata version"),
        (
            {"version": "4.14.1", "metadata": "url=https://x"},
            "json: cannot unmarshal string into Go struct field metadata.metadata of type map[string]interface {}",
        ),
        (
            {"version": "4.14.1", "metadata": ["a"]},
            "json: cannot unmarshal array into Go struct field metadata.metadata of type map[string]interface {}",
        ),
        ({"version": 4.14}, "json: cannot unmarshal number into Go struct field metadata.version of type string"),
        (
            {"version": "4.14.1", "previous": ["4.14.0", 5]},
            "json: cannot unmarshal number into Go struct field metadata.previous of type string",
        ),
        (
            {"version": "4.14.1", "next": "4.14.2"},
            "json: cannot unmarshal string into Go struct field metadata.next of type []string",
        ),
    ],
)
def test_release_metadata_upstream_refuses_is_refused_in_its_words(
    tmp_path: Path, metadata: dict[str, object], problem: str
) -> None:
    path = metadata_file(tmp_path)
    path.write_text(json.dumps(metadata))
    with pytest.raises(DocumentError) as caught:
        read_release_metadata(tmp_path)
    assert str(caught.value) == f"{path}: {problem}"
    assert "\x1b" not in str(caught.value) and "\x07" not in str(caught.value)


def test_release_metadata_fields_are_refused_where_go_refuses_them(tmp_path: Path) -> None:
    """Random release-metadata documents decoded by Go's encoding/json into the fields the CVO
    reads: the same verdict on every field's type, in the same words."""
    binary = goprogram.build(GO_JSON, tmp_path)
    rng = random.Random(4)
    values: list[object] = [None, True, 1, 1.5, "", "4.14.1", "x", [], ["4.14.0"], [1], [None, "a"], {}, {"url": 1}]
    fields = ["kind", "version", "previous", "next", "metadata", "other"]
    docs = [{f: rng.choice(values) for f in rng.sample(fields, rng.randint(0, 5))} for _ in range(3000)]
    want = goprogram.run_lines(binary, [json.dumps(doc).encode().hex() for doc in docs], "release")
    refused = 0
    for doc, go in zip(docs, want, strict=True):
        problem = release_metadata_problem(doc)
        type_problem = problem if problem.startswith("json: ") else ""
        refused += bool(type_problem)
        assert (f"error {type_problem}" if type_problem else "ok") == go, json.dumps(doc)
    assert 300 < refused < len(docs) - 300


def test_start_refuses_a_release_version_that_is_not_semver_in_one_escaped_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = metadata_file(tmp_path)
    path.write_text(json.dumps({"kind": "cincinnati-metadata-v0", "version": "4.14.1\x1b]0;x\x07"}))
    monkeypatch.setenv("PAYLOAD_OVERRIDE", str(tmp_path))
    code = cli.main(
        ["start", "--release-image", "quay.io/x/y@sha256:" + "a" * 64, "--node-name", "node-1", "--listen", ""]
    )
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.startswith(f"cluster-version-operator start: error: cannot read the release metadata {path}: "
                          'invalid Cincinnati metadata version "4.14.1\\x1b]0;x\\a"')
    assert err.count("\n") == 1 and "\x1b" not in err
