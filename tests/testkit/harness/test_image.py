"""hack/image.py's pure parts: which mirror, which pip settings reach the build, which base."""

from __future__ import annotations

import pytest

from testkit.harness import image

DEB822 = """Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
"""


@pytest.mark.parametrize(
    ("sources", "mirror"),
    [
        ([DEB822], "http://deb.debian.org/debian"),
        (
            ["deb [arch=amd64 signed-by=/k.gpg] https://mirror.example/debian/ bookworm main contrib\n"],
            "https://mirror.example/debian",
        ),
        # Other suites and third-party repositories are not Debian's archive for bookworm.
        (["deb https://packages.example/apt cloud-sdk-bookworm main\n", DEB822.split("\n\n")[1]], None),
        (["# deb http://old.example/debian bookworm main\n"], None),
        (["Types: deb\nURIs: http://off.example/debian\nSuites: bookworm\nComponents: main\nEnabled: no\n"], None),
        (["deb http://x.example/debian bookworm contrib\n"], None),
    ],
)
def test_debian_mirror_is_the_archive_apt_uses_for_the_suite(sources: list[str], mirror: str | None) -> None:
    assert image.debian_mirror(sources) == mirror


def test_pip_settings_merge_files_then_environment_as_pip_does() -> None:
    files = [
        "[global]\nindex-url = https://a.example/simple\ncert = /etc/a.pem\n",
        "[global]\ncert = /etc/b.pem\n[install]\nno-compile = 1\n",
    ]
    env = {
        "PIP_INDEX_URL": "https://b.example/simple",
        "PIP_FIND_LINKS": "/opt/wheels",
        "PIP_CONFIG_FILE": "/x",
        "HOME": "/root",
    }
    settings = image.pip_settings(files, env)
    assert settings == {
        "global": {"index-url": "https://b.example/simple", "cert": "/etc/b.pem", "find-links": "/opt/wheels"},
        "install": {"no-compile": "1"},
    }
    assert image.render_pip_conf(settings) == (
        "[global]\nindex-url = https://b.example/simple\ncert = /etc/b.pem\nfind-links = /opt/wheels\n\n"
        "[install]\nno-compile = 1\n"
    )


def test_a_broken_pip_configuration_is_one_line() -> None:
    with pytest.raises(image.ImageError) as info:
        image.pip_settings(["[global\ncert = x\n"], {})
    assert "\n" not in str(info.value) and "pip configuration" in str(info.value)


def test_host_paths_named_by_pip_settings_are_mounted_once() -> None:
    settings = {
        "global": {
            "cert": "/etc/ssl/certs/ca.pem",
            "find-links": "/opt/wheels file:///srv/w https://x/y",
            "index-url": "/not/a/path/key",
        }
    }
    existing = {"/etc/ssl/certs/ca.pem", "/opt/wheels", "/srv/w"}
    assert image.host_paths(settings, existing.__contains__) == ["/etc/ssl/certs/ca.pem", "/opt/wheels", "/srv/w"]
    assert image.covered("/etc/ssl/certs/ca.pem", ["/etc/ssl/certs"])
    assert not image.covered("/etc/ssl/certsx", ["/etc/ssl/certs"])


def test_the_default_base_is_the_local_debian_base_no_registry_serves() -> None:
    assert image.dockerfile_base(image.DOCKERFILE.read_text()) == image.LOCAL_BASE
    with pytest.raises(image.ImageError):
        image.dockerfile_base("FROM python:3.11-slim\n")
