#!/usr/bin/env python3
"""Build the cvo-py container image with buildah (`make image`).

A thin entry: the logic lives in `testkit.harness.image`; `image.py --help` lists the verbs.
"""

from testkit.harness.image import main

if __name__ == "__main__":
    raise SystemExit(main())
