"""CustomResourceDefinitions (apiextensions.k8s.io/v1): the whole spec is the manifest's."""

from __future__ import annotations

from typing import Any

from cvo_py.runtime.jsondata import copy_json
from syncworker.merge.metadata import annotations_of, ensure_metadata
from syncworker.merge.values import JSON, Changes, enforce, mapping

INJECT_CA_BUNDLE = "service.beta.openshift.io/inject-cabundle"
DEFAULT_SERVICE_PORT = 443


def injects_ca_bundle(live: JSON) -> bool:
    """The service CA operator fills this object's CA bundles, so the live ones are kept."""
    return annotations_of(live).get(INJECT_CA_BUNDLE) == "true"


def service_port_defaults(client_config: Any) -> Any:
    """A webhook client config's service port is 443 when unset."""
    if isinstance(client_config, dict) and isinstance(client_config.get("service"), dict):
        service = client_config["service"]
        if service.get("port") is None:
            return {**client_config, "service": {**service, "port": DEFAULT_SERVICE_PORT}}
    return client_config


def merge_custom_resource_definition(changes: Changes, live: JSON, required: JSON) -> None:
    """The whole spec (names.singular the lower-case kind, names.listKind the kind + "List",
    conversion None when unset); the conversion webhook's caBundle keeps its live value when the
    live object asks the service CA operator to inject it. Status keeps its live value."""
    keep_ca_bundle = injects_ca_bundle(live)
    ensure_metadata(changes, live, required)
    spec = _spec_defaults(copy_json(mapping(required, "spec", "")))
    if keep_ca_bundle:
        webhook = (spec.get("conversion") or {}).get("webhook")
        live_webhook = (mapping(mapping(live, "spec", ""), "conversion", "spec")).get("webhook")
        if isinstance(webhook, dict) and isinstance(live_webhook, dict):
            bundle = (live_webhook.get("clientConfig") or {}).get("caBundle")
            client_config = webhook.get("clientConfig")
            if isinstance(client_config, dict):
                client_config["caBundle"] = bundle
    enforce(changes, live, "spec", spec, "spec", _spec_defaults)


def _spec_defaults(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return spec
    out = dict(spec)
    names = out.get("names")
    if isinstance(names, dict) and isinstance(names.get("kind"), str):
        kind = names["kind"]
        names = dict(names)
        if not names.get("singular"):
            names["singular"] = kind.lower()
        if not names.get("listKind"):
            names["listKind"] = kind + "List"
        out["names"] = names
    conversion = out.get("conversion")
    if conversion is None:
        out["conversion"] = {"strategy": "None"}
    elif isinstance(conversion, dict) and isinstance(conversion.get("webhook"), dict):
        webhook = conversion["webhook"]
        webhook = {**webhook, "clientConfig": service_port_defaults(webhook.get("clientConfig"))}
        out["conversion"] = {**conversion, "webhook": webhook}
    return out
