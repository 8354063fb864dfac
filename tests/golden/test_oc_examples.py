"""Every shared oc example, both detail levels, byte for byte: snapshot → insights → text.

The examples are real `oc adm upgrade status` outputs (../shared/oc-examples, beside the
repository). The same insights also go through the ConfigMap wire format and must render the same
where the snapshot lists objects by name, as a live cluster does.
"""

from __future__ import annotations

import time

import pytest

from status.updatestatus.api import configmap
from status.updatestatus.client import snapshot
from status.updatestatus.client.render import render
from status.updatestatus.insights.plain import Insight
from testkit.checkout import EXAMPLES

CASES = (
    sorted(p.name.removesuffix("-cv.yaml") for p in EXAMPLES.glob("*-cv.yaml")) if EXAMPLES.is_dir() else []
)
VARIANTS = [("none", ".output"), ("all", ".detailed-output")]


def _insights(name: str) -> tuple[list[Insight], int]:
    # as the CLI and oc do: the snapshot's "now", node unavailability aged at the real clock
    return snapshot.load(EXAMPLES / f"{name}-cv.yaml").insights(wall_clock=time.time_ns())


def test_examples_are_present() -> None:
    if not EXAMPLES.is_dir():
        pytest.skip(f"../shared/oc-examples not found (looked in {EXAMPLES.resolve()})")
    assert len(CASES) >= 5, f"expected the 5 shared examples, found {CASES}"


@pytest.mark.parametrize("details,suffix", VARIANTS, ids=[v[0] for v in VARIANTS])
@pytest.mark.parametrize("name", CASES)
def test_example_output_is_byte_identical(name: str, details: str, suffix: str) -> None:
    want = (EXAMPLES / f"{name}{suffix}").read_text(encoding="utf-8")
    insights, now = _insights(name)
    assert render(insights, now, details) == want


@pytest.mark.parametrize("name", CASES)
def test_example_renders_the_same_through_the_configmap(name: str) -> None:
    insights, now = _insights(name)
    decoded = configmap.decode(configmap.encode(insights))
    pools = [p["metadata"]["name"] for p in snapshot.load(EXAMPLES / f"{name}-cv.yaml").pools]
    if pools != sorted(pools):
        # the ConfigMap orders pools by name (as a live cluster lists them): compare with that order
        by_name = configmap.canonical_order(list(insights))
        for details, _ in VARIANTS:
            assert render(decoded, now, details) == render(by_name, now, details)
        return
    for details, suffix in VARIANTS:
        assert render(decoded, now, details) == (EXAMPLES / f"{name}{suffix}").read_text(encoding="utf-8")
