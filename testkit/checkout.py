"""The checkout this toolkit works in: the repository's root, and the reference data beside it
(`../shared`, or `CVO_PY_SHARED`): oc's real outputs (`oc-examples/`) and the facts about upstream.
The toolkit is not installed with the product; it works only from a checkout, and this module is the
one place that knows where that checkout is. Tests compare with it byte for byte; without it they would be skipped and
a run would still pass, so a test run without it is refused unless `CVO_PY_WITHOUT_SHARED=1` asks
for one (tests/conftest.py, and `make test` before anything else: `python -m testkit.checkout`)."""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
INSTALL = REPO / "install"
SHARED = Path(os.environ.get("CVO_PY_SHARED") or REPO.parent / "shared").resolve()
EXAMPLES = SHARED / "oc-examples"
WITHOUT_SHARED = "CVO_PY_WITHOUT_SHARED"


def _product_packages() -> tuple[str, ...]:
    """The top-level packages the wheel and the image ship, as pyproject.toml names them."""
    find = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    return tuple(sorted(pattern.rstrip("*").rstrip(".") for pattern in find["include"]))


PRODUCT = _product_packages()


def missing() -> str | None:
    """Why a test run must not start (one line), or None: ../shared is there, or not wanted."""
    if EXAMPLES.is_dir() or os.environ.get(WITHOUT_SHARED) == "1":
        return None
    return (
        f"{EXAMPLES} not found: the comparisons with oc's real outputs would be skipped; put ../shared "
        f"beside the repository, or set {WITHOUT_SHARED}=1 to run without them"
    )


if __name__ == "__main__":
    problem = missing()
    if problem:
        print(f"error: {problem}", file=sys.stderr)
    sys.exit(1 if problem else 0)
