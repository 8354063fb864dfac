"""The repository's scripts under hack/ (the demo, the dashboard generator) as modules, for the
tests that check them: loaded by file location, since hack/ is not a package."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HACK = Path(__file__).resolve().parents[2] / "hack"


def load(name: str, module_name: str = "") -> ModuleType:
    """hack/<name>.py as a module (registered in sys.modules: dataclasses look their module up)."""
    spec = importlib.util.spec_from_file_location(module_name or name, HACK / f"{name}.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {HACK / f'{name}.py'}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
