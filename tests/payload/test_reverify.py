"""Which changes retry a retrieval that failed verification at once: a ConfigMap that configures
verification or holds signatures, or spec.signatureStores; nothing else, and not the first list."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from payload import acceptance as acc
from payload.reverify import failed_verification, retry_on_verification_changes
from payload.verify.config import CONFIG_ANNOTATION, SIGNATURES_LABEL

JSON = dict[str, Any]


@dataclass
class FakeInformer:
    has_synced: bool = False
    handlers: list[Callable[[str, JSON, JSON | None], None]] = field(default_factory=list)

    def add_handler(self, handler: Callable[[str, JSON, JSON | None], None]) -> None:
        self.handlers.append(handler)

    def event(self, obj: JSON, old: JSON | None = None) -> None:
        for handler in self.handlers:
            handler("MODIFIED" if old is not None else "ADDED", obj, old)


@dataclass
class FakeCoordinator:
    asked: list[bool] = field(default_factory=list)

    def retry_failed(self, applies: Callable[[acc.ReleaseAcceptance], bool]) -> bool:
        unverified = acc.retrieval_failed("4.14.2", "img", acc.not_verified("no signature"))
        self.asked.append(applies(unverified) and not applies(acc.retrieval_failed("4.14.2", "img", "pull")))
        return True


def configmap(name: str, annotations: JSON | None = None, labels: JSON | None = None) -> JSON:
    return {"metadata": {"name": name, "annotations": annotations or {}, "labels": labels or {}}}


def test_only_failures_of_verification_itself_are_retried() -> None:
    assert failed_verification(acc.retrieval_failed("4.14.2", "img", acc.not_verified("no signature")))
    assert not failed_verification(acc.retrieval_failed("4.14.2", "img", acc.download_failed("pull failed")))


def test_verification_configmaps_and_signature_stores_retry_at_once_other_changes_do_not() -> None:
    coordinator, configmaps, clusterversions = FakeCoordinator(), FakeInformer(), FakeInformer(has_synced=True)
    retry_on_verification_changes(coordinator, configmaps, clusterversions)
    configmaps.event(configmap("release-verification", {CONFIG_ANNOTATION: ""}))  # the first list
    assert coordinator.asked == []
    configmaps.has_synced = True
    configmaps.event(configmap("unrelated"))
    configmaps.event(configmap("sha256-e", labels={SIGNATURES_LABEL: ""}))  # a signature published
    assert coordinator.asked == [True]
    clusterversions.event({"spec": {"channel": "b"}}, {"spec": {"channel": "a"}})
    clusterversions.event({"spec": {"signatureStores": [{"url": "https://s"}]}}, {"spec": {}})
    assert coordinator.asked == [True, True]
