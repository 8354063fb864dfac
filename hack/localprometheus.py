#!/usr/bin/env python3
"""The local Prometheus for tests, benchmarks and the demo (`make prometheus-up`, `prometheus-down`, ...).

A thin entry: the logic lives in `testkit.harness.localprometheus`; `localprometheus.py --help` lists the verbs.
"""

from testkit.harness.localprometheus import main

if __name__ == "__main__":
    raise SystemExit(main())
