"""The part of Go's text/template that the CVO's own manifests use, rendered as the CVO renders
the `manifests/` directory of a release image before reading it.

    render(text, RenderData(release_image="…"))   # the rendered text, or TemplateError

The CVO executes every file of its image's /manifests as a Go template (no extra functions, the
default missing-key handling) on a value with the fields `.ReleaseImage`, `.ClusterProfile` and
`.Images` (a map from short name to pull spec). Supported here, in `{{ … }}` actions with or
without the `{{- ` / ` -}}` trim markers and as `{{/* comments */}}`:

    .ReleaseImage   .ClusterProfile   .Images.NAME (`<no value>` when missing)
    index .Images "NAME" (empty when missing)   "a string literal"   `a raw string`

A string literal is how a manifest writes text that must reach the cluster with its braces, such
as a Prometheus template: `{{ "{{ $labels.name }}" }}` renders as `{{ $labels.name }}`. Anything
else is a TemplateError: what Go refuses (undefined variables and functions, unknown fields,
unterminated actions and strings) and what Go would accept but no manifest needs; the loader skips
such a file with a warning, as upstream does since 4.22. `tests/syncworker/test_render.py` renders
every install/ file with Go itself (`testkit/oracles/gorender`) and compares, and compares the two
on random templates.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from cvo_py.runtime.gotext.quoting import UnquoteError, go_unquote

# text/template's predefined functions: an action naming one is valid Go, but not supported here.
GO_BUILTINS = frozenset(
    "and call html index slice js len not or print printf println urlquery eq ge gt le lt ne".split()
)
# Actions Go parses as control structures (none of which a manifest needs).
GO_KEYWORDS = frozenset("if else end range with define template block break continue".split())
_SPACE = " \t\r\n"


class TemplateError(ValueError):
    """A template Go would refuse to parse or execute, or one using what this renderer lacks."""


@dataclass(frozen=True)
class RenderData:
    """What the CVO passes to each manifest's template."""

    release_image: str = ""
    cluster_profile: str = "self-managed-high-availability"
    images: Mapping[str, str] = field(default_factory=dict)


def render(text: str, data: RenderData) -> str:
    out: list[str] = []
    pos = 0
    trim_next = False
    while True:
        start = text.find("{{", pos)
        chunk = text[pos:] if start < 0 else text[pos:start]
        if trim_next:
            chunk = chunk.lstrip(_SPACE)
        if start < 0:
            out.append(chunk)
            return "".join(out)
        body_start = start + 2
        if text.startswith("-", body_start) and text[body_start + 1 : body_start + 2] in tuple(_SPACE):
            chunk = chunk.rstrip(_SPACE)
            body_start += 2
        out.append(chunk)
        tokens, pos, trim_next = _lex_action(text, body_start)
        if tokens is not None:
            out.append(_evaluate(tokens, data, _line(text, start)))


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _lex_action(text: str, i: int) -> tuple[list[tuple[str, str]] | None, int, bool]:
    """The tokens of the action starting at `i` (None for a comment), where the text resumes,
    and whether the action ends with a trim marker."""
    line = _line(text, i)
    if text.startswith("/*", i):
        end = text.find("*/", i + 2)
        if end < 0:
            raise TemplateError(f"template: manifest:{line}: unclosed comment")
        after = end + 2
        trim = _right_trim_at(text, after)
        close = after + 2 if trim else after
        if not text.startswith("}}", close):
            raise TemplateError(f"template: manifest:{line}: comment ends before closing delimiter")
        return None, close + 2, trim
    tokens: list[tuple[str, str]] = []
    n = len(text)
    while True:
        if i >= n:
            raise TemplateError(f"template: manifest:{line}: unclosed action")
        ch = text[i]
        if ch in _SPACE:
            j = i
            while j < n and text[j] in _SPACE:
                j += 1
            if _right_trim_at(text, j - 1):
                return tokens, j + 3, True
            i = j
        elif text.startswith("}}", i):
            return tokens, i + 2, False
        elif ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                if text[j] == "\n":
                    raise TemplateError(f"template: manifest:{line}: unterminated quoted string")
                j += 2 if text[j] == "\\" and j + 1 < n and text[j + 1] != "\n" else 1
            if j >= n:
                raise TemplateError(f"template: manifest:{line}: unterminated quoted string")
            tokens.append(("string", _unquote(text[i : j + 1], line)))
            i = j + 1
        elif ch == "`":
            j = text.find("`", i + 1)
            if j < 0:
                raise TemplateError(f"template: manifest:{line}: unterminated raw quoted string")
            tokens.append(("string", _unquote(text[i : j + 1], line)))
            i = j + 1
        else:
            j = i
            while j < n and text[j] not in _SPACE and text[j] not in '"`' and not text.startswith("}}", j):
                j += 1
            word = text[i:j]
            kind = "field" if word.startswith(".") else "variable" if word.startswith("$") else "word"
            tokens.append((kind, word))
            i = j


def _right_trim_at(text: str, i: int) -> bool:
    """A right trim marker (a space character, then `-`) and the closing delimiter at `i`."""
    return text[i : i + 1] in tuple(_SPACE) and text.startswith("-}}", i + 1)


def _unquote(literal: str, line: int) -> str:
    try:
        return go_unquote(literal)
    except UnquoteError as exc:
        raise TemplateError(f"template: manifest:{line}: {exc}") from None


def _evaluate(tokens: list[tuple[str, str]], data: RenderData, line: int) -> str:
    if tokens and tokens[0][0] == "word" and tokens[0][1] in GO_KEYWORDS:
        raise TemplateError(f"template: manifest:{line}: not supported by this renderer: {tokens[0][1]} ...")
    for kind, word in tokens:
        if kind == "variable":
            raise TemplateError(f'template: manifest:{line}: undefined variable "{word.split(".")[0]}"')
        if kind == "word" and word.isidentifier() and word not in GO_BUILTINS and word not in ("true", "false", "nil"):
            raise TemplateError(f'template: manifest:{line}: function "{word}" not defined')
    if not tokens:
        raise TemplateError(f"template: manifest:{line}: missing value for command")
    if len(tokens) == 1 and tokens[0][0] == "string":
        return tokens[0][1]
    if len(tokens) == 1 and tokens[0][0] == "field":
        return _field(tokens[0][1], data, line)
    if [k for k, _ in tokens] == ["word", "field", "string"] and tokens[0][1] == "index" and tokens[1][1] == ".Images":
        return data.images.get(tokens[2][1], "")
    raise TemplateError(f"template: manifest:{line}: not supported by this renderer: {' '.join(w for _, w in tokens)}")


def _field(chain: str, data: RenderData, line: int) -> str:
    names = chain[1:].split(".")
    if names == ["ReleaseImage"]:
        return data.release_image
    if names == ["ClusterProfile"]:
        return data.cluster_profile
    if len(names) == 2 and names[0] == "Images" and names[1].isidentifier():
        return data.images.get(names[1], "<no value>")
    if names[0] not in ("ReleaseImage", "ClusterProfile", "Images"):
        raise TemplateError(
            f'template: manifest:{line}: executing "manifest" at <.{names[0]}>: can\'t evaluate field {names[0]}'
        )
    raise TemplateError(f"template: manifest:{line}: not supported by this renderer: {chain}")
