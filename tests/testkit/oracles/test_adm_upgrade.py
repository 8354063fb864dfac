"""The `oc adm upgrade` renderer the demo uses follows oc's rules (reference: available-updates §6)."""

from __future__ import annotations

from typing import Any

from testkit.oracles.adm_upgrade import NO_UPDATES, adm_upgrade


def cv(conditions: list[dict[str, Any]], **status: Any) -> dict[str, Any]:
    desired = {"version": "4.16.3", "channels": status.pop("channels", [])}
    return {"spec": {"channel": "stable-4.16"}, "status": {"conditions": conditions, "desired": desired, **status}}


STEADY = [{"type": "Failing", "status": "False"},
          {"type": "Progressing", "status": "False", "message": "Cluster version is 4.16.3"},
          {"type": "RetrievedUpdates", "status": "True"}]


def test_steady_state_with_recommended_updates_and_known_issues() -> None:
    doc = cv(STEADY, channels=["fast-4.16", "stable-4.16"],
             availableUpdates=[{"version": "4.16.5", "image": "reg/r@sha256:5"},
                               {"version": "4.16.10", "image": "reg/r@sha256:10"}],
             conditionalUpdates=[{"release": {"version": "4.16.9", "image": "reg/r@sha256:9"},
                                  "conditions": [{"type": "Recommended", "status": "False", "reason": "DriverX",
                                                  "message": "Driver X may hang. https://e/1"}]}])
    out, err = adm_upgrade(doc)
    assert err == ""
    assert out == (
        "Cluster version is 4.16.3\n\n"
        "Upstream is unset, so the cluster will use an appropriate default.\n"
        "Channel: stable-4.16 (available channels: fast-4.16, stable-4.16)\n"
        "\nRecommended updates:\n\n"
        "  VERSION     IMAGE\n"
        "  4.16.10     reg/r@sha256:10\n"
        "  4.16.5      reg/r@sha256:5\n"
        "\nAdditional updates which are not recommended for your cluster configuration are available, to view those "
        "re-run the command with --include-not-recommended.\n")
    out, _ = adm_upgrade(doc, include_not_recommended=True)
    assert out.endswith("\nUpdates with known issues:\n\n  Version: 4.16.9\n  Image: reg/r@sha256:9\n"
                        "  Reason: DriverX\n  Message: Driver X may hang. https://e/1\n")


def test_retrieval_failures_are_warnings_on_stderr() -> None:
    failed = {"type": "RetrievedUpdates", "status": "False", "reason": "RemoteFailed", "message": "Unable: x"}
    out, err = adm_upgrade(cv([*STEADY[:2], failed]))
    assert err == "warning: Cannot display available updates:\n  Reason: RemoteFailed\n  Message: Unable: x\n\n"
    assert NO_UPDATES not in out
    _, err = adm_upgrade(cv([*STEADY[:2], failed], availableUpdates=[{"version": "4.16.5", "image": "i"}]))
    assert err.startswith("warning: Cannot refresh available updates:\n")
    out, err = adm_upgrade(cv(STEADY[:2]))  # missing RetrievedUpdates: no updates, no warning
    assert out.endswith(NO_UPDATES + "\n") and err == ""


def test_failing_progressing_and_release_accepted_blocks() -> None:
    conditions = [{"type": "Failing", "status": "True", "reason": "R", "message": "a\nb"},
                  {"type": "Progressing", "status": "True", "message": "Working towards 4.16.5"},
                  {"type": "ReleaseAccepted", "status": "False", "reason": "RetrievePayload", "message": "m"}]
    out, err = adm_upgrade(cv(conditions))
    assert out.startswith("Failing=True:\n\n  Reason: R\n  Message: a\n  b\n\n"
                          "info: An upgrade is in progress. Working towards 4.16.5\n\n"
                          "ReleaseAccepted=False\n\n  Reason: RetrievePayload\n  Message: m\n\n")
    _, err = adm_upgrade({"status": {}})
    assert "No current Failing info" in err and "No current Progressing info" in err


def test_unknown_recommendations_are_called_out() -> None:
    doc = cv(STEADY, conditionalUpdates=[{"release": {"version": "4.16.9", "image": "i"},
                                          "conditions": [{"type": "Recommended", "status": "Unknown"}]}])
    out, _ = adm_upgrade(doc)
    assert 'not recommended, or where the recommended status is "Unknown", for your cluster' in out
