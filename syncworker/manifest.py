"""One document of a release payload as the CVO reads it, and the name its task goes by in logs.

    manifests = parse_manifests(data, directory="release-manifests", file="0000_10_x_00_cm.yaml")
    manifests[0].raw         # the JSON bytes upstream hashes into versionHash
    manifests[0].task_name() # 'configmap "ns/name" (3 of 19)', once the loader has numbered it

A file is a stream of documents, read as Kubernetes reads one (apimachinery's YAML-or-JSON
decoder, which the CVO reaches through library-go's manifest parser):

- a stream whose first non-space character (in its first 1024 bytes) is `{` is read as JSON
  values, each kept as its own bytes (trimmed); if a value fails while at most one was read, the
  rest is read as YAML from after the last good value, and a failure of its first document is
  reported as the JSON failure;
- otherwise the text is cut into documents at every line that begins with `---` (what follows on
  that line must be blank or a comment: `invalid Yaml document separator: …`), each document read
  by go-yaml v2's rules and written as Go's json.Marshal writes it (keys sorted, compact,
  `\\u003c` for `<`), which are the bytes upstream hashes;
- an empty document or `null` is no manifest; every other one must be a JSON object with a string
  `kind` (`Object 'Kind' is missing in '…'`) and `metadata.name` (`Resource with fields … must
  contain kubernetes required fields kind and name`); the same group, kind, namespace and name
  twice in one file fails it (`duplicate resource: (Group: "" Kind: "ConfigMap" …)`).

Pure: bytes in, manifests or one `ManifestError` out. `syncworker.load` reads the files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from cvo_py.runtime import safeload
from cvo_py.runtime.docbounds import DocumentError, Limits
from cvo_py.runtime.gotext.jsoncodec import UnsupportedValue, marshal_json
from cvo_py.runtime.gotext.quoting import escape, go_quote

# The payload's two manifest directories: the CVO's own (rendered) and the release's (verbatim).
CVO_MANIFESTS = "manifests"
RELEASE_MANIFESTS = "release-manifests"

# How far apimachinery looks for the `{` that makes a stream JSON.
JSON_SNIFF_BYTES = 1024
# Go's unicode.IsSpace (Python's str.isspace also takes the separators U+001C–U+001F).
GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
    "\u2028\u2029\u202f\u205f\u3000"  # fmt: skip
_JSON_SPACE = " \t\n\r"
_SEPARATOR = re.compile(r"^---(.*)$", re.MULTILINE)
_AT_LINE = re.compile(r" at line (\d+)")
_QUOTED_RAW_MAX = 200  # how much of a document an error quotes


class ManifestError(ValueError):
    """Why a file's documents cannot be read: one line, its text the problem alone."""


class TooManyDocuments(ManifestError):
    """More documents than the caller allows (`more than N documents`)."""


@dataclass(frozen=True, slots=True)
class Manifest:
    """One document of the payload. `obj` is the object as the API server would receive it, decoded
    from `raw`; it is shared: copy it before changing it."""

    directory: str  # CVO_MANIFESTS or RELEASE_MANIFESTS
    file: str  # the file's name: run level and component come from it
    index: int  # its place among the documents of its file, from 0
    raw: bytes
    obj: dict[str, Any] = field(repr=False)
    group: str
    version: str
    kind: str
    namespace: str
    name: str
    # None when the object has none, or they are not a map of strings (the CVO's "no annotations").
    annotations: Mapping[str, str] | None = field(repr=False)
    task: int = 0  # 1..total in load order once loaded; 0 for a manifest the loader excluded
    total: int = 0

    def resource_id(self) -> str:
        """`Group: "apps" Kind: "Deployment" Namespace: "ns" Name: "n"`, as upstream's errors name it."""
        return resource_id(self.group, self.kind, self.namespace, self.name)

    def task_name(self) -> str:
        """`deployment "ns/n" (3 of 19)`; cluster-scoped `namespace "n" (1 of 19)`: the task as
        upstream's logs and errors name it."""
        kind = escape(self.kind.lower())
        if self.namespace:
            return f'{kind} "{escape(self.namespace)}/{escape(self.name)}" ({self.task} of {self.total})'
        return f"{kind} {go_quote(self.name)} ({self.task} of {self.total})"

    def label(self) -> str:
        """`deployment ns/n (3 of 19)`: the task's name without quotes (the task graph's labels)."""
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return escape(f"{self.kind.lower()} {where} ({self.task} of {self.total})")

    def is_job(self) -> bool:
        return self.group == "batch" and self.version == "v1" and self.kind == "Job"


def resource_id(group: str, kind: str, namespace: str, name: str) -> str:
    return f"Group: {go_quote(group)} Kind: {go_quote(kind)} Namespace: {go_quote(namespace)} Name: {go_quote(name)}"


def parse_group_version(api_version: str) -> tuple[str, str] | None:
    """apimachinery's ParseGroupVersion: `v1` → ("", "v1"), `apps/v1` → ("apps", "v1"), None for
    more than one `/`."""
    if api_version in ("", "/"):
        return "", ""
    group, slash, version = api_version.partition("/")
    if not slash:
        return "", api_version
    return None if "/" in version else (group, version)


def parse_manifests(
    data: bytes,
    *,
    directory: str,
    file: str,
    limits: Limits = safeload.DEFAULT_LIMITS,
    max_documents: int = 100_000,
) -> list[Manifest]:
    """The manifests of one file, in order (see the module docstring); `ManifestError` for the
    first problem, or for more than `max_documents` documents (empty ones included)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"not UTF-8 (invalid byte at offset {exc.start})") from None
    manifests: list[Manifest] = []
    seen: set[tuple[str, str, str, str]] = set()
    documents = 0
    for raw, value in _documents(text, file, limits, max_documents):
        documents += 1
        if documents > max_documents:
            raise TooManyDocuments(f"more than {max_documents} documents")
        if raw == b"null":
            continue
        manifest = _manifest(raw, value, directory, file, len(manifests))
        identity = (manifest.group, manifest.kind, manifest.namespace, manifest.name)
        if identity in seen:
            raise ManifestError(f"duplicate resource: ({manifest.resource_id()})")
        seen.add(identity)
        manifests.append(manifest)
    return manifests


# -- the stream ----------------------------------------------------------------------------------------


def _documents(text: str, source: str, limits: Limits, max_documents: int) -> Iterator[tuple[bytes, Any]]:
    """Each document's JSON bytes and value."""
    head = text[:JSON_SNIFF_BYTES].encode("utf-8")[:JSON_SNIFF_BYTES].decode("utf-8", "ignore")
    if not head.lstrip(GO_SPACE).startswith("{"):
        yield from _yaml_documents(text, 0, source, limits, max_documents)
        return
    count = 0
    consumed = 0  # where the last good value ended
    while True:
        start = consumed
        while start < len(text) and text[start] in _JSON_SPACE:
            start += 1
        if start >= len(text):
            return
        try:
            value, end = safeload.read_json_value(text, start, source=source, limits=limits)
            raw = text[start:end].encode("utf-8")
            if raw != b"null":
                _check_object(raw, value)
        except (DocumentError, ManifestError) as exc:
            first = ManifestError(exc.problem if isinstance(exc, DocumentError) else str(exc))
            if count > 1:
                raise first from None
            resume = _after_space(text, consumed)
            if resume is None:
                raise first from None
            # Not JSON after all (or not a manifest): the rest is read as YAML, and if its first
            # document fails too, the failure reported is the JSON one.
            rest = _yaml_documents(text, resume, source, limits, max_documents - count)
            try:
                yield _checked(next(rest))
            except StopIteration:
                return
            except (ManifestError, DocumentError):
                raise first from None
            yield from rest
            return
        count += 1
        consumed = end
        yield raw, value


def _checked(document: tuple[bytes, Any]) -> tuple[bytes, Any]:
    raw, value = document
    if raw != b"null":
        _check_object(raw, value)
    return document


def _after_space(text: str, start: int) -> int | None:
    """apimachinery's consumeWhitespace: past the spaces at `start`, up to and including the first
    newline. It reads 4 bytes at a time, so None (no YAML) when fewer are left before it stops."""
    left = len(text[start:].encode("utf-8"))
    i = start
    while i < len(text) and left >= 4:
        ch = text[i]
        if ch not in GO_SPACE:
            return i
        i += 1
        left -= len(ch.encode("utf-8"))
        if ch == "\n":
            return i
    return None


def _yaml_documents(
    text: str, start: int, source: str, limits: Limits, max_documents: int
) -> Iterator[tuple[bytes, Any]]:
    lines_before = text.count("\n", 0, start)
    chunks = list(split_yaml_documents(text[start:].replace("\r\n", "\n")))
    if len(chunks) > max_documents:  # refused before any is parsed
        raise TooManyDocuments(f"more than {max_documents} documents")
    for first_line, chunk in chunks:
        first_line += lines_before
        try:
            value = safeload.load_go_yaml(chunk, source=source, limits=limits)
        except DocumentError as exc:
            raise ManifestError(_shift_lines(exc.problem, first_line)) from None
        try:
            raw = marshal_json(value)
        except UnsupportedValue as exc:
            raise ManifestError(str(exc)) from None
        yield raw, (None if raw == b"null" else json.loads(raw))


def _shift_lines(problem: str, offset: int) -> str:
    """A document's error with its line numbers made the file's."""
    return _AT_LINE.sub(lambda m: f" at line {int(m.group(1)) + offset}", problem)


def split_yaml_documents(text: str) -> Iterator[tuple[int, str]]:
    """apimachinery's YAMLReader over `text` (its `\\r\\n` already `\\n`): each document (the lines
    between separator lines, each ending with a newline, never empty) with the number of lines
    before it. A separator line begins with `---`; the rest of it must be blank or a comment."""
    line = 0  # lines before `pos`
    pos = 0
    for match in _SEPARATOR.finditer(text):
        rest = match.group(1).strip(GO_SPACE)
        if rest and rest[0] != "#":
            raise ManifestError(f"invalid Yaml document separator: {rest}")
        if match.start() > pos:
            yield line, _terminated(text[pos : match.start()])
        line += text.count("\n", pos, match.end()) + 1
        pos = match.end() + 1
    if pos < len(text):
        yield line, _terminated(text[pos:])


def _terminated(chunk: str) -> str:
    return chunk if chunk.endswith("\n") else chunk + "\n"


# -- one manifest ---------------------------------------------------------------------------------------


def _quoted_raw(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace")
    return text if len(text) <= _QUOTED_RAW_MAX else text[:_QUOTED_RAW_MAX] + "…"


def _check_object(raw: bytes, value: Any) -> None:
    """What decoding into an unstructured object refuses: a document that is not an object, a
    non-string apiVersion or kind, no kind."""
    if not isinstance(value, dict):
        kind = {list: "array", str: "string", bool: "bool"}.get(type(value), "number")
        raise ManifestError(f"unable to decode manifest: couldn't get version/kind; json parse error: "
                            f"json: cannot unmarshal {kind} into an object")  # fmt: skip
    for key in ("apiVersion", "kind"):
        if value.get(key) is not None and not isinstance(value[key], str):
            raise ManifestError(f"unable to decode manifest: couldn't get version/kind; json parse error: "
                                f"{key} is not a string")  # fmt: skip
    if not value.get("kind") or parse_group_version(value.get("apiVersion") or "") is None:
        raise ManifestError(f"unable to decode manifest: Object 'Kind' is missing in '{_quoted_raw(raw)}'")


def _manifest(raw: bytes, value: Any, directory: str, file: str, index: int) -> Manifest:
    if value is None:
        value = json.loads(raw)
    _check_object(raw, value)
    group, version = parse_group_version(value.get("apiVersion") or "") or ("", "")
    kind = value["kind"]
    metadata = value.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    name = metadata.get("name")
    namespace = metadata.get("namespace")
    name = name if isinstance(name, str) else ""
    namespace = namespace if isinstance(namespace, str) else ""
    if not name:
        raise ManifestError(
            f"Resource with fields {resource_id(group, kind, namespace, name)} "
            "must contain kubernetes required fields kind and name"
        )
    annotations = metadata.get("annotations")
    if not isinstance(annotations, dict) or not all(isinstance(v, str) for v in annotations.values()):
        annotations = None
    return Manifest(directory, file, index, raw, value, group, version, kind, namespace, name, annotations)
