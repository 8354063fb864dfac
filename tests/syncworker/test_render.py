"""install/ renders as the CVO renders its image's /manifests (Go text/template), and what the
tests apply is that rendering: Go itself (testkit/oracles/gorender) against the toolkit's renderer
(syncworker/render.py), on every install/ file and on random templates."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cvo_py.runtime.gotext.quoting import go_quote
from syncworker.render import RenderData, TemplateError, render
from testkit.checkout import REPO
from testkit.harness import manifests
from testkit.oracles import goprogram

GO_PROGRAM = Path(goprogram.__file__).parent / "gorender" / "main.go"
DATA = manifests.RENDER_DATA


@pytest.fixture(scope="module")
def go_render(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield goprogram.build(GO_PROGRAM, tmp_path_factory.mktemp("gorender"))


def _data_json(data: RenderData) -> dict[str, object]:
    return {"ReleaseImage": data.release_image, "ClusterProfile": data.cluster_profile, "Images": dict(data.images)}


def go_results(binary: Path, cases: list[tuple[RenderData, str]]) -> list[tuple[bool, str]]:
    """(rendered?, output or error) from Go for each (data, template)."""
    lines = [
        json.dumps(_data_json(data)).encode().hex() + " " + text.encode("utf-8", "surrogateescape").hex()
        for data, text in cases
    ]
    out = []
    for line in goprogram.run_lines(binary, lines):
        status, _, payload = line.partition(" ")
        out.append((status == "ok", bytes.fromhex(payload).decode("utf-8", "surrogateescape")))
    return out


def python_result(data: RenderData, text: str) -> tuple[bool, str]:
    try:
        return True, render(text, data)
    except TemplateError as exc:
        return False, str(exc)


def test_every_install_file_renders_with_go_as_the_tests_apply_it(go_render: Path) -> None:
    paths = manifests.files()
    assert len(paths) >= 20
    results = go_results(go_render, [(DATA, p.read_text(encoding="utf-8")) for p in paths])
    failed = {p.name: text for p, (ok, text) in zip(paths, results, strict=True) if not ok}
    assert failed == {}, "the CVO would skip (4.22+) or fail on (≤4.21) these files"
    for path, (_, by_go) in zip(paths, results, strict=True):
        assert manifests.rendered(path) == by_go, path.name
        assert manifests.load(path.name) == manifests.documents(by_go), path.name
    # The Prometheus templates reach the cluster as Prometheus templates.
    rules = manifests.load("0000_90_cluster-version-operator_*prometheusrule*")
    annotations = [
        text for r in rules for g in r["spec"]["groups"] for rule in g["rules"] for text in rule["annotations"].values()
    ]
    assert any("{{ $labels.reason }}" in a for a in annotations)
    assert any('{{ if eq $labels.name "version" }}oc adm upgrade' in a for a in annotations)
    assert not any('{{ "' in a for a in annotations), "an escape left in a rendered annotation"
    [deployment] = [d for d in manifests.load(manifests.CVO_FILES) if d["kind"] == "Deployment"]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == DATA.release_image
    assert f"--release-image={DATA.release_image}" in container["args"]


# Templates Go refuses, as the CVO reports them, each also refused by the toolkit's renderer; and
# one Go accepts that the renderer refuses rather than render it wrong ("" below).
REFUSED = [
    ("{{ $labels.name }}", 'undefined variable "$labels"'),
    ('{{ with $x := "console_url" | query }}{{ end }}', 'function "query" not defined'),
    ("{{ .Foo }}", "can't evaluate field Foo"),
    ("{{ humanizeDuration 3 }}", 'function "humanizeDuration" not defined'),
    ('{{ "unterminated }}', "unterminated quoted string"),
    ("text {{ .ReleaseImage ", "unclosed action"),
    ('{{ "bad \\q escape" }}', "invalid syntax"),
    ("{{}}", "missing value for command"),
    ('{{ with $x := "console_url" }}{{ end }}', ""),  # valid Go, but nothing a manifest needs
]


@pytest.mark.parametrize(("text", "go_says"), REFUSED)
def test_what_go_refuses_the_toolkit_refuses(go_render: Path, text: str, go_says: str) -> None:
    [(ok, error)] = go_results(go_render, [(DATA, text)])
    if go_says:
        assert not ok and go_says in error
    assert python_result(DATA, text)[0] is False


IMAGES = {"cli": "registry.local/cli@sha256:" + "1" * 64, "must-gather": "registry.local/mg:1"}
TEXT_PIECES = ["a", " ", "\n", "\t", "{", "}", "{ {", "} }", '"', "`", "'", "$", "-", "é", "中", "\u202e", "#", ":"]
LITERAL_PIECES = ["{{", "}}", "$labels.x", '"', "\\", "`", "\n", "\t", "é", "\U0001f600", "\x01", " ", "x", "|"]


def _random_text(rng: random.Random, pieces: list[str], n: int) -> str:
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, n)))


def _random_action(rng: random.Random) -> str:
    kind = rng.randrange(10)
    if kind == 0:
        body = ".ReleaseImage"
    elif kind == 1:
        body = ".ClusterProfile"
    elif kind == 2:
        body = f"index .Images {go_quote(rng.choice([*IMAGES, 'missing']))}"
    elif kind == 3:
        body = "." + "Images." + rng.choice(["cli", "missing"])
    elif kind == 4:
        body = "`" + _random_text(rng, [p for p in LITERAL_PIECES if p != "`"], 6) + "`"
    elif kind == 5:
        body = "/* " + _random_text(rng, ["a", " ", "{{", "\n"], 4) + " */"
        return "{{" + rng.choice(["", "- "]) + body + rng.choice(["", " -"]) + "}}"
    elif kind == 6:  # what Go refuses
        body = rng.choice(["$labels.x", "query", ".Nope", "len", '"\\q"', ""])
    else:
        body = go_quote(_random_text(rng, LITERAL_PIECES, 8))
    left = rng.choice(["{{", "{{ ", "{{- ", "{{-\n", "{{  "])
    right = rng.choice(["}}", " }}", " -}}", "\n-}}", "  }}"])
    return left + body + right


def random_templates(n: int, seed: int) -> list[tuple[RenderData, str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        data = RenderData(
            release_image=rng.choice(["", "registry.local/release@sha256:" + "a" * 64, 'x y "q"']),
            cluster_profile=rng.choice(["self-managed-high-availability", "single-node-developer"]),
            images=rng.choice([{}, IMAGES]),
        )
        parts = []
        for _ in range(rng.randint(0, 6)):
            parts.append(_random_text(rng, TEXT_PIECES, 5))
            if rng.random() < 0.8:
                parts.append(_random_action(rng))
        out.append((data, "".join(parts)))
    return out


def test_the_toolkit_renders_as_go_on_random_templates(go_render: Path) -> None:
    cases = random_templates(3000, 25)
    by_go = go_results(go_render, cases)
    mismatches = []
    for (data, text), (go_ok, go_out) in zip(cases, by_go, strict=True):
        ok, out = python_result(data, text)
        if ok != go_ok or (ok and out != go_out):
            mismatches.append((text, (ok, out), (go_ok, go_out)))
    assert mismatches == [], mismatches[:5]
    rendered = sum(1 for ok, _ in by_go if ok)
    assert 0.3 * len(cases) < rendered < 0.9 * len(cases), "both outcomes are exercised"


def test_render_manifests_writes_what_the_tests_apply(tmp_path: Path) -> None:
    script = REPO / "hack" / "render_manifests.py"
    out = tmp_path / "rendered"
    done = subprocess.run(
        [sys.executable, str(script), "--release-image", "registry.local/cvo-py@sha256:" + "b" * 64,
         "--output-dir", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = RenderData(release_image="registry.local/cvo-py@sha256:" + "b" * 64)
    assert sorted(p.name for p in out.iterdir()) == [p.name for p in manifests.files()]
    for path in manifests.files():
        assert (out / path.name).read_text() == manifests.rendered(path, data)
    refused = subprocess.run(
        [sys.executable, str(script), "--release-image", " ", "--output-dir", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert refused.returncode == 2 and refused.stderr.splitlines()[-1].endswith("--release-image: empty")
