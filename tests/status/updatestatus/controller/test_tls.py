"""`update-status-controller --serving-cert-file/--serving-key-file/--tls-*`: the flags `start` has,
validated by the same code; HTTPS when a certificate is given, plain HTTP (with a warning) without.
Every unusable combination exits 2 with one line naming the flag."""

from __future__ import annotations

import ssl
import subprocess
import sys

import pytest

from cvo_py.cli import update_status_controller as usc
from cvo_py.cli.main import build_parser, main
from cvo_py.runtime.serving.options import ServingOptions
from cvo_py.runtime.serving.tls import DEFAULT_CIPHER_SUITES
from testkit.checkout import REPO
from testkit.harness.certs import self_signed


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Two certificate/key pairs and a file that is not PEM."""
    directory = tmp_path_factory.mktemp("pki")
    (cert, key), (_, other_key) = self_signed(directory, "a"), self_signed(directory, "b")
    junk = directory / "junk.pem"
    junk.write_text("not a certificate\n")
    return {"cert": cert, "key": key, "other_key": other_key, "junk": str(junk), "missing": str(directory / "no")}


def options(*args: str) -> usc.Options:
    return usc.validate(build_parser().parse_args(["update-status-controller", "--namespace", "ns", *args]))


def test_without_a_certificate_it_serves_plain_http() -> None:
    assert options().serving == ServingOptions()
    assert not options().serving.https


def test_with_a_certificate_it_serves_https_with_the_default_profile(pki: dict[str, str]) -> None:
    serving = options(f"--serving-cert-file={pki['cert']}", f"--serving-key-file={pki['key']}").serving
    assert serving.https
    assert (serving.cert_file, serving.key_file) == (pki["cert"], pki["key"])
    assert (serving.tls.min_version, serving.tls.cipher_suites) == ("VersionTLS12", DEFAULT_CIPHER_SUITES)


def test_tls_flags_are_parsed_as_starts(pki: dict[str, str]) -> None:
    serving = options(
        f"--serving-cert-file={pki['cert']}",
        f"--serving-key-file={pki['key']}",
        "--tls-min-version=VersionTLS13",
        "--tls-cipher-suites=TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384",
        "--tls-cipher-suites=TLS_CHACHA20_POLY1305_SHA256",
    ).serving
    assert serving.tls.minimum == ssl.TLSVersion.TLSv1_3
    assert serving.tls.cipher_suites == (
        "TLS_AES_128_GCM_SHA256",
        "TLS_AES_256_GCM_SHA384",
        "TLS_CHACHA20_POLY1305_SHA256",
    )


def test_an_empty_listen_serves_nothing_so_the_certificate_is_not_read(pki: dict[str, str]) -> None:
    # As `start`: with --listen empty the serving files are unused (the TLS flags are still checked).
    assert options("--listen=", f"--serving-cert-file={pki['missing']}").serving.cert_file == pki["missing"]


BAD: list[tuple[list[str], str]] = [
    # (flags, with {name} for a file of the `pki` fixture; the one-line reason)
    (["--serving-cert-file={cert}"], "--serving-cert-file was set, so --serving-key-file must be set"),
    (["--serving-key-file={key}"], "--serving-key-file was set, so --serving-cert-file must be set"),
    (
        ["--serving-cert-file={missing}", "--serving-key-file={key}"],
        "--serving-cert-file '{missing}': file not found",
    ),
    (
        ["--serving-cert-file={cert}", "--serving-key-file={missing}"],
        "--serving-key-file '{missing}': file not found",
    ),
    (
        ["--serving-cert-file={cert}", "--serving-key-file={other_key}"],
        "--serving-key-file '{other_key}' is not the key of --serving-cert-file '{cert}'",
    ),
    (
        ["--serving-cert-file={junk}", "--serving-key-file={key}"],
        "cannot load --serving-cert-file '{junk}' and --serving-key-file '{key}': "
        "want a PEM certificate and its PEM private key ([SSL] PEM lib)",
    ),
    (
        ["--listen=nowhere", "--serving-cert-file={cert}", "--serving-key-file={key}"],
        "invalid --listen address 'nowhere'",
    ),
    (["--tls-min-version=VersionTLS14"], "invalid TLS configuration: unknown TLS version 'VersionTLS14'"),
    (
        ["--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_BOGUS"],
        "invalid TLS configuration: unknown cipher suite 'TLS_BOGUS': want Go crypto/tls names",
    ),
    (
        ["--listen=", "--tls-cipher-suites=TLS_AES_128_GCM_SHA256"],
        "invalid TLS configuration: the cipher suites name only TLS 1.3 suites",
    ),
]


@pytest.mark.parametrize(("flags", "reason"), BAD, ids=[r.split(":")[0][:40] for _, r in BAD])
def test_unusable_serving_flags_exit_2_with_one_line(
    flags: list[str], reason: str, pki: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    args = [f.format(**pki) for f in flags]
    assert main(["update-status-controller", "--namespace", "ns", *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("cluster-version-operator update-status-controller: error: "), err
    assert reason.format(**pki) in err, err


def test_start_keeps_its_messages_for_the_same_flags() -> None:
    """One implementation, two policies: `start` requires the certificate when it listens."""
    for args, reason in (
        ([], "--listen was not set empty, so --serving-cert-file must be set"),
        (["--serving-cert-file", "c"], "--listen was not set empty, so --serving-key-file must be set"),
        (["--serving-cert-file", "c", "--serving-key-file", "k"], "--serving-cert-file 'c': file not found"),
    ):
        result = subprocess.run(
            [sys.executable, "-m", "cvo_py", "start", "--node-name", "n", "--release-image", "x", *args],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 2, result.stderr
        assert result.stderr.strip() == f"cluster-version-operator start: error: {reason}", result.stderr


def test_help_names_the_serving_flags() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "cvo_py", "update-status-controller", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    for flag in ("--serving-cert-file", "--serving-key-file", "--tls-min-version", "--tls-cipher-suites"):
        assert flag in result.stdout
