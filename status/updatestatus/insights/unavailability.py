"""Whether a node is unavailable, by the Machine Config Operator's rules (its conditions, whether
it is schedulable, its daemon's state, a layered pool's image), the reasons oc prints for it, and
when that becomes serious enough for a health insight."""

from __future__ import annotations

from collections.abc import Mapping

from cvo_py.runtime.gotext.durations import MINUTE
from cvo_py.runtime.gotext.quoting import go_quote
from cvo_py.runtime.gotext.times import ZERO_TIME
from status.updatestatus.insights.kinds import NodeAvailableReason
from status.updatestatus.insights.mco import (
    CURRENT_CONFIG,
    CURRENT_IMAGE,
    DESIRED_CONFIG,
    DESIRED_IMAGE,
    NEWEST_IMAGE,
    STATE,
    STATE_DEGRADED,
    STATE_DONE,
    STATE_UNRECONCILABLE,
)
from status.updatestatus.insights.membership import PoolFacts
from status.updatestatus.insights.objects import JSON, InputError, describe, time_of

# oc's unavailability reasons (the node MESSAGE column prints them)
NOT_READY = "Not ready"
DISK_PRESSURE = "Disk pressure"
NETWORK_UNAVAILABLE = "Network unavailable"
UNSCHEDULABLE = "Node is marked unschedulable"
MCD_PROCESSING = "Machine Config Daemon is processing the node"
_REASON_TOKENS = {
    NOT_READY: NodeAvailableReason.NOT_READY,
    DISK_PRESSURE: NodeAvailableReason.DISK_PRESSURE,
    NETWORK_UNAVAILABLE: NodeAvailableReason.NETWORK_UNAVAILABLE,
    UNSCHEDULABLE: NodeAvailableReason.UNSCHEDULABLE,
    MCD_PROCESSING: NodeAvailableReason.MCD_PROCESSING,
}
_CONDITION_CHECKS = {
    # node condition type → (the status that is fine, oc's reason, its description condition text)
    "Ready": ("True", NOT_READY, "Ready!=True"),
    "DiskPressure": ("False", DISK_PRESSURE, "DiskPressure!=False"),
    "NetworkUnavailable": ("False", NETWORK_UNAVAILABLE, "NetworkUnavailable!=False"),
}
_CHECK_BY_REASON = {check[1]: check for check in _CONDITION_CHECKS.values()}

# how long each reason must last before the node counts as seriously unavailable
_SERIOUS_AFTER = {NOT_READY: 5 * MINUTE, DISK_PRESSURE: MINUTE, NETWORK_UNAVAILABLE: MINUTE}
_NEVER_SERIOUS = {UNSCHEDULABLE, MCD_PROCESSING}


class Unavailability:
    """The Machine Config Operator's ordered list of reasons a node is unavailable."""

    __slots__ = ("reasons",)

    def __init__(self) -> None:
        self.reasons: list[tuple[str, str, int | None]] = []  # (reason, cond message, ltt)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unavailability) and other.reasons == self.reasons

    def __repr__(self) -> str:
        return f"Unavailability(reasons={self.reasons!r})"

    def reason_text(self) -> str:
        return " | ".join(r for r, _, _ in self.reasons)

    def message_text(self, node: str) -> str:
        out = []
        for reason, _, _ in self.reasons:
            if reason == NOT_READY:
                out.append(f"Node {node} is not ready")
            elif reason == DISK_PRESSURE:
                out.append(f"Node {node} has disk pressure")
            elif reason == NETWORK_UNAVAILABLE:
                out.append(f"Node {node} has unavailable network")
            else:
                out.append(reason)
        return " | ".join(out)

    def description_text(self) -> str:
        out = []
        for reason, message, _ in self.reasons:
            check = _CHECK_BY_REASON.get(reason)
            if check is None:
                out.append(reason)
            else:
                out.append(
                    f"Node has a {check[2]} condition with Reason {go_quote(reason)} and message {go_quote(message)}"
                )
        return " | ".join(out)

    def since(self) -> int:
        times = [t for _, _, t in self.reasons if t is not None and t != ZERO_TIME]
        return min(times) if times else ZERO_TIME

    def tokens(self) -> str:
        return ",".join(_REASON_TOKENS.get(r, NodeAvailableReason.UNEXPECTED_IMAGE) for r, _, _ in self.reasons)

    def seriously_unavailable(self, now: int) -> bool:
        for reason, _, ltt in self.reasons:
            if reason in _NEVER_SERIOUS:
                continue
            threshold = _SERIOUS_AFTER.get(reason)
            if threshold is None:
                return True
            when = ZERO_TIME if ltt is None else ltt
            if now - when >= threshold:
                return True
        return False


def node_unavailability(node: JSON, ann: Mapping[str, str], pool: PoolFacts) -> tuple[bool, Unavailability, int | None]:
    """(isUnavailable, the recorded reasons, the Ready condition's time) per the MCO's layered node state."""
    state = Unavailability()
    ready_ltt = None
    status = node.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    for cond in conditions or ():
        if not isinstance(cond, dict):
            raise InputError(f"{describe(node)}: status.conditions holds a {type(cond).__name__}")
        ctype = cond.get("type")
        check = _CONDITION_CHECKS.get(ctype) if isinstance(ctype, str) else None
        if check is None:
            continue
        bad = cond.get("status") != check[0]
        if bad or ctype == "Ready":
            ltt = time_of(cond.get("lastTransitionTime"), node, f"condition {ctype} lastTransitionTime")
            if ctype == "Ready":
                ready_ltt = ltt
            if bad:
                state.reasons.append((check[1], str(cond.get("message") or ""), ltt))
    spec = node.get("spec")
    if isinstance(spec, dict) and spec.get("unschedulable"):
        state.reasons.append((UNSCHEDULABLE, "", None))
    mcd_state = ann.get(STATE) or ""
    if state.reasons:
        unavailable = True
    elif _is_done(ann, mcd_state) or mcd_state in (STATE_DEGRADED, STATE_UNRECONCILABLE):
        unavailable = False
    else:
        state.reasons.append((MCD_PROCESSING, "", None))
        unavailable = True
    if not unavailable:
        return False, state, ready_ltt
    desired_image = ann.get(DESIRED_IMAGE) or ""
    if pool.layered_image:
        if desired_image != pool.layered_image:
            reason = f"Node has an unexpected annotation {NEWEST_IMAGE}={pool.layered_image}"
            state.reasons.append((reason, "", None))
            return False, state, ready_ltt
        return True, state, ready_ltt
    return desired_image == "", state, ready_ltt


def _is_done(ann: Mapping[str, str], mcd_state: str) -> bool:
    current, desired = ann.get(CURRENT_CONFIG) or "", ann.get(DESIRED_CONFIG) or ""
    if not current or not desired or current != desired:
        return False
    if CURRENT_IMAGE in ann or DESIRED_IMAGE in ann:
        ci, di = ann.get(CURRENT_IMAGE) or "", ann.get(DESIRED_IMAGE) or ""
        if not (ci and di and ci == di):
            return False
    return mcd_state == STATE_DONE
