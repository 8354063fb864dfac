#!/usr/bin/env python3
"""Generate the Grafana dashboard for cvo-py's metrics, and its OpenShift console ConfigMap form.

hack/gen_dashboard.py            write dashboards/cvo-py.json and dashboards/cvo-py-console-configmap.yaml
hack/gen_dashboard.py --check    exit 1 if the checked-in files differ from what this generates

A thin entry: the panels and their queries live in `testkit.demo.dashboard`.
"""

from testkit.demo.dashboard import main

if __name__ == "__main__":
    raise SystemExit(main())
