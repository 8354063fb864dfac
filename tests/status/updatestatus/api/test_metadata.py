"""Publication metadata (`usc-meta`): its wire format, when the controller refreshes it, and the
warnings a reader derives from it and from the controller's Lease."""

from __future__ import annotations

import pytest
import yaml

from cvo_py.runtime.gotext.durations import SECOND
from status.updatestatus.api import metadata
from status.updatestatus.api.metadata import LeaseState
from status.updatestatus.api.staleness import ago
from status.updatestatus.client.render.warnings import emit, warning_text
from testkit.objects.insight_objects import ns

RESYNC = 30 * SECOND


def meta(at: int, omitted: list[str] | None = None, identity: str = "usc-0") -> metadata.PublicationMetadata:
    return metadata.build(at, identity, "0.1.0", RESYNC, omitted or [])


def test_wire_format_round_trips_with_api_field_names() -> None:
    m = meta(ns(1), ["usc-node-b", "usc-node-a", "usc-co-x"])
    value = metadata.encode(m)
    assert value.startswith('{"computedAt":"2024-01-01T10:01:00Z",')
    assert '"resyncPeriod":"30s"' in value and '"identity":"usc-0"' in value
    assert metadata.decode(value) == m
    # a value written as YAML (by hand, or by an earlier controller) reads the same
    assert metadata.decode(yaml.safe_dump(m.to_api(), sort_keys=False)) == m
    assert m.omitted.count == 3 and m.omitted.kinds == {"ClusterOperator": 1, "Node": 2}
    assert m.omitted.keys == ["usc-co-x", "usc-node-a", "usc-node-b"]


def test_omitted_keys_are_listed_up_to_a_bound_and_all_counted() -> None:
    keys = [f"usc-node-n{i:04d}" for i in range(1000)]
    m = meta(ns(0), keys)
    assert m.omitted.count == 1000 and len(m.omitted.keys) == metadata.OMITTED_KEYS_LISTED
    assert len(metadata.encode(m)) < metadata.RESERVED


@pytest.mark.parametrize("value", ["[1, 2]", "computedAt: yesterday\nresyncPeriod: 30s\n", ": : :"])
def test_unreadable_metadata_is_a_one_line_error(value: str) -> None:
    with pytest.raises(metadata.MetadataError, match="^ConfigMap key usc-meta: ") as info:
        metadata.decode(value)
    assert "\n" not in str(info.value)


def test_refreshed_when_insights_change_and_once_per_resync_otherwise() -> None:
    published = meta(ns(0))
    # nothing changed, a moment later: the published value stays (no write)
    assert metadata.refresh(published, meta(ns(0, 5)), insights_changed=False) is published
    # the insights changed: stamped now
    assert metadata.refresh(published, meta(ns(0, 5)), insights_changed=True).computed_at == ns(0, 5)
    # nothing changed for a resync period: refreshed
    assert metadata.refresh(published, meta(ns(0, 30)), insights_changed=False).computed_at == ns(0, 30)
    # what was omitted changed: rewritten at once
    assert metadata.refresh(published, meta(ns(0, 1), ["usc-node-a"]), insights_changed=False).omitted.count == 1
    assert metadata.refresh(None, meta(ns(0)), insights_changed=False).computed_at == ns(0)


def test_paced_is_written_only_while_true_and_read_back() -> None:
    paced = metadata.build(ns(1), "usc-0", "0.1.0", RESYNC, [], paced=True)
    value = metadata.encode(paced)
    assert value.endswith(',"paced":true}') and metadata.decode(value) == paced
    # not paced: no key at all, so a reader that predates it reads the value as before
    assert "paced" not in metadata.encode(meta(ns(1)))
    assert metadata.decode(metadata.encode(meta(ns(1)))).paced is False


def test_a_paced_stamp_is_rewritten_as_soon_as_writes_are_no_longer_held_back() -> None:
    paced = metadata.build(ns(0), "usc-0", "0.1.0", RESYNC, [], paced=True)
    # nothing else changed, a moment later: still rewritten, to stop saying so
    again = metadata.refresh(paced, meta(ns(0, 1)), insights_changed=False)
    assert again.paced is False and again.computed_at == ns(0, 1)
    # and saying so is a change of its own
    assert metadata.refresh(meta(ns(0)), paced, insights_changed=False) is paced


def test_a_paced_publication_says_it_may_miss_later_changes() -> None:
    paced = metadata.build(ns(0), "usc-0", "0.1.0", RESYNC, [], paced=True)
    [w] = metadata.warnings(paced, ns(0) + 3 * SECOND)
    assert w == (
        "the update status controller is holding writes back after many changes at once: the insights are "
        "current as of 2024-01-01T10:00:00Z and may miss later changes; node and pool counts below may be partial"
    )
    assert metadata.health_caveat([w]) is not None
    # still said when the data is also stale: both lines
    assert len(metadata.warnings(paced, ns(0) + 61 * SECOND)) == 2


def test_no_warning_for_fresh_complete_data_and_a_live_lease() -> None:
    lease = LeaseState(holder="usc-0", renewed_at=ns(9), duration=137 * SECOND)
    assert metadata.warnings(meta(ns(10) - 59 * SECOND), ns(10), lease) == []
    assert metadata.warnings(meta(ns(10)), ns(10), LeaseState(missing=True)) == []


def test_stale_after_twice_the_resync_period() -> None:
    [w] = metadata.warnings(meta(ns(0)), ns(0) + 61 * SECOND)
    assert w.startswith("the insights are stale: computed 1m1s ago at 2024-01-01T10:00:00Z")


def test_expired_lease_and_unreadable_lease() -> None:
    lease = LeaseState(holder="usc-0", renewed_at=ns(0), duration=137 * SECOND)
    [w] = metadata.warnings(meta(ns(10)), ns(10), lease)
    assert "Lease expired 7m43s ago (holder usc-0" in w
    forbidden = LeaseState(problem="cannot read the update status controller's Lease x/y (403 Forbidden): ...")
    assert metadata.warnings(meta(ns(10)), ns(10), forbidden) == [forbidden.problem]


def test_a_lease_that_expired_under_a_second_ago_expired_now_as_oc_words_it() -> None:
    """A watch wakes the moment the Lease expires: it says `now` there, never `now ago`."""
    lease = LeaseState(holder="usc-0", renewed_at=ns(0), duration=137 * SECOND)
    [w] = metadata.lease_warnings(lease, ns(0) + 137 * SECOND + 1)
    assert w.startswith("the update status controller's Lease expired now (holder usc-0, last renewed ")
    assert [ago(0), ago(SECOND - 1), ago(SECOND), ago(75 * SECOND + 999)] == ["now", "now", "1s ago", "1m15s ago"]


def test_lease_state_from_the_object() -> None:
    spec = {"holderIdentity": "a\x1b]0;x", "renewTime": "2024-01-01T10:00:00.000000Z", "leaseDurationSeconds": 10}
    lease = {"spec": spec}
    state = metadata.lease_state(lease)
    assert state == LeaseState(holder="a\x1b]0;x", renewed_at=ns(0), duration=10 * SECOND)
    [w] = metadata.lease_warnings(state, ns(1))
    assert "\x1b" not in warning_text([w]) and "a\\x1b]0;x" in warning_text([w])
    assert metadata.lease_state({"spec": {}}).holder == ""
    assert metadata.lease_warnings(metadata.lease_state({"spec": {}}), ns(1))


def test_omitted_insights_say_the_output_is_partial() -> None:
    ws = metadata.warnings(meta(ns(0), ["usc-co-a", "usc-node-b"]), ns(0))
    assert ws == [
        "2 insights were omitted by the controller (ConfigMap size limit): 1 ClusterOperator, 1 Node "
        "(not shown: usc-co-a, usc-node-b); completion, node and health counts below are partial",
    ]
    assert metadata.health_caveat(ws) is not None and metadata.health_caveat([]) is None


def test_omitted_keys_name_the_missing_pools_before_thousands_of_alerts() -> None:
    """The listed keys (and the warning) say what is missing: pools and nodes first, then health
    about them, alerts last, whatever their names' order."""
    alerts = [f"usc-health-alert-a{i:05d}" for i in range(17_977)]
    omitted = [*alerts, "usc-mcp-worker", "usc-health-node-w1-degraded", "usc-node-w1", "usc-mcp-master"]
    m = meta(ns(0), omitted)
    assert m.omitted.count == 17_981
    assert m.omitted.kinds == {"Health": 17_978, "MachineConfigPool": 2, "Node": 1}
    assert m.omitted.keys[:5] == [
        "usc-mcp-master", "usc-mcp-worker", "usc-node-w1", "usc-health-node-w1-degraded", "usc-health-alert-a00000"
    ]
    [warning] = metadata.warnings(m, ns(0))
    assert "(not shown: usc-mcp-master, usc-mcp-worker, usc-node-w1, usc-health-node-w1-degraded, " in warning
    assert "usc-health-alert-a00000 and 17976 more)" in warning


def test_warning_lines_go_first_on_stdout_and_once_on_stderr() -> None:
    import io

    out, err = io.StringIO(), io.StringIO()
    emit(["one", "two\nlines"], "body\n", out, err)
    assert out.getvalue() == "warning: one\nwarning: two lines\nbody\n"
    assert err.getvalue() == warning_text(["one", "two\nlines"]) == "warning: one\nwarning: two lines\n"
