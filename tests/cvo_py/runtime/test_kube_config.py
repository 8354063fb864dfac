"""Kubeconfig loading: what the direct reader takes (server, CA, token) it reads as the official
loader does; everything else still goes through the official loader."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml

from cvo_py.runtime.kube import ConfigError, load_config


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
        {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "true"}},
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
