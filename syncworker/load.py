"""A release payload directory read as the CVO reads it: its release, its images and the manifests
it will apply, in order, with their versionHash; or one load error and nothing.

    payload = load_payload(directory, release_image=image, selection=Selection(...))   # LoadError

The directory is a release image's root: the running release's is `/` (`PAYLOAD_OVERRIDE`
replaces it), an accepted target's the version Pod's copy under `/etc/cvo/updatepayloads/`. It
must hold `manifests/`, `release-manifests/`, `release-manifests/release-metadata` and
`release-manifests/image-references`. Then:

1. `release-metadata` names the release (`kind` `cincinnati-metadata-v0`, a SemVer `version`;
   url, channels and architecture from its `metadata` map); `image-references`, an
   `image.openshift.io/v1` ImageStream, must be named exactly that version, and gives the images
   (its `DockerImage` tags) and the payload's creation time.
2. `manifests/` (the CVO's own, each file first rendered as a Go template with `.ReleaseImage`,
   `.ClusterProfile` and `.Images`; a file that does not render is skipped with a warning), then
   `release-manifests/` (verbatim): the files named `*.yaml`, `*.yml` or `*.json` directly in
   each, in byte-wise name order, each a stream of documents (`syncworker.manifest`).
3. Each manifest is kept or excluded by the load-time rules (`syncworker.select`), with the
   payload's major version; kept ones are numbered 1..N in that order.
4. versionHash: FNV-1 (64-bit) over the kept manifests' bytes in order, URL-safe base64.

A file that cannot be read or parsed fails the load once every file of its directory was tried:
`UpdatePayloadIntegrity`, `Error loading manifests from <dir>: parse <file>: <problem>` (several
as `[a, b]`). Bounds keep a hostile payload from costing more than a refusal: a file of more than
`MAX_FILE_BYTES`, a payload of more than `MAX_PAYLOAD_BYTES` or `MAX_DOCUMENTS` documents, a
document nested deeper than `LIMITS.max_depth` are each one such error, at once.

`load_payload` reads the files and logs; `build_payload` decides, on bytes and plain data.
Facts: `../shared/reference/sync-worker-facts.md` §1.
"""

from __future__ import annotations

import base64
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from cvo_py.runtime import klog, safeload
from cvo_py.runtime.docbounds import DocumentError, Limits
from cvo_py.runtime.gotext.jsoncodec import json_kind
from cvo_py.runtime.gotext.quoting import escape, go_quote
from payload.release import (
    IMAGE_REFERENCES,
    IMAGE_REFERENCES_MAX_BYTES,
    RELEASE_METADATA,
    RELEASE_METADATA_MAX_BYTES,
    Release,
    read_payload_json,
    release_from_metadata,
    release_metadata_problem,
)
from payload.retrieval import validate_directory
from syncworker.manifest import (
    CVO_MANIFESTS,
    RELEASE_MANIFESTS,
    Manifest,
    ManifestError,
    TooManyDocuments,
    parse_manifests,
)
from syncworker.render import RenderData, TemplateError, render
from syncworker.select import Selection, excluded_at_load
from updateservice import semver

log = logging.getLogger(__name__)

# The reason of every load error of the manifests, as upstream names it.
INTEGRITY = "UpdatePayloadIntegrity"
METADATA_KIND = "cincinnati-metadata-v0"
IMAGE_STREAM = ("image.openshift.io/v1", "ImageStream")
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
SKIPPED_NAMES = frozenset({"release-metadata", "image-references"})
# A real release's largest manifest files (CRD bundles) are a few MB, its whole payload some tens
# of MB in about 900 documents: far above those, far below what hurts.
MAX_FILE_BYTES = 16 << 20
MAX_PAYLOAD_BYTES = 256 << 20
MAX_DOCUMENTS = 20_000
LIMITS = Limits(max_bytes=MAX_FILE_BYTES, max_depth=256)
# At most this many problems are listed in one load error; the rest are counted.
MAX_LISTED_PROBLEMS = 10


class LoadError(Exception):
    """A payload that cannot be loaded: `reason` (INTEGRITY for its manifests, "" for its metadata)
    and a one-line `message`."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason


@dataclass(frozen=True)
class PayloadFile:
    """One file of a manifest directory (`directory` is CVO_MANIFESTS or RELEASE_MANIFESTS): its
    bytes, or why they could not be read."""

    directory: str
    name: str
    data: bytes = b""
    unreadable: str = ""


@dataclass(frozen=True)
class Exclusion:
    """A manifest the loader dropped (not numbered: its `task` is 0), and why."""

    manifest: Manifest
    reason: str

    def __str__(self) -> str:
        """`excluding Filename: "f" Group: … Name: "n": <reason>`, as upstream logs it."""
        m = self.manifest
        return f"excluding Filename: {go_quote(m.file)} {m.resource_id()}: {escape(self.reason)}"


@dataclass(frozen=True)
class SkippedFile:
    """A file of `manifests/` that did not render: skipped, as upstream does since 4.22."""

    name: str
    problem: str

    def __str__(self) -> str:
        why = "template rendering failed (may require newer CVO)"
        return f"Skipping manifest {escape(self.name)}: {why}: {self.problem}"


@dataclass(frozen=True)
class Payload:
    """A loaded payload: what the sync worker applies, in order (`manifests[i].task == i + 1`)."""

    directory: str
    release: Release
    images: Mapping[str, str]  # image-references: short name → pull spec
    created: str  # image-references' creationTimestamp ("" when it has none)
    manifests: tuple[Manifest, ...]
    version_hash: str
    excluded: tuple[Exclusion, ...] = ()
    skipped: tuple[SkippedFile, ...] = ()

    @property
    def major_version(self) -> int:
        return semver.parse(self.release.version).major


def load_payload(directory: str, *, release_image: str, selection: Selection) -> Payload:
    """The payload at `directory` (see the module docstring), its manifests selected by
    `selection` (its major version is the payload's own). `LoadError` when it cannot be loaded."""
    problem = validate_directory(directory)
    if problem is not None:
        raise LoadError(problem)
    try:
        metadata = read_payload_json(directory, RELEASE_METADATA, RELEASE_METADATA_MAX_BYTES)
        image_references = read_payload_json(directory, IMAGE_REFERENCES, IMAGE_REFERENCES_MAX_BYTES)
    except DocumentError as exc:
        raise LoadError(str(exc)) from None
    budget = [MAX_PAYLOAD_BYTES]
    files = [*_read_files(directory, CVO_MANIFESTS, budget), *_read_files(directory, RELEASE_MANIFESTS, budget)]
    payload = build_payload(directory, metadata or {}, image_references, files, release_image, selection)
    for skipped in payload.skipped:
        log.warning("%s", skipped)
    if klog.v(klog.NORMAL):
        for exclusion in payload.excluded:
            klog.v(klog.NORMAL).info("%s", exclusion)
    return payload


def load_running_payload(directory: str, *, release: Release, selection: Selection) -> Payload:
    """The running release's payload, at the root of its image (`PAYLOAD_OVERRIDE`, else `/`).

    A root holding neither `manifests/` nor `release-manifests/image-references` is not a
    release image's root: the process runs outside one (a bare image, a test). Its payload is
    empty, `release` with no manifests (M = 0, nothing to apply), said in a warning. Any other
    root is loaded as a payload, and a `LoadError` refuses it whole: nothing of it is applied."""
    if not any(os.path.exists(os.path.join(directory, p)) for p in (CVO_MANIFESTS, IMAGE_REFERENCES)):
        log.warning(
            "The payload root %s holds no release manifests (no %s, no %s): there is nothing to apply",
            escape(directory),
            CVO_MANIFESTS,
            IMAGE_REFERENCES,
        )
        return Payload(directory, release, {}, "", (), version_hash(()))
    return load_payload(directory, release_image=release.image, selection=selection)


def build_payload(
    directory: str,
    metadata: Mapping[str, Any],
    image_references: Any,
    files: Sequence[PayloadFile],
    release_image: str,
    selection: Selection,
) -> Payload:
    """The payload from its metadata, image-references and manifest files (in the order they are
    read): the decisions of `load_payload`, on plain data."""
    release = _release(metadata, release_image)
    major = semver.parse(release.version).major
    images, created = _image_references(image_references, release.version)
    selection = replace(selection, major_version=major)
    render_data = RenderData(release_image=release_image, cluster_profile=selection.profile, images=images)
    kept: list[Manifest] = []
    excluded: list[Exclusion] = []
    skipped: list[SkippedFile] = []
    documents = 0
    size = 0
    for source in (CVO_MANIFESTS, RELEASE_MANIFESTS):
        problems: list[str] = []
        where = os.path.join(directory, source)
        for file in files:
            if file.directory != source:
                continue
            if file.unreadable:
                problems.append(f"read {escape(file.name)}: {file.unreadable}")
                continue
            size += len(file.data)
            if size > MAX_PAYLOAD_BYTES:
                raise LoadError(_integrity(where, [_too_many_bytes()]), INTEGRITY)
            manifests, problem, skip = _file_manifests(file, render_data, MAX_DOCUMENTS - documents, where)
            if skip is not None:
                skipped.append(skip)
                continue
            if problem:
                problems.append(problem)
                continue
            documents += len(manifests)
            for manifest in manifests:
                reason = excluded_at_load(manifest, selection)
                if reason is None:
                    kept.append(manifest)
                else:
                    excluded.append(Exclusion(manifest, reason))
        if problems:
            raise LoadError(_integrity(where, problems), INTEGRITY)
    total = len(kept)
    numbered = tuple(replace(m, task=i, total=total) for i, m in enumerate(kept, start=1))
    return Payload(
        directory=directory,
        release=release,
        images=images,
        created=created,
        manifests=numbered,
        version_hash=version_hash(m.raw for m in numbered),
        excluded=tuple(excluded),
        skipped=tuple(skipped),
    )


def _file_manifests(
    file: PayloadFile, render_data: RenderData, documents_left: int, where: str
) -> tuple[list[Manifest], str, SkippedFile | None]:
    """The manifests of one payload file (the CVO's own rendered first), or the problem that makes
    its directory fail the load, or why the file is skipped; a LoadError when it passes the
    payload's budget of documents."""
    data = file.data
    if file.directory == CVO_MANIFESTS:
        try:
            data = render(data.decode("utf-8"), render_data).encode("utf-8")
        except TemplateError as exc:
            return [], "", SkippedFile(file.name, f"failed to parse manifest: {escape(str(exc))}")
        except UnicodeDecodeError as exc:
            return [], f"parse {escape(file.name)}: not UTF-8 (invalid byte at offset {exc.start})", None
    try:
        manifests = parse_manifests(
            data, directory=file.directory, file=file.name, limits=LIMITS, max_documents=documents_left
        )
    except TooManyDocuments:  # the payload's budget, not this file's: stop at once
        problem = f"parse {escape(file.name)}: more than {MAX_DOCUMENTS} documents in the payload"
        raise LoadError(_integrity(where, [problem]), INTEGRITY) from None
    except ManifestError as exc:
        return [], f"parse {escape(file.name)}: {escape(str(exc))}", None
    return manifests, "", None


_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_UINT64 = (1 << 64) - 1


def version_hash(raws: Iterable[bytes]) -> str:
    """upstream's versionHash of manifests' bytes (in order): FNV-1 64-bit (multiply, then XOR)
    over all of them, big-endian, URL-safe base64 with padding."""
    h = _FNV_OFFSET
    for raw in raws:
        h = fnv1_64(raw, h)
    return base64.urlsafe_b64encode(h.to_bytes(8, "big")).decode("ascii")


def fnv1_64(data: bytes, h: int = _FNV_OFFSET) -> int:
    """FNV-1 64-bit of `data`, continuing from `h`. Four bytes a step, reduced to 64 bits once a
    step: XOR with a byte only touches the low bits, so the product may grow in between (about
    twice as fast as reducing after every byte, which `tests/syncworker/test_load.py` compares)."""
    prime = _FNV_PRIME
    mask = _UINT64
    whole = len(data) - len(data) % 4
    quads = iter(data[:whole])
    for a, b, c, d in zip(quads, quads, quads, quads, strict=True):
        h = ((((h * prime ^ a) * prime ^ b) * prime ^ c) * prime ^ d) & mask
    for byte in data[whole:]:
        h = (h * prime) & mask ^ byte
    return h


def manifest_file_names(names: Sequence[str]) -> list[str]:
    """The names of a manifest directory's entries the CVO reads, in its order (byte-wise, as Go's
    os.ReadDir sorts): `*.yaml`, `*.yml`, `*.json`, but not release-metadata or image-references."""
    keep = [n for n in names if n.endswith(MANIFEST_SUFFIXES) and n not in SKIPPED_NAMES]
    return sorted(keep, key=lambda n: n.encode("utf-8", "surrogateescape"))


def _read_files(directory: str, source: str, budget: list[int]) -> list[PayloadFile]:
    """The manifest files of `directory/source` (subdirectories skipped), each read within the
    file bound, or with the reason it could not be. `budget[0]` is the bytes the payload may still
    hold: past it, the load fails before another file is read."""
    where = os.path.join(directory, source)
    try:
        with os.scandir(where) as entries:
            names = [e.name for e in entries if not e.is_dir(follow_symlinks=False)]
    except OSError as exc:
        raise LoadError(_integrity(where, [f"cannot list: {exc.strerror or exc}"]), INTEGRITY) from None
    out: list[PayloadFile] = []
    for name in manifest_file_names(names):
        path = os.path.join(where, name)
        try:
            data = safeload.read_file(path, max_bytes=MAX_FILE_BYTES)
        except DocumentError as exc:
            out.append(PayloadFile(source, name, unreadable=exc.problem))
            continue
        budget[0] -= len(data)
        if budget[0] < 0:  # what is held stays below the payload bound plus one file
            raise LoadError(_integrity(where, [_too_many_bytes()]), INTEGRITY)
        out.append(PayloadFile(source, name, data))
    return out


def _too_many_bytes() -> str:
    return f"more than {MAX_PAYLOAD_BYTES} bytes of manifests"


def _integrity(where: str, problems: list[str]) -> str:
    """`Error loading manifests from <dir>: <problem>`; several distinct ones as `[a, b]`."""
    unique = list(dict.fromkeys(problems))
    shown = unique[:MAX_LISTED_PROBLEMS]
    if len(unique) > len(shown):
        shown.append(f"and {len(unique) - len(shown)} more")
    text = shown[0] if len(unique) == 1 else "[" + ", ".join(shown) + "]"
    return f"Error loading manifests from {escape(where)}: {text}"


def _release(metadata: Mapping[str, Any], image: str) -> Release:
    """The release named by release-metadata, checked as upstream checks it."""
    if not isinstance(metadata, Mapping):
        raise LoadError(f"json: cannot unmarshal {json_kind(metadata)} into Go value of type cincinnati.metadata")
    kind = metadata.get("kind")
    if kind is None or isinstance(kind, str) and kind != METADATA_KIND:  # after decoding, before the version
        raise LoadError(f"unrecognized Cincinnati metadata kind {go_quote(kind or '')}")
    problem = release_metadata_problem(dict(metadata))  # field types, version, semver: the one home
    if problem:
        raise LoadError(problem)
    return release_from_metadata(image, metadata)


def _image_references(document: Any, version: str) -> tuple[dict[str, str], str]:
    """The images (tag name → DockerImage pull spec) and creation time of image-references."""
    if not isinstance(document, dict) or (document.get("apiVersion"), document.get("kind")) != IMAGE_STREAM:
        raise LoadError("unrecognized image-references in release payload: not an image.openshift.io/v1 ImageStream")
    metadata = document.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    name = metadata.get("name")
    if name != version:
        named = escape(str(name or ""))
        raise LoadError(f"version from image-references ({named}) differs from release-metadata ({escape(version)})")
    images: dict[str, str] = {}
    spec = document.get("spec")
    tags = spec.get("tags") if isinstance(spec, dict) else None
    for tag in tags if isinstance(tags, list) else ():
        source = tag.get("from") if isinstance(tag, dict) else None
        if isinstance(source, dict) and source.get("kind") == "DockerImage" and isinstance(tag.get("name"), str):
            images[tag["name"]] = str(source.get("name") or "")
    created = metadata.get("creationTimestamp")
    return images, created if isinstance(created, str) else ""


__all__ = [
    "INTEGRITY", "LIMITS", "MAX_DOCUMENTS", "MAX_FILE_BYTES", "MAX_PAYLOAD_BYTES", "Exclusion", "LoadError",
    "Payload", "PayloadFile", "SkippedFile", "build_payload", "load_payload", "manifest_file_names", "version_hash",
]  # fmt: skip
