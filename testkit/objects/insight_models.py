"""Insights as models and as plain objects, each from the other, field by field: what the tests
compare the generated plain classes, readers and writers with (`status.updatestatus.api`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from status.updatestatus.api import metadata
from status.updatestatus.api import plain as plain_api
from status.updatestatus.insights import models
from status.updatestatus.insights import plain as plain_insights


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
