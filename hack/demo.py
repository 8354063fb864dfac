#!/usr/bin/env python3
"""A whole OpenShift update on a real local kube-apiserver, seen as a cluster admin sees it (`make demo`).

A thin entry: the story lives in `testkit.demo.demo`; `demo.py --help` lists the options.
"""

from testkit.demo.demo import main

if __name__ == "__main__":
    raise SystemExit(main())
