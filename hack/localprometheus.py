#!/usr/bin/env python3
"""The local Prometheus for tests, benchmarks and the demo (`make prometheus-up`, `prometheus-down`, ...).

A thin entry: the logic lives in `cvo_py.testing.localprometheus`; `localprometheus.py --help` lists the verbs.
"""

from cvo_py.testing.localprometheus import main

if __name__ == "__main__":
    raise SystemExit(main())
