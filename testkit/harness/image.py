"""Build the cvo-py container image with buildah: no container engine or daemon needed.

    image.py build [--tag REF] [--base REF|local]   build the Dockerfile (`make image`)
    image.py base [--rebuild]                       only the local Debian base image
    image.py size [--tag REF]                       the image's size as buildah shows it
    image.py push --tag REF --to HOST:PORT/REPO:TAG  push to a registry (plain HTTP); prints the digest
    image.py release --version V [--from REF] --to HOST:PORT/REPO  build and push a release image
                                                    (Dockerfile.release); prints it by digest

Images live in buildah's `vfs` storage (as root: /var/lib/containers/storage) and RUN steps use
`chroot` isolation, so the build works where no overlay filesystem or user namespace is available.
In `vfs` every layer is a whole copy of the file system (about 300 MB here), so nothing is kept that
no name refers to: builds keep no intermediate layers and remove their containers even when they
fail, and after each build the images of this project that lost their name to a newer one (they
carry its labels) are removed. A build first checks that its storage has room for it.

The base image (the Dockerfile's BASE_IMAGE) is, without --base, the Dockerfile's default: a local
image made from Debian packages (no image registry is contacted):
`debootstrap --variant=minbase --include=python3,python3-venv bookworm` from the Debian mirror apt
already uses, trimmed of package caches and documentation, committed as
`localhost/cvo-py-base:bookworm` and reused until its recipe changes (`base --rebuild` forces it).

pip inside the build reaches the package index with this machine's settings: its CA bundle
(/etc/ssl/certs) and its pip configuration (files and PIP_* environment, merged as pip merges
them) are mounted read-only for the RUN steps only; nothing of them is written into the image.
"""

from __future__ import annotations

import argparse
import configparser
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from fnmatch import fnmatch
from pathlib import Path

from testkit.checkout import REPO

DOCKERFILE = REPO / "Dockerfile"
RELEASE_DOCKERFILE = REPO / "Dockerfile.release"
DEFAULT_TAG = "localhost/cvo-py:dev"
STORAGE = ("--storage-driver", "vfs")
ISOLATION = ("--isolation", "chroot")

# The local base: Debian bookworm's python3 is 3.11.
SUITE = "bookworm"
BASE_PACKAGES = ("python3", "python3-venv")
LOCAL_BASE = f"localhost/cvo-py-base:{SUITE}"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
RECIPE_LABEL = "io.cvo-py.base-recipe"
# On the built image: a digest of everything the build reads, to skip a build that would change nothing.
INPUTS_LABEL = "io.cvo-py.build-inputs"
# Left out of the local base: apt's package cache and lists, documentation, translations.
TRIM = ("var/cache/apt", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale")
# Written by debootstrap from this machine; a container gets its own.
HOST_FILES = ("etc/hostname", "etc/resolv.conf")

PULL_TIMEOUT = 600.0
HOST_CA_DIR = "/etc/ssl/certs"
HOST_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
PIP_CONFIG_FILES = ("/etc/xdg/pip/pip.conf", "/etc/pip.conf", "~/.pip/pip.conf", "~/.config/pip/pip.conf")
# pip settings that name files or directories of this machine: mounted into the build as well.
PIP_PATH_KEYS = ("cert", "client-cert", "find-links")
TOOL_PACKAGES = {"buildah": "buildah", "debootstrap": "debootstrap"}
# The free space a build needs in buildah's storage: the build stage's container, the runtime
# stage's and the committed image are each a whole copy of the file system in `vfs`.
BUILD_SPACE = 2 * 1024**3


class ImageError(Exception):
    """A one-line reason why the image cannot be built or inspected."""


# -- pure helpers ----------------------------------------------------------------------------------


def dockerfile_base(text: str) -> str:
    """The default of the Dockerfile's `ARG BASE_IMAGE=...` (the local Debian base)."""
    match = re.search(r"^ARG\s+BASE_IMAGE=(\S+)\s*$", text, re.M)
    if match is None:
        raise ImageError("the Dockerfile has no `ARG BASE_IMAGE=<image>` line before its first FROM")
    return match.group(1)


def debian_mirror(sources: Iterable[str], suite: str = SUITE) -> str | None:
    """The first archive URI apt uses for `suite` with component main, from the texts of
    /etc/apt/sources.list (one-line format) and sources.list.d/*.sources (deb822)."""
    for text in sources:
        # deb822 stanzas are separated by blank lines; one-line entries start with "deb".
        for stanza in re.split(r"\n\s*\n", text):
            fields: dict[str, str] = {}
            for line in stanza.splitlines():
                line = line.split("#", 1)[0].rstrip()
                if not line.strip():
                    continue
                words = line.split()
                if words[0] == "deb":
                    words = re.sub(r"\[[^\]]*\]", " ", line).split()[1:]  # without [options]
                    if len(words) >= 3 and words[1] == suite and "main" in words[2:]:
                        return words[0].rstrip("/")
                    continue
                key, sep, value = line.partition(":")
                if sep and not line[0].isspace():
                    fields[key.strip().lower()] = value.strip()
            if "deb" in fields.get("types", "").split() and fields.get("enabled", "yes").lower() != "no":
                if suite in fields.get("suites", "").split() and "main" in fields.get("components", "").split():
                    return fields.get("uris", "").split()[0].rstrip("/") if fields.get("uris") else None
    return None


def pip_settings(config_texts: Sequence[str], env: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """pip's effective configuration as pip merges it: the files in order, then PIP_* variables
    (which are `global` settings: PIP_INDEX_URL is global.index-url)."""
    merged: dict[str, dict[str, str]] = {}
    for text in config_texts:
        parser = configparser.RawConfigParser()
        try:
            parser.read_string(text)
        except configparser.Error as exc:
            raise ImageError(f"cannot read a pip configuration file: {exc}".splitlines()[0]) from None
        for section in parser.sections():
            merged.setdefault(section, {}).update(parser[section])
    for key, value in env.items():
        if key.startswith("PIP_") and key != "PIP_CONFIG_FILE":
            merged.setdefault("global", {})[key[4:].lower().replace("_", "-")] = value
    return merged


def render_pip_conf(settings: Mapping[str, Mapping[str, str]]) -> str:
    lines: list[str] = []
    for section, values in settings.items():
        lines.append(f"[{section}]")
        lines.extend(f"{key} = {value}" for key, value in values.items())
        lines.append("")
    return "\n".join(lines)


def host_paths(
    settings: Mapping[str, Mapping[str, str]], exists: Callable[[str], bool] = os.path.exists
) -> list[str]:
    """Absolute paths of this machine named by path-valued pip settings (to mount them)."""
    paths: list[str] = []
    for values in settings.values():
        for key in PIP_PATH_KEYS:
            for value in (values.get(key) or "").split():
                path = value.removeprefix("file://")
                if path.startswith("/") and exists(path) and path not in paths:
                    paths.append(path)
    return paths


def covered(path: str, mounts: Iterable[str]) -> bool:
    return any(path == m or path.startswith(m.rstrip("/") + "/") for m in mounts)


def context_files(root: Path, ignore: Sequence[str]) -> list[Path]:
    """The files of the build context: everything but what .dockerignore leaves out (its
    top-level names and `**/NAME` patterns, the forms this repository uses)."""
    anywhere = {p.removeprefix("**/") for p in ignore if p.startswith("**/")}
    top = [p.rstrip("/") for p in ignore if not p.startswith("**/")]
    files: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        dirnames[:] = sorted(
            d for d in dirnames if d not in anywhere and not (rel == Path(".") and any(fnmatch(d, t) for t in top))
        )
        for name in sorted(filenames):
            if rel == Path(".") and any(fnmatch(name, t) for t in top):
                continue
            if name not in anywhere:
                files.append(Path(dirpath) / name)
    return files


def inputs_digest(files: Iterable[Path], root: Path, extra: Sequence[str]) -> str:
    """sha256 over the context files' paths and contents and `extra` (base image ID, arguments)."""
    digest = hashlib.sha256("\0".join(extra).encode())
    for path in files:
        digest.update(f"\0{path.relative_to(root)}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def base_recipe() -> str:
    return f"debootstrap --variant=minbase --include={','.join(BASE_PACKAGES)} {SUITE}; trim {','.join(TRIM)}"


# -- buildah ---------------------------------------------------------------------------------------


def buildah(*args: str, check: bool = True, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    try:
        result = subprocess.run(
            ["buildah", *STORAGE, *args], capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise ImageError(f"buildah {args[0]} did not finish within {timeout:.0f} s") from None
    if check and result.returncode != 0:
        raise ImageError(f"buildah {' '.join(args[:2])} failed: {last_line(result.stderr)}")
    return result


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def image_exists(ref: str) -> bool:
    return buildah("inspect", "--type", "image", ref, check=False).returncode == 0


def image_label(ref: str, label: str) -> str:
    result = buildah("inspect", "--type", "image", "--format", f'{{{{index .OCIv1.Config.Labels "{label}"}}}}', ref)
    return result.stdout.strip()


def unnamed_images(check: bool = True) -> list[str]:
    """The images this project made that no name refers to any more, such as the previous image of
    a tag just built again. Its images carry its labels; other images in the storage are not listed.
    Without `check`, a listing that fails lists nothing."""
    unnamed: set[str] = set()
    for label in (INPUTS_LABEL, RECIPE_LABEL):
        listed = buildah(
            "images", "--quiet", "--no-trunc", "--filter", "dangling=true", "--filter", f"label={label}", check=check
        )
        unnamed.update(listed.stdout.split() if listed.returncode == 0 else [])
    return sorted(unnamed)


def remove_unnamed() -> None:
    """Remove them, until none is left that can be: one at a time, as an image another image still
    builds on is kept until that one is gone. Never raises (it runs after builds that may have)."""
    left = unnamed_images(check=False)
    while left:
        for image in left:
            buildah("rmi", image, check=False)
        still = unnamed_images(check=False)
        if set(still) >= set(left):  # none of them could be removed: give up until the next build
            return
        left = still


def storage_free() -> tuple[str, int]:
    """buildah's storage directory and the bytes free on its file system."""
    result = buildah("info", "--format", "{{.store.GraphRoot}}", check=False)
    root = result.stdout.strip() or "/var/lib/containers/storage"
    probe = Path(root)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return root, shutil.disk_usage(probe).free


def require_space(needed: int = BUILD_SPACE) -> None:
    root, free = storage_free()
    if free < needed:
        raise ImageError(
            f"{free / 1024**3:.1f} GiB free for buildah's storage {root}; a build needs {needed / 1024**3:.0f} GiB"
            " (`buildah images` lists what it holds, `buildah rmi` removes an image)"
        )


def image_size(ref: str) -> str:
    """The image's size as `buildah images` shows it (uncompressed layers, e.g. "241 MB")."""
    result = buildah("images", "--json", ref)
    images = json.loads(result.stdout or "[]")
    if not images:
        raise ImageError(f"no image {ref}")
    return str(images[0]["size"])


def size_bytes(size: str) -> float:
    """Bytes of a size as buildah prints it (decimal units: "241 MB", "1.2 GB", "512 B")."""
    match = re.fullmatch(r"\s*([0-9.]+)\s*([kMGT]?B)\s*", size)
    if match is None:
        raise ImageError(f"cannot read the image size {size!r}")
    value = float(match.group(1))
    scale: int = 1000 ** "BkMGT".index(str(match.group(2))[0])
    return value * scale


def ensure_tools(tools: Sequence[str]) -> None:
    """Install missing tools with apt-get when root; otherwise stop with one line naming them."""
    missing = [TOOL_PACKAGES[t] for t in tools if shutil.which(t) is None]
    if not missing:
        return
    names = " ".join(missing)
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise ImageError(f"building the image needs the Debian packages {names}: apt-get install -y {names}")
    print(f"installing {names} with apt-get", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", *missing]):
        result = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if result.returncode != 0:
            raise ImageError(f"{' '.join(cmd)} failed: {last_line(result.stderr or result.stdout)}")


# -- the base image ----------------------------------------------------------------------------------


def apt_sources() -> list[str]:
    paths = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*.list"))]
    paths += sorted(Path("/etc/apt/sources.list.d").glob("*.sources"))
    return [p.read_text(errors="replace") for p in paths if p.is_file()]


def build_local_base(rebuild: bool = False) -> str:
    """`localhost/cvo-py-base:bookworm`, made from Debian packages unless present and current."""
    if not rebuild and image_exists(LOCAL_BASE) and image_label(LOCAL_BASE, RECIPE_LABEL) == base_recipe():
        print(f"base: reusing {LOCAL_BASE} (image.py base --rebuild makes it again)", flush=True)
        return LOCAL_BASE
    ensure_tools(["debootstrap"])
    require_space()
    mirror = os.environ.get("DEBIAN_MIRROR") or debian_mirror(apt_sources()) or DEFAULT_MIRROR
    started = time.monotonic()
    print(f"base: debootstrap {SUITE} ({', '.join(BASE_PACKAGES)}) from {mirror}", flush=True)
    with tempfile.TemporaryDirectory(prefix="cvo-py-base-", dir="/var/tmp") as tmp:
        root = Path(tmp) / "root"
        cmd = [
            "debootstrap",
            "--variant=minbase",
            f"--include={','.join(BASE_PACKAGES)}",
            SUITE,
            str(root),
            mirror,
        ]
        result = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise ImageError(f"debootstrap failed: {last_line(result.stdout + result.stderr)}")
        for rel in TRIM:
            target = root / rel
            if target.is_dir():
                for child in target.iterdir():
                    if child.is_dir() and not child.is_symlink():
                        shutil.rmtree(child)
                    else:
                        child.unlink()
        for rel in HOST_FILES:
            (root / rel).unlink(missing_ok=True)
        container = buildah("from", "--pull-never", "scratch").stdout.strip()
        try:
            mount = buildah("mount", container).stdout.strip()
            copy = subprocess.run(["cp", "-a", f"{root}/.", mount], capture_output=True, text=True, check=False)
            buildah("umount", container)
            if copy.returncode != 0:
                raise ImageError(f"copying the Debian root into the base image failed: {last_line(copy.stderr)}")
            buildah(
                "config",
                "--env",
                "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "--env",
                "LANG=C.UTF-8",
                "--cmd",
                "python3",
                "--label",
                f"{RECIPE_LABEL}={base_recipe()}",
                "--label",
                f"org.opencontainers.image.description=Debian {SUITE} minbase with {', '.join(BASE_PACKAGES)}",
                container,
            )
            buildah("commit", "--rm", container, LOCAL_BASE)
        except BaseException:
            buildah("rm", container, check=False)
            raise
        finally:
            remove_unnamed()
    print(f"base: {LOCAL_BASE} made in {time.monotonic() - started:.0f} s", flush=True)
    return LOCAL_BASE


def choose_base(requested: str) -> str:
    """The base to build on: by default (or `local`) the local Debian base, which is the
    Dockerfile's default; an image named explicitly is used as it is, pulled only if absent."""
    if requested in ("", "local", LOCAL_BASE):
        return build_local_base()
    if image_exists(requested):
        return requested
    print(f"base: pulling {requested}", flush=True)
    pulled = buildah("pull", "--quiet", requested, check=False, timeout=PULL_TIMEOUT)
    if pulled.returncode != 0:
        raise ImageError(f"cannot pull the base image {requested}: {last_line(pulled.stderr)}")
    return requested


# -- the image ---------------------------------------------------------------------------------------


def pip_build_settings() -> dict[str, dict[str, str]]:
    texts = []
    files = [os.path.expanduser(p) for p in PIP_CONFIG_FILES]
    if os.environ.get("PIP_CONFIG_FILE") and os.environ["PIP_CONFIG_FILE"] != os.devnull:
        files.append(os.environ["PIP_CONFIG_FILE"])
    for name in files:
        if os.path.isfile(name):
            texts.append(Path(name).read_text(errors="replace"))
    settings = pip_settings(texts, os.environ)
    if "cert" not in settings.get("global", {}) and os.path.isfile(HOST_CA_BUNDLE):
        settings.setdefault("global", {})["cert"] = HOST_CA_BUNDLE
    return settings


def build(tag: str, requested_base: str, rebuild: bool = False) -> None:
    started = time.monotonic()
    # debootstrap only for the local base, which the default falls back to.
    ensure_tools(["buildah", "debootstrap"] if requested_base in ("", "local") else ["buildah"])
    base = choose_base(requested_base)
    version = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M)
    ignore_file = REPO / ".dockerignore"
    ignore = [ln.strip() for ln in ignore_file.read_text().splitlines()] if ignore_file.is_file() else []
    base_id = buildah("inspect", "--type", "image", "--format", "{{.FromImageID}}", base).stdout.strip()
    inputs = inputs_digest(
        context_files(REPO, [i for i in ignore if i and not i.startswith("#")]),
        REPO,
        [base, base_id, version.group(1) if version else "dev"],
    )
    if not rebuild and image_exists(tag) and image_label(tag, INPUTS_LABEL) == inputs:
        print(f"{tag} is up to date (nothing it is built from changed; --rebuild builds it anyway): {image_size(tag)}")
        return
    require_space()
    settings = pip_build_settings()
    pip_conf = Path(tempfile.gettempdir()) / f"cvo-py-image-pip-{os.geteuid()}.conf"
    pip_conf.unlink(missing_ok=True)
    pip_conf.touch(mode=0o600)
    pip_conf.write_text(render_pip_conf(settings))
    mounts = [f"{pip_conf}:/etc/pip.conf:ro"]
    mounted: list[str] = []
    if os.path.isdir(HOST_CA_DIR):
        mounts.append(f"{HOST_CA_DIR}:{HOST_CA_DIR}:ro")
        mounted.append(HOST_CA_DIR)
    for path in host_paths(settings):
        if not covered(path, mounted):
            mounts.append(f"{path}:{path}:ro")
            mounted.append(path)
    cmd = [
        "buildah",
        *STORAGE,
        "bud",
        *ISOLATION,
        "--layers=false",
        "--force-rm",
        "--pull-never" if base == LOCAL_BASE else "--pull",
        "--label",
        f"{INPUTS_LABEL}={inputs}",
        "--build-arg",
        f"BASE_IMAGE={base}",
        "--build-arg",
        f"VERSION={version.group(1) if version else 'dev'}",
        *(arg for m in mounts for arg in ("-v", m)),
        "-f",
        str(DOCKERFILE),
        "-t",
        tag,
        str(REPO),
    ]
    print(f"build: {tag} on {base}", flush=True)
    try:
        result = subprocess.run(cmd, check=False)
    finally:
        pip_conf.unlink(missing_ok=True)
        remove_unnamed()
    if result.returncode != 0:
        raise ImageError(f"buildah bud failed (exit {result.returncode}); its output is above")
    print(f"built {tag} on {base}: {image_size(tag)}, in {time.monotonic() - started:.0f} s", flush=True)


# -- registry and release images ---------------------------------------------------------------


def push(ref: str, destination: str) -> str:
    """Push `ref` to `destination` (`host:port/repo:tag`, a registry on this machine speaking plain
    HTTP); returns the manifest digest the registry stores it under."""
    with tempfile.TemporaryDirectory() as tmp:
        digest_file = Path(tmp) / "digest"
        buildah(
            # Uncompressed: the registry is on this machine, and gzip of a 300 MB image costs a minute here.
            "push", "--quiet", "--tls-verify=false", "--disable-compression", "--digestfile", str(digest_file),
            ref, f"docker://{destination}",
            timeout=PULL_TIMEOUT,
        )  # fmt: skip
        digest = digest_file.read_text().strip()
    if not re.fullmatch(r"sha256:[0-9a-f]{64}", digest):
        raise ImageError(f"buildah push of {ref} reported no digest ({digest!r})")
    return digest


def by_digest(destination: str, digest: str) -> str:
    """`host:port/repo:tag` and a digest: the pull spec `host:port/repo@digest`."""
    name = destination.rsplit("@", 1)[0]
    if name.rfind(":") > name.rfind("/"):
        name = name[: name.rfind(":")]
    return f"{name}@{digest}"


def release_metadata(version: str, previous: Sequence[str] = ()) -> str:
    """/release-manifests/release-metadata, as a release image carries it (cincinnati-metadata-v0)."""
    document: dict[str, object] = {"kind": "cincinnati-metadata-v0", "version": version}
    if previous:
        document["previous"] = list(previous)
    return json.dumps(document, indent=2) + "\n"


def image_references(version: str, components: Mapping[str, str]) -> str:
    """/release-manifests/image-references: an ImageStream naming each component image by pull spec."""
    tags = [{"name": name, "from": {"kind": "DockerImage", "name": ref}} for name, ref in sorted(components.items())]
    document = {
        "kind": "ImageStream",
        "apiVersion": "image.openshift.io/v1",
        "metadata": {"name": version, "creationTimestamp": None},
        "spec": {"lookupPolicy": {"local": False}, "tags": tags},
    }
    return json.dumps(document, indent=2) + "\n"


def write_release_manifests(
    directory: Path,
    version: str,
    previous: Sequence[str],
    components: Mapping[str, str],
    files: Mapping[str, str] | None = None,
) -> Path:
    """`directory`/release-manifests with release-metadata and image-references, and `files`
    (a path under `directory`, such as `release-manifests/0000_50_x_00_ns.yaml` or
    `manifests/0000_00_cluster-version-operator_01_x.crd.yaml`, → its text); `directory`/manifests
    always exists (empty unless `files` puts something there)."""
    manifests = directory / "release-manifests"
    manifests.mkdir(parents=True, exist_ok=True)
    (directory / "manifests").mkdir(exist_ok=True)
    (manifests / "release-metadata").write_text(release_metadata(version, previous))
    (manifests / "image-references").write_text(image_references(version, components))
    for name, text in (files or {}).items():
        path = directory / name
        if path.resolve().parent not in ((directory / "manifests").resolve(), manifests.resolve()):
            raise ImageError(f"a release image's file goes in manifests/ or release-manifests/, not {name}")
        path.write_text(text)
    return manifests


def build_release(
    source: str,
    tag: str,
    version: str,
    previous: Sequence[str] = (),
    components: Mapping[str, str] | None = None,
    files: Mapping[str, str] | None = None,
) -> None:
    """Dockerfile.release on `source` (the cvo-py image): the release image of `version`, with
    `files` added to its payload (see `write_release_manifests`); skipped when `tag` was built from
    the same image, version and manifests."""
    ensure_tools(["buildah"])
    source_id = buildah("inspect", "--type", "image", "--format", "{{.FromImageID}}", source).stdout.strip()
    inputs = hashlib.sha256(
        json.dumps(
            [
                source_id,
                version,
                list(previous),
                dict(components or {}),
                dict(files or {}),
                RELEASE_DOCKERFILE.read_text(),
            ]
        ).encode()
    ).hexdigest()
    if image_exists(tag) and image_label(tag, INPUTS_LABEL) == inputs:
        return
    require_space()
    with tempfile.TemporaryDirectory() as context:
        write_release_manifests(
            Path(context), version, previous, components or {"cluster-version-operator": source}, files
        )
        try:
            buildah(
                "bud", *ISOLATION, "--pull-never", "--quiet", "--layers=false", "--force-rm",
                "--label", f"{INPUTS_LABEL}={inputs}",
                "--build-arg", f"CVO_IMAGE={source}", "--build-arg", f"RELEASE_VERSION={version}",
                "-f", str(RELEASE_DOCKERFILE), "-t", tag, context,
                timeout=PULL_TIMEOUT,
            )  # fmt: skip
        finally:
            remove_unnamed()


def build_variant(
    source: str | None,
    tag: str,
    *,
    user: str = "0",
    copies: Sequence[tuple[Path, str]] = (),
    entrypoint: Sequence[str] = (),
) -> None:
    """A small image made without a Dockerfile: `source` (None: an empty image) with each
    (path here, path in the image) of `copies` added, run as `user`. The local node's pause image,
    and release images that fail in the version Pod, are made so. Skipped when `tag` was made from
    the same inputs."""
    ensure_tools(["buildah"])
    source_id = source and buildah("inspect", "--type", "image", "--format", "{{.FromImageID}}", source).stdout.strip()
    files = [
        (f, f"{dest}/{f.relative_to(src)}" if src.is_dir() else dest)
        for src, dest in copies
        for f in ([src] if src.is_file() else sorted(src.rglob("*")))
    ]
    contents = [(dest, hashlib.sha256(f.read_bytes()).hexdigest()) for f, dest in files if f.is_file()]
    inputs = hashlib.sha256(json.dumps([source_id, user, contents, list(entrypoint)]).encode()).hexdigest()
    if image_exists(tag) and image_label(tag, INPUTS_LABEL) == inputs:
        return
    require_space()
    container = buildah("from", "--pull-never", "--quiet", source or "scratch").stdout.strip()
    try:
        for src, dest in copies:
            buildah("copy", "--quiet", container, str(src), dest)
        config = ["--user", user, "--label", f"{INPUTS_LABEL}={inputs}"]
        if entrypoint:
            config += ["--entrypoint", json.dumps(list(entrypoint))]
        buildah("config", *config, container)
        buildah("commit", "--quiet", "--rm", container, tag)
    except BaseException:
        buildah("rm", container, check=False)
        raise
    finally:
        remove_unnamed()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hack/image.py", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build the Dockerfile with buildah")
    b.add_argument("--tag", default=DEFAULT_TAG)
    b.add_argument("--base", default="", help="base image (pulled if absent); default or `local`: the Debian base")
    b.add_argument("--rebuild", action="store_true", help="build even when nothing it is built from changed")
    s = sub.add_parser("base", help="make the local Debian base image")
    s.add_argument("--rebuild", action="store_true")
    z = sub.add_parser("size", help="print the image's size")
    z.add_argument("--tag", default=DEFAULT_TAG)
    p = sub.add_parser("push", help="push an image to a registry on this machine; prints its digest")
    p.add_argument("--tag", default=DEFAULT_TAG)
    p.add_argument("--to", required=True, metavar="HOST:PORT/REPO:TAG")
    r = sub.add_parser("release", help="build a release image from the cvo-py image and push it")
    r.add_argument("--from", dest="source", default=DEFAULT_TAG, metavar="REF")
    r.add_argument("--version", required=True)
    r.add_argument("--to", required=True, metavar="HOST:PORT/REPO")
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            build(args.tag, args.base, args.rebuild)
        elif args.command == "push":
            ensure_tools(["buildah"])
            print(push(args.tag, args.to))
        elif args.command == "release":
            tag = f"localhost/cvo-py-release:{args.version}"
            build_release(args.source, tag, args.version)
            print(by_digest(args.to, push(tag, f"{args.to}:{args.version}")))
        elif args.command == "base":
            ensure_tools(["buildah"])
            build_local_base(rebuild=args.rebuild)
        else:
            ensure_tools(["buildah"])
            print(image_size(args.tag))
    except ImageError as exc:
        print(f"image: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
