"""The version Pod, field by field, against upstream's Pod (4.23 and later)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from payload.podspec import (
    INIT_CONTAINERS,
    MAIN_CONTAINER,
    POD_LABEL_SELECTOR,
    RAND_ALPHABET,
    PodSpecError,
    PodSpecOptions,
    build_version_pod,
    payload_hash,
    random_suffix,
    target_dir,
)

IMAGE = "quay.io/openshift-release-dev/ocp-release@sha256:" + "ab" * 32


def pod(**kwargs: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"image": IMAGE, "version": "4.19.1", "node_name": "master-0"}
    args.update(kwargs)
    return build_version_pod(
        args.pop("image"), args.pop("version"), args.pop("node_name"), name_suffix="bcd45", tmp_suffix="xz279", **args
    )


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        # MD5 → unpadded URL-safe base64 (Go's base64.RawURLEncoding); expected values from
        # `printf %s IMAGE | md5sum | xxd -r -p | base64 | tr '+/' '-_' | tr -d =`.
        ("quay.io/openshift-release-dev/ocp-release@sha256:" + "ab" * 32, "vwF-XZ_BcwaURRoNZIAgXQ"),
        ("", "1B2M2Y8AsgTpgAmY7PhCfg"),
        ("registry.example/release:4.19", "P_c308X5oUhRtrgOz27oKw"),
    ],
)
def test_payload_hash_matches_upstream_encoding(image: str, expected: str) -> None:
    assert payload_hash(image) == expected
    assert len(expected) == 22 and "=" not in expected


def test_metadata() -> None:
    meta = pod()["metadata"]
    assert meta == {
        "name": "version-4.19.1-bcd45",
        "namespace": "openshift-cluster-version",
        "labels": {"k8s-app": "retrieve-openshift-release"},
        "annotations": {"openshift.io/required-scc": "privileged"},
    }
    assert POD_LABEL_SELECTOR == "k8s-app=retrieve-openshift-release"


def test_image_only_request_gives_double_dash_name() -> None:
    assert pod(version="")["metadata"]["name"] == "version--bcd45"


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("serviceAccountName", "update-payload"),
        ("activeDeadlineSeconds", 120),
        ("restartPolicy", "OnFailure"),
        ("nodeName", "master-0"),
        ("nodeSelector", {"node-role.kubernetes.io/master": ""}),
        ("tolerations", [{"key": "node-role.kubernetes.io/master"}]),
        ("priorityClassName", "openshift-user-critical"),
        ("volumes", [{"name": "payloads", "hostPath": {"path": "/etc/cvo/updatepayloads"}}]),
    ],
)
def test_pod_spec_fields(field: str, expected: Any) -> None:
    assert pod()["spec"][field] == expected


def test_pod_spec_sets_nothing_upstream_leaves_unset() -> None:
    spec = pod()["spec"]
    for unset in ("securityContext", "hostNetwork", "automountServiceAccountToken", "schedulerName"):
        assert unset not in spec
    assert "ownerReferences" not in pod()["metadata"]


def test_containers_in_order_with_commands() -> None:
    spec = pod()["spec"]
    h = payload_hash(IMAGE)
    final = f"/etc/cvo/updatepayloads/{h}"
    tmp = f"{final}-xz279"
    assert [c["name"] for c in spec["initContainers"]] == list(INIT_CONTAINERS)
    assert [c["name"] for c in spec["containers"]] == [MAIN_CONTAINER]
    commands = [c["command"] for c in spec["initContainers"] + spec["containers"]]
    assert commands == [
        ["sh", "-c", "rm -fR ./*"],
        ["mkdir", tmp],
        ["cp", "-r", "/manifests", f"{tmp}/manifests"],
        ["cp", "-r", "/release-manifests", f"{tmp}/release-manifests"],
        ["mv", tmp, final],
    ]
    assert spec["initContainers"][0]["workingDir"] == "/etc/cvo/updatepayloads/"
    assert all("workingDir" not in c for c in spec["initContainers"][1:] + spec["containers"])
    assert target_dir(IMAGE) == final


@pytest.mark.parametrize("index", range(5))
def test_per_container_defaults(index: int) -> None:
    spec = pod()["spec"]
    container = (spec["initContainers"] + spec["containers"])[index]
    assert container["image"] == IMAGE
    assert container["volumeMounts"] == [{"name": "payloads", "mountPath": "/etc/cvo/updatepayloads"}]
    assert container["securityContext"] == {"privileged": True, "readOnlyRootFilesystem": True}
    assert container["resources"] == {"requests": {"cpu": "10m", "memory": "50Mi", "ephemeral-storage": "2Mi"}}
    assert "limits" not in container["resources"]
    assert container["terminationMessagePolicy"] == "FallbackToLogsOnError"
    assert "imagePullPolicy" not in container


def test_options_change_the_directory_and_namespace() -> None:
    options = PodSpecOptions(namespace="ns-a", payload_dir="/tmp/payloads/", operator_name="cvo")
    built = pod(options=options)
    assert built["metadata"]["name"] == "cvo-4.19.1-bcd45"
    assert built["metadata"]["namespace"] == "ns-a"
    assert built["spec"]["volumes"][0]["hostPath"]["path"] == "/tmp/payloads/"
    assert built["spec"]["initContainers"][0]["workingDir"] == "/tmp/payloads/"
    assert built["spec"]["containers"][0]["command"][2] == "/tmp/payloads/" + payload_hash(IMAGE)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"image": ""}, "no payload image has been specified"),
        ({"node_name": ""}, "--node-name"),
        ({"version": "4.19.1+Build"}, "cannot be part of a Pod name"),
        ({"version": "x" * 250}, "cannot be part of a Pod name"),
        ({"options": PodSpecOptions(payload_dir="relative/dir")}, "not an absolute path"),
    ],
)
def test_bad_inputs_are_clear_errors(kwargs: dict[str, Any], error: str) -> None:
    with pytest.raises(PodSpecError, match=error.replace("+", r"\+")):
        pod(**kwargs)


def test_bad_suffix_is_rejected() -> None:
    with pytest.raises(PodSpecError, match="name suffix 'AEIOU'"):
        build_version_pod(IMAGE, "4.19.1", "n", name_suffix="AEIOU", tmp_suffix="bcdfg")


def test_random_suffix_uses_the_kubernetes_alphabet() -> None:
    rng = random.Random(7)
    suffixes = {random_suffix(rng) for _ in range(200)}
    assert all(len(s) == 5 and set(s) <= set(RAND_ALPHABET) for s in suffixes)
    assert len(suffixes) > 190
