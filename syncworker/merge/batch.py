"""Jobs and CronJobs (batch/v1)."""

from __future__ import annotations

from typing import Any

from syncworker.merge.metadata import ensure_metadata
from syncworker.merge.podtemplate import ensure_pod_template
from syncworker.merge.values import (
    JSON,
    ApplyProblem,
    Changes,
    at,
    child,
    enforce,
    enforce_default,
    mapping,
    same_pointer,
    with_default,
)

DEFAULT_BACKOFF_LIMIT = 6
DEFAULT_COMPLETION_MODE = "NonIndexed"
DEFAULT_CONCURRENCY_POLICY = "Allow"
DEFAULT_SUCCESSFUL_JOBS_HISTORY = 3
DEFAULT_FAILED_JOBS_HISTORY = 1


def merge_job(changes: Changes, live: JSON, required: JSON) -> None:
    """parallelism, completions, activeDeadlineSeconds, backoffLimit (6), manualSelector,
    ttlSecondsAfterFinished, suspend (false), completionMode (NonIndexed), podFailurePolicy and the
    pod template. The server generates a Job's selector, so a manifest may not set one; it also
    refuses a changed template (immutable), which then fails the task."""
    ensure_metadata(changes, live, required)
    ensure_job_spec(changes, child(live, "spec"), mapping(required, "spec", ""), "spec")


def ensure_job_spec(changes: Changes, have: JSON, spec: JSON, path: str) -> None:
    if spec.get("selector") is not None:
        raise ApplyProblem(f"{at(path, 'selector')}: a Job manifest may not set a selector (the server generates it)")
    if not same_pointer(_completions(have), _completions(spec)):
        changes.note(at(path, "completions"))
        have["completions"] = _completions(spec)
    enforce_default(changes, have, "parallelism", spec.get("parallelism"), 1, at(path, "parallelism"))
    for key in ("activeDeadlineSeconds", "ttlSecondsAfterFinished"):
        enforce(changes, have, key, spec.get(key), at(path, key), pointer=True)
    backoff_limit = spec.get("backoffLimit")
    enforce_default(changes, have, "backoffLimit", backoff_limit, DEFAULT_BACKOFF_LIMIT, at(path, "backoffLimit"))
    enforce(changes, have, "manualSelector", spec.get("manualSelector"), at(path, "manualSelector"))
    enforce(changes, have, "suspend", spec.get("suspend"), at(path, "suspend"))
    mode = spec.get("completionMode")
    enforce_default(changes, have, "completionMode", mode, DEFAULT_COMPLETION_MODE, at(path, "completionMode"))
    policy = mapping(spec, "podFailurePolicy", path)
    enforce(
        changes,
        have,
        "podFailurePolicy",
        _pod_failure_policy_defaults(policy) if policy else None,
        at(path, "podFailurePolicy"),
        _pod_failure_policy_defaults,
        pointer=True,
    )
    template = mapping(spec, "template", path)
    ensure_pod_template(changes, child(have, "template"), template, at(path, "template"))


def _completions(spec: JSON) -> Any:
    """The server's: completions and parallelism both unset run one Pod once."""
    completions = spec.get("completions")
    return 1 if completions is None and spec.get("parallelism") is None else completions


def _pod_failure_policy_defaults(policy: Any) -> Any:
    """The server's: each onPodConditions pattern's status is True when unset."""
    if not isinstance(policy, dict) or not isinstance(policy.get("rules"), list):
        return policy
    rules = []
    for rule in policy["rules"]:
        if isinstance(rule, dict) and isinstance(rule.get("onPodConditions"), list):
            patterns = [with_default(p, {"status": "True"}) for p in rule["onPodConditions"]]
            rule = {**rule, "onPodConditions": patterns}
        rules.append(rule)
    return {**policy, "rules": rules}


def merge_cron_job(changes: Changes, live: JSON, required: JSON) -> None:
    """schedule, timeZone, concurrencyPolicy (Allow), startingDeadlineSeconds, suspend (false), the
    history limits (3 successful, 1 failed) and the job template (its metadata by the metadata
    rules, its spec by the Job rules)."""
    ensure_metadata(changes, live, required)
    spec = mapping(required, "spec", "")
    have = child(live, "spec")
    enforce(changes, have, "schedule", spec.get("schedule"), "spec.schedule")
    for key in ("timeZone", "startingDeadlineSeconds"):
        enforce(changes, have, key, spec.get(key), f"spec.{key}", pointer=True)
    for key, default in (
        ("concurrencyPolicy", DEFAULT_CONCURRENCY_POLICY),
        ("successfulJobsHistoryLimit", DEFAULT_SUCCESSFUL_JOBS_HISTORY),
        ("failedJobsHistoryLimit", DEFAULT_FAILED_JOBS_HISTORY),
    ):
        enforce_default(changes, have, key, spec.get(key), default, f"spec.{key}")
    enforce(changes, have, "suspend", spec.get("suspend"), "spec.suspend")
    template = mapping(spec, "jobTemplate", "spec")
    have_template = child(have, "jobTemplate")
    ensure_metadata(changes, have_template, template, "spec.jobTemplate")
    job_spec = mapping(template, "spec", "spec.jobTemplate")
    ensure_job_spec(changes, child(have_template, "spec"), job_spec, "spec.jobTemplate.spec")
