"""The ConfigMap API's values: an insight as compact, YAML-safe JSON on one line, and ConfigMap data
back to insights as the models read them (see `status.updatestatus.api.configmap` for the format).

The computation builds plain insights (`status.updatestatus.insights.plain`); their JSON is still the
models' (`to_api`): a plain insight is given to pydantic's serializer as its model (`as_model`), but
for node insights, the bulk, which `node_value` writes by hand to the same bytes."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from json.encoder import encode_basestring
from typing import Any, cast

from pydantic import BaseModel

from cvo_py.runtime import gotext
from status.updatestatus.api import wire
from status.updatestatus.api.keys import key_of
from status.updatestatus.api.wire import KINDS, DecodeError
from status.updatestatus.insights import models
from status.updatestatus.insights import plain as plain_insights
from status.updatestatus.insights.kinds import InsightShape, NodeInsightShape, ResourceRefShape
from status.updatestatus.insights.models import Insight, construct_fast, time_string

_PREFIXES: dict[str, type[Any]] = {prefix: getattr(models, name) for prefix, name in KINDS.items()}
# Each plain class of the insight API → its model (of the same name).
_MODEL_OF: dict[type, type[BaseModel]] = {
    cls: getattr(models, name)
    for name in plain_insights.__all__
    if isinstance(cls := getattr(plain_insights, name), type)
}


def decode(data: Mapping[str, str]) -> list[Insight]:
    """ConfigMap data → insights as the models read them (what the controller and the tests take);
    see `status.updatestatus.api.wire.decode`, which a client reads with, without pydantic, and which
    gives plain objects equal to these."""
    return cast(list[Insight], wire.decode(data, plain=False))  # plain=False: every one a model


def decode_readable(data: Mapping[str, str]) -> tuple[list[Insight], list[DecodeError]]:
    """`decode()` that reads every key it can (see `status.updatestatus.api.wire.decode_readable`)."""
    insights, errors = wire.decode_readable(data, plain=False)
    return cast(list[Insight], insights), errors


def as_model(value: Any) -> Any:
    """A plain insight (or any part of one) as its model, unvalidated (what the computation builds
    needs no validation), so that pydantic's serializer writes it; anything else as it is."""
    model = _MODEL_OF.get(type(value))
    if model is None:
        return value
    fields = {}
    for name in value.__slots__:
        field = getattr(value, name)
        fields[name] = [as_model(item) for item in field] if type(field) is list else as_model(field)
    return construct_fast(model, fields)


def to_api(insight: InsightShape) -> dict[str, Any]:
    """An insight's JSON form (a model's `to_api()`), for a model or a plain insight alike."""
    model: models.ApiModel = as_model(insight)
    return model.to_api()


def encode_value(insight: InsightShape) -> str:
    """An insight's ConfigMap value: compact, YAML-safe JSON on one line (`node_value` writes the
    bulk, node insights, by hand; every other kind goes through the JSON encoder)."""
    if isinstance(insight, NodeInsightShape):
        return node_value(insight)
    text = json.dumps(to_api(insight), ensure_ascii=False, separators=(",", ":"))
    # Only strings can hold these characters: escaping them anywhere in the text escapes them there.
    return _YAML_UNSAFE.sub(_escape_unsafe, text) if _YAML_UNSAFE.search(text) else text


def node_value(n: NodeInsightShape) -> str:
    """`json.dumps(n.to_api(), ensure_ascii=False, separators=(",", ":"))`, written out (with the
    few characters YAML reads differently escaped, see `_q`).

    Node insights are the bulk at scale, and pydantic's generic serializer plus the JSON encoder
    cost most of their time; tests/status/updatestatus/api/test_configmap.py checks that this gives the
    same bytes for every kind of node insight.
    """
    conditions = ",".join(
        [_condition_json(c.type, c.status, c.reason, c.message, c.last_transition_time) for c in n.conditions]
    )
    out = [
        f'{{"conditions":[{conditions}],"name":{_q(n.name)},"resource":{_ref(n.resource)},'
        f'"poolResource":{_ref(n.pool_resource)},"scopeType":{_q(n.scope_type)}'
    ]
    if n.version:
        out.append(f',"version":{_q(n.version)}')
    if n.est_to_complete is not None:
        out.append(f',"estToComplete":{_q(gotext.duration_string(n.est_to_complete))}')
    if n.message:
        out.append(f',"message":{_q(n.message)}')
    out.append("}")
    return "".join(out)


@functools.lru_cache(maxsize=4096)
def _condition_json(type_: str, status: str, reason: str, message: str, ltt: int) -> str:
    # cached: most nodes of a pool share their conditions (and a few transition times)
    return (
        f'{{"type":{_q(type_)},"status":{_q(status)},"reason":{_q(reason)},"message":{_q(message)},'
        f'"lastTransitionTime":{_q(time_string(ltt))}}}'
    )


def _ref(r: ResourceRefShape) -> str:
    group = f'"group":{_q(r.group)},' if r.group else ""
    namespace = f',"namespace":{_q(r.namespace)}' if r.namespace else ""
    return f'{{{group}"resource":{_q(r.resource)},"name":{_q(r.name)}{namespace}}}'


def encode(insights: Iterable[InsightShape]) -> dict[str, str]:
    """Insights → ConfigMap data (one key per insight). Duplicate keys are an error."""
    data: dict[str, str] = {}
    for insight in insights:
        key = key_of(insight)
        if key in data:
            raise ValueError(f"two insights share the ConfigMap key {key}")
        data[key] = encode_value(insight)
    return data


# --- YAML dialect ------------------------------------------------------------------------------


# Characters JSON leaves raw but YAML reads differently: C1 controls and DEL are not allowed in a
# YAML stream, and NEL, LS and PS are line breaks that YAML folds into spaces inside a quoted
# scalar. They are written as \uXXXX escapes, which JSON and YAML both read back exactly.
_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


def _q(text: str) -> str:
    """JSON string quoting, C accelerated, non-ASCII kept (as `ensure_ascii=False`), YAML-safe."""
    quoted: str = encode_basestring(text)
    if _YAML_UNSAFE.search(quoted) is None:
        return quoted
    return _YAML_UNSAFE.sub(_escape_unsafe, quoted)


def _escape_unsafe(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"
