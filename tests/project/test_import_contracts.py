"""Each import-linter contract of pyproject.toml breaks when its rule is violated.

The project's import graph is built once (as `lint-imports` builds it); each case adds one planted
import to a copy of it and checks the contracts with import-linter's own engine. A contract no
case breaks, or a planted import between modules that do not exist, fails the test: a contract
that cannot fail checks nothing.
"""

from __future__ import annotations

import copy
import os
import tomllib
from collections.abc import Iterator
from typing import Any

import pytest
from importlinter.application import use_cases
from importlinter.application.app_config import settings
from importlinter.configuration import configure
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.independence import IndependenceContract
from importlinter.contracts.layers import LayersContract
from importlinter.domain.contract import registry

from testkit.checkout import REPO

PYPROJECT = REPO / "pyproject.toml"
US = "status.updatestatus"

# (a word of the contract's name, importer, imported): one import that contract forbids.
PLANTS = [
    ("Layers: the development toolkit", "cvo_py.runtime.kube", "cvo_py.cli.main"),
    ("Layers: the development toolkit", "payload.classify", f"{US}.insights.models"),
    ("What ships imports nothing of the development toolkit", "updateservice.graph", "testkit.checkout"),
    ("What ships imports nothing of the development toolkit", f"{US}.client.live", "testkit.harness.wait"),
    ("imports neither payload, nor the sync worker", f"{US}.controller.sync", "payload.classify"),
    ("imports neither payload, nor the sync worker", f"{US}.insights.nodes", "syncworker.modes"),
    ("Layers: the development toolkit", "syncworker.modes", "status.clusterversion.history"),
    ("Layers: the development toolkit", "payload.release", "syncworker.modes"),
    ("The two status subsystems are independent", "status.clusterversion.desired", f"{US}.api.names"),
    ("Pure decision modules", f"{US}.insights.nodes", "kubernetes"),
    ("Pure decision modules", f"{US}.api.configmap", "cvo_py.runtime.kube"),
    ("Pure decision modules", "status.clusterversion.conditions", "cvo_py.runtime.clientconfig"),
    ("The runtime (cvo_py.runtime)", "cvo_py.runtime.gotext.times", f"{US}.insights.models"),
    ("The runtime (cvo_py.runtime)", "cvo_py.runtime.loop", "cvo_py.compose.start"),
    ("The runtime (cvo_py.runtime)", "cvo_py.runtime.errors", "payload.release"),
    ("by audience", f"{US}.insights.compute", f"{US}.api.configmap"),
    ("by audience", f"{US}.insights.models", f"{US}.controller.sync"),
    ("by audience", f"{US}.api.names", f"{US}.client.live"),
    ("by audience", f"{US}.controller.sync", f"{US}.client.render.text"),
    ("by audience", f"{US}.client.live", f"{US}.controller.patches"),
    ("imports only the insight models", f"{US}.api.configmap", f"{US}.insights.nodes"),
    ("imports only the insight models", f"{US}.api.metadata", f"{US}.insights.objects"),
    ("JSON readers load no PyYAML", f"{US}.api.configmap", "yaml"),
    ("import no pydantic", f"{US}.insights.nodes", f"{US}.insights.models"),
    ("import no pydantic", f"{US}.insights.health", "pydantic"),
    ("import no pydantic", f"{US}.client.dump.layouts", f"{US}.insights.models"),
    ("upgrade-status' fast path", f"{US}.client.live", "pydantic"),
    ("upgrade-status' fast path", "cvo_py.compose.upgrade_status", "logging"),
    ("upgrade-status' fast path", f"{US}.client.render.text", "yaml"),
    ("upgrade-status' fast path", "cvo_py.runtime.kube", "urllib3"),
]


class PlantingGraphBuilder:
    """import-linter's graph builder, building once and handing out copies with one import added."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.base: Any = None
        self.plant: tuple[str, str] | None = None

    def build(self, **kwargs: Any) -> Any:
        if self.base is None:
            self.base = self.real.build(**{**kwargs, "cache_dir": None})
        graph = copy.deepcopy(self.base)
        if self.plant is not None:
            importer, imported = self.plant
            graph.add_import(importer=importer, imported=imported, line_number=1, line_contents=f"import {imported}")
        return graph


@pytest.fixture(scope="module")
def builder() -> Iterator[PlantingGraphBuilder]:
    configure()
    for name, contract_class in (
        ("forbidden", ForbiddenContract),
        ("independence", IndependenceContract),
        ("layers", LayersContract),
    ):
        registry.register(contract_class, name)
    planting = PlantingGraphBuilder(settings.GRAPH_BUILDER)
    settings.configure(GRAPH_BUILDER=planting)
    cwd = os.getcwd()
    os.chdir(REPO)  # the root packages are found from the repository, as lint-imports finds them
    try:
        yield planting
    finally:
        os.chdir(cwd)
        configure()


def check(builder: PlantingGraphBuilder, plant: tuple[str, str] | None) -> dict[str, bool]:
    builder.plant = plant
    report = use_cases.create_report(use_cases.read_user_options(str(PYPROJECT)), cache_dir=None)
    return {contract.name: result.kept for contract, result in report.get_contracts_and_checks()}


def contract_names() -> list[str]:
    return [c["name"] for c in tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]]


def test_the_code_keeps_every_contract(builder: PlantingGraphBuilder) -> None:
    kept = check(builder, None)
    assert set(kept) == set(contract_names())
    assert all(kept.values()), [name for name, ok in kept.items() if not ok]


@pytest.mark.parametrize(("word", "importer", "imported"), PLANTS, ids=[f"{p[1]}->{p[2]}" for p in PLANTS])
def test_a_planted_import_breaks_its_contract(
    builder: PlantingGraphBuilder, word: str, importer: str, imported: str
) -> None:
    check(builder, None)  # builds the base graph
    modules = builder.base.modules
    assert importer in modules, f"no module {importer}: the case plants nothing"
    assert imported in modules, f"no module {imported}: the case plants nothing"
    assert imported not in builder.base.find_modules_directly_imported_by(importer), "already imported"
    (name,) = [n for n in contract_names() if word in n]
    assert check(builder, (importer, imported))[name] is False


def test_every_contract_has_a_planted_violation() -> None:
    names = contract_names()
    covered = {n for n in names for word, _, _ in PLANTS if word in n}
    assert covered == set(names), sorted(set(names) - covered)


def contract(word: str) -> dict[str, Any]:
    contracts = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    (found,) = [c for c in contracts if word in c["name"]]
    return dict(found)


def insights_modules_but(*allowed: str) -> set[str]:
    insights = REPO / "status/updatestatus/insights"
    return {f"{US}.insights.{p.stem}" for p in insights.glob("*.py") if p.stem not in ("__init__", *allowed)}


def test_the_api_may_import_only_the_models_of_the_insights() -> None:
    """The forbidden list of that contract names every insights module but the models, their
    vocabulary, the shapes they derive from (kinds) and the plain classes generated from them, so a
    new insights module is covered too."""
    forbidden = contract("imports only the insight models")["forbidden_modules"]
    assert set(forbidden) == insights_modules_but("models", "vocabulary", "kinds", "plain")


def test_every_insights_module_but_the_models_is_kept_from_pydantic() -> None:
    """The computation builds the plain classes: every insights module but the models is a source
    of the contract that forbids pydantic, so a new insights module is covered too."""
    sources = contract("import no pydantic")["source_modules"]
    assert {s for s in sources if s.startswith(f"{US}.insights.")} == insights_modules_but("models")


def test_the_fast_path_contract_covers_what_a_live_run_loads() -> None:
    """The contract's sources are the modules a live run loads, as the import-list test lists them
    (`tests/status/updatestatus/client/test_imports.py`): a module added to the path is held to
    the contract too."""
    from tests.status.updatestatus.client.test_imports import PROJECT_MODULES

    assert sorted(contract("upgrade-status' fast path")["source_modules"]) == sorted(PROJECT_MODULES)
