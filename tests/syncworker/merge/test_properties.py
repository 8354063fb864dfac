"""Properties of the merges on random objects: merging again what a merge produced changes nothing
(so a pass after a write sends none), a live-only value the rules keep survives, the inputs are
never changed, and any JSON at all in a manifest gives a result or one ApplyProblem, never
another exception."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from cvo_py.runtime.jsondata import copy_json
from syncworker.merge import TYPED, merge
from syncworker.merge.values import ApplyProblem

JSON = dict[str, Any]

names = st.sampled_from(["a", "b", "c"])
words = st.sampled_from(["", "x", "y", "1", "true"])
small_ints = st.sampled_from([0, 1, 2, 30])
label_maps = st.dictionaries(st.sampled_from(["app", "tier", "x"]), words, max_size=3)
quantities = st.sampled_from(["100m", "0.1", "1", "1Gi", "1024Mi", "2", 1])
resource_lists = st.dictionaries(st.sampled_from(["cpu", "memory"]), quantities, max_size=2)
pointer_bools = st.one_of(st.none(), st.booleans())

env_vars = st.one_of(
    st.fixed_dictionaries({"name": names, "value": words}),
    st.fixed_dictionaries({"name": names, "valueFrom": st.just({"fieldRef": {"fieldPath": "metadata.name"}})}),
    st.fixed_dictionaries({"name": names, "valueFrom": st.just({"resourceFieldRef": {"resource": "limits.cpu"}})}),
)
ports = st.fixed_dictionaries(
    {"containerPort": st.sampled_from([80, 443])},
    optional={"name": names, "protocol": st.sampled_from(["TCP", "UDP"]), "hostPort": st.sampled_from([0, 80, 81])},
)
probes = st.fixed_dictionaries(
    {"httpGet": st.fixed_dictionaries({"port": st.sampled_from([80, 81])}, optional={"path": st.just("/x")})},
    optional={"timeoutSeconds": small_ints, "periodSeconds": small_ints},
)
security_contexts = st.fixed_dictionaries(
    {},
    optional={
        "privileged": pointer_bools,
        "allowPrivilegeEscalation": pointer_bools,
        "runAsUser": st.sampled_from([0, 1000]),
        "runAsGroup": st.sampled_from([0, 1000]),
        "capabilities": st.fixed_dictionaries(
            {}, optional={"add": st.lists(names, max_size=2), "drop": st.lists(names, max_size=2)}
        ),
        "seLinuxOptions": st.fixed_dictionaries({}, optional={"type": words, "level": words}),
    },
)
containers = st.fixed_dictionaries(
    {"name": names},
    optional={
        "image": words,
        "command": st.lists(words, max_size=2),
        "args": st.lists(words, max_size=2),
        "env": st.lists(env_vars, max_size=3),
        "workingDir": words,
        "ports": st.lists(ports, max_size=2),
        "resources": st.fixed_dictionaries({}, optional={"limits": resource_lists, "requests": resource_lists}),
        "volumeMounts": st.lists(
            st.fixed_dictionaries({"name": names, "mountPath": st.sampled_from(["/a", "/b"])}), max_size=2
        ),
        "livenessProbe": probes,
        "readinessProbe": probes,
        "securityContext": security_contexts,
        "imagePullPolicy": st.sampled_from(["Always", "IfNotPresent"]),
    },
)
volumes = st.one_of(
    st.fixed_dictionaries({"name": names}),
    st.fixed_dictionaries(
        {
            "name": names,
            "secret": st.fixed_dictionaries(
                {"secretName": words}, optional={"defaultMode": st.sampled_from([420, 384])}
            ),
        }
    ),
    st.fixed_dictionaries({"name": names, "emptyDir": st.fixed_dictionaries({}, optional={"sizeLimit": quantities})}),
    st.fixed_dictionaries(
        {"name": names, "hostPath": st.fixed_dictionaries({"path": words}, optional={"type": words})}
    ),
)
pod_specs = st.fixed_dictionaries(
    {"containers": st.lists(containers, min_size=1, max_size=3, unique_by=lambda c: c["name"])},
    optional={
        "initContainers": st.lists(containers, max_size=2, unique_by=lambda c: c["name"]),
        "volumes": st.lists(volumes, max_size=3, unique_by=lambda v: v["name"]),
        "hostNetwork": st.booleans(),
        "serviceAccountName": words,
        "automountServiceAccountToken": pointer_bools,
        "nodeSelector": label_maps,
        "tolerations": st.lists(
            st.fixed_dictionaries({"key": names}, optional={"operator": st.just("Exists"), "value": words}), max_size=3
        ),
        "securityContext": st.fixed_dictionaries(
            {}, optional={"runAsNonRoot": pointer_bools, "supplementalGroups": st.lists(small_ints, max_size=2)}
        ),
        "affinity": st.just({"nodeAffinity": {"x": 1}}),
        "dnsPolicy": st.sampled_from(["ClusterFirst", "Default"]),
        "terminationGracePeriodSeconds": small_ints,
        "schedulerName": words,
    },
)
metadata = st.fixed_dictionaries(
    {"name": st.just("o"), "namespace": st.just("ns")}, optional={"labels": label_maps, "annotations": label_maps}
)


def deployment(meta: JSON, spec: JSON, extra: JSON) -> JSON:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}}, "spec": spec},
            **extra,
        },
    }


deployment_specs = st.fixed_dictionaries(
    {},
    optional={
        "replicas": small_ints,
        "paused": st.booleans(),
        "revisionHistoryLimit": small_ints,
        "strategy": st.sampled_from([{"type": "Recreate"}, {"rollingUpdate": {"maxSurge": 1}}, {}]),
    },
)
deployments = st.builds(deployment, metadata, pod_specs, deployment_specs)


@given(deployments, deployments)
def test_merging_the_merged_deployment_again_changes_nothing(required: JSON, live: JSON) -> None:
    first = merge(required, live)
    second = merge(required, first.merged)
    assert second.changed is False, second.changes


@given(deployments, deployments)
def test_merging_changes_neither_input(required: JSON, live: JSON) -> None:
    before = (copy_json(required), copy_json(live))
    merge(required, live)
    assert (required, live) == before


@given(deployments, deployments, st.sampled_from(["Never", "Always"]), words)
def test_live_only_values_the_rules_keep_survive_a_merge(required: JSON, live: JSON, pull: str, value: str) -> None:
    live = copy_json(live)
    live["metadata"].setdefault("labels", {})["admin-only"] = value
    live["status"] = {"observedGeneration": 3}
    live_spec = live["spec"]["template"]["spec"]
    live_spec["schedulerName"] = "custom"
    for container in live_spec["containers"]:
        container["imagePullPolicy"] = pull
    merged = merge(required, live).merged
    assert merged["metadata"]["labels"]["admin-only"] == value
    assert merged["status"] == {"observedGeneration": 3}
    merged_spec = merged["spec"]["template"]["spec"]
    assert merged_spec["schedulerName"] == "custom"
    wanted = {c["name"] for c in required["spec"]["template"]["spec"]["containers"]}
    for container in merged_spec["containers"]:
        if container["name"] in {c["name"] for c in live_spec["containers"]} and container["name"] in wanted:
            assert container["imagePullPolicy"] == pull


config_maps = st.builds(
    lambda meta, data: {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data},
    metadata,
    st.dictionaries(names, words, max_size=3),
)


@given(config_maps, config_maps)
def test_config_map_keys_only_live_has_survive_and_a_second_merge_changes_nothing(required: JSON, live: JSON) -> None:
    result = merge(required, live)
    for key, value in live["data"].items():
        assert result.merged["data"][key] == required["data"].get(key, value)
    assert merge(required, result.merged).changed is False


# Any JSON value where a manifest has a field: a result or one ApplyProblem.
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False, allow_infinity=False), words),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["name", "spec", "containers", "template", "x"]), inner, max_size=3),
    ),
    max_leaves=8,
)
kinds = st.sampled_from(sorted(TYPED) + [("v1", "Secret"), ("monitoring.coreos.com/v1", "PrometheusRule")])
top_level = st.dictionaries(
    st.sampled_from(
        [
            "spec",
            "data",
            "rules",
            "subjects",
            "roleRef",
            "webhooks",
            "aggregationRule",
            "automountServiceAccountToken",
            "priority",
            "volumes",
            "metadata",
        ]
    ),
    json_values,
    max_size=4,
)


@given(kinds, top_level, top_level)
def test_any_json_in_a_manifest_gives_a_result_or_one_apply_problem(
    kind: tuple[str, str], required: JSON, live: JSON
) -> None:
    api_version, name = kind
    required = {**required, "apiVersion": api_version, "kind": name}
    live = {**live, "apiVersion": api_version, "kind": name}
    try:
        result = merge(required, live)
    except ApplyProblem as problem:
        assert "\n" not in str(problem) and str(problem)
        return
    assert isinstance(result.merged, dict)
