"""The insight models build their schemas on first use, or all at once when a controller asks."""

from __future__ import annotations

import subprocess
import sys


def test_build_schemas_completes_every_insight_model() -> None:
    # a fresh interpreter: the models are deferred there until something builds them
    code = (
        "from pydantic import BaseModel\n"
        "from status.updatestatus.insights import models as m\n"
        "ms = [v for v in vars(m).values() if isinstance(v, type) and issubclass(v, BaseModel)"
        " and v.__module__ == m.__name__]\n"
        "assert ms and not any(x.__pydantic_complete__ for x in ms), 'built at import'\n"
        "m.build_schemas()\n"
        "assert all(x.__pydantic_complete__ for x in ms), [x for x in ms if not x.__pydantic_complete__]\n"
        "print(len(ms))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 10
