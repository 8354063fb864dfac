"""The Go program the JSON and number tests of cvo_py.runtime.gotext compare with."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.oracles import goprogram

GO_JSON_PROGRAM = Path(__file__).parent / "gojson" / "main.go"


@pytest.fixture(scope="module")
def go_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return goprogram.build(GO_JSON_PROGRAM, tmp_path_factory.mktemp("gojson"))
