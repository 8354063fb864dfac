"""syncworker.manifest reads a payload file as the CVO does: the same documents, the same JSON bytes
(which versionHash is computed over) and the same refusals as Kubernetes' own decoder, compared
with Go itself (testkit/oracles/gomanifests) on fixed and random files."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from syncworker.manifest import (
    RELEASE_MANIFESTS,
    Manifest,
    ManifestError,
    TooManyDocuments,
    parse_group_version,
    parse_manifests,
    split_yaml_documents,
)
from testkit.oracles import goprogram

GO_PROGRAM = Path(goprogram.__file__).parent / "gomanifests" / "main.go"


@pytest.fixture(scope="module")
def go_manifests(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield goprogram.build(GO_PROGRAM, tmp_path_factory.mktemp("gomanifests"))


def parse(data: str | bytes) -> list[Manifest]:
    raw = data.encode() if isinstance(data, str) else data
    return parse_manifests(raw, directory=RELEASE_MANIFESTS, file="0000_10_x_00_f.yaml")


def python_result(data: bytes) -> tuple[bool, list[bytes] | str]:
    try:
        return True, [m.raw for m in parse(data)]
    except ManifestError as exc:
        return False, str(exc)


def go_results(binary: Path, files: list[bytes]) -> list[tuple[bool, list[bytes] | str]]:
    out: list[tuple[bool, list[bytes] | str]] = []
    for line in goprogram.run_lines(binary, [f.hex() for f in files], "parse"):
        status, *fields = line.split(" ")
        if status == "ok":
            out.append((True, [bytes.fromhex(f) for f in fields]))
        else:
            out.append((False, bytes.fromhex(fields[0]).decode()))
    return out


CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: ns\n"


def test_yaml_documents_become_the_json_bytes_go_writes() -> None:
    [m] = parse(CM.format(name="a") + "data:\n  on: yes\n  n: 017\n  f: 1e3\n  h: '<b>&'\n  v: 4.99.0\n")
    assert m.raw == (
        b'{"apiVersion":"v1","data":{"f":1000,"false":15,"h":"\\u003cb\\u003e\\u0026","true":true,"v":"4.99.0"},'
        b'"kind":"ConfigMap","metadata":{"name":"a","namespace":"ns"}}'
    )
    assert m.obj == json.loads(m.raw)
    assert (m.group, m.version, m.kind, m.namespace, m.name, m.index) == ("", "v1", "ConfigMap", "ns", "a", 0)


def test_json_documents_keep_their_own_bytes_trimmed() -> None:
    text = (
        '\n  {\n  "apiVersion": "v1", "kind": "ConfigMap",\n  "metadata": {"name": "j"}\n}\n\n'
        '{"kind": "X", "metadata": {"name": "k"}}  \n'
    )
    first, second = parse(text)
    assert first.raw == b'{\n  "apiVersion": "v1", "kind": "ConfigMap",\n  "metadata": {"name": "j"}\n}'
    assert second.raw == b'{"kind": "X", "metadata": {"name": "k"}}' and second.index == 1


def test_empty_and_null_documents_are_no_manifests() -> None:
    text = "---\n# only a comment\n---\nnull\n---\n\n---\n" + CM.format(name="a") + "...\n"
    assert [m.name for m in parse(text)] == ["a"]
    assert parse("") == [] and parse("\n\n# nothing\n") == []


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (CM.format(name="a") + "---\n" + CM.format(name="a"),
         'duplicate resource: (Group: "" Kind: "ConfigMap" Namespace: "ns" Name: "a")'),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: ns}\n",
         'Resource with fields Group: "" Kind: "ConfigMap" Namespace: "ns" Name: "" must contain kubernetes '
         "required fields kind and name"),
        ("apiVersion: v1\nmetadata: {name: a}\n",
         """unable to decode manifest: Object 'Kind' is missing in '{"apiVersion":"v1","metadata":{"name":"a"}}'"""),
        ("apiVersion: a/b/c\nkind: X\nmetadata: {name: a}\n", "unable to decode manifest: Object 'Kind' is missing"),
        ("kind: 5\nmetadata: {name: a}\n", "couldn't get version/kind; json parse error: kind is not a string"),
        ("- a\n- b\n", "cannot unmarshal array into an object"),
        ("a: [1, 2\n", "cannot parse at line 2"),
        ("---\n" + CM.format(name="a") + "data:\n  x: [\n", "cannot parse at line 9"),  # the file's line
        (CM.format(name="a") + "--- x\n", "invalid Yaml document separator: x"),
        (CM.format(name="a") + "----\n", "invalid Yaml document separator: -"),
        (CM.format(name="a") + "data: {x: .inf}\n", "json: unsupported value: +Inf"),
        (CM.format(name="a") + "data: {~: x}\n", "unsupported map key of type: <nil> at line 6"),
        (b"kind: X\nmetadata: {name: \xff}\n", "not UTF-8 (invalid byte at offset 25)"),
        ('{"kind": "X", "metadata": {"name": "a"}} {"kind": "X", "metadata": {"name": "b"}} garbage',
         "invalid character 'g' at offset"),
    ],
)  # fmt: skip
def test_what_the_cvo_refuses_is_one_line_saying_why(text: str | bytes, problem: str) -> None:
    with pytest.raises(ManifestError) as caught:
        parse(text)
    assert problem in str(caught.value)
    assert "\n" not in str(caught.value)


def test_documents_are_counted_against_the_callers_bound() -> None:
    text = "---\n".join(CM.format(name=f"n{i}") for i in range(10))
    assert len(parse_manifests(text.encode(), directory=RELEASE_MANIFESTS, file="f.yaml", max_documents=10)) == 10
    with pytest.raises(TooManyDocuments, match="^more than 9 documents$"):
        parse_manifests(text.encode(), directory=RELEASE_MANIFESTS, file="f.yaml", max_documents=9)


def test_documents_are_cut_at_separator_lines_as_kubernetes_cuts_them() -> None:
    text = "a: 1\n---\nb: 2\n--- # comment\n---\t\nc: 3"
    assert list(split_yaml_documents(text)) == [(0, "a: 1\n"), (2, "b: 2\n"), (5, "c: 3\n")]
    assert list(split_yaml_documents("---\n---\n")) == []
    assert list(split_yaml_documents("x: '\n---\n'\n")) == [(0, "x: '\n"), (2, "'\n")]


def test_task_names_and_labels_are_upstreams() -> None:
    namespaced, cluster = parse(CM.format(name="a") + "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n")
    from dataclasses import replace

    assert replace(namespaced, task=3, total=19).task_name() == 'configmap "ns/a" (3 of 19)'
    assert replace(cluster, task=1, total=19).task_name() == 'namespace "ns" (1 of 19)'
    assert replace(namespaced, task=3, total=19).label() == "configmap ns/a (3 of 19)"
    assert namespaced.resource_id() == 'Group: "" Kind: "ConfigMap" Namespace: "ns" Name: "a"'
    evil = parse('kind: "Config\\u001bMap"\nmetadata: {name: "a\\u202eb", namespace: "n\\ts"}\n')[0]
    assert "\x1b" not in evil.task_name() and "\u202e" not in evil.task_name() and "\t" not in evil.label()


def test_annotations_that_are_not_all_strings_are_none() -> None:
    ok, mixed, empty = parse(
        "kind: A\nmetadata: {name: a, annotations: {x: 'y'}}\n---\n"
        "kind: A\nmetadata: {name: b, annotations: {x: 1}}\n---\n"
        "kind: A\nmetadata: {name: c, annotations: {}}\n"
    )
    assert ok.annotations == {"x": "y"} and mixed.annotations is None and empty.annotations == {}


def test_group_version_is_split_as_apimachinery_splits_it() -> None:
    assert parse_group_version("v1") == ("", "v1")
    assert parse_group_version("apps/v1") == ("apps", "v1")
    assert parse_group_version("") == ("", "") and parse_group_version("/") == ("", "")
    assert parse_group_version("a/b/c") is None


def test_a_job_is_batch_v1_job_only() -> None:
    jobs = parse("apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\n---\n"
                 "apiVersion: batch/v1beta1\nkind: Job\nmetadata: {name: b}\n---\n"
                 "apiVersion: example.com/v1\nkind: Job\nmetadata: {name: c}\n")  # fmt: skip
    assert [m.is_job() for m in jobs] == [True, False, False]


# -- against Go -----------------------------------------------------------------------------------------

# Files whose reading differs between YAML libraries or between JSON and YAML streams.
FIXED_FILES = [
    CM.format(name="a") + "data:\n  y: n\n  v: [0o17, 017, 08, 0x1F, 1_000, +12, 1e3, .5, 1., 1e400, 1e-400]\n",
    CM.format(name="a") + "data:\n  big: [9223372036854775808, 18446744073709551616, -9223372036854775809]\n",
    CM.format(name="a") + "data:\n  keys: {1: a, y: b, 1.5: c, 1e6: d, 0.1: e}\n",
    CM.format(name="a") + "anchor: &a {p: 1, q: 2}\nmerged:\n  q: 0\n  <<: *a\n  p: 9\n"
    + "list:\n  <<: [{x: 1}, {x: 2, y: 3}]\n",
    CM.format(name="a") + "data:\n  t: !local text\n  s: !!str 5\n  f: !!float 5\n",
    CM.format(name="a").replace("\n", "\r\n") + "data:\r\n  x: |\r\n    one\r\n    two\r\n",
    CM.format(name="a") + "...\nthis: is ignored\n",
    '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}}\n---\n' + CM.format(name="y"),
    '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}}xyzw: 1\n',
    '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}}x',
    "{apiVersion: v1, kind: ConfigMap, metadata: {name: flow}}\n---\nkind: X\nmetadata: {name: z}\n",
    '\f{"kind": "X", "metadata": {"name": "a"}}',
    '{"kind": "X", "metadata": {"name": "a"}, "n": 1.0, "s": "\\u003c\\/"}',
    " " * 1100 + '{"kind": "X", "metadata": {"name": "far"}}',
    '{"metadata": {"name": "a"}}\n',
    "null\n",
    CM.format(name="a") + "data: {~: x}\n---\n" + CM.format(name="b"),
    CM.format(name="a") + "data:\n  k: {~: 1}\ndata: {}\n",
]  # fmt: skip


def test_fixed_files_read_as_go_reads_them(go_manifests: Path) -> None:
    files = [f.encode() for f in FIXED_FILES]
    mismatches = [
        (f, py, go)
        for f, py, go in zip(files, map(python_result, files), go_results(go_manifests, files), strict=True)
        if py[0] != go[0] or (py[0] and py[1] != go[1])
    ]
    assert mismatches == []


SCALARS = [
    "y", "n", "Y", "yes", "No", "on", "OFF", "~", "null", "Null", "", "1", "017", "08", "0x1F", "0o17", "0b101",
    "0b", "0x", "1_000", "+12", "-0", "1e3", "1E3", "1.0", ".5", "1.", "1e400", "1e-400", "-1e400",
    "99999999999999999999", "18446744073709551615", "9223372036854775808", "-9223372036854775809", "3.14159",
    "0.1", "1e16", "1e21", "1e-7", "1.5e-6", ".nan", ".inf", "-.inf", "<b>&", "é", "a\u2028b", "2001-12-14",
    "12:30", "1:30:00", "0.1.2", "4.99.0", "true", "False", "TRUE", "tRue", ".", "-", "+", "0", "00", "0.0",
    "-0.0", "+.5", "._5", ".5_0", "1_0.5", "0x_1f", "1__0", "_1", "1e+3", "12e", "e3", "0B11", "0X1f", "+0x10",
    "-0b11", "190:20:30", "0777", "07_77", "1,000", "$x", "=", "<<", "'quoted'", "!notatag", "1 2",
    "123456789012345678901234567890",
]  # fmt: skip
# Keys that stay distinct once written as JSON keys (`true` and `on` would both be "true": Go then
# keeps whichever its map iteration meets last).
KEYS = ["a", "b", "k1", "y", "n", "1", "2", "1.5", "1e3", "z<", "é", "0x10", "017", "1e6", "0.1", "123456789",
        "null", "'q'"]  # fmt: skip


def _scalar(rng: random.Random, flow: bool = False) -> str:
    text = rng.choice([s for s in SCALARS if not (flow and s.startswith("!"))])
    style = rng.random()
    if style < 0.7 or not text:
        if text.startswith(("'", "!", "$")) or text in ("-", "<<", "=", "."):
            return '"' + text + '"' if rng.random() < 0.5 and not text.startswith("!") else text
        return text
    if style < 0.85:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return "'" + text.replace("'", "''") + "'"


def _value(rng: random.Random, depth: int, indent: int) -> str:
    roll = rng.random()
    pad = "  " * indent
    if depth > 3 or roll < 0.55:
        return " " + _scalar(rng)
    if roll < 0.65:
        return " [" + ", ".join(_scalar(rng, flow=True) for _ in range(rng.randint(0, 3))) + "]"
    if roll < 0.72:
        pairs = {rng.choice(KEYS): _scalar(rng, flow=True) for _ in range(rng.randint(0, 3))}
        return " {" + ", ".join(f"{k}: {v}" for k, v in pairs.items()) + "}"
    if roll < 0.78:
        return " |\n" + "".join(f"{pad}  line {_scalar(rng)}\n" for _ in range(rng.randint(1, 3))).rstrip("\n")
    if roll < 0.84:
        return " >-\n" + "".join(f"{pad}  {_scalar(rng)}\n" for _ in range(rng.randint(1, 3))).rstrip("\n")
    if roll < 0.92:
        keys = dict.fromkeys(rng.choice(KEYS) for _ in range(rng.randint(1, 3)))
        return "\n" + "\n".join(f"{pad}  {k}:{_value(rng, depth + 1, indent + 1)}" for k in keys)
    return "\n" + "\n".join(f"{pad}  -{_value(rng, depth + 1, indent + 1)}" for _ in range(rng.randint(1, 3)))


def _yaml_manifest(rng: random.Random, name: str) -> str:
    lines = []
    if rng.random() < 0.97:
        lines.append("apiVersion: " + rng.choice(["v1", "apps/v1", "example.com/v1", "a/b/c"]))
    if rng.random() < 0.97:
        lines.append("kind: " + rng.choice(["ConfigMap", "Widget", "Job", "1", "''"]))
    lines.append("metadata:")
    if rng.random() < 0.97:
        lines.append(f"  name: {name}")
    if rng.random() < 0.5:
        lines.append("  namespace: " + rng.choice(["ns", "other", "''"]))
    if rng.random() < 0.5:
        lines.append("  annotations:" + _value(rng, 1, 1))
    for key in dict.fromkeys(rng.choice(KEYS) for _ in range(rng.randint(0, 4))):
        lines.append(f"{key}:{_value(rng, 0, 0)}")
    if rng.random() < 0.1:
        lines += ["anch: &A {p: 1, q: " + _scalar(rng, flow=True) + "}", "merged:\n  q: 0\n  <<: *A\n  p: 9"]
    if rng.random() < 0.05:
        lines.insert(rng.randrange(len(lines) + 1), "# comment " + _scalar(rng))
    return "\n".join(lines) + "\n"


def _yaml_file(rng: random.Random) -> str:
    separators = ["---\n", "---\n", "--- # c\n", "---   \n", "\n---\n", "----\n", "--- x\n", "...\n---\n", "---\r\n"]
    text = "---\n" if rng.random() < 0.2 else ""
    for i in range(rng.randint(0, 4)):
        text += _yaml_manifest(rng, rng.choice(["a", "b", "c", f"n{i}"])) + rng.choice(separators)
    if rng.random() < 0.3 and text.endswith("---\n"):
        text = text[:-4]
    if rng.random() < 0.1:
        text = text.replace("\n", "\r\n")
    return text.rstrip("\n") if rng.random() < 0.05 else text


def _json_file(rng: random.Random) -> str:
    parts = []
    for i in range(rng.randint(1, 3)):
        obj: object = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": rng.choice(["a", "b", f"j{i}"])},
            "data": {"x": rng.choice(["<&>", "1", "é", "\u2028"]), "n": rng.choice([1, 1.0, 1e21, 2.5, -0.0])},
        }
        if rng.random() < 0.1:
            obj = rng.choice([None, 5, [1]])
        parts.append(json.dumps(obj, indent=rng.choice([None, 2]), ensure_ascii=rng.random() < 0.5))
    text = rng.choice(["", "  ", "\n", "\f"]) + rng.choice(["\n", " ", "", "\n\n", "\n---\n"]).join(parts)
    roll = rng.random()
    if roll < 0.1:
        text += rng.choice(["x", "\nxyzw: 1\n", " garbage", "\n---\nkind: ConfigMap\nmetadata: {name: y}\n", "\v"])
    elif roll < 0.15:
        text = (
            "{apiVersion: v1, kind: ConfigMap, metadata: {name: f, annotations: {a: y}}}\n"
            "---\nkind: X\nmetadata: {name: g}\n"
        )
    return text


def random_files(n: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    return [(_yaml_file(rng) if rng.random() < 0.75 else _json_file(rng)).encode() for _ in range(n)]


def test_random_files_read_as_go_reads_them(go_manifests: Path) -> None:
    files = random_files(3000, 29)
    by_go = go_results(go_manifests, files)
    mismatches = [
        (f.decode(), py, go)
        for f, py, go in zip(files, map(python_result, files), by_go, strict=True)
        if py[0] != go[0] or (py[0] and py[1] != go[1])
    ]
    assert mismatches == [], mismatches[:3]
    read = sum(1 for ok, _ in by_go if ok)
    assert 0.2 * len(files) < read < 0.8 * len(files), "both outcomes are exercised"
