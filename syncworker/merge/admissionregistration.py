"""ValidatingWebhookConfigurations (admissionregistration.k8s.io/v1): the whole webhooks list."""

from __future__ import annotations

from typing import Any

from syncworker.merge.apiextensions import injects_ca_bundle, service_port_defaults
from syncworker.merge.metadata import ensure_metadata
from syncworker.merge.values import JSON, Changes, enforce, objects, with_default

WEBHOOK_DEFAULTS = {
    "failurePolicy": "Fail",
    "matchPolicy": "Equivalent",
    "namespaceSelector": {},
    "objectSelector": {},
    "timeoutSeconds": 10,
}


def merge_validating_webhook_configuration(changes: Changes, live: JSON, required: JSON) -> None:
    """The whole `webhooks` list, with the server's defaults (failurePolicy Fail, matchPolicy
    Equivalent, empty selectors, timeoutSeconds 10, rule scope *, service port 443); when the live
    object asks the service CA operator to inject CA bundles, every webhook takes the live first
    webhook's caBundle."""
    keep_ca_bundle = injects_ca_bundle(live)
    ensure_metadata(changes, live, required)
    webhooks = [_webhook_defaults(w) for w in objects(required, "webhooks", "")]
    if keep_ca_bundle:
        current = objects(live, "webhooks", "")
        bundle = (current[0].get("clientConfig") or {}).get("caBundle") if current else None
        for webhook in webhooks:
            webhook["clientConfig"] = {**(webhook.get("clientConfig") or {}), "caBundle": bundle}
    enforce(changes, live, "webhooks", webhooks or None, "webhooks", _webhooks_view)


def _webhook_defaults(webhook: Any) -> Any:
    if not isinstance(webhook, dict):
        return webhook
    out = with_default(webhook, WEBHOOK_DEFAULTS)
    if "clientConfig" in out:
        out["clientConfig"] = service_port_defaults(out["clientConfig"])
    if isinstance(out.get("rules"), list):
        out["rules"] = [with_default(rule, {"scope": "*"}) for rule in out["rules"]]
    return out


def _webhooks_view(webhooks: Any) -> Any:
    return [_webhook_defaults(w) for w in webhooks] if isinstance(webhooks, list) else webhooks
