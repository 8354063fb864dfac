"""The insight models read: their fields' declarations (what hack/gen_plain_insights.py generates
from, and the tests draw random insights from), and insights as models and as plain objects, each
from the other, field by field (what the tests compare the generated code with)."""

from __future__ import annotations

import enum
import types
import typing
from typing import Any

import annotated_types
from pydantic import BaseModel

from status.updatestatus.api import metadata
from status.updatestatus.api import plain as plain_api
from status.updatestatus.insights import models
from status.updatestatus.insights import plain as plain_insights


class Unsupported(Exception):
    """A declaration in the models that this reading does not know: extend it with the models."""


def constraints(items: list[Any]) -> dict[str, Any]:
    """A field's constraints, from its metadata (or an Annotated type's): `min_length`,
    `max_length`, `ge`, `le`, `pattern`, `omit_empty`, and `kind` (`time` or `duration`)."""
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
        elif item is models.OMIT_EMPTY:
            found["omit_empty"] = True
        elif getattr(item, "pattern", None) is not None:
            found["pattern"] = item.pattern
        elif getattr(item, "func", None) is models._time_in:  # the BeforeValidator that marks a Time
            found["kind"] = "time"
        elif getattr(item, "func", None) is models._duration_in:
            found["kind"] = "duration"
        elif type(item).__name__ == "PlainSerializer":
            pass  # how a Time or Duration is written: known by its kind
        else:
            raise Unsupported(f"constraint {item!r}")
    return found


def optional_inner(annotation: Any) -> tuple[Any, list[Any]] | None:
    """`X | None` → (X, X's Annotated metadata); None for any other annotation."""
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) not in (typing.Union, types.UnionType) or type(None) not in args:
        return None
    (inner,) = [a for a in args if a is not type(None)]
    if typing.get_origin(inner) is typing.Annotated:
        inner, *extra = typing.get_args(inner)
        return inner, extra
    return inner, []


def is_model(annotation: Any) -> typing.TypeGuard[type[BaseModel]]:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def is_enum(annotation: Any) -> typing.TypeGuard[type[enum.StrEnum]]:
    return isinstance(annotation, type) and issubclass(annotation, enum.StrEnum)


def model_of(value: Any) -> Any:
    """A plain insight (or any part of one, or a list of them) as its model, validated field by field
    from the plain object's attributes (never through the JSON the writers give)."""
    if type(value) is list:
        return [model_of(item) for item in value]
    if type(value).__module__ not in (plain_insights.__name__, plain_api.__name__):
        return value
    name = type(value).__name__
    model: type[BaseModel] = getattr(models, name, None) or getattr(metadata, name)
    return model.model_validate({field: model_of(getattr(value, field)) for field in model.model_fields})


def plain_of(value: Any) -> Any:
    """A model (or a list of them) as the plain object of its type, field by field."""
    if type(value) is list:
        return [plain_of(item) for item in value]
    if not isinstance(value, BaseModel):
        return value
    name = type(value).__name__
    cls = getattr(plain_insights, name, None) or getattr(plain_api, name)
    return cls(*(plain_of(getattr(value, field)) for field in type(value).model_fields))
