"""The one loader for YAML and JSON documents that come from outside: snapshot files, ConfigMap values, dumps.

    load_document(data, *, source, limits=DEFAULT_LIMITS, yaml_floats=True) -> Any

returns plain Python data (dict, list, str, int, float, bool, None) or raises `DocumentError`, whose
`str()` is one line: `<source>: <problem>` (`source` names the file or ConfigMap key). Nothing else
escapes for any input, however hostile.

Bounds (`Limits`, the defaults in `DEFAULT_LIMITS`):

- input size: at most 64 MiB (`max_bytes`). A larger document is refused before it is parsed (a
  100 MB snapshot is one line). Memory follows the input: measured peak RSS of `upgrade-status` is
  about 40 MB plus 3.5× (JSON) to 5× (YAML) the input, under 400 MB at the limit
  (bench/hostile_inputs.py prints the figures).
- nesting: at most 128 levels of mappings and sequences (`max_depth`). The builders do not
  recurse: YAML is built from the event stream of libyaml's parser (which keeps its own heap
  stack); Python's JSON scanner does recurse, but under the interpreter's recursion guard (a
  deeper document is an error, not a crash), and what it returns is measured level by level.
  A small document of plain block YAML (a kubeconfig) is read first by `cvo_py.runtime.plainyaml`,
  without PyYAML, to the same result; it recurses at most 64 levels and leaves anything else,
  deeper documents included, to libyaml.
- aliases: at most 64 alias references (`max_aliases`), which together may stand for at most
  10,000 nodes (`max_alias_nodes`, counted as if every alias were expanded). Aliases are shared,
  not copied, so a "billion laughs" document is refused after a few events and never grows.
- numbers: an integer or float written with more than 100 characters (`max_number_chars`) is
  refused (Go's int64 needs 19); JSON's NaN and Infinity are refused, and so is a JSON number past
  float64 (`1e400`), as Go's decoder refuses it. A plain YAML float past float64 (`1.0e+400`) stays
  text, as in Go's YAML decoder.
- types: only the standard tags (null, bool, int, float, str, map, seq, merge, timestamp, value),
  each on text it can hold (`!!bool maybe` and `!!int ''` are errors, as in Go); timestamps stay
  strings (the readers parse them with nanoseconds); any other tag, a non-scalar mapping key,
  several documents in one input, or bytes that are not UTF-8 are errors. Lone UTF-16 surrogates
  written as escapes become U+FFFD, as Go's decoders do.

`yaml_floats=False` keeps YAML floats as their text (`4.14` stays "4.14", the way snapshot files
mean versions); JSON numbers are numbers either way.

    read_file(path, *, max_bytes, source=None) -> bytes

is the one way a file named from outside is read (snapshot files, the kubeconfig and the files it
names, CA bundles, token files, serving certificates): only a regular file (symlinks followed), at
most `max_bytes`, refused before a byte is read when it says it is larger. A FIFO, a device
(`/dev/zero`, whose size reads as 0), a socket or a directory is a `DocumentError` at once: opening
never blocks and reading never outgrows the bound. Nothing at the path is `FileMissing`, a
`DocumentError` a caller with a default can tell apart.
"""

from __future__ import annotations

import functools
import json
import os
import re
import stat
from collections.abc import Callable
from typing import Any

from cvo_py.runtime.docbounds import CREDENTIAL_MAX_BYTES, DEFAULT_LIMITS, DocumentError, Limits, containers
from cvo_py.runtime.gotext.jsoncodec import NumberRangeError, decode_json_float, decode_json_int, json_syntax_problem

__all__ = ["CREDENTIAL_MAX_BYTES", "DEFAULT_LIMITS", "DocumentError", "FileMissing", "Limits", "load_document",
           "load_go_yaml", "read_file", "read_json_value"]


def load_document(
    data: bytes | str,
    *,
    source: str,
    limits: Limits = DEFAULT_LIMITS,
    yaml_floats: bool = True,
) -> Any:
    """Parse one YAML or JSON document within `limits`; see the module docstring."""
    if isinstance(data, str):
        try:
            size = len(data.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise DocumentError(source, f"not UTF-8 (a lone surrogate at character {exc.start})") from None
    else:
        size = len(data)
    if size > limits.max_bytes:
        raise DocumentError(source, f"{size} bytes, more than the limit of {limits.max_bytes} bytes")
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DocumentError(source, f"not UTF-8 (invalid byte at offset {exc.start})") from None
    else:
        text = data
    head = text.lstrip(" \t\r\n\ufeff")[:1]
    doc: Any
    if head in ("{", "["):
        doc = _json(text, source, limits)
        if doc is not _NOT_JSON:
            return _fix_surrogates(doc, text)
    from cvo_py.runtime import plainyaml

    doc = plainyaml.read(text, limits)  # a kubeconfig, without loading PyYAML
    if doc is plainyaml.NOT_PLAIN:
        from cvo_py.runtime import safeyaml  # imported when first needed: JSON readers skip it

        doc = safeyaml.Builder(source, limits, yaml_floats).build(text)
    return _fix_surrogates(doc, text)


def load_go_yaml(text: str, *, source: str, limits: Limits = DEFAULT_LIMITS) -> Any:
    """The first YAML document of `text` as Kubernetes reads a manifest (go-yaml v2's types, its
    merge keys, keys as JSON strings; see `cvo_py.runtime.safeyaml`), within `limits` (its size
    is the caller's to bound); `DocumentError` otherwise. JSON text is read as YAML, as Kubernetes
    reads it once it has taken the stream for YAML."""
    from cvo_py.runtime import safeyaml

    return _fix_surrogates(safeyaml.Builder(source, limits, True, go=True).build(text), text)


# --- files ---------------------------------------------------------------------------------------


class FileMissing(DocumentError):
    """`read_file`'s error when nothing exists at the path (a caller may have a default for that)."""


_KINDS = (
    (stat.S_ISDIR, "a directory, not a file"),
    (stat.S_ISFIFO, "not a regular file (a FIFO)"),
    (stat.S_ISCHR, "not a regular file (a character device)"),
    (stat.S_ISBLK, "not a regular file (a block device)"),
    (stat.S_ISSOCK, "not a regular file (a socket)"),
)


def _not_regular(mode: int) -> str:
    for test, problem in _KINDS:
        if test(mode):
            return problem
    return "" if stat.S_ISREG(mode) else "not a regular file"


def read_file(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_LIMITS.max_bytes,
              source: str | None = None) -> bytes:
    """The bytes of the regular file at `path`, at most `max_bytes`; see the module docstring.
    Errors are `DocumentError`s naming `source` (default: the path)."""
    where = os.fspath(path) if source is None else source
    try:
        problem = _not_regular(os.stat(path).st_mode)  # decided before opening: opening a FIFO blocks
        if problem:
            raise DocumentError(where, problem)
        # Non-blocking: a FIFO swapped in since the check opens at once, and fstat sees it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise FileMissing(where, "file not found") from None
    except OSError as exc:
        raise DocumentError(where, f"cannot read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb", buffering=0) as f:
        try:
            st = os.fstat(fd)
            problem = _not_regular(st.st_mode)
            if problem:
                raise DocumentError(where, problem)
            if st.st_size > max_bytes:  # refused before a byte is read
                raise DocumentError(where, f"{st.st_size} bytes, more than the limit of {max_bytes} bytes")
            chunks: list[bytes] = []
            size = 0
            want = st.st_size + 1  # one more: a file that grew since fstat is read on, within the bound
            while True:
                chunk = f.read(min(max(want, 1 << 16), max_bytes + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
                if size > max_bytes:
                    raise DocumentError(where, f"more than the limit of {max_bytes} bytes")
                want = 1 << 16
        except OSError as exc:
            raise DocumentError(where, f"cannot read: {exc.strerror or exc}") from None
    return b"".join(chunks)


# --- JSON ----------------------------------------------------------------------------------------

_NOT_JSON = object()


@functools.lru_cache(maxsize=8)
def json_decoder(limits: Limits) -> json.JSONDecoder:
    """The JSON decoder of the loader within `limits`: a number of more characters than
    `limits.max_number_chars`, one past float64 (Go's rule:
    `cvo_py.runtime.gotext.jsoncodec.decode_json_float`), NaN and Infinity raise a ValueError. One
    per bounds (building one per document costs more than decoding a small value); it does not
    bound nesting."""

    def number(kind: Callable[[str], int | float]) -> Any:
        def parse(s: str) -> int | float:
            if len(s) > limits.max_number_chars:
                raise _NumberError(f"a number of {len(s)} characters (the limit is {limits.max_number_chars})")
            try:
                return kind(s)
            except NumberRangeError as exc:  # past float64 (1e400): Go refuses it, Python reads infinity
                raise _NumberError(str(exc)) from None

        return parse

    def constant(s: str) -> Any:
        raise _NumberError(f"{s} is not a JSON number")

    return json.JSONDecoder(
        parse_int=number(decode_json_int), parse_float=number(decode_json_float), parse_constant=constant
    )


class _NumberError(ValueError):
    """A number the bounds refuse (a ValueError the JSON scanner passes through unchanged)."""


def _json(text: str, source: str, limits: Limits) -> Any:
    """The JSON document, or `_NOT_JSON` when the text is not JSON (YAML flow style may still read it).

    Python's JSON scanner recurses, but through the interpreter's recursion guard: a document
    nested past it is a RecursionError, not a crash. What it returns is measured without recursion."""
    try:
        doc = json_decoder(limits).decode(text)
    except json.JSONDecodeError:
        return _NOT_JSON
    except _NumberError as exc:
        raise DocumentError(source, str(exc)) from None
    except RecursionError:
        raise DocumentError(source, f"nested more than {limits.max_depth} levels deep") from None
    if _may_nest_deeper(text, limits.max_depth) and _deeper_than(doc, limits.max_depth):
        raise DocumentError(source, f"nested more than {limits.max_depth} levels deep")
    return doc


def read_json_value(text: str, start: int, *, source: str, limits: Limits = DEFAULT_LIMITS) -> tuple[Any, int]:
    """The JSON value beginning at `text[start]` (no whitespace before it) and the offset just
    after it, as Go's json.Decoder reads one value of a stream: within `limits`' numbers and
    nesting, NaN and Infinity refused. `DocumentError` with Go's wording of a syntax error."""
    try:
        doc, end = json_decoder(limits).raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise DocumentError(source, json_syntax_problem(exc)) from None
    except _NumberError as exc:
        raise DocumentError(source, str(exc)) from None
    except RecursionError:
        raise DocumentError(source, f"nested more than {limits.max_depth} levels deep") from None
    if _may_nest_deeper(text[start:end], limits.max_depth) and _deeper_than(doc, limits.max_depth):
        raise DocumentError(source, f"nested more than {limits.max_depth} levels deep")
    return _fix_surrogates(doc, text[start:end]), end


def _may_nest_deeper(text: str, limit: int) -> bool:
    """Whether `text` has room for more than `limit` levels: each takes an opening bracket, and
    counting those (in C) costs less than walking a small document (a ConfigMap value)."""
    if len(text) <= limit:
        return False
    return len(text) > 1 << 16 or text.count("[") + text.count("{") > limit


def _deeper_than(doc: Any, limit: int) -> bool:
    """Whether mappings and sequences nest more than `limit` levels, walked level by level."""
    level = [doc] if type(doc) in (dict, list) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below: list[Any] = []
        add = below.append
        for container in level:
            for value in container.values() if type(container) is dict else container:
                kind = type(value)
                if kind is dict or kind is list:
                    add(value)
        level = below
    return False


# --- strings -------------------------------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")
# The escapes that could write one (libyaml refuses them in YAML; JSON's scanner takes them).
_SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F]")


def _fix_surrogates(doc: Any, text: str) -> Any:
    """Lone surrogates (only escapes can write them) become U+FFFD, as in Go; walked without recursion."""
    if _SURROGATE_ESCAPE.search(text) is None:
        return doc

    def fix(v: Any) -> Any:
        return _SURROGATE.sub("\ufffd", v) if isinstance(v, str) else v

    for cur in containers(doc):
        if isinstance(cur, dict):
            for k in list(cur):
                v = cur[k]
                nk = fix(k)
                if nk != k:
                    del cur[k]
                cur[nk] = fix(v)
        else:
            for i, v in enumerate(cur):
                cur[i] = fix(v)
    return fix(doc)
