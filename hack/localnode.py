#!/usr/bin/env python3
"""The local single-node cluster (`make node-up`, `node-down`, `e2e`, ...).

A thin entry: the logic lives in `testkit.harness.localnode` and
`testkit.harness.nodecluster`; `localnode.py --help` lists the verbs.
"""

from testkit.harness.nodecluster import main

if __name__ == "__main__":
    raise SystemExit(main())
