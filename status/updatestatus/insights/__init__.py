"""Status insights: what an update is doing, computed from cluster objects and an injected `now`.

`status.insights.compute` holds the entry points, `status.insights.models` the types and
`status.insights.configmap` the ConfigMap wire format. Everything here is pure (no I/O).
"""
