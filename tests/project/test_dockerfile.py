"""The Dockerfile's structure and the wheel its build stage makes (fast checks for `make test`;
`make image-test` builds the image and runs it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from testkit.checkout import PRODUCT, REPO


def instructions() -> list[list[str]]:
    """Instructions before the first FROM, then per stage; continuation lines joined."""
    text = (REPO / "Dockerfile").read_text().replace("\\\n", " ")
    result: list[list[str]] = [[]]
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.upper().startswith("FROM "):
            result.append([])
        result[-1].append(line)
    return result


def stages() -> list[list[str]]:
    return instructions()[1:]


def test_multi_stage_on_one_base_image_argument_defaulting_to_slim_python() -> None:
    preamble, *all_stages = instructions()
    assert preamble == ["ARG BASE_IMAGE=localhost/cvo-py-base:bookworm"]
    assert len(all_stages) >= 2
    assert all_stages[0][0] == "FROM ${BASE_IMAGE} AS build"
    assert all_stages[-1][0] == "FROM ${BASE_IMAGE}"


def test_final_stage_copies_only_the_venv_and_manifests() -> None:
    final = stages()[-1]
    copies = [line for line in final if line.startswith("COPY")]
    assert "COPY --from=build /opt/cvo-py /opt/cvo-py" in copies
    assert "COPY install /manifests" in copies
    assert len(copies) == 2
    text = " ".join(final)
    for tool in ("gcc", "build-essential", "apt-get install", "pip install", "go build"):
        assert tool not in text


def test_runs_as_numeric_non_root_that_works_with_an_arbitrary_uid_in_group_0() -> None:
    final = stages()[-1]
    users = [line.split()[1] for line in final if line.startswith("USER ")]
    assert users and users[-1].isdigit() and users[-1] != "0"
    text = " ".join(final)
    assert "--gid 0" in text and "chmod -R g=u" in text and "chown -R 1001:0" in text


def test_entrypoint_labels_and_port() -> None:
    final = stages()[-1]
    assert 'ENTRYPOINT ["cluster-version-operator"]' in final
    labels = " ".join(line for line in final if line.startswith("LABEL"))
    for label in (
        "org.opencontainers.image.title",
        "org.opencontainers.image.version",
        "org.opencontainers.image.licenses",
    ):
        assert label in labels
    assert "EXPOSE 9099" in final


def test_build_stage_wheel_contains_the_packages_and_console_script(tmp_path: Path) -> None:
    """Built as the build stage builds it: from what its COPY lines copy, in a directory of its own
    (a build in the worktree would leave `build/` and `*.egg-info` there)."""
    source = tmp_path / "src"
    source.mkdir()
    for line in stages()[0]:
        if line.startswith("COPY "):
            *names, _ = line.split()[1:]
            for name in names:
                if (REPO / name).is_dir():
                    shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
                else:
                    shutil.copy(REPO / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(tmp_path), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    wheel = next(tmp_path.glob("cvo_py-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for package in ("cvo_py/cli/main.py", "payload/__init__.py", "status/__init__.py", "updateservice/__init__.py"):
        assert package in names
    assert not any(name.startswith("tests/") for name in names)
    entry_points = next(name for name in names if name.endswith("entry_points.txt"))
    assert "cluster-version-operator = cvo_py.cli.main:entry" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_a_wheel_of_the_whole_checkout_ships_the_product_and_nothing_of_the_toolkit(tmp_path: Path) -> None:
    """`pip wheel .` on every tracked file (not only what the Dockerfile copies): the package list
    in pyproject.toml, not the build context, keeps the development toolkit and the tests out."""
    source = tmp_path / "src"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / name, source / name)
    assert (source / "testkit" / "checkout.py").is_file()  # the toolkit was there to be left out
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(tmp_path), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    names = zipfile.ZipFile(next(tmp_path.glob("cvo_py-*.whl"))).namelist()
    tops = sorted({name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")})
    assert tops == list(PRODUCT), tops
    assert not [name for name in names if "testkit" in name or "/testing/" in name], names


def test_the_build_stage_copies_every_package_the_project_ships() -> None:
    """A package left out of the image is a crash at start-up there and nowhere else."""
    import tomllib

    include = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = sorted({pattern.rstrip("*").rstrip(".") for pattern in include})
    copies = [line for line in stages()[0] if line.startswith("COPY")]
    for package in packages:
        assert f"COPY {package} ./{package}" in copies, f"the image does not get package {package}"

