"""cvo_py.runtime.clientconfig, kubeconfig loading: what the direct reader takes (server, CA,
token) it reads as the official loader does; everything else still goes through the official
loader."""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from cvo_py.runtime import kubeconfig as schema
from cvo_py.runtime.clientconfig import load_config
from cvo_py.runtime.errors import ConfigError
from testkit.oracles import goprogram

# With "kubeconfig": into client-go's kubeconfig types.
GO_JSON = Path(__file__).parent / "gotext" / "gojson" / "main.go"


@pytest.fixture(scope="module")
def pem(certificate: tuple[str, str]) -> bytes:
    """A real certificate: the CA a kubeconfig names must load."""
    return Path(certificate[0]).read_bytes()


def kubeconfig(tmp_path: Path, cluster: dict[str, object], user: dict[str, object], **context: object) -> str:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}, {"name": "other", "cluster": {"server": "https://x:1"}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u", **context}}],
        "current-context": "ctx",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def official(path: str) -> tuple[str, str | None, bool, str | None]:
    from kubernetes import client, config

    cfg = client.Configuration()
    config.load_kube_config(config_file=path, client_configuration=cfg)  # type: ignore[no-untyped-call]
    ca = Path(cfg.ssl_ca_cert).read_text() if cfg.ssl_ca_cert else None
    return (
        cfg.host.rstrip("/"),
        ca,
        bool(cfg.verify_ssl),
        cfg.get_api_key_with_prefix("BearerToken", alias="authorization"),
    )


def read(path: str) -> tuple[str, str | None, bool, str | None]:
    cfg = load_config(path)
    assert cfg.official is None  # read directly
    ca = cfg.ca_data.decode() if cfg.ca_data else Path(cfg.ca_file).read_text() if cfg.ca_file else None
    return cfg.host, ca, cfg.verify, cfg.authorization()


@pytest.mark.parametrize(
    "cluster",
    [
        {"server": "https://127.0.0.1:6443/", "certificate-authority-data": "PEM"},
        {"server": "https://api.example:6443", "certificate-authority": "ca.crt"},  # relative to the file
        {"server": "https://api.example:6443", "insecure-skip-tls-verify": True},
    ],
)
def test_a_token_kubeconfig_is_read_as_the_official_loader_reads_it(
    tmp_path: Path, cluster: dict[str, object], pem: bytes
) -> None:
    cluster = {k: base64.b64encode(pem).decode() if v == "PEM" else v for k, v in cluster.items()}
    (tmp_path / "ca.crt").write_bytes(pem)
    path = kubeconfig(tmp_path, cluster, {"token": "sekret"}, namespace="ns")
    assert read(path) == official(path)
    assert read(path)[3] == "Bearer sekret"


@pytest.mark.parametrize(
    "user",
    [
        {"client-certificate-data": "PEM", "client-key-data": "PEM"},
        {"token": "sekret", "as": "someone"},  # impersonation: not for the direct reader
        {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "true", "interactiveMode": "Never"}},
    ],
)
def test_anything_else_goes_through_the_official_loader(tmp_path: Path, user: dict[str, object], pem: bytes) -> None:
    user = {k: base64.b64encode(pem).decode() if v == "PEM" else v for k, v in user.items()}
    path = kubeconfig(tmp_path, {"server": "https://127.0.0.1:6443", "insecure-skip-tls-verify": True}, user)
    try:
        cfg = load_config(path)
    except ConfigError as exc:  # only the official loader's failures read so
        assert "cannot load Kubernetes configuration from" in str(exc)
        return
    assert cfg.official is not None


def test_certificate_authority_data_is_kept_in_memory_and_checked(
    tmp_path: Path, pem: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No file is written for the CA data (none is left behind by a killed process), and data that
    is base64 but no certificate is one line naming it."""
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    cluster = {"server": "https://127.0.0.1:6443", "certificate-authority-data": base64.b64encode(pem).decode()}
    cfg = load_config(kubeconfig(tmp_path, cluster, {"token": "sekret"}))
    assert (cfg.ca_file, cfg.ca_data) == (None, pem)
    assert list((tmp_path / "tmp").iterdir()) == []
    cluster["certificate-authority-data"] = base64.b64encode(b"junk").decode()
    with pytest.raises(ConfigError) as raised:
        load_config(kubeconfig(tmp_path, cluster, {"token": "sekret"}))
    assert str(raised.value) == (
        f"cannot load Kubernetes configuration from {tmp_path / 'kubeconfig'}: cannot load the CA data "
        "(certificate-authority-data): no PEM certificate in it"
    )


NOT_PEM = base64.b64encode(b"not a pem").decode()
TOKEN_USER = "token: abc"


def _text(cluster: str = "", user: str = TOKEN_USER, context: str = "cluster: c\n    user: u") -> str:
    return (
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n"
        f"{cluster}\nusers:\n- name: u\n  user:\n    {user}\ncontexts:\n- name: x\n  context:\n    {context}\n"
        "current-context: x\n"
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (_text("    certificate-authority-data: abcdefghi"), "illegal base64 data at input byte 8"),
        (
            _text("    certificate-authority-data: 5"),
            "json: cannot unmarshal number into Go struct field Cluster.clusters.cluster.certificate-authority-data "
            "of type []uint8",
        ),
        (
            _text("    insecure-skip-tls-verify: 'yes'"),
            "json: cannot unmarshal string into Go struct field Cluster.clusters.cluster.insecure-skip-tls-verify "
            "of type bool",
        ),
        (
            _text(user="token: [a]"),
            "json: cannot unmarshal array into Go struct field AuthInfo.users.user.token of type string",
        ),
        (
            "clusters: {a: 1}\n",
            "json: cannot unmarshal object into Go struct field Config.clusters of type []v1.NamedCluster",
        ),
        ("- a\n", "json: cannot unmarshal array into Go value of type v1.Config"),
        (_text(user=f"client-certificate-data: {NOT_PEM}\n    client-key-data: {NOT_PEM}"),
         "tls: failed to find any PEM data in certificate input"),
        (_text(user="client-key-data: '!!!'"), "illegal base64 data at input byte 0"),
        (
            _text(user=f"client-certificate-data: {NOT_PEM}"),
            "invalid configuration: client-key-data or client-key must be specified for u to use the clientCert "
            "authentication method.",
        ),
        (
            _text(user="exec:\n      command: /bin/true"),
            "invalid configuration: [apiVersion must be specified for u to use exec authentication plugin, "
            "interactiveMode must be specified for u to use exec authentication plugin]",
        ),
        (
            _text(user="token: a\n    username: b"),
            "invalid configuration: more than one authentication method found for u; found [token basicAuth], only one "
            "is allowed",
        ),
        (
            _text(context="cluster: c\n    user: u").replace("current-context: x", "current-context: y"),
            "invalid configuration: [context was not found for specified context: y, cluster has no server defined]",
        ),
        (
            _text(context="cluster: elsewhere\n    user: u"),
            "invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment "
            "variable",
        ),
        (
            "",
            "invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment "
            "variable",
        ),
        (
            _text(f"    certificate-authority: ca.crt\n    certificate-authority-data: {NOT_PEM}"),
            "invalid configuration: certificate-authority-data and certificate-authority are both specified for c. "
            "certificate-authority-data will override.",
        ),
        (_text("    insecure-skip-tls-verify: !!bool maybe"), '!!bool cannot hold "maybe" at line 7'),
        (_text("    certificate-authority-data: !!int ''"), '!!int cannot hold "" at line 7'),
    ],
)
def test_a_malformed_kubeconfig_is_one_line_in_client_gos_words(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(text)
    (tmp_path / "ca.crt").write_text("x")
    with pytest.raises(ConfigError) as raised:
        load_config(str(path))
    assert str(raised.value) == f"cannot load Kubernetes configuration from {path}: {problem}"


def test_a_client_certificate_file_that_is_not_pem_is_said_in_gos_words(tmp_path: Path) -> None:
    (tmp_path / "cert").write_text("not a certificate")
    (tmp_path / "key").write_text("not a key")
    path = tmp_path / "kubeconfig"
    path.write_text(_text("    insecure-skip-tls-verify: true", user="client-certificate: cert\n    client-key: key"))
    with pytest.raises(ConfigError) as raised:
        load_config(str(path))
    assert str(raised.value).endswith(": tls: failed to find any PEM data in certificate input"), raised.value
    assert "PEM lib" not in str(raised.value) and "_ssl.c" not in str(raised.value)


_VALUES: list[Any] = [
    None, True, 0, 300, 1.5, "", "x", "YWJj", "YWJjZA==", "abcdefghi", "YW\nJj", "YQ=", "YQ==\n", "Y Q==", "é",
    [], {}, [1, 2], [300], [1.5], ["a"], {"a": "b"}, {"a": ["b"]}, {"a": [1]}, {"a": 1}, [None], [{"name": 1}],
]


def _random_field(rng: random.Random, kind: Any, depth: int) -> Any:
    if rng.random() < 0.25 or depth > 6:
        return rng.choice(_VALUES)
    if isinstance(kind, schema._Struct):
        keys = [*kind.fields, "unknown"]
        chosen = rng.sample(keys, rng.randint(0, min(4, len(keys))))
        return {k: _random_field(rng, kind.fields.get(k, "string"), depth + 1) for k in chosen}
    if isinstance(kind, schema._Slice):
        return [_random_field(rng, kind.elem, depth + 1) for _ in range(rng.randint(0, 2))]
    if isinstance(kind, schema._Map):
        return {f"k{i}": _random_field(rng, kind.elem, depth + 1) for i in range(rng.randint(0, 2))}
    return rng.choice(_VALUES)


def test_field_types_and_base64_are_refused_where_and_as_go_refuses_them(tmp_path: Path) -> None:
    """Random kubeconfigs decoded by Go's encoding/json into client-go's kubeconfig types: the same
    verdict and the same words for each (client-go matches field names case-sensitively, so only
    exact names are generated)."""
    binary = goprogram.build(GO_JSON, tmp_path)
    rng = random.Random(5)
    docs = [_random_field(rng, schema.CONFIG, 0) for _ in range(4000)]
    want = goprogram.run_lines(binary, [json.dumps(doc).encode().hex() for doc in docs], "kubeconfig")
    refused = 0
    for doc, go in zip(docs, want, strict=True):
        problem = schema.type_problem(doc)
        refused += bool(problem)
        assert (f"error {problem}" if problem else "ok") == go.replace("main.", "v1."), json.dumps(doc)
    assert 500 < refused < len(docs) - 500  # both verdicts were met
