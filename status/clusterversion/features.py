"""The cluster's feature gates as `start` uses them: read once at start, then watched, and a change
of the feature set or of the gates of the running version ends the process (upstream does the
same), whose Deployment starts it again with them (`status.clusterversion.featuregates` decides)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from cvo_py.runtime import klog
from cvo_py.runtime.informer import DELETED, Informer
from cvo_py.runtime.kube import FEATUREGATES, JSON, ApiError, KubeClient, ServerUnreachable
from status.clusterversion import featuregates
from status.clusterversion.featuregates import Features

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FeaturesRead:
    features: Features
    served: bool  # whether the cluster serves the FeatureGate API (only then is it watched)


def read_features(client: KubeClient, version: str) -> FeaturesRead:
    """The feature set and the gates enabled for `version` on this cluster. No FeatureGate, or no
    such API: Default, none. Another error is logged and counts as none."""
    try:
        featuregate = client.get(FEATUREGATES, featuregates.FEATUREGATE_NAME)
    except ApiError as exc:
        if not exc.is_not_found():
            log.warning(
                "Cannot read FeatureGate %s (%s): every feature gate counts as off", featuregates.FEATUREGATE_NAME, exc
            )
            return FeaturesRead(Features(), served=True)
        # A missing object names itself in the answer's details; a missing API does not.
        details = (exc.status_object or {}).get("details") or {}
        return FeaturesRead(Features(), served=details.get("name") == featuregates.FEATUREGATE_NAME)
    except ServerUnreachable as exc:
        log.warning(
            "Cannot read FeatureGate %s (%s): every feature gate counts as off", featuregates.FEATUREGATE_NAME, exc
        )
        return FeaturesRead(Features(), served=True)
    found = featuregates.features(featuregate, version)
    klog.v(2).info(
        "Feature set %s; gates enabled for %s: %s",
        found.feature_set or "Default",
        version or "this release",
        ", ".join(sorted(found.gates)) or "none",
    )
    return FeaturesRead(found, served=True)


class FeatureGateWatch:
    """Calls `on_change(how)` once, on the informer's thread, when the FeatureGate no longer gives
    `started_with` for `version` (its feature set, or the gates enabled for that version)."""

    def __init__(
        self, client: KubeClient, version: str, started_with: Features, on_change: Callable[[str], None]
    ) -> None:
        self.version = version
        self.started_with = started_with
        self._on_change = on_change
        self._told = False
        self.informer = Informer(
            client, FEATUREGATES, field_selector=f"metadata.name={featuregates.FEATUREGATE_NAME}"
        )
        self.informer.add_handler(self._on_event)

    def _on_event(self, event_type: str, obj: JSON, old: JSON | None) -> None:
        now = featuregates.features(None if event_type == DELETED else obj, self.version)
        how = featuregates.changed(self.started_with, now)
        if how is not None and not self._told:
            self._told = True
            self._on_change(how)

    def start(self) -> FeatureGateWatch:
        self.informer.start()
        return self

    def stop(self) -> None:
        self.informer.stop()
