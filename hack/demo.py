#!/usr/bin/env python3
"""A whole OpenShift update on a real local kube-apiserver, seen as a cluster admin sees it (`make demo`).

A thin entry: the story lives in `cvo_py.testing.demo`; `demo.py --help` lists the options.
"""

from cvo_py.testing.demo import main

if __name__ == "__main__":
    raise SystemExit(main())
