#!/usr/bin/env python3
"""The local single-node cluster (`make node-up`, `node-down`, `e2e`, ...).

A thin entry: the logic lives in `cvo_py.testing.localnode` and
`cvo_py.testing.nodecluster`; `localnode.py --help` lists the verbs.
"""

from cvo_py.testing.nodecluster import main

if __name__ == "__main__":
    raise SystemExit(main())
