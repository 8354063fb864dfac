"""Health insights' uids: valid as API uids and ConfigMap keys, stable, distinct after sanitizing."""

from __future__ import annotations

import pytest

from status.updatestatus.insights import health


@pytest.mark.parametrize(
    "kind,parts,identity",
    [
        ("co", ("etcd", "degraded"), ""),
        ("node", ("ip-10-0-1-2.ec2.internal", "unavailable"), ""),
        ("node", ("x" * 253, "degraded"), ""),
        ("alert", ("KubePodCrashLooping",), '{"pod": "a"}'),
    ],
)
def test_health_uids_are_valid_and_stable(kind: str, parts: tuple[str, ...], identity: str) -> None:
    uid = health.health_uid(kind, *parts, identity=identity)
    assert health._UID.match(uid) and len(uid) <= 63
    assert uid == health.health_uid(kind, *parts, identity=identity)
    assert uid.startswith(kind + "-")


def test_health_uids_do_not_collide_after_sanitizing() -> None:
    assert health.health_uid("node", "a.b", "x") != health.health_uid("node", "a-b", "x")
