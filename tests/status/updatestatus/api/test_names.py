"""The update status API's names (namespace, ConfigMap, Lease) are typed once, in api/names.py:
the controller, `upgrade-status`, the command lines, the toolkit, the demo and the benchmarks import them."""

from __future__ import annotations

import pytest

from status.updatestatus.api import names
from testkit.checkout import PRODUCT, REPO

HOME = REPO / "status/updatestatus/api/names.py"
CODE = (*PRODUCT, "hack", "bench")


@pytest.mark.parametrize("name", [names.NAMESPACE, names.CONFIGMAP, names.LEASE])
def test_each_name_is_typed_once(name: str) -> None:
    typed = [
        str(path.relative_to(REPO))
        for top in CODE
        for path in sorted((REPO / top).rglob("*.py"))
        if path != HOME and (f'"{name}"' in path.read_text() or f"'{name}'" in path.read_text())
    ]
    assert typed == [], f"{name} typed again in {typed}: import it from status.updatestatus.api.names"
    assert f'"{name}"' in HOME.read_text()
