"""`RetrievedUpdates` and the update-service request, as the CVO words and builds them (pure).

`request_for(...)` runs the CVO's pre-checks in its order and returns either the request URL or
the failed condition; `failure(reason, detail)` and `succeeded()` give the condition for an
attempt that was made. The condition is a ClusterOperatorStatusCondition: success has no reason or
message; every failure is False.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from cvo_py.runtime.gotext.messages import shortened
from cvo_py.runtime.urls import url_problem as url_problem  # re-exported: the graph reader checks node URLs with it
from updateservice import semver

DEFAULT_UPSTREAM = "https://api.openshift.com/api/upgrades_info/v1/graph"
UNABLE = "Unable to retrieve available updates: "



@dataclass(frozen=True)
class Condition:
    status: str
    reason: str = ""
    message: str = ""

    def as_status(self) -> dict[str, str]:
        out = {"type": "RetrievedUpdates", "status": self.status}
        if self.reason:
            out["reason"] = self.reason
        if self.message:
            out["message"] = self.message
        return out


def succeeded() -> Condition:
    return Condition("True")


# Retrieval succeeded, and status shows less than the updates found (updateservice.bounds).
UPDATES_OMITTED = "UpdatesOmitted"


def omitted(message: str) -> Condition:
    """A successful attempt whose updates status cannot all hold: still True, saying what it leaves out."""
    return Condition("True", UPDATES_OMITTED, message)


# A failure's detail may quote what the update service sent (a version, a URL, a status line):
# bounded, so that a hostile answer cannot make status too large to write.
MAX_DETAIL = 4096


def failure(reason: str, detail: str) -> Condition:
    """A failed attempt: `detail` (head and tail of its first `MAX_DETAIL` characters) follows
    "Unable to retrieve available updates: "."""
    return Condition("False", reason, UNABLE + shortened(detail, MAX_DETAIL))


_PRECHECK_MESSAGES = {
    "NoUpstream": "No updateService server has been set to retrieve updates.",
    "NoArchitecture": "Architecture has not been configured.",
    "NoCurrentVersion": "The cluster version does not have a semantic version assigned and cannot calculate "
                        "valid upgrades.",
    "NoChannel": "The update channel has not been configured.",
    "InvalidCurrentVersion": "The current cluster version is not a valid semantic version and cannot be used to "
                             "calculate upgrades.",
}

_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_HEX32 = re.compile(r"^[0-9a-fA-F]{32}$")


def uuid_problem(cluster_id: str) -> str:
    """Why a cluster ID is not a UUID, as the CVO's UUID parser says; '' when it is one."""
    value = cluster_id
    if len(value) == 45 and value[:9].lower() == "urn:uuid:":
        value = value[9:]
    elif len(value) == 38 and value[0] == "{" and value[-1] == "}":
        value = value[1:-1]
    if len(value) == 36:
        return "" if _UUID.match(value) else "invalid UUID format"
    if len(value) == 32:
        return "" if _HEX32.match(value) else "invalid UUID format"
    return f"invalid UUID length: {len(cluster_id)}"


def request_url(upstream: str, *, arch: str, channel: str, cluster_id: str, version: str) -> str:
    """The graph request: the URL's own query plus arch, channel, id and version, keys sorted."""
    parts = urlsplit(upstream)
    query = parse_qsl(parts.query, keep_blank_values=True)
    added = {"arch": "multi" if arch == "Multi" else arch, "channel": channel, "id": cluster_id, "version": version}
    merged = [(k, v) for k, v in query if k not in added] + list(added.items())
    # Sorted by key; values of one key keep their order (as url.Values encodes them).
    merged.sort(key=lambda kv: kv[0])
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(merged), parts.fragment))


@dataclass(frozen=True)
class Request:
    url: str = ""
    precheck: Condition | None = None


def request_for(*, upstream: str, channel: str, cluster_id: str, arch: str, version: str) -> Request:
    """The CVO's pre-checks in its order; the first failure is the condition and no request is made."""
    if not upstream:
        return Request(precheck=Condition("False", "NoUpstream", _PRECHECK_MESSAGES["NoUpstream"]))
    problem = url_problem(upstream)
    if problem:
        return Request(precheck=Condition("False", "InvalidURI", f"failed to parse update service URL: {problem}"))
    problem = uuid_problem(cluster_id)
    if problem:
        return Request(precheck=Condition("False", "InvalidID", f"invalid cluster ID: {problem}"))
    missing = (("NoArchitecture", arch), ("NoCurrentVersion", version), ("NoChannel", channel))
    for reason, value in missing:
        if not value:
            return Request(precheck=Condition("False", reason, _PRECHECK_MESSAGES[reason]))
    if not semver.valid(version):
        reason = "InvalidCurrentVersion"
        return Request(precheck=Condition("False", reason, _PRECHECK_MESSAGES[reason]))
    return Request(url=request_url(upstream, arch=arch, channel=channel, cluster_id=cluster_id, version=version))


def version_not_found(version: str, channel: str) -> Condition:
    detail = f'currently reconciling cluster version {version} not found in the "{channel}" channel'
    return failure("VersionNotFound", detail)


def http_status_text(code: int, phrase: str) -> str:
    """`unexpected HTTP status: 404 Not Found`, as the CVO words a non-200 answer."""
    return f"unexpected HTTP status: {code} {phrase}".rstrip()
