#!/usr/bin/env python3
"""Build the cvo-py container image with buildah (`make image`).

A thin entry: the logic lives in `cvo_py.testing.image`; `image.py --help` lists the verbs.
"""

from cvo_py.testing.image import main

if __name__ == "__main__":
    raise SystemExit(main())
