"""syncworker.load reads a payload directory as the CVO does: the facts' synthetic payload (§8) gives
M = 19 with the excluded manifests and reasons the facts give, versionHash is Go's FNV-1 of the
bytes Go writes, and a payload that is bad as a whole is one load error, at once, with nothing of
it kept."""

from __future__ import annotations

import base64
import logging
import os
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from syncworker.load import (
    INTEGRITY,
    MAX_DOCUMENTS,
    MAX_FILE_BYTES,
    LoadError,
    Payload,
    fnv1_64,
    load_payload,
    manifest_file_names,
    version_hash,
)
from syncworker.select import Selection
from testkit.checkout import INSTALL
from testkit.objects.payloads import (
    CVO_IMAGE_TAG,
    RELEASE_IMAGE,
    SECTION8_TARGET,
    SECTION8_VERSION,
    image_of,
    section8_files,
    write_payload,
    write_section8,
)
from testkit.oracles import goprogram

GO_PROGRAM = Path(goprogram.__file__).parent / "gomanifests" / "main.go"
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: ns\n  annotations:\n" \
     "    include.release.openshift.io/self-managed-high-availability: 'true'\n"  # fmt: skip


def load(root: Path, selection: Selection | None = None) -> Payload:
    return load_payload(str(root), release_image=RELEASE_IMAGE, selection=selection or Selection())


def refusal(root: Path) -> LoadError:
    with pytest.raises(LoadError) as caught:
        load(root)
    assert "\n" not in caught.value.message
    return caught.value


# -- the facts' synthetic payload ---------------------------------------------------------------------------


def test_the_synthetic_payload_holds_19_tasks_in_load_order(section8: Payload) -> None:
    assert len(section8.manifests) == 19
    assert [m.task for m in section8.manifests] == list(range(1, 20))
    assert {m.total for m in section8.manifests} == {19}
    assert [(m.directory, m.kind, m.name) for m in section8.manifests[:4]] == [
        ("manifests", "Namespace", "openshift-cluster-version"),
        ("manifests", "ConfigMap", "render"),
        ("release-manifests", "CustomResourceDefinition", "widgets.example.com"),
        ("release-manifests", "Namespace", "test-b"),
    ]
    assert [m.name for m in section8.manifests[4:9]] == [
        "plain", "createonly", "gate-negated", "hosted-excluded", "capability"]  # fmt: skip
    assert section8.manifests[-1].file == "0000_70_i-json_00_cm.json"
    assert not any(m.name == "in-a-subdirectory" for m in section8.manifests)  # no recursion


def test_the_synthetic_payload_excludes_what_the_facts_exclude_and_says_why(section8: Payload) -> None:
    assert [(e.manifest.name, e.reason) for e in section8.excluded] == [
        ("tp", '"Default" is required, and release.openshift.io/feature-set=TechPreviewNoUpgrade'),
        ("no-profile", "include.release.openshift.io/self-managed-high-availability unset"),
        ("both", "both feature set and feature gate annotations are present: "
                 "manifests may specify either a feature set or a feature gate, but not both"),
    ]  # fmt: skip
    assert {e.manifest.task for e in section8.excluded} == {0}
    assert str(section8.excluded[0]) == (
        'excluding Filename: "0000_10_c-config_00_cms.yaml" Group: "" Kind: "ConfigMap" Namespace: "test-b" '
        'Name: "tp": "Default" is required, and release.openshift.io/feature-set=TechPreviewNoUpgrade'
    )
    [skipped] = section8.skipped
    assert str(skipped).startswith(
        "Skipping manifest 0000_00_cluster-version-operator_02_bad.yaml: template rendering failed "
        '(may require newer CVO): failed to parse manifest: template: manifest:9: executing "manifest" at <.Nope>'
    )


def test_the_cvo_manifests_are_rendered_with_the_loaded_image_profile_and_images(section8: Payload) -> None:
    render = section8.manifests[1].obj["data"]
    assert render == {
        "image": RELEASE_IMAGE,
        "profile": "self-managed-high-availability",
        "prometheus": "{{ x }}",
        "tag": image_of(SECTION8_VERSION),
    }
    assert section8.images == {CVO_IMAGE_TAG: image_of(SECTION8_VERSION)}
    # release-manifests are verbatim: their braces reach the object as written.
    assert b"{{" not in section8.manifests[0].raw


def test_the_release_comes_from_release_metadata(section8: Payload) -> None:
    release = section8.release
    assert (release.version, release.image, release.url) == ("4.99.0", RELEASE_IMAGE, "https://example.com/4.99.0")
    assert release.channels == ("fast-4.99", "stable-4.99")
    assert section8.major_version == 4
    assert section8.created == "2026-07-01T00:00:00Z"


def test_the_version_hash_is_twelve_url_safe_characters_ending_with_padding(section8: Payload) -> None:
    assert len(section8.version_hash) == 12 and section8.version_hash.endswith("=")
    assert set(section8.version_hash[:-1]) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert base64.urlsafe_b64decode(section8.version_hash) == fnv1_64(
        b"".join(m.raw for m in section8.manifests)
    ).to_bytes(8, "big")


def test_the_version_hash_is_gos(section8: Payload, tmp_path: Path) -> None:
    binary = goprogram.build(GO_PROGRAM, tmp_path)
    data = b"".join(m.raw for m in section8.manifests)
    rng = random.Random(3)
    samples = [b"", b"a", data] + [rng.randbytes(rng.randint(0, 300)) for _ in range(200)]
    by_go = goprogram.run_lines(binary, [s.hex() for s in samples], "hash")
    assert [version_hash([s]) for s in samples] == by_go
    assert by_go[2] == section8.version_hash


def test_the_version_hash_is_go_s_over_the_bytes_go_reads_from_the_payload(section8_dir: Path, tmp_path: Path) -> None:
    """The whole chain against Go: each release-manifests file read by Go, the kept documents'
    bytes hashed by Go, equal to versionHash."""
    binary = goprogram.build(GO_PROGRAM, tmp_path)
    payload = load(section8_dir)
    release_dir = section8_dir / "release-manifests"
    names = manifest_file_names(os.listdir(release_dir))
    by_go = goprogram.run_lines(binary, [(release_dir / n).read_bytes().hex() for n in names], "parse")
    go_raws = [bytes.fromhex(f) for line in by_go for f in line.split(" ")[1:]]
    kept = {m.raw for m in payload.manifests}
    excluded = {e.manifest.raw for e in payload.excluded}
    ours = [m.raw for m in payload.manifests if m.directory == "release-manifests"]
    assert [raw for raw in go_raws if raw not in excluded] == ours
    cvo = [m.raw for m in payload.manifests if m.directory == "manifests"]
    [go_hash] = goprogram.run_lines(binary, [b"".join(cvo + ours).hex()], "hash")
    assert go_hash == payload.version_hash and kept


@given(st.binary(max_size=64), st.integers(0, 2**64 - 1))
def test_fnv_four_bytes_a_step_is_fnv_one_byte_a_step(data: bytes, start: int) -> None:
    h = start
    for byte in data:  # the definition: multiply, then XOR, reduced after every byte
        h = (h * 0x100000001B3) & (2**64 - 1) ^ byte
    assert fnv1_64(data, start) == h


def test_excluding_hosted_manifests_gives_18(section8_dir: Path) -> None:
    payload = load(section8_dir, Selection(exclude="internal-openshift-hosted"))
    assert len(payload.manifests) == 18
    assert "hosted-excluded" not in {m.name for m in payload.manifests}
    assert payload.version_hash != load(section8_dir).version_hash  # excluded bytes are not hashed


def test_the_feature_set_and_profile_select_at_load(section8_dir: Path) -> None:
    tech_preview = load(section8_dir, Selection(feature_set="TechPreviewNoUpgrade"))
    assert "tp" in {m.name for m in tech_preview.manifests} and len(tech_preview.manifests) == 20
    gated = load(section8_dir, Selection(enabled_gates=frozenset({"SomeGate"})))
    assert "gate-negated" not in {m.name for m in gated.manifests}
    hosted_profile = load(section8_dir, Selection(profile="single-node-developer"))
    assert hosted_profile.manifests == () and hosted_profile.version_hash == "y_Kc5IQiIyU="  # FNV-1 of nothing


def test_the_update_target_holds_20_tasks(tmp_path: Path, section8: Payload) -> None:
    target = load(write_section8(tmp_path / "next", SECTION8_TARGET))
    assert len(target.manifests) == 20 and target.release.version == SECTION8_TARGET
    by_name = {m.name: m for m in target.manifests}
    assert by_name["plain"].obj["data"] == {"key": "value", "next": "4.99.1"}
    assert by_name["f-op"].obj["status"]["versions"] == [{"name": "operator", "version": "4.99.1"}]
    assert {"widgets.example.com", "gadgets.example.com", "deleted"} <= set(by_name)
    assert target.version_hash != section8.version_hash


def test_the_render_warning_is_logged(section8_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        load(section8_dir)
    assert any(
        "Skipping manifest 0000_00_cluster-version-operator_02_bad.yaml" in r.getMessage() for r in caplog.records
    )


def test_install_is_what_the_cvo_loads_from_its_image(tmp_path: Path) -> None:
    """install/ is the image's /manifests: every file renders, and the loader keeps what the
    cluster's feature set and gates select, the Deployment running the loaded release image."""
    install = {p.name: p.read_bytes() for p in INSTALL.glob("*.yaml")}
    root = write_payload(tmp_path / "p", SECTION8_VERSION, install, {})
    default = load(root)
    assert default.skipped == () and default.manifests
    files = {m.file for m in default.manifests}
    assert all("_cluster-version-operator_" in f and "accept-risks" not in f for f in files)
    [deployment] = [m for m in default.manifests if m.kind == "Deployment"]
    assert deployment.obj["spec"]["template"]["spec"]["containers"][0]["image"] == RELEASE_IMAGE
    gates = frozenset({"ClusterUpdateAcceptRisks"})
    preview = load(root, Selection(feature_set="DevPreviewNoUpgrade", enabled_gates=gates))
    assert {m.file for m in preview.manifests} == set(install)


# -- what the facts refuse -----------------------------------------------------------------------------


def _section8_with(tmp_path: Path, **release_files: str | bytes) -> Path:
    manifests, release = section8_files()
    return write_payload(tmp_path / "p", SECTION8_VERSION, manifests, {**release, **release_files})


def test_a_duplicate_within_one_file_fails_the_load(tmp_path: Path) -> None:
    root = _section8_with(
        tmp_path, **{"0000_10_c-config_03_dup.yaml": CM.format(name="d") + "---\n" + CM.format(name="d")}
    )
    error = refusal(root)
    assert error.reason == INTEGRITY
    assert error.message == (
        f"Error loading manifests from {root}/release-manifests: parse 0000_10_c-config_03_dup.yaml: "
        'duplicate resource: (Group: "" Kind: "ConfigMap" Namespace: "ns" Name: "d")'
    )


def test_a_duplicate_across_files_is_loaded_twice(tmp_path: Path) -> None:
    root = _section8_with(
        tmp_path, **{"0000_10_x_00_a.yaml": CM.format(name="d"), "0000_10_x_01_b.yaml": CM.format(name="d")}
    )
    assert [m.file for m in load(root).manifests if m.name == "d"] == ["0000_10_x_00_a.yaml", "0000_10_x_01_b.yaml"]


def test_image_references_must_name_the_release(tmp_path: Path) -> None:
    manifests, release = section8_files()
    stream = {"apiVersion": "image.openshift.io/v1", "kind": "ImageStream", "metadata": {"name": "4.99.1"}}
    root = write_payload(tmp_path / "p", SECTION8_VERSION, manifests, release, image_references=stream)
    assert refusal(root).message == "version from image-references (4.99.1) differs from release-metadata (4.99.0)"
    root = write_payload(tmp_path / "q", SECTION8_VERSION, manifests, release, image_references={"kind": "List"})
    assert refusal(root).message.startswith("unrecognized image-references in release payload")


def test_an_unknown_feature_set_value_silently_excludes(tmp_path: Path) -> None:
    odd = CM.format(name="odd") + "    release.openshift.io/feature-set: Default,Experimental\n"
    payload = load(_section8_with(tmp_path, **{"0000_10_c-config_04_odd.yaml": odd}))
    assert len(payload.manifests) == 19
    [exclusion] = [e for e in payload.excluded if e.manifest.name == "odd"]
    assert exclusion.reason.startswith('unrecognized value "Experimental" in release.openshift.io/feature-set=')


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"kind": "other", "version": "4.99.0"}, 'unrecognized Cincinnati metadata kind "other"'),
        ({"kind": "cincinnati-metadata-v0"}, "missing required Cincinnati metadata version"),
        ({"kind": "cincinnati-metadata-v0", "version": "4.99"}, 'invalid Cincinnati metadata version "4.99": '),
        (
            {"kind": "cincinnati-metadata-v0", "version": 4},
            "json: cannot unmarshal number into Go struct field metadata.version of type string",
        ),
    ],
)
def test_bad_release_metadata_is_refused_with_upstreams_text(
    tmp_path: Path, metadata: dict[str, object], message: str
) -> None:
    manifests, release = section8_files()
    root = write_payload(tmp_path / "p", SECTION8_VERSION, manifests, release, metadata=metadata)
    assert refusal(root).message.startswith(message)


def test_a_payload_without_its_files_is_refused(tmp_path: Path) -> None:
    root = write_section8(tmp_path / "p")
    (root / "release-manifests" / "image-references").unlink()
    assert refusal(root).message == f"stat {root}/release-manifests/image-references: no such file or directory"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("kind: ConfigMap\nmetadata: {name: [\n", "cannot parse at line 3"),
        ("apiVersion: v1\nmetadata: {name: a}\n", "unable to decode manifest: Object 'Kind' is missing"),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: a}\n", "must contain kubernetes required fields"),
        ("a: " + "[" * 300 + "]" * 300 + "\n", "nested more than 256 levels deep"),
        ('{"a": ' + "[" * 300 + "]" * 300 + "}", "nested more than 256 levels deep"),
        (b"kind: A\nmetadata: {name: \xc3}\n", "not UTF-8"),
    ],
)
def test_a_bad_manifest_fails_the_whole_load(tmp_path: Path, content: str | bytes, problem: str) -> None:
    error = refusal(_section8_with(tmp_path, **{"0000_99_z_00_bad.yaml": content}))
    assert error.reason == INTEGRITY
    assert error.message.startswith(
        f"Error loading manifests from {tmp_path}/p/release-manifests: parse 0000_99_z_00_bad.yaml: "
    )
    assert problem in error.message


def test_every_bad_file_of_the_directory_is_named_once_and_at_most_ten(tmp_path: Path) -> None:
    bad = {f"0000_99_z_{i:02d}_bad.yaml": "kind: [" for i in range(12)}
    message = refusal(_section8_with(tmp_path, **bad)).message
    assert message.count("parse 0000_99_z_") == 10 and message.endswith(", and 2 more]")
    two = refusal(_section8_with(tmp_path / "two", **dict(list(bad.items())[:2]))).message
    assert ": [parse 0000_99_z_00_bad.yaml: " in two and ", parse 0000_99_z_01_bad.yaml: " in two


def test_the_cvo_directory_fails_before_the_release_directory(tmp_path: Path) -> None:
    manifests, release = section8_files()
    root = write_payload(tmp_path / "p", SECTION8_VERSION, {**manifests, "0000_00_x_00_bad.yaml": "kind: ["},
                         {**release, "0000_99_z_00_bad.yaml": "kind: ["})  # fmt: skip
    assert refusal(root).message.startswith(
        f"Error loading manifests from {root}/manifests: parse 0000_00_x_00_bad.yaml"
    )


def test_a_file_of_50_mb_is_refused_before_it_is_read(tmp_path: Path) -> None:
    root = write_section8(tmp_path / "p")
    with open(root / "release-manifests" / "0000_99_z_00_huge.yaml", "wb") as f:
        f.truncate(50 << 20)  # sparse: its size says 50 MB
    message = refusal(root).message
    assert f"read 0000_99_z_00_huge.yaml: {50 << 20} bytes, more than the limit of {MAX_FILE_BYTES} bytes" in message


def test_100000_documents_are_refused_before_they_are_parsed(tmp_path: Path) -> None:
    many = "---\n".join(f"kind: ConfigMap\nmetadata: {{name: n{i}}}\n" for i in range(100_000))
    error = refusal(_section8_with(tmp_path, **{"0000_99_z_00_many.yaml": many}))
    assert error.message.endswith(f"parse 0000_99_z_00_many.yaml: more than {MAX_DOCUMENTS} documents in the payload")


def test_the_payload_holds_a_bounded_number_of_bytes(section8_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from syncworker import load as loader

    monkeypatch.setattr(loader, "MAX_PAYLOAD_BYTES", 3000)  # the payload holds about 6 KB
    with pytest.raises(LoadError) as caught:
        load(section8_dir)
    assert caught.value.message == (
        f"Error loading manifests from {section8_dir}/release-manifests: more than 3000 bytes of manifests"
    )


def test_a_fifo_is_an_unreadable_file_not_a_hang(tmp_path: Path) -> None:
    root = write_section8(tmp_path / "p")
    os.mkfifo(root / "release-manifests" / "0000_99_z_00_fifo.yaml")
    assert "read 0000_99_z_00_fifo.yaml: not a regular file (a FIFO)" in refusal(root).message


def test_files_are_read_in_byte_order_with_the_cvos_suffixes() -> None:
    names = ["b.yaml", "a.yml", "B.json", "c.YAML", "release-metadata", "image-references", "notes.txt", "é.yaml",
             "z.json", "0000_01_a_00_x.yaml"]  # fmt: skip
    assert manifest_file_names(names) == ["0000_01_a_00_x.yaml", "B.json", "a.yml", "b.yaml", "z.json", "é.yaml"]


def test_the_payload_major_version_selects_crds(tmp_path: Path) -> None:
    crd = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {name}\n"
           "  annotations:\n    include.release.openshift.io/self-managed-high-availability: 'true'\n"
           "    release.openshift.io/major-version: '{major}'\n")  # fmt: skip
    payload = load(_section8_with(tmp_path, **{
        "0000_99_z_00_crd.yaml": crd.format(name="five", major="5") + "---\n" + crd.format(name="not-four", major="-4")
    }))  # fmt: skip
    assert {e.manifest.name for e in payload.excluded} >= {"five", "not-four"}
