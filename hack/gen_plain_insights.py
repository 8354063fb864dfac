#!/usr/bin/env python3
"""Writes, from the insight API's pydantic models, everything that reads and writes it without pydantic.

The models (`status.updatestatus.insights.models`, and the publication metadata of
`status.updatestatus.api.metadata`) are the one hand-written definition of the API; its enums
and reasons are `status.updatestatus.insights.vocabulary`. Loading pydantic costs more than
everything else a one-shot `upgrade-status` does, so this generates from the models' fields:

- status/updatestatus/insights/kinds.py: the vocabulary, re-exported, and the shape of each insight
  type: its fields, declared for the type checker. The models and the plain classes both derive
  from it, so the computation, the renderer and the writers take either;
- status/updatestatus/insights/plain.py: the plain classes of the insight types (slots, the
  models' defaults for trailing fields), which the pure computation
  (`status.updatestatus.insights.compute`) builds and the readers return;
- status/updatestatus/api/plain.py: the shapes and plain classes of the publication metadata, and
  a strict reader per model, which takes a value only when it is exactly what the controller writes
  (JSON types as the fields declare them, camelCase names, every constraint of the field met) and
  raises `NotPlain` for anything else, which the caller then gives to the model to judge
  (`status.updatestatus.api.wire`), so whatever a reader takes, the model takes too, with the same
  result;
- status/updatestatus/api/writers.py: a writer per insight model, which gives the bytes of the
  model's JSON (`json.dumps(model.to_api(), ensure_ascii=False, separators=(",", ":"))`, with the
  characters YAML reads differently as `\\u` escapes); the controller's, kept off the client's path.

tests/status/updatestatus/api/test_plain.py compares readers and writers with the models on random
insights and on edited values.

    .venv/bin/python hack/gen_plain_insights.py           # rewrite the four files
    .venv/bin/python hack/gen_plain_insights.py --check   # exit 1 when one is not what the models give

A new field is added to its model only, then this is run. A new model is written without a shape
and listed below; this then writes its shape, `<Model>Shape`, which the model derives from from then
on (a model's shape is the generated class it derives from, whatever its name). A field type the
generator does not know is an error naming it: the generator is extended with the models.
"""

from __future__ import annotations

import argparse
import enum
import re
import subprocess
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from status.updatestatus.api import metadata
from status.updatestatus.insights import models, vocabulary
from testkit.checkout import REPO
from testkit.objects.insight_models import Unsupported, constraints, is_enum, is_model, optional_inner

KINDS_TARGET = REPO / "status" / "updatestatus" / "insights" / "kinds.py"
INSIGHTS_TARGET = REPO / "status" / "updatestatus" / "insights" / "plain.py"
API_TARGET = REPO / "status" / "updatestatus" / "api" / "plain.py"
WRITERS_TARGET = REPO / "status" / "updatestatus" / "api" / "writers.py"
KINDS_MODULE = "status.updatestatus.insights.kinds"
INSIGHTS_MODULE = "status.updatestatus.insights.plain"
API_MODULE = "status.updatestatus.api.plain"

INSIGHT_MODELS: list[type[BaseModel]] = [
    models.Condition,
    models.ResourceRef,
    models.VersionMetadata,
    models.Version,
    models.ControlPlaneUpdateVersions,
    models.NodeSummary,
    models.InsightScope,
    models.InsightImpact,
    models.InsightRemediation,
    models.ClusterVersionStatusInsight,
    models.ClusterOperatorStatusInsight,
    models.MachineConfigPoolStatusInsight,
    models.NodeStatusInsight,
    models.HealthInsight,
]
METADATA_MODELS: list[type[BaseModel]] = [metadata.ControllerIdentity, metadata.Omitted, metadata.PublicationMetadata]
MODELS = INSIGHT_MODELS + METADATA_MODELS
# Whose writer keeps what it wrote for the same values: most nodes of a pool share their
# conditions (and a few transition times), and a condition is most of a node insight's bytes.
CACHED_WRITERS = {models.Condition}


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def shape_name(model: type[BaseModel]) -> str:
    """The shape a model derives from (a class of a generated module), else `<Model>Shape`."""
    for base in model.__mro__[1:]:
        if base.__module__ in (KINDS_MODULE, API_MODULE):
            return base.__name__
    return f"{model.__name__}Shape"


def type_text(annotation: Any, model_name: Callable[[type[BaseModel]], str], seq: str, mapping: str) -> str:
    """How a field's type reads in generated code: models by `model_name`, lists as `seq`, dicts as `mapping`."""
    inner = optional_inner(annotation)
    if inner is not None:
        return f"{type_text(inner[0], model_name, seq, mapping)} | None"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is list:
        return f"{seq}[{type_text(args[0], model_name, seq, mapping)}]"
    if origin is dict:
        key, value = (type_text(arg, model_name, seq, mapping) for arg in args)
        return f"{mapping}[{key}, {value}]"
    if is_model(annotation):
        return model_name(annotation)
    if isinstance(annotation, type):
        return str(annotation.__name__)
    raise Unsupported(f"field type {annotation!r}")


def plain_type(annotation: Any) -> str:
    return type_text(annotation, lambda m: m.__name__, "list", "dict")


def shape_type(annotation: Any) -> str:
    return type_text(annotation, shape_name, "Sequence", "Mapping")


class Writer:
    def __init__(self) -> None:
        self.patterns: list[str] = []
        self.key_sets: list[str] = []

    def pattern(self, pattern: str) -> str:
        self.patterns.append(pattern)
        return f"_PATTERN_{len(self.patterns) - 1}"

    # --- readers -------------------------------------------------------------------------------

    def check(self, var: str, annotation: Any, meta: dict[str, Any], out: list[str], indent: str) -> str:
        """Statements into `out` that check `var` (a JSON value) and leave the field's value in the
        returned expression; `raise NotPlain` for anything the model may judge otherwise."""
        inner = optional_inner(annotation)
        if inner is not None:
            inner_meta = {**meta, **constraints(inner[1])}
            result = f"{var}_value"
            out.append(f"{indent}if {var} is None:")
            out.append(f"{indent}    {result} = None")
            out.append(f"{indent}else:")
            body: list[str] = []
            expr = self.check(var, inner[0], inner_meta, body, indent + "    ")
            out.extend(body)
            out.append(f"{indent}    {result} = {expr}")
            return result
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
        kind = meta.get("kind")
        if annotation is int and kind in ("time", "duration"):
            out.append(f"{indent}if type({var}) is not str:")
            out.append(f"{indent}    raise NotPlain")
            return f"parse_{kind}({var})"
        if annotation is str:
            tests = [f"type({var}) is not str"]
            if "min_length" in meta:
                tests.append(f"len({var}) < {meta['min_length']}")
            if "max_length" in meta:
                tests.append(f"len({var}) > {meta['max_length']}")
            if "pattern" in meta:
                tests.append(f"{self.pattern(meta['pattern'])}.fullmatch({var}) is None")
            out.append(f"{indent}if {' or '.join(tests)}:")
            out.append(f"{indent}    raise NotPlain")
            return var
        if annotation is bool:
            out.append(f"{indent}if type({var}) is not bool:")
            out.append(f"{indent}    raise NotPlain")
            return var
        if annotation is int:
            tests = [f"type({var}) is not int"]
            if "ge" in meta:
                tests.append(f"{var} < {meta['ge']}")
            if "le" in meta:
                tests.append(f"{var} > {meta['le']}")
            out.append(f"{indent}if {' or '.join(tests)}:")
            out.append(f"{indent}    raise NotPlain")
            return var
        if is_enum(annotation):
            return f"_{annotation.__name__.upper()}[{var}]"  # KeyError (not a value) or TypeError (not hashable)
        if is_model(annotation):
            return f"read_{snake(annotation.__name__)}({var})"
        if origin is list:
            (item,) = args
            tests = [f"type({var}) is not list"]
            if "max_length" in meta:
                tests.append(f"len({var}) > {meta['max_length']}")
            out.append(f"{indent}if {' or '.join(tests)}:")
            out.append(f"{indent}    raise NotPlain")
            if item is str:
                out.append(f"{indent}if any(type(item) is not str for item in {var}):")
                out.append(f"{indent}    raise NotPlain")
                return f"list({var})"
            if is_model(item):
                return f"[read_{snake(item.__name__)}(item) for item in {var}]"
            raise Unsupported(f"list of {item!r}")
        if origin is dict and args == (str, int):
            out.append(f"{indent}if type({var}) is not dict or any(")
            out.append(f"{indent}    type(k) is not str or type(n) is not int for k, n in {var}.items()")
            out.append(f"{indent}):")
            out.append(f"{indent}    raise NotPlain")
            return f"dict({var})"
        raise Unsupported(f"field type {annotation!r}")

    def default(self, field: FieldInfo) -> str:
        factory = field.default_factory
        if factory is list:
            return "[]"
        if factory is dict:
            return "{}"
        if is_model(factory):
            return f"read_{snake(factory.__name__)}({{}})"
        if factory is not None:
            raise Unsupported(f"default factory {factory!r}")
        if field.default is None or isinstance(field.default, str | int):
            return repr(field.default)
        raise Unsupported(f"default {field.default!r}")

    def reader(self, model: type[BaseModel]) -> list[str]:
        """`read_<model>(v)`: the plain object of a JSON value exactly as the controller writes it."""
        name = model.__name__
        fields = list(model.model_fields.items())
        keys = f"_KEYS_{snake(name).upper()}"
        aliases = sorted(info.alias or field_name for field_name, info in fields)
        self.key_sets.append(f"{keys} = frozenset({{{', '.join(repr(a) for a in aliases)}}})")
        lines = [f"def read_{snake(name)}(v: Any) -> {name}:"]
        lines.append(f"    if type(v) is not dict or not {keys}.issuperset(v):")
        lines.append("        raise NotPlain")
        args = []
        for i, (field_name, info) in enumerate(fields):
            alias = info.alias or field_name
            var = f"f{i}"
            meta = constraints(info.metadata)
            body: list[str] = []
            if info.is_required():
                lines.append(f"    {var} = v[{alias!r}]")
                expr = self.check(var, info.annotation, meta, body, "    ")
                lines.extend(body)
                args.append(expr)
                continue
            lines.append(f"    {var} = v[{alias!r}] if {alias!r} in v else _DEFAULT")
            expr = self.check(var, info.annotation, meta, body, "        ")
            result = f"{var}_field"
            lines.append(f"    if {var} is _DEFAULT:")
            lines.append(f"        {result} = {self.default(info)}")
            lines.append("    else:")
            lines.extend(body)
            lines.append(f"        {result} = {expr}")
            args.append(result)
        lines.append(f"    return {name}({', '.join(args)})")
        return lines

    # --- writers -------------------------------------------------------------------------------

    def value_text(self, expr: str, annotation: Any, meta: dict[str, Any], prelude: list[str], local: str) -> str:
        """The f-string text that writes the JSON of `expr` (a field's value, never None here);
        statements it needs first go to `prelude`, which may bind `local`."""
        kind = meta.get("kind")
        if annotation is int and kind == "time":
            return f'"{{time_string({expr})}}"'  # digits and `-:.TZ+`: nothing to quote
        if annotation is int and kind == "duration":
            return f'"{{duration_string({expr})}}"'
        if annotation is str or is_enum(annotation):
            return f"{{_q({expr})}}"  # an enum member is its value's str
        if annotation is int:
            return f"{{{expr}}}"
        if is_model(annotation):
            return f"{{write_{snake(annotation.__name__)}({expr})}}"
        if typing.get_origin(annotation) is list:
            (item,) = typing.get_args(annotation)
            if not is_model(item):
                raise Unsupported(f"writing a list of {item!r}")
            write = f"write_{snake(item.__name__)}(item)"
            if item in CACHED_WRITERS:  # its cache called at once: one call an item, not two
                write = f"_write_{snake(item.__name__)}({', '.join(f'item.{f}' for f in item.model_fields)})"
            prelude.append(f'    {local} = ",".join([{write} for item in {expr}])')
            return f"[{{{local}}}]"
        raise Unsupported(f"writing a field of type {annotation!r}")

    def writer(self, model: type[BaseModel]) -> list[str]:
        """`write_<model>(o)`: the model's JSON of an object of its shape, as `to_api` and
        `json.dumps` give it: fields in the model's order, None and (`OMIT_EMPTY`) "" left out.
        One f-string: a field that may be left out is a local holding its text or ""."""
        name = model.__name__
        function = f"write_{snake(name)}"
        fields = list(model.model_fields.items())
        prelude: list[str] = []
        parts: list[tuple[str | None, str]] = []  # (the condition to write it, or None; its text)
        cached = model in CACHED_WRITERS
        for i, (field_name, info) in enumerate(fields):
            expr = field_name if cached else f"o.{field_name}"
            meta = constraints(info.metadata)
            alias = info.alias or field_name
            inner = optional_inner(info.annotation)
            condition = None
            annotation = info.annotation
            if inner is not None:
                meta.update(constraints(inner[1]))
                annotation, condition = inner[0], f"{expr} is not None"
            elif meta.get("omit_empty"):
                condition = f'{expr} != ""'
            parts.append((condition, f'"{alias}":{self.value_text(expr, annotation, meta, prelude, f"v{i}")}'))
        required = [i for i, (condition, _) in enumerate(parts) if condition is None]
        pieces: list[str] = []
        for i, (condition, text) in enumerate(parts):
            if condition is None:
                pieces.append(("," if i != required[0] else "") + text)
                continue
            # before the first field always written, its comma follows it; after, it comes first
            piece = f"{text}," if required and i < required[0] else f",{text}"
            prelude.append(f"    part{i} = f'{piece}' if {condition} else \"\"")
            pieces.append(f"{{part{i}}}")
        body = list(prelude)
        if required:
            pieces[0], pieces[-1] = "{{" + pieces[0], pieces[-1] + "}}"
            body.append(f"    return ({' '.join(f'f{chr(39)}{p}{chr(39)}' for p in pieces)})")
        else:  # every field may be left out: each comes with its comma first
            body.append(f"    text = {' '.join(f'f{chr(39)}{p}{chr(39)}' for p in pieces)}")
            body.append('    return "{" + text[1:] + "}"')
        if not cached:
            return [f"def {function}(o: {shape_name(model)}) -> str:", *body]
        params = ", ".join(f"{field_name}: Any" for field_name, _ in fields)
        values = ", ".join(f"o.{field_name}" for field_name, _ in fields)
        return [
            "@functools.lru_cache(maxsize=4096)",
            f"def _{function}({params}) -> str:",
            *body,
            "",
            "",
            f"def {function}(o: {shape_name(model)}) -> str:",
            f"    return _{function}({values})",
        ]

    # --- classes -------------------------------------------------------------------------------

    def shape(self, model: type[BaseModel]) -> list[str]:
        """The shape: the model's fields, declared for the type checker only."""
        lines = [f"class {shape_name(model)}:"]
        lines.append(f'    """What a {model.__name__} holds: its model and its plain class derive from this."""')
        lines.append("")
        lines.append("    __slots__ = ()")
        lines.append("    if TYPE_CHECKING:")
        for field_name, info in model.model_fields.items():
            lines.append(f"        {field_name}: {shape_type(info.annotation)}")
        return lines

    def plain_class(self, model: type[BaseModel]) -> list[str]:
        """The plain class: the model's fields in slots, `==` by shape; the model's defaults for
        the trailing fields whose default is a str, int or None."""
        name = model.__name__
        shape = shape_name(model)
        fields = list(model.model_fields.items())
        defaults: dict[str, str] = {}
        for field_name, info in reversed(fields):
            if info.is_required() or info.default_factory is not None:
                break
            defaults[field_name] = self.default(info)
        lines = [f"class {name}({shape}):"]
        lines.append(f'    """{name} without pydantic (see the module docstring)."""')
        lines.append("")
        lines.append(f"    __slots__ = ({', '.join(repr(f) for f, _ in fields)},)")
        lines.append("")
        params = []
        for field_name, info in fields:
            text = plain_type(info.annotation)
            lines.append(f"    {field_name}: {text}")
            default = f" = {defaults[field_name]}" if field_name in defaults else ""
            params.append(f"{field_name}: {text}{default}")
        lines.append("")
        lines.append(f"    def __init__(self, {', '.join(params)}) -> None:")
        for field_name, _ in fields:
            lines.append(f"        self.{field_name} = {field_name}")
        lines.append("")
        lines.append("    def __eq__(self, other: object) -> bool:")
        lines.append(f"        return equal_by_shape(self, other, {shape}, self.__slots__)")
        lines.append("")
        lines.append("    __hash__ = None  # type: ignore[assignment]  # mutable, as the models")
        lines.append("")
        lines.append("    def __repr__(self) -> str:")
        lines.append("        return repr_of_slots(self, self.__slots__)")
        return lines


def enums_of(model_list: list[type[BaseModel]]) -> list[type[enum.StrEnum]]:
    found = {
        info.annotation for model in model_list for info in model.model_fields.values() if is_enum(info.annotation)
    }
    return sorted(found, key=lambda e: e.__name__)


def blocks(make: Callable[[type[BaseModel]], list[str]], model_list: list[type[BaseModel]]) -> list[str]:
    """`make`'s lines for each model, two blank lines after each."""
    return [line for model in model_list for line in [*make(model), "", ""]]


def collections_import(lines: list[str]) -> str:
    """The import of the abstract collections that shapes declare (`Mapping`, `Sequence`) `lines` use."""
    used = [name for name in ("Callable", "Mapping", "Sequence") if any(f"{name}[" in line for line in lines)]
    return import_line("collections.abc", used) if used else ""


def import_line(module: str, names: list[str]) -> str:
    return f"from {module} import {', '.join(sorted(set(names)))}"


def generate_kinds() -> str:
    """status/updatestatus/insights/kinds.py: the vocabulary re-exported, the insight shapes."""
    union = " | ".join(shape_name(a) for a in typing.get_args(models.Insight))
    body = blocks(Writer().shape, INSIGHT_MODELS)
    head = [
        '"""The insight API as a reader takes it, without pydantic: the vocabulary (enums, condition types,',
        "reasons: `status.updatestatus.insights.vocabulary`, re-exported here) and the shape of each",
        "insight type, generated from the pydantic models by hack/gen_plain_insights.py: do not edit.",
        "",
        "A shape declares a type's fields for the type checker. The models",
        "(`status.updatestatus.insights.models`, the definition) and the plain classes generated from them",
        "(`status.updatestatus.insights.plain`: what the computation builds and the ConfigMap API's readers",
        "give) both derive from it, so the renderer, the writers and the controller take either (test by",
        "shape, never by class).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        collections_import(body),
        "from typing import TYPE_CHECKING",
        "",
        *(f"from {vocabulary.__name__} import {n} as {n}" for n in vocabulary.__all__),
        "",
        "",
    ]
    tail = [f"InsightShape = {union}"]
    return formatted("\n".join(head + body + tail).rstrip() + "\n", KINDS_TARGET)


def generate_insights() -> str:
    """status/updatestatus/insights/plain.py: the plain classes of the insight types."""
    body = blocks(Writer().plain_class, INSIGHT_MODELS)
    union = " | ".join(a.__name__ for a in typing.get_args(models.Insight))
    names = sorted(["Insight", *(m.__name__ for m in INSIGHT_MODELS)])
    head = [
        '"""Plain classes of the insight types, generated from the pydantic models by',
        "hack/gen_plain_insights.py: do not edit.",
        "",
        "What the pure computation (`status.updatestatus.insights.compute`) builds and the ConfigMap API's",
        "plain readers (`status.updatestatus.api.plain`) return: slots holding the model's fields, and `==`",
        "by shape (`status.updatestatus.insights.kinds`), so a plain object equals the model holding the",
        "same values (the models, `status.updatestatus.insights.models`, remain the definition: they",
        "validate what the plain readers refuse).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        import_line(KINDS_MODULE, [shape_name(m) for m in INSIGHT_MODELS]),
        import_line(vocabulary.__name__, [e.__name__ for e in enums_of(INSIGHT_MODELS)]),
        "",
        f"__all__ = [{', '.join(repr(n) for n in names)}]",
        "",
        "",
        "def equal_by_shape(obj: object, other: object, shape: type, names: tuple[str, ...]) -> bool:",
        '    """Equal to anything of the same shape holding equal values: a plain object and the',
        '    model read from the same value compare equal (a model\'s own `==` defers to this)."""',
        "    return isinstance(other, shape) and all(getattr(obj, n) == getattr(other, n) for n in names)",
        "",
        "",
        "def repr_of_slots(obj: object, names: tuple[str, ...]) -> str:",
        "    return f\"{type(obj).__name__}({', '.join(f'{n}={getattr(obj, n)!r}' for n in names)})\"",
        "",
        "",
    ]
    tail = [f"Insight = {union}"]
    return formatted("\n".join(head + body + tail).rstrip() + "\n", INSIGHTS_TARGET)


# The writers' string quoting, written into the generated module once.
QUOTING = [
    "# Characters JSON leaves raw but YAML reads differently: C1 controls and DEL are not allowed in a",
    "# YAML stream, and NEL, LS and PS are line breaks that YAML folds into spaces inside a quoted",
    "# scalar. They are written as \\uXXXX escapes, which JSON and YAML both read back exactly.",
    'YAML_UNSAFE = re.compile("[\\x7f-\\x9f\\u2028\\u2029\\ufeff\\ufffe\\uffff]")',
    "",
    "",
    "def _q(text: str) -> str:",
    '    """JSON string quoting, C accelerated, non-ASCII kept (as `ensure_ascii=False`), YAML-safe."""',
    "    quoted: str = encode_basestring(text)",
    "    if YAML_UNSAFE.search(quoted) is None:",
    "        return quoted",
    "    return YAML_UNSAFE.sub(escape_yaml_unsafe, quoted)",
    "",
    "",
    "def escape_yaml_unsafe(match: re.Match[str]) -> str:",
    '    return f"\\\\u{ord(match.group()):04x}"',
    "",
    "",
]


def generate_api() -> str:
    """status/updatestatus/api/plain.py: the publication metadata's shapes and plain classes, and
    every reader."""
    writer = Writer()
    shapes = blocks(writer.shape, METADATA_MODELS)
    classes = blocks(writer.plain_class, METADATA_MODELS)
    readers = blocks(writer.reader, MODELS)
    enums = enums_of(MODELS)
    head = [
        '"""The ConfigMap API\'s plain readers, and the shapes and plain classes of its publication metadata,',
        "generated from the pydantic models by hack/gen_plain_insights.py (whose docstring says what they",
        "take): do not edit.",
        "",
        "A reader takes a JSON value (as `json.loads` gives it) and returns the plain object (an insight's",
        "class is in `status.updatestatus.insights.plain`), or raises `NotPlain` (or KeyError, TypeError,",
        "ValueError) for anything it does not take.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "import re",
        collections_import(shapes),
        "from typing import TYPE_CHECKING, Any",
        "",
        "from cvo_py.runtime.gotext.durations import parse_duration",
        "from cvo_py.runtime.gotext.times import parse_time",
        import_line(INSIGHTS_MODULE, [*(m.__name__ for m in INSIGHT_MODELS), "equal_by_shape", "repr_of_slots"]),
        import_line(vocabulary.__name__, [e.__name__ for e in enums]),
        "",
        "",
        "class NotPlain(Exception):",
        '    """A value the plain readers do not take: the models judge it."""',
        "",
        "",
        "_DEFAULT: Any = object()  # a field left out",
        "",
    ]
    for e in enums:
        head.append(f"_{e.__name__.upper()} = {{member.value: member for member in {e.__name__}}}")
    for i, pattern in enumerate(writer.patterns):
        head.append(f"_PATTERN_{i} = re.compile({pattern!r})")
    head += writer.key_sets
    head += ["", ""]
    return formatted("\n".join(head + shapes + classes + readers).rstrip() + "\n", API_TARGET)


def generate_writers() -> str:
    """status/updatestatus/api/writers.py: the writers of the insight types."""
    writers = blocks(Writer().writer, INSIGHT_MODELS)
    insight_writers = [
        "# Each insight type's shape and writer.",
        "INSIGHT_WRITERS: tuple[tuple[type, Callable[[Any], str]], ...] = (",
        *(f"    ({shape_name(m)}, write_{snake(m.__name__)})," for m in typing.get_args(models.Insight)),
        ")",
    ]
    head = [
        '"""The ConfigMap API\'s writers, generated from the pydantic models by hack/gen_plain_insights.py',
        "(whose docstring says what they give): do not edit.",
        "",
        "A writer takes an insight of its shape (a plain object or a model) and returns its model's JSON,",
        "one compact line, YAML-safe.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "import functools",
        "import re",
        "from collections.abc import Callable",
        "from json.encoder import encode_basestring",
        "from typing import Any",
        "",
        "from cvo_py.runtime.gotext.durations import duration_string",
        import_line(KINDS_MODULE, [shape_name(m) for m in INSIGHT_MODELS]),
        f"from {vocabulary.__name__} import time_string",
        "",
        "",
    ]
    return formatted("\n".join(head + QUOTING + writers + insight_writers).rstrip() + "\n", WRITERS_TARGET)


def formatted(text: str, target: Path) -> str:
    """`text` with its imports sorted and formatted as ruff does (the project's settings), so the
    file reads as the rest."""
    ruff = Path(sys.executable).parent / "ruff"
    for command in (["check", "--select", "I", "--fix", "--quiet"], ["format"]):
        done = subprocess.run(
            [str(ruff), *command, "--stdin-filename", str(target), "-"],
            input=text,
            capture_output=True,
            text=True,
            check=False,
            cwd=REPO,
        )
        if done.returncode != 0:
            raise Unsupported(f"ruff {command[0]} failed: {(done.stderr or done.stdout).strip()}")
        text = str(done.stdout)
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a file is not what the models give")
    args = parser.parse_args()
    try:
        texts = {
            KINDS_TARGET: generate_kinds(),
            INSIGHTS_TARGET: generate_insights(),
            API_TARGET: generate_api(),
            WRITERS_TARGET: generate_writers(),
        }
    except Unsupported as exc:
        print(f"gen_plain_insights: {exc}: extend hack/gen_plain_insights.py", file=sys.stderr)
        return 2
    if args.check:
        stale = [target for target, text in texts.items() if (target.read_text() if target.exists() else "") != text]
        for target in stale:
            where = target.relative_to(REPO)
            print(f"{where} is not what the models give: run hack/gen_plain_insights.py", file=sys.stderr)
        return 1 if stale else 0
    for target, text in texts.items():
        target.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
