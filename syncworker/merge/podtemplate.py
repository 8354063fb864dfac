"""Upstream's pod-template rules, shared by Deployments, DaemonSets, Jobs and CronJobs.

    ensure_pod_template(changes, live_template, required_template, path)

Template metadata follows the metadata rules. Containers and init containers are paired by name:
live-only ones are removed, missing ones appended, and in each pair the fields upstream enforces
take the manifest's value. Volumes are paired by name, container ports by name, volume mounts by
mount path; live extras are removed. Tolerations, node selector entries, capabilities, supplemental
groups and sysctls are only added to. What upstream does not reconcile (imagePullPolicy,
startupProbe, lifecycle, terminationMessagePolicy, imagePullSecrets, schedulerName, hostPID,
hostIPC, topologySpreadConstraints, runtimeClassName, dnsConfig, a container's runAsGroup) keeps
its live value.

Defaults the API server fills (probe timings, port protocol, volume modes, fieldRef apiVersion,
...) are filled on both sides before comparing, so a live object that holds what the manifest
says, plus what the server added, compares equal and no write is sent.
"""

from __future__ import annotations

from typing import Any

from cvo_py.runtime.jsondata import copy_json
from syncworker.merge.metadata import ensure_metadata
from syncworker.merge.values import (
    JSON,
    Changes,
    at,
    child,
    enforce,
    enforce_default,
    enforce_if_set,
    ensure_list_by_key,
    mapping,
    merge_strings,
    objects,
    quantities_view,
    quantity_view,
    same,
    sequence,
    string_map,
    text,
    with_default,
)

DEFAULT_DNS_POLICY = "ClusterFirst"
DEFAULT_TERMINATION_GRACE_SECONDS = 30
DEFAULT_VOLUME_MODE = 420  # 0644
DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600
PROBE_DEFAULTS = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
VOLUME_SOURCES_WITH_MODE = ("secret", "configMap", "downwardAPI", "projected")
POD_SECURITY_ENFORCED = ("runAsUser", "runAsGroup", "runAsNonRoot", "fsGroup")
POD_SECURITY_HANDLED = {"supplementalGroups", "sysctls", "seLinuxOptions", *POD_SECURITY_ENFORCED}
CONTAINER_SECURITY_ENFORCED = (
    "privileged",
    "runAsUser",
    "runAsNonRoot",
    "readOnlyRootFilesystem",
    "allowPrivilegeEscalation",
    "seccompProfile",
)


# -- the pod template ----------------------------------------------------------------------------------


def ensure_pod_template(changes: Changes, live: JSON, required: JSON, path: str) -> None:
    """Upstream's rules on the template at `path` (`live` is changed in place)."""
    ensure_metadata(changes, live, required, path)
    ensure_pod_spec(changes, child(live, "spec"), mapping(required, "spec", path), at(path, "spec"))


def ensure_pod_spec(changes: Changes, live: JSON, required: JSON, path: str) -> None:
    host_network = required.get("hostNetwork") is True
    for key in ("initContainers", "containers"):
        _ensure_containers(changes, live, key, objects(required, key, path), host_network, path)
    ensure_list_by_key(
        changes, live, "volumes", objects(required, "volumes", path), "name", path, _volume_defaults, _volume_view
    )
    for key in ("restartPolicy", "serviceAccountName", "priorityClassName"):
        enforce_if_set(changes, live, key, text(required, key, path) or None, at(path, key))
    for key in ("automountServiceAccountToken", "hostUsers", "priority", "shareProcessNamespace"):
        enforce(changes, live, key, required.get(key), at(path, key), pointer=True)
    enforce(changes, live, "hostNetwork", required.get("hostNetwork"), at(path, "hostNetwork"))
    merge_strings(changes, live, "nodeSelector", string_map(required, "nodeSelector", path), at(path, "nodeSelector"))
    _ensure_pod_security_context(changes, live, mapping(required, "securityContext", path), path)
    affinity = mapping(required, "affinity", path)
    if affinity:
        enforce(changes, live, "affinity", affinity, at(path, "affinity"))
    _add_missing(changes, live, "tolerations", objects(required, "tolerations", path), at(path, "tolerations"))
    enforce_default(changes, live, "dnsPolicy", required.get("dnsPolicy"), DEFAULT_DNS_POLICY, at(path, "dnsPolicy"))
    enforce_default(
        changes,
        live,
        "terminationGracePeriodSeconds",
        required.get("terminationGracePeriodSeconds"),
        DEFAULT_TERMINATION_GRACE_SECONDS,
        at(path, "terminationGracePeriodSeconds"),
    )


def _add_missing(changes: Changes, live: JSON, key: str, required: list[Any], path: str) -> None:
    """Append each manifest item live lacks (once); live extras stay."""
    current = list(sequence(live, key, path))
    for item in required:
        if not any(same(item, have) for have in current):
            changes.note(path)
            current.append(copy_json(item))
    if current or key in live:
        live[key] = current


def _ensure_pod_security_context(changes: Changes, live: JSON, required: JSON, path: str) -> None:
    """The pod's securityContext: supplementalGroups and sysctls only added to; SELinux options set
    where the manifest sets them; runAsUser, runAsGroup, runAsNonRoot and fsGroup enforced (an
    absent one cleared); any other field set where the manifest sets it."""
    path = at(path, "securityContext")
    current = live.get("securityContext")
    have = dict(current) if isinstance(current, dict) else {}
    local = Changes()
    _add_missing(local, have, "supplementalGroups", sequence(required, "supplementalGroups", path), path)
    _add_missing(local, have, "sysctls", objects(required, "sysctls", path), path)
    _ensure_selinux(local, have, mapping(required, "seLinuxOptions", path), path)
    for key in POD_SECURITY_ENFORCED:
        enforce(local, have, key, required.get(key), at(path, key), pointer=True)
    for key, value in required.items():
        if key not in POD_SECURITY_HANDLED and value is not None:
            enforce(local, have, key, value, at(path, key))
    if local:
        changes.paths.extend(local.paths)
        live["securityContext"] = have


def _ensure_selinux(changes: Changes, live: JSON, required: JSON, path: str) -> None:
    """seLinuxOptions: each field the manifest sets is enforced; the others keep their live value."""
    if not required:
        return
    path = at(path, "seLinuxOptions")
    have = child(live, "seLinuxOptions")
    for key in ("user", "role", "type", "level"):
        enforce_if_set(changes, have, key, text(required, key, path) or None, at(path, key))


# -- containers ----------------------------------------------------------------------------------------


def _ensure_containers(
    changes: Changes, live: JSON, key: str, required: list[JSON], host_network: bool, path: str
) -> None:
    by_name = {str(c.get("name") or ""): c for c in reversed(required)}  # the first of a name wins
    current = [c for c in sequence(live, key, path) if isinstance(c, dict)]
    out: list[JSON] = []
    for container in current:
        name = str(container.get("name") or "")
        where = f"{at(path, key)}[name={name}]"
        if name not in by_name:
            changes.note(where)
            continue
        _ensure_container(changes, container, by_name[name], host_network, where)
        out.append(container)
    present = {str(c.get("name") or "") for c in out}
    for container in required:
        name = str(container.get("name") or "")
        if name not in present:
            present.add(name)
            changes.note(f"{at(path, key)}[name={name}]")
            out.append(copy_json(container))
    if out or key in live:
        live[key] = out


def _ensure_container(changes: Changes, live: JSON, required: JSON, host_network: bool, path: str) -> None:
    enforce_if_set(changes, live, "image", text(required, "image", path) or None, at(path, "image"))
    for key in ("command", "args"):
        enforce(changes, live, key, sequence(required, key, path) or None, at(path, key))
    env = objects(required, "env", path)
    enforce(changes, live, "env", [_env_defaults(e) for e in env] or None, at(path, "env"), _env_view)
    enforce(changes, live, "envFrom", objects(required, "envFrom", path) or None, at(path, "envFrom"))
    enforce_if_set(changes, live, "workingDir", text(required, "workingDir", path) or None, at(path, "workingDir"))
    resources = mapping(required, "resources", path)
    have = child(live, "resources")
    for key in ("limits", "requests"):
        where = at(at(path, "resources"), key)
        enforce(changes, have, key, mapping(resources, key, at(path, "resources")) or None, where, quantities_view)
    ports = objects(required, "ports", path)
    ensure_list_by_key(changes, live, "ports", ports, "name", path, lambda p: _container_port_defaults(p, host_network))
    mounts = objects(required, "volumeMounts", path)
    ensure_list_by_key(changes, live, "volumeMounts", mounts, "mountPath", path, copy_json)
    for key in ("livenessProbe", "readinessProbe"):
        probe = mapping(required, key, path)
        enforce(changes, live, key, _probe_defaults(probe) if probe else None, at(path, key), _probe_defaults)
    _ensure_security_context(changes, live, required, path)


def _field_ref_defaults(item: Any) -> Any:
    """An env var or downward API item: fieldRef apiVersion v1, resourceFieldRef divisor 0."""
    if not isinstance(item, dict):
        return item
    out = dict(item)
    source = out.get("valueFrom") if "valueFrom" in out else None
    holder = dict(source) if isinstance(source, dict) else out
    if isinstance(holder.get("fieldRef"), dict):
        holder["fieldRef"] = with_default(holder["fieldRef"], {"apiVersion": "v1"})
    if isinstance(holder.get("resourceFieldRef"), dict):
        holder["resourceFieldRef"] = with_default(holder["resourceFieldRef"], {"divisor": "0"})
    if isinstance(source, dict):
        out["valueFrom"] = holder
    return out


def _env_defaults(item: JSON) -> JSON:
    return _field_ref_defaults(copy_json(item))  # type: ignore[no-any-return]


def _divisor_view(item: Any) -> Any:
    """An item with fieldRef/resourceFieldRef defaults and the divisor as its value."""
    item = _field_ref_defaults(item)
    if not isinstance(item, dict):
        return item
    source = item.get("valueFrom") if "valueFrom" in item else item
    if isinstance(source, dict) and isinstance(source.get("resourceFieldRef"), dict):
        reference = dict(source["resourceFieldRef"])
        reference["divisor"] = quantity_view(reference.get("divisor"))
        source = {**source, "resourceFieldRef": reference}
        return {**item, "valueFrom": source} if "valueFrom" in item else source
    return item


def _env_view(env: Any) -> Any:
    return [_divisor_view(item) for item in env] if isinstance(env, list) else env


def _container_port_defaults(port: JSON, host_network: bool) -> JSON:
    out = with_default(copy_json(port), {"protocol": "TCP"})
    if host_network and not out.get("hostPort"):
        out["hostPort"] = out.get("containerPort")
    return out  # type: ignore[no-any-return]


def _probe_defaults(probe: Any) -> Any:
    """Upstream's and the server's probe defaults: timings, httpGet scheme HTTP and path /, gRPC service ""."""
    if not isinstance(probe, dict) or not probe:
        return probe
    out = with_default(copy_json(probe), PROBE_DEFAULTS)
    if isinstance(out.get("httpGet"), dict):
        out["httpGet"] = with_default(out["httpGet"], {"scheme": "HTTP", "path": "/"})
    if isinstance(out.get("grpc"), dict):
        out["grpc"] = with_default(out["grpc"], {"service": ""})
    return out


def _ensure_security_context(changes: Changes, live: JSON, required: JSON, path: str) -> None:
    """A container's securityContext: removed when the manifest has none; otherwise capabilities only
    added to, SELinux options set where the manifest sets them, and privileged, runAsUser,
    runAsNonRoot, readOnlyRootFilesystem, allowPrivilegeEscalation and seccompProfile enforced."""
    if required.get("securityContext") is None:
        if live.get("securityContext") is not None:
            changes.note(at(path, "securityContext"))
            live.pop("securityContext")
        return
    wanted = mapping(required, "securityContext", path)
    path = at(path, "securityContext")
    have = child(live, "securityContext")
    capabilities = mapping(wanted, "capabilities", path)
    if capabilities:
        where = at(path, "capabilities")
        have_capabilities = child(have, "capabilities")
        for key in ("add", "drop"):
            _add_missing(changes, have_capabilities, key, sequence(capabilities, key, where), at(where, key))
    _ensure_selinux(changes, have, mapping(wanted, "seLinuxOptions", path), path)
    for key in CONTAINER_SECURITY_ENFORCED:
        enforce(changes, have, key, wanted.get(key), at(path, key), pointer=True)


# -- volumes -------------------------------------------------------------------------------------------


def _volume_defaults(volume: JSON) -> JSON:
    out: JSON = copy_json(volume)
    if all(value is None for key, value in out.items() if key != "name"):
        out = {"name": out.get("name"), "emptyDir": {}}
    if isinstance(out.get("hostPath"), dict):
        out["hostPath"] = with_default(out["hostPath"], {"type": ""})
    for source in VOLUME_SOURCES_WITH_MODE:
        if isinstance(out.get(source), dict):
            out[source] = with_default(out[source], {"defaultMode": DEFAULT_VOLUME_MODE})
    downward = out.get("downwardAPI")
    if isinstance(downward, dict) and isinstance(downward.get("items"), list):
        downward["items"] = [_field_ref_defaults(item) for item in downward["items"]]
    projected = out.get("projected")
    if isinstance(projected, dict) and isinstance(projected.get("sources"), list):
        projected["sources"] = [_projection_defaults(source) for source in projected["sources"]]
    return out


def _projection_defaults(source: Any) -> Any:
    if not isinstance(source, dict):
        return source
    out = dict(source)
    if isinstance(out.get("serviceAccountToken"), dict):
        token = {"expirationSeconds": DEFAULT_TOKEN_EXPIRATION_SECONDS}
        out["serviceAccountToken"] = with_default(out["serviceAccountToken"], token)
    downward = out.get("downwardAPI")
    if isinstance(downward, dict) and isinstance(downward.get("items"), list):
        out["downwardAPI"] = {**downward, "items": [_field_ref_defaults(item) for item in downward["items"]]}
    return out


def _volume_view(volume: JSON) -> Any:
    """A volume with its quantities (emptyDir sizeLimit, divisors) as values."""
    out = dict(volume)
    empty_dir = out.get("emptyDir")
    if isinstance(empty_dir, dict) and "sizeLimit" in empty_dir:
        out["emptyDir"] = {**empty_dir, "sizeLimit": quantity_view(empty_dir["sizeLimit"])}
    downward = out.get("downwardAPI")
    if isinstance(downward, dict) and isinstance(downward.get("items"), list):
        out["downwardAPI"] = {**downward, "items": [_divisor_view(item) for item in downward["items"]]}
    projected = out.get("projected")
    if isinstance(projected, dict) and isinstance(projected.get("sources"), list):
        sources = []
        for source in projected["sources"]:
            inner = source.get("downwardAPI") if isinstance(source, dict) else None
            if isinstance(inner, dict) and isinstance(inner.get("items"), list):
                source = {**source, "downwardAPI": {**inner, "items": [_divisor_view(i) for i in inner["items"]]}}
            sources.append(source)
        out["projected"] = {**projected, "sources": sources}
    return out
