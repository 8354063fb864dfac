#!/usr/bin/env python3
"""The local kube-apiserver for tests, benchmarks and the demo (`make cluster-up`, `cluster-down`, ...).

A thin entry: the logic lives in `testkit.harness.localcluster`; `localcluster.py --help` lists the verbs.
"""

from testkit.harness.localcluster import main

if __name__ == "__main__":
    raise SystemExit(main())
