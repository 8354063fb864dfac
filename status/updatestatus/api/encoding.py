"""The ConfigMap API's values: an insight as compact, YAML-safe JSON on one line, and ConfigMap data
back to insights as the models read them (see `status.updatestatus.api.configmap` for the format).

Each insight is written by the writer of its type (`status.updatestatus.api.writers`, generated from
the models): the bytes of its model's JSON, for a plain insight or a model alike."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

from status.updatestatus.api import wire
from status.updatestatus.api.keys import key_of
from status.updatestatus.api.wire import DecodeError
from status.updatestatus.api.writers import INSIGHT_WRITERS
from status.updatestatus.insights.kinds import InsightShape
from status.updatestatus.insights.models import Insight


def decode(data: Mapping[str, str]) -> list[Insight]:
    """ConfigMap data → insights as the models read them (what the controller and the tests take);
    see `status.updatestatus.api.wire.decode`, which a client reads with, without pydantic, and which
    gives plain objects equal to these."""
    return cast(list[Insight], wire.decode(data, plain=False))  # plain=False: every one a model


def decode_readable(data: Mapping[str, str]) -> tuple[list[Insight], list[DecodeError]]:
    """`decode()` that reads every key it can (see `status.updatestatus.api.wire.decode_readable`)."""
    insights, errors = wire.decode_readable(data, plain=False)
    return cast(list[Insight], insights), errors


_WRITER_OF: dict[type, Callable[[Any], str]] = {}  # each class met (plain or model) → its type's writer


def encode_value(insight: InsightShape) -> str:
    """An insight's ConfigMap value: its model's JSON, compact, YAML-safe, on one line."""
    write = _WRITER_OF.get(type(insight))
    if write is None:
        found = [w for shape, w in INSIGHT_WRITERS if isinstance(insight, shape)]
        if not found:
            raise TypeError(f"not an insight: {type(insight).__name__}")
        write = _WRITER_OF[type(insight)] = found[0]
    return write(insight)


def encode(insights: Iterable[InsightShape]) -> dict[str, str]:
    """Insights → ConfigMap data (one key per insight). Duplicate keys are an error."""
    data: dict[str, str] = {}
    for insight in insights:
        key = key_of(insight)
        if key in data:
            raise ValueError(f"two insights share the ConfigMap key {key}")
        data[key] = encode_value(insight)
    return data
