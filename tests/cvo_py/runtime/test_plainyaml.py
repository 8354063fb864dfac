"""cvo_py.runtime.plainyaml: what it reads equals what the full YAML builder builds, types and key
order included, and kubeconfigs as kubectl, oc and client-go write them are read by it."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from cvo_py.runtime import plainyaml, safeyaml
from cvo_py.runtime.docbounds import DEFAULT_LIMITS, DocumentError, Limits
from cvo_py.runtime.safeload import load_document

_NOT_BUILT = object()


def built(text: str, limits: Limits = DEFAULT_LIMITS) -> Any:
    """What the full builder makes of `text` (`_NOT_BUILT` when it refuses it)."""
    try:
        return safeyaml.Builder("doc", limits, True).build(text)
    except DocumentError:
        return _NOT_BUILT


def same(a: Any, b: Any) -> bool:
    """Equal with the same types and key order (True is not 1, {"a":1,"b":2} is not {"b":2,"a":1})."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def check(text: str, limits: Limits = DEFAULT_LIMITS) -> Any:
    """What the plain reader returns for `text`, after checking it agrees with the full builder."""
    doc = plainyaml.read(text, limits)
    if doc is not plainyaml.NOT_PLAIN:
        full = built(text, limits)
        assert full is not _NOT_BUILT, f"read what the builder refuses: {text!r}"
        assert same(doc, full), f"{text!r}: {doc!r} != {full!r}"
    return doc


OC_LOGIN = """\
apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: TFMwdExTMUNSVWRKVGlCRFJWSlVTVVpKUTBGVVJTMHRMUzB0Q2s=
    server: https://api.ci.example.com:6443
  name: api-ci-example-com:6443
contexts:
- context:
    cluster: api-ci-example-com:6443
    namespace: openshift-cluster-version
    user: kube:admin/api-ci-example-com:6443
  name: openshift-cluster-version/api-ci-example-com:6443/kube:admin
current-context: openshift-cluster-version/api-ci-example-com:6443/kube:admin
kind: Config
preferences: {}
users:
- name: kube:admin/api-ci-example-com:6443
  user:
    token: sha256~Q2_zzYx-3rWk9Jq8vN0aLm7pT4sUe1oB6cD5fG2hI3j
"""

HAND_WRITTEN = """\
# the lab cluster
apiVersion: v1
kind: Config
clusters:
  - name: lab
    cluster:
      server: "https://10.0.0.1:6443"
      insecure-skip-tls-verify: true

users:
  - name: ops
    user:
      token: 'abc.def'
contexts:
  - name: lab
    context: {cluster: lab, user: ops}
current-context: lab
"""


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        (OC_LOGIN, True),
        (HAND_WRITTEN, False),  # a flow mapping: read by the full builder
        (HAND_WRITTEN.replace("{cluster: lab, user: ops}", "\n        cluster: lab\n        user: ops"), True),
        ("a: 1\nb: 0\nc: 123456789012345678\n", True),
        ("a: 1234567890123456789\n", False),  # past what this reader types
        ("a: 012\n", False),  # YAML 1.1 octal
        ("a: 1.5\nb: .5\n", False),
        ("a: 2001-12-14\n", False),  # a timestamp, kept as text by the builder
        ("a: yes\nb: Off\nc: null\nd: NULL\ne: ~\n", False),  # ~ is null too, not read here
        ("a: yes\nb: Off\nc: null\nd: NULL\ne: word\n", True),
        ("a: 'it''s'\nb: ''\nc: \"\"\nd: \" x \"\n", True),
        ("a: 'it's'\n", False),
        ('a: "tab\\t"\n', False),  # escapes
        ("a: b: c\n", False),
        ("a: b:\n", False),
        ("a: x #c\n", False),
        ("a: x#c\n", True),
        ("a:\n  b\n", False),
        ("a: x\n  y\n", False),  # a plain scalar over two lines
        ("- a\n- - b\n", False),
        ("-\n- a\n-\n  b: c\n", True),
        ("a:\n- x\n- y: z\n  w: v\nb: c\n", True),
        ("token: 3f8a9b0c1d2e\nb: 1e5\nc: 12abc\nuid: 16ac3a1e-7f9a-414c-83a4-d67f415835a5\n", True),
        ("a: 2001-12-14\nb: 2001-1-1t1:1:1\n", False),
        ("a: 0x1f\n", False),
        ("a: 1_000\n", False),
        ("a: 1:20\n", False),  # sexagesimal
        ("yes: a\n", False),  # a boolean key
        ("a: |\n  text\n", False),
        ("a: &x b\nc: *x\n", False),
        ("a: !!str 1\n", False),
        ("---\na: b\n", False),
        ("a: b\n---\nc: d\n", False),
        ("a: b\r\n", False),
        ("a:\tb\n", False),
        ("a: caf\u00e9\n", False),
        ("", False),
        ("# only a comment\n", False),
        ("just a scalar\n", False),
        ("a: b\nc\n", False),
        ("  a: b\n c: d\n", False),
        ("a:\n    b: c\n  d: e\n", False),
    ],
)
def test_the_reader_takes_the_plain_shape_and_leaves_the_rest_to_the_builder(text: str, plain: bool) -> None:
    doc = check(text)
    assert (doc is not plainyaml.NOT_PLAIN) == plain, doc


def test_a_document_nested_past_the_bound_is_left_to_the_builder_which_refuses_it() -> None:
    deep = "".join(" " * i + "a:\n" for i in range(200)) + " " * 200 + "a: b\n"
    assert plainyaml.read(deep, DEFAULT_LIMITS) is plainyaml.NOT_PLAIN
    with pytest.raises(DocumentError, match="nested more than 128 levels deep"):
        load_document(deep, source="deep")
    assert plainyaml.read("a:\n  b:\n    c: d\n", Limits(max_depth=2)) is plainyaml.NOT_PLAIN
    for text, depth in (("a: {}\n", 1), ("a:\n- []\n", 2), ("- {}\n", 1)):  # an empty collection is a level
        assert check(text, Limits(max_depth=depth)) is plainyaml.NOT_PLAIN
        assert check(text, Limits(max_depth=depth + 1)) is not plainyaml.NOT_PLAIN


@pytest.mark.parametrize("text", ["{key}: v\n", "- {key}: v\n", "a:\n  {key}: v\n"])
def test_a_key_libyaml_finds_too_long_is_left_to_it(text: str) -> None:
    assert check(text.format(key="k" * 1000)) is not plainyaml.NOT_PLAIN
    assert check(text.format(key="k" * 1025)) is plainyaml.NOT_PLAIN


def test_a_large_document_is_left_to_libyaml() -> None:
    big = "".join(f"k{i}: v\n" for i in range(plainyaml.MAX_BYTES // 6))
    assert plainyaml.read(big, DEFAULT_LIMITS) is plainyaml.NOT_PLAIN
    assert load_document(big, source="big")["k7"] == "v"


# --- random documents ------------------------------------------------------------------------------

# Strings YAML may read as something else, or must quote, among ordinary ones.
TRICKY = [
    "yes", "No", "on", "OFF", "true", "null", "Null", "~", "", " ", "0", "00", "012", "12", "-1", "+1", "1.5", ".5",
    ".inf", "1e3", "0x1f", "0b11", "1_000", "1:20", "2001-12-14", "<<", "=", "a: b", "a:", "a #b", "#a", "-", "- a",
    "-a", "?", "? a", "'", '"', "it's", 'say "hi"', "a\\b", "[a]", "{a}", "a,b", "&a", "*a", "!a", "|", ">", "%a",
    "@a", "`a", "a ", " a", "3f8a", "1e5", "1e+5", "0x1g", "0b2", "12abc", "1-2", "2001-12-14t", "9:a", "1a.b",
    "2001-1-1", "2001-12-14 21:59:43.10 -5", "2001-12-14T21:59:43.10-05:00", "1234-", "12345-6", "1-2-3", "1e-5",
    "https://h:6443/p?q=1#f", "sha256~x-Y_z", "kube:admin/api:6443", "a\tb", "caf\u00e9",
]
WORDS = st.text(alphabet="abcefXYZ019_-./:~+ ", min_size=1, max_size=12)
SCALARS = st.one_of(
    st.sampled_from(TRICKY), WORDS, st.booleans(), st.none(), st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False), st.just({}), st.just([]),
)
KEYS = st.one_of(st.sampled_from(TRICKY), WORDS)
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=25,
).filter(lambda d: isinstance(d, dict | list))


@settings(max_examples=400)
@given(DOCUMENTS, st.integers(2, 5), st.integers(20, 120), st.booleans())
def test_documents_as_pyyaml_writes_them_read_as_the_builder_reads_them(
    doc: Any, indent: int, width: int, flow: bool
) -> None:
    check(yaml.safe_dump(doc, indent=indent, width=width, default_flow_style=flow or False, sort_keys=False))


# Lines a hand-written file may hold; the reader must agree with the builder on every mix of them.
FRAGMENTS = [
    "a: b", "b: c", "a:", "c:", "- a", "- b", "-", "- a: b", "-   c: d", "key: 'x'", 'k: "y"', "k: {}", "k: []",
    "k: yes", "k: 012", "k: 12", "k: 0", "k: 1.5", "k: ~", "k: a: b", "k: -x", "# c", "", "k: 'a''b'", "k: 'a'b'",
    "- - a", "k :v", "k: a #c", "k: x:", "---", "...", "k: |", "text", "k: &a v", "k: *a", "k: !!str 1", "? k",
    ": v", "k: [a]", "k: {a: 1}", 'k: "a\\n"', "k: null", "k: Off", "<<: x", "k: .5", "a b: c d", "k:v", "k: a:b",
    "k: x y ", "k:  spaced", "k: '  '", "0: a", "k: -", "k: - a", "-a: b", "/p: q", "_u: v", "k: 'x' y",
]


# Only lines of the plain shape: how they nest is what is tried.
PLAIN_FRAGMENTS = ["a: b", "b: c", "a:", "c:", "- a", "-", "- a: b", "-   c: d", "- c:", "k: yes", "k: 12", "# c", ""]
INDENTS = st.sampled_from([0, 0, 1, 2, 2, 3, 4, 6])


@settings(max_examples=1500)
@given(st.lists(st.tuples(INDENTS, st.sampled_from(FRAGMENTS)), max_size=12))
def test_any_mix_of_lines_reads_as_the_builder_reads_it(lines: list[tuple[int, str]]) -> None:
    check("".join(" " * indent + fragment + "\n" for indent, fragment in lines))


@settings(max_examples=1500)
@given(
    st.lists(st.tuples(INDENTS, st.sampled_from([*PLAIN_FRAGMENTS, "k: {}", "- []"])), min_size=1, max_size=12),
    st.integers(1, 6),
)
def test_any_nesting_of_plain_lines_reads_as_the_builder_reads_it(lines: list[tuple[int, str]], depth: int) -> None:
    text = "".join(" " * indent + fragment + "\n" for indent, fragment in lines)
    check(text)
    check(text, Limits(max_depth=depth))


KUBE_VALUES = st.one_of(
    st.builds(
        str.__add__, st.sampled_from("abcdefXYZ"), st.text(alphabet="abcdefXYZ0123456789-_./:~+=", max_size=40)
    ).filter(lambda s: not s.endswith(":") and s not in TRICKY),
    # hex tokens; one that starts with 0b (a YAML 1.1 binary number's prefix) is left to the builder
    st.text(alphabet="0123456789abcdef", min_size=8, max_size=40).filter(lambda s: not s.isdigit() and s[:2] != "0b"),
)
KUBECONFIGS = st.fixed_dictionaries(
    {
        "apiVersion": st.just("v1"),
        "clusters": st.lists(
            st.fixed_dictionaries({"cluster": st.dictionaries(st.sampled_from(["server", "certificate-authority-data",
                                  "certificate-authority", "tls-server-name"]), KUBE_VALUES), "name": KUBE_VALUES}),
            max_size=3,
        ),
        "contexts": st.lists(
            st.fixed_dictionaries({"context": st.dictionaries(st.sampled_from(["cluster", "user", "namespace"]),
                                   KUBE_VALUES), "name": KUBE_VALUES}),
            max_size=3,
        ),
        "current-context": KUBE_VALUES,
        "kind": st.just("Config"),
        "preferences": st.just({}),
        "users": st.lists(
            st.fixed_dictionaries({"name": KUBE_VALUES, "user": st.dictionaries(st.sampled_from(["token",
                                  "client-certificate-data", "client-key-data"]), KUBE_VALUES)}),
            max_size=3,
        ),
    }
)


@settings(max_examples=200)
@given(KUBECONFIGS, st.sampled_from([2, 4]))
def test_kubeconfigs_as_kubectl_writes_them_are_read_here(config: dict[str, Any], indent: int) -> None:
    text = yaml.safe_dump(config, indent=indent, default_flow_style=False, width=10**6, sort_keys=False)
    doc = check(text)
    assert doc is not plainyaml.NOT_PLAIN, text
    assert same(doc, config)
