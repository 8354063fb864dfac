"""Status insights: what an update is doing, computed from cluster objects and an injected `now`.

`status.updatestatus.insights.compute` holds the entry points, `status.updatestatus.insights.models` the types
(pydantic models, the API's one definition; `vocabulary` its enums and reasons), `status.updatestatus.insights.kinds`
and `status.updatestatus.insights.plain` the shapes and plain classes generated from them (what the computation
builds, without pydantic) and `status.updatestatus.api.configmap` the ConfigMap wire format.
Everything here is pure (no I/O).
"""
