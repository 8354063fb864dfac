"""Generate the Grafana dashboard for cvo-py's metrics, and its OpenShift console ConfigMap form.

hack/gen_dashboard.py            write dashboards/cvo-py.json and dashboards/cvo-py-console-configmap.yaml
hack/gen_dashboard.py --check    exit 1 if the checked-in files differ from what this generates
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import yaml

from testkit.checkout import REPO

OUT_JSON = REPO / "dashboards" / "cvo-py.json"
OUT_CONFIGMAP = REPO / "dashboards" / "cvo-py-console-configmap.yaml"

# (row title, [(panel title, panel type, unit, [(legend, PromQL)])])
ROWS: list[tuple[str, list[tuple[str, str, str, list[tuple[str, str]]]]]] = [
    (
        "Update progress",
        [
            (
                "Cluster version",
                "table",
                "dateTimeAsIso",
                [
                    (
                        "{{type}} {{version}}",
                        'cluster_version{type=~"current|desired|updating|completed|failure"} * 1000',
                    ),
                ],
            ),
            (
                "Manifests applied in the current pass",
                "timeseries",
                "short",
                [
                    ("{{type}} {{version}}", "cluster_version_payload"),
                    ("errors {{version}}", "cluster_operator_payload_errors"),
                ],
            ),
            (
                "Cluster operators up",
                "stat",
                "short",
                [
                    ("up", "sum(cluster_operator_up)"),
                    ("not up", "count(cluster_operator_up == 0) or vector(0)"),
                ],
            ),
            (
                "Degraded or unavailable operators",
                "table",
                "short",
                [
                    (
                        "{{name}} {{condition}}",
                        'cluster_operator_conditions{condition="Degraded"} == 1 or cluster_operator_conditions{condition="Available"} == 0',
                    ),
                ],
            ),
        ],
    ),
    (
        "Payload retrieval",
        [
            (
                "Retrieval failures by reason (1h)",
                "timeseries",
                "short",
                [
                    ("{{reason}}", "sum by (reason) (increase(cluster_version_payload_retrieval_failures_total[1h]))"),
                ],
            ),
            (
                "Retrieval duration p50 / p99 by result",
                "timeseries",
                "s",
                [
                    (
                        "p50 {{result}}",
                        "histogram_quantile(0.5, sum by (le, result) (rate(cluster_version_payload_retrieval_duration_seconds_bucket[30m])))",
                    ),
                    (
                        "p99 {{result}}",
                        "histogram_quantile(0.99, sum by (le, result) (rate(cluster_version_payload_retrieval_duration_seconds_bucket[30m])))",
                    ),
                ],
            ),
            (
                "Release verifications by outcome (1h)",
                "timeseries",
                "short",
                [
                    ("{{outcome}}", "sum by (outcome) (increase(cluster_version_release_verifications_total[1h]))"),
                ],
            ),
            (
                "Signature store errors (1h)",
                "timeseries",
                "short",
                [
                    (
                        "{{store}} {{error}}",
                        "sum by (store, error) (increase(cluster_version_signature_store_fetch_errors_total[1h]))",
                    ),
                ],
            ),
        ],
    ),
    (
        "ClusterVersion status writes",
        [
            (
                "Writes, conflicts, failures (rate)",
                "timeseries",
                "ops",
                [
                    ("writes", "rate(cluster_version_status_writes_total[5m])"),
                    ("conflicts", "rate(cluster_version_status_write_conflicts_total[5m])"),
                    ("failures", "rate(cluster_version_status_write_failures_total[5m])"),
                ],
            ),
            (
                "Rejections (422) by field",
                "timeseries",
                "short",
                [
                    ("{{field}}", "sum by (field) (increase(cluster_version_status_write_rejections_total[1h]))"),
                ],
            ),
            (
                "Capabilities pruned from status",
                "table",
                "short",
                [
                    ("{{field}} {{name}}", "cluster_version_status_pruned_capabilities == 1"),
                ],
            ),
            (
                "Capabilities enabled",
                "stat",
                "short",
                [
                    ("enabled", "sum(cluster_version_capability)"),
                ],
            ),
        ],
    ),
    (
        "Update status insights",
        [
            (
                "Insights by type and assessment",
                "timeseries",
                "short",
                [
                    ("{{type}} {{assessment}}", "update_status_controller_insights"),
                ],
            ),
            (
                "Controller reaction latency p50 / p99",
                "timeseries",
                "s",
                [
                    (
                        "p50",
                        "histogram_quantile(0.5, sum by (le) (rate(update_status_controller_reaction_seconds_bucket[5m])))",
                    ),
                    (
                        "p99",
                        "histogram_quantile(0.99, sum by (le) (rate(update_status_controller_reaction_seconds_bucket[5m])))",
                    ),
                ],
            ),
            (
                "ConfigMap API size and writes",
                "timeseries",
                "bytes",
                [
                    ("bytes", "update_status_controller_configmap_bytes"),
                    ("omitted insights", "update_status_controller_insights_omitted"),
                    (
                        "writes/s {{result}}",
                        "sum by (result) (rate(update_status_controller_configmap_writes_total[5m]))",
                    ),
                ],
            ),
            (
                "Opted in (ConfigMap present)",
                "stat",
                "short",
                [
                    ("present", "max(update_status_controller_configmap_present)"),
                ],
            ),
        ],
    ),
]


def dashboard() -> dict[str, Any]:
    panels: list[dict[str, Any]] = []
    panel_id = 1
    y = 0
    for row_title, row_panels in ROWS:
        panels.append(
            {
                "type": "row",
                "title": row_title,
                "id": panel_id,
                "collapsed": False,
                "gridPos": {"h": 1, "w": 24, "x": 0, "y": y},
            }
        )
        panel_id += 1
        y += 1
        for index, (title, kind, unit, targets) in enumerate(row_panels):
            panels.append(
                {
                    "id": panel_id,
                    "type": kind,
                    "title": title,
                    "datasource": {"type": "prometheus", "uid": "${datasource}"},
                    "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
                    "gridPos": {"h": 8, "w": 12, "x": 12 * (index % 2), "y": y + 8 * (index // 2)},
                    "targets": [
                        {"refId": chr(ord("A") + n), "expr": expr, "legendFormat": legend}
                        for n, (legend, expr) in enumerate(targets)
                    ],
                }
            )
            panel_id += 1
        y += 8 * ((len(row_panels) + 1) // 2)
    return {
        "title": "cvo-py: cluster update",
        "uid": "cvo-py-update",
        "tags": ["openshift", "cluster-version-operator", "cvo-py"],
        "schemaVersion": 39,
        "editable": True,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "30s",
        "templating": {
            "list": [
                {
                    "name": "datasource",
                    "type": "datasource",
                    "query": "prometheus",
                    "label": "Data source",
                }
            ]
        },
        "panels": panels,
    }


def render() -> tuple[str, str]:
    text = json.dumps(dashboard(), indent=2) + "\n"
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "grafana-dashboard-cvo-py",
            "namespace": "openshift-config-managed",
            "labels": {"console.openshift.io/dashboard": "true"},
        },
        "data": {"cvo-py.json": text},
    }
    return (
        text,
        "# Generated by hack/gen_dashboard.py; the OpenShift console shows dashboards from this namespace.\n"
        + yaml.safe_dump(configmap, sort_keys=False, width=1000),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    text, configmap = render()
    if args.check:
        stale = [
            p for p, want in ((OUT_JSON, text), (OUT_CONFIGMAP, configmap)) if not p.exists() or p.read_text() != want
        ]
        for path in stale:
            print(f"{path.relative_to(REPO)} is out of date: run hack/gen_dashboard.py", file=sys.stderr)
        return 1 if stale else 0
    OUT_JSON.parent.mkdir(exist_ok=True)
    OUT_JSON.write_text(text)
    OUT_CONFIGMAP.write_text(configmap)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
