"""The reference data beside the repository (`../shared`): oc's real outputs (`oc-examples/`) and
the facts about upstream. Tests compare with it byte for byte; without it they would be skipped and
a run would still pass, so a test run without it is refused unless `CVO_PY_WITHOUT_SHARED=1` asks
for one (tests/conftest.py, and `make test` before anything else: `python -m cvo_py.testing.shared`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

SHARED = Path(__file__).resolve().parents[3] / "shared"
EXAMPLES = SHARED / "oc-examples"
WITHOUT_SHARED = "CVO_PY_WITHOUT_SHARED"


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
