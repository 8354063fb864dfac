#!/usr/bin/env python3
"""Writes the plain classes of the insight API and their readers from its pydantic models.

The models (`status.updatestatus.insights.models`, and the publication metadata of
`status.updatestatus.api.metadata`) are the one definition of the API. Loading pydantic costs
more than everything else a one-shot `upgrade-status` does, so this generates, from the models'
fields, plain classes (slots, deriving from each model's shape in `insights.kinds` or
`api.staleness`, the models' defaults for trailing fields) and a strict reader per model:

- status/updatestatus/insights/plain.py: the plain classes of the insight types, which the pure
  computation (`status.updatestatus.insights.compute`) builds and the readers return;
- status/updatestatus/api/plain.py: the plain classes of the publication metadata, and the
  readers: each takes a value only when it is exactly what the controller writes (JSON types as
  the fields declare them, camelCase names, every constraint of the field met) and raises
  `NotPlain` for anything else, which the caller then gives to the models to judge
  (`status.updatestatus.api.wire`). So whatever a plain reader takes, the model takes too, with
  the same result (tests/status/updatestatus/api/test_plain.py checks both on random and mutated
  values).

    .venv/bin/python hack/gen_plain_insights.py           # rewrite both files
    .venv/bin/python hack/gen_plain_insights.py --check   # exit 1 when one is not what the models give

A field type the generator does not know is an error naming it: the generator is extended with the models.
"""

from __future__ import annotations

import argparse
import enum
import re
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from status.updatestatus.api import metadata, staleness
from status.updatestatus.insights import kinds, models
from testkit.checkout import REPO

INSIGHTS_TARGET = REPO / "status" / "updatestatus" / "insights" / "plain.py"
API_TARGET = REPO / "status" / "updatestatus" / "api" / "plain.py"
INSIGHTS_MODULE = "status.updatestatus.insights.plain"

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
TIME, DURATION = models._time_in, models._duration_in  # the BeforeValidators that mark Time and Duration


class Unsupported(Exception):
    pass


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def shape_of(model: type[BaseModel]) -> type:
    for base in model.__mro__[1:]:
        if base.__module__ in (kinds.__name__, staleness.__name__):
            return base
    raise Unsupported(f"{model.__name__} derives from no shape in insights.kinds or api.staleness")


def constraints(items: list[Any]) -> dict[str, Any]:
    """A field's constraints, from its metadata (or an Annotated type's)."""
    found: dict[str, Any] = {}
    for item in items:
        if isinstance(item, annotated_types.MinLen):
            found["min_length"] = item.min_length
        elif isinstance(item, annotated_types.MaxLen):
            found["max_length"] = item.max_length
        elif isinstance(item, annotated_types.Ge):
            found["ge"] = item.ge
        elif isinstance(item, annotated_types.Le):
            found["le"] = item.le
        elif getattr(item, "pattern", None) is not None:
            found["pattern"] = item.pattern
        elif getattr(item, "func", None) is TIME:
            found["kind"] = "time"
        elif getattr(item, "func", None) is DURATION:
            found["kind"] = "duration"
        elif type(item).__name__ == "PlainSerializer":
            pass  # how it is written, not read
        else:
            raise Unsupported(f"constraint {item!r}")
    return found


class Writer:
    def __init__(self) -> None:
        self.patterns: list[str] = []
        self.key_sets: list[str] = []

    def pattern(self, pattern: str) -> str:
        self.patterns.append(pattern)
        return f"_PATTERN_{len(self.patterns) - 1}"

    def check(self, var: str, annotation: Any, meta: dict[str, Any], out: list[str], indent: str) -> str:
        """Statements into `out` that check `var` (a JSON value) and leave the field's value in the
        returned expression; `raise NotPlain` for anything the model may judge otherwise."""
        origin = typing.get_origin(annotation)
        args = typing.get_args(annotation)
        if origin in (typing.Union, types.UnionType) and type(None) in args:
            (inner,) = [a for a in args if a is not type(None)]
            inner_meta = dict(meta)
            if typing.get_origin(inner) is typing.Annotated:
                inner, *extra = typing.get_args(inner)
                inner_meta.update(constraints(extra))
            result = f"{var}_value"
            out.append(f"{indent}if {var} is None:")
            out.append(f"{indent}    {result} = None")
            out.append(f"{indent}else:")
            body: list[str] = []
            expr = self.check(var, inner, inner_meta, body, indent + "    ")
            out.extend(body)
            out.append(f"{indent}    {result} = {expr}")
            return result
        kind = meta.get("kind")
        if annotation is int and kind == "time":
            out.append(f"{indent}if type({var}) is not str:")
            out.append(f"{indent}    raise NotPlain")
            return f"parse_time({var})"
        if annotation is int and kind == "duration":
            out.append(f"{indent}if type({var}) is not str:")
            out.append(f"{indent}    raise NotPlain")
            return f"parse_duration({var})"
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
        if isinstance(annotation, type) and issubclass(annotation, enum.StrEnum):
            return f"_{annotation.__name__.upper()}[{var}]"  # KeyError (not a value) or TypeError (not hashable)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
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
            if isinstance(item, type) and issubclass(item, BaseModel):
                return f"[read_{snake(item.__name__)}(item) for item in {var}]"
            raise Unsupported(f"list of {item!r}")
        if origin is dict and args == (str, int):
            out.append(f"{indent}if type({var}) is not dict or any(")
            out.append(f"{indent}    type(k) is not str or type(n) is not int for k, n in {var}.items()")
            out.append(f"{indent}):")
            out.append(f"{indent}    raise NotPlain")
            return f"dict({var})"
        raise Unsupported(f"field type {annotation!r}")

    def annotation_text(self, annotation: Any, meta: dict[str, Any]) -> str:
        origin = typing.get_origin(annotation)
        args = typing.get_args(annotation)
        if origin in (typing.Union, types.UnionType) and type(None) in args:
            (inner,) = [a for a in args if a is not type(None)]
            if typing.get_origin(inner) is typing.Annotated:
                inner = typing.get_args(inner)[0]
            return f"{self.annotation_text(inner, {})} | None"
        if origin is list:
            return f"list[{self.annotation_text(args[0], {})}]"
        if origin is dict:
            return f"dict[{self.annotation_text(args[0], {})}, {self.annotation_text(args[1], {})}]"
        if isinstance(annotation, type):
            return str(annotation.__name__)
        raise Unsupported(f"field type {annotation!r}")

    def default(self, field: FieldInfo) -> str:
        factory = field.default_factory
        if factory is list:
            return "[]"
        if factory is dict:
            return "{}"
        if isinstance(factory, type) and issubclass(factory, BaseModel):
            return f"read_{snake(factory.__name__)}({{}})"
        if factory is not None:
            raise Unsupported(f"default factory {factory!r}")
        if field.default is None or isinstance(field.default, str | int):
            return repr(field.default)
        raise Unsupported(f"default {field.default!r}")

    def plain_class(self, model: type[BaseModel]) -> list[str]:
        """The plain class: the model's fields in slots, its shape's methods, `==` by shape; the
        model's defaults for the trailing fields whose default is a str, int or None."""
        name = model.__name__
        shape = shape_of(model)
        fields = list(model.model_fields.items())
        defaults: dict[str, str] = {}
        for field_name, info in reversed(fields):
            if info.is_required() or info.default_factory is not None:
                break
            defaults[field_name] = self.default(info)
        lines = [f"class {name}({shape.__name__}):"]
        lines.append(f'    """{name} without pydantic (see the module docstring)."""')
        lines.append("")
        lines.append(f"    __slots__ = ({', '.join(repr(f) for f, _ in fields)},)")
        lines.append("")
        params = []
        for field_name, info in fields:
            text = self.annotation_text(info.annotation, constraints(info.metadata))
            lines.append(f"    {field_name}: {text}")
            default = f" = {defaults[field_name]}" if field_name in defaults else ""
            params.append(f"{field_name}: {text}{default}")
        lines.append("")
        lines.append(f"    def __init__(self, {', '.join(params)}) -> None:")
        for field_name, _ in fields:
            lines.append(f"        self.{field_name} = {field_name}")
        lines.append("")
        lines.append("    def __eq__(self, other: object) -> bool:")
        lines.append(f"        return equal_by_shape(self, other, {shape.__name__}, self.__slots__)")
        lines.append("")
        lines.append("    __hash__ = None  # type: ignore[assignment]  # mutable, as the models")
        lines.append("")
        lines.append("    def __repr__(self) -> str:")
        lines.append("        return repr_of_slots(self, self.__slots__)")
        return lines

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
            if info.is_required():
                lines.append(f"    {var} = v[{alias!r}]")
            else:
                lines.append(f"    {var} = v[{alias!r}] if {alias!r} in v else _DEFAULT")
            body: list[str] = []
            meta = constraints(info.metadata)
            if info.is_required():
                expr = self.check(var, info.annotation, meta, body, "    ")
                lines.extend(body)
                args.append(expr)
            else:
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


def enums_of(model_list: list[type[BaseModel]]) -> list[type[enum.StrEnum]]:
    found = {
        info.annotation
        for model in model_list
        for info in model.model_fields.values()
        if isinstance(info.annotation, type) and issubclass(info.annotation, enum.StrEnum)
    }
    return sorted(found, key=lambda e: e.__name__)


def shapes_of(model_list: list[type[BaseModel]], module: types.ModuleType) -> list[str]:
    return sorted({shape_of(m).__name__ for m in model_list if shape_of(m).__module__ == module.__name__})


def blocks(make: typing.Callable[[type[BaseModel]], list[str]], model_list: list[type[BaseModel]]) -> list[str]:
    """`make`'s lines for each model, two blank lines after each."""
    return [line for model in model_list for line in [*make(model), "", ""]]


def generate_insights() -> str:
    """status/updatestatus/insights/plain.py: the plain classes of the insight types."""
    body = blocks(Writer().plain_class, INSIGHT_MODELS)
    union = " | ".join(a.__name__ for a in typing.get_args(models.Insight))
    names = sorted(["Insight", *(m.__name__ for m in INSIGHT_MODELS)])
    kinds_names = sorted(shapes_of(INSIGHT_MODELS, kinds) + [e.__name__ for e in enums_of(INSIGHT_MODELS)])
    head = [
        '"""Plain classes of the insight types, generated from the pydantic models by',
        "hack/gen_plain_insights.py: do not edit.",
        "",
        "What the pure computation (`status.updatestatus.insights.compute`) builds and the ConfigMap API's",
        "plain readers (`status.updatestatus.api.plain`) return: slots holding the model's fields, the methods",
        "of the shape in `status.updatestatus.insights.kinds`, and `==` by shape, so a plain object equals",
        "the model holding the same values (the models, `status.updatestatus.insights.models`, remain the",
        "definition: they validate what the plain readers refuse and write the JSON).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        f"from {kinds.__name__} import {', '.join(kinds_names)}",
        "",
        f"__all__ = [{', '.join(repr(n) for n in names)}]",
        "",
        "",
        "def equal_by_shape(obj: object, other: object, shape: type, names: tuple[str, ...]) -> bool:",
        "    \"\"\"Equal to anything of the same shape holding equal values: a plain object and the",
        "    model read from the same value compare equal (a model's own `==` defers to this).\"\"\"",
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


def generate_api() -> str:
    """status/updatestatus/api/plain.py: the publication metadata's plain classes, every reader."""
    writer = Writer()
    classes = blocks(writer.plain_class, METADATA_MODELS)
    readers = blocks(writer.reader, MODELS)
    enums = enums_of(MODELS)
    insight_names = sorted(m.__name__ for m in INSIGHT_MODELS)
    imports = {
        kinds.__name__: sorted(e.__name__ for e in enums),
        staleness.__name__: shapes_of(METADATA_MODELS, staleness),
        INSIGHTS_MODULE: sorted([*insight_names, "equal_by_shape", "repr_of_slots"]),
    }
    head = [
        '"""The ConfigMap API\'s plain readers, and the plain classes of its publication metadata, generated',
        "from the pydantic models by hack/gen_plain_insights.py (whose docstring says what they take): do not edit.",
        "",
        "A reader takes a JSON value (as `json.loads` gives it) and returns the plain object (an insight's",
        "class is in `status.updatestatus.insights.plain`), or raises `NotPlain` (or KeyError, TypeError,",
        "ValueError) for anything it does not take.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "import re",
        "from typing import Any",
        "",
        "from cvo_py.runtime.gotext import parse_duration, parse_time",
    ]
    for module in sorted(imports):  # isort's order
        head.append(f"from {module} import {', '.join(imports[module])}")
    head += [
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
    return formatted("\n".join(head + classes + readers).rstrip() + "\n", API_TARGET)


def formatted(text: str, target: Path) -> str:
    """`text` as ruff formats it (the project's line length), so the file reads as the rest."""
    ruff = Path(sys.executable).parent / "ruff"
    done = subprocess.run(
        [str(ruff), "format", "--stdin-filename", str(target), "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    if done.returncode != 0:
        raise Unsupported(f"ruff format failed: {done.stderr.strip()}")
    return str(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a file is not what the models give")
    args = parser.parse_args()
    try:
        texts = {INSIGHTS_TARGET: generate_insights(), API_TARGET: generate_api()}
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
