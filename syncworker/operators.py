"""ClusterOperator manifests: precreated before their node's tasks, then waited on.

    check(manifest, live, mode, task) -> TaskError | None
        The operator's state against its manifest, in upstream's order:
        1. the manifest declares no `status.versions`: ClusterOperatorNoVersions, fails at once;
        2. not in the cache (`live` None): a NotFound, retried, then
           `Could not update clusteroperator "<n>" (<i> of <N>): resource may have been deleted`;
        3. `Available` missing or not True: ClusterOperatorNotAvailable, fails at once;
        4. `Degraded` missing or not False: ClusterOperatorDegraded, Report while Initializing
           (recorded, the pass goes on), else FailAfterInterval (the status side's grace);
        5. a version of the manifest that live reports otherwise or not at all:
           ClusterOperatorUpdating, effect None (waiting); not checked while Initializing.
        Live-only versions and `Progressing` play no part.
    precreated_status(manifest, created) -> JSON
        The body of the status write after precreation: the created object with only the
        manifest's `status.relatedObjects` (no versions, no conditions).
    reconcile_metadata(manifest, live) -> MergeResult
        Reconciling only: the metadata rules on the live operator (the only write upstream makes to
        an operator after creating it).
    activity(old, new) -> str
        What an update of a live operator changed that wakes the sync worker (its `operator`
        version, Available or Degraded), as upstream logs it; "" for anything else.

Precreation POSTs the manifest object itself (with its owner reference); the API server drops
`status` on create, which is why the status write follows a 201. A 409 on either is fine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cvo_py.runtime.gotext.quoting import escape, go_quote
from cvo_py.runtime.jsondata import copy_json
from syncworker.errors import Effect, TaskError, TaskRef, from_api_error
from syncworker.merge import MergeResult, merge_by
from syncworker.merge.metadata import ensure_metadata
from syncworker.merge.values import JSON
from syncworker.modes import Mode

API_VERSION = "config.openshift.io/v1"
KIND = "ClusterOperator"


def is_cluster_operator(obj: Mapping[str, Any]) -> bool:
    return obj.get("apiVersion") == API_VERSION and obj.get("kind") == KIND


def _name(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata")
    return str(metadata.get("name") or "") if isinstance(metadata, dict) else ""


def _status_list(obj: Mapping[str, Any] | None, key: str) -> list[Mapping[str, Any]]:
    status = obj.get("status") if obj is not None else None
    items = status.get(key) if isinstance(status, dict) else None
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def _condition(live: Mapping[str, Any], type_: str) -> Mapping[str, Any] | None:
    """The first condition of the type, as upstream finds it."""
    return next((c for c in _status_list(live, "conditions") if c.get("type") == type_), None)


def _condition_text(name: str, condition: Mapping[str, Any] | None, type_: str) -> str:
    if condition is None:
        return f"cluster operator {name}: {type_.lower()} condition is missing"
    status, reason, message = (str(condition.get(k) or "") for k in ("status", "reason", "message"))
    return f"cluster operator {name} is {type_}={status}: {reason}: {message}"


def _operator_error(reason: str, message: str, effect: Effect, name: str, task: TaskRef, detail: str) -> TaskError:
    return TaskError(reason, message, effect, task=task, name=name, names=(name,), detail=detail)


def check(manifest: JSON, live: JSON | None, mode: Mode, task: TaskRef) -> TaskError | None:
    """The ClusterOperator's state against its manifest in `mode` (module docstring); `live` is the
    informer's copy, None when it has none."""
    name = _name(manifest)
    expected = _status_list(manifest, "versions")
    if not expected:
        message = f"Cluster operator {name} does not declare expected versions"
        return _operator_error("ClusterOperatorNoVersions", message, Effect.FAIL, name, task, message)
    if live is None:
        detail = f"clusteroperator.config.openshift.io {go_quote(name)} not found"
        return from_api_error(task, 404, "NotFound", detail=detail)
    available = _condition(live, "Available")
    if available is None or available.get("status") != "True":
        message = f"Cluster operator {name} is not available"
        detail = _condition_text(name, available, "Available")
        return _operator_error("ClusterOperatorNotAvailable", message, Effect.FAIL, name, task, detail)
    degraded = _condition(live, "Degraded")
    if degraded is None or degraded.get("status") != "False":
        effect = Effect.REPORT if mode is Mode.INITIALIZING else Effect.FAIL_AFTER_INTERVAL
        message = f"Cluster operator {name} is degraded"
        detail = _condition_text(name, degraded, "Degraded")
        return _operator_error("ClusterOperatorDegraded", message, effect, name, task, detail)
    if mode is Mode.INITIALIZING:
        return None
    reported = {str(v.get("name")): v.get("version") for v in _status_list(live, "versions")}
    undone = [
        f"{v.get('name')} from {reported.get(str(v.get('name')), '')} to {v.get('version')}"
        for v in expected
        if reported.get(str(v.get("name"))) != v.get("version")
    ]
    if undone:
        message = f"Cluster operator {name} is updating versions"
        detail = f"cluster operator {name} is available and not degraded but has not finished updating: " + ", ".join(
            undone
        )
        return _operator_error("ClusterOperatorUpdating", message, Effect.NONE, name, task, detail)
    return None


def precreated_status(manifest: JSON, created: JSON) -> JSON:
    """The status write after a 201: the created object, its status only the manifest's related objects."""
    body: JSON = copy_json(created)
    related = _status_list(manifest, "relatedObjects")
    body["status"] = {"relatedObjects": copy_json(related)} if related else {}
    return body


def reconcile_metadata(manifest: JSON, live: JSON) -> MergeResult:
    """The metadata rules on the live operator; `merged` is the object to PUT when `changed`."""
    return merge_by(ensure_metadata, manifest, live)


OPERATOR_VERSION = "operator"
WATCHED_CONDITIONS = ("Available", "Degraded")


def activity(old: JSON, new: JSON) -> str:
    """What an update from `old` to `new` changed that the sync worker waits on: the `operator`
    version, then Available, then Degraded (the first that changed); "" when none did."""
    name = escape(_name(new))
    before, after = _version(old, OPERATOR_VERSION), _version(new, OPERATOR_VERSION)
    if before != after:
        return (
            f"Cluster operator {name} changed versions[name={go_quote(OPERATOR_VERSION)}] "
            f"from {go_quote(before)} to {go_quote(after)}"
        )
    for type_ in WATCHED_CONDITIONS:
        was, now = _condition_status(old, type_), _condition_status(new, type_)
        if was != now:
            return f"Cluster operator {name} changed {type_} from {go_quote(was)} to {go_quote(now)}"
    return ""


def _version(obj: JSON, name: str) -> str:
    return next((str(v.get("version") or "") for v in _status_list(obj, "versions") if v.get("name") == name), "")


def _condition_status(obj: JSON, type_: str) -> str:
    condition = _condition(obj, type_)
    return str(condition.get("status") or "") if condition is not None else ""
