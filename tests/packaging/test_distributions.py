"""The sdist and the wheel carry what users and packagers need; one version."""

from __future__ import annotations

import email
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
from deadlines import deadline

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("mfstein", "derive", "numeric", "sim")
SKIP_PARTS = {"__pycache__", ".pytest_cache", "_build", ".ipynb_checkpoints"}


GENERATED = ("docs/api/", "docs/notebooks/")  # written by the documentation build


def _tree_files(folder: str) -> set[str]:
    return {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / folder).rglob("*")
        if p.is_file()
        and not SKIP_PARTS & set(p.parts)
        and p.suffix not in (".pyc", ".nbi", ".nbc")
        and not p.relative_to(ROOT).as_posix().startswith(GENERATED)
    }


def test_sdist_carries_tests_docs_examples_notebooks(dists) -> None:
    with tarfile.open(dists["sdist"]) as tar:
        top = tar.getnames()[0].split("/")[0]
        names = {n.removeprefix(top + "/") for n in tar.getnames()}
        example = tar.extractfile(f"{top}/examples/birth_death.py")
        assert example is not None and b"def birth_death" in example.read()
    for folder in ("tests", "docs", "examples", "notebooks", "benchmarks"):
        missing = _tree_files(folder) - names
        assert not missing, f"the sdist lacks {sorted(missing)[:5]}"
    for name in (
        "LICENSE",
        "CITATION.cff",
        "CHANGELOG.md",
        "README.md",
        "pyproject.toml",
        "tests/conftest.py",
        ".ci/run",
    ):
        assert name in names, name
    assert not any("__pycache__" in n or n.endswith((".nbi", ".nbc")) for n in names)


def test_wheel_ships_packages_types_examples_and_licence(dists) -> None:
    with zipfile.ZipFile(dists["wheel"]) as whl:
        names = set(whl.namelist())
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(whl.read(meta_name))
    for pkg in PACKAGES:
        assert f"{pkg}/py.typed" in names, pkg
    assert "derive/models/examples/birth_death.py" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not any(n.startswith(("tests/", "docs/", "notebooks/")) for n in names)
    assert meta["License-Expression"] == "MIT"
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert meta["Version"] == version


def test_every_package_reports_one_version() -> None:
    code = (
        "import derive, numeric, sim, mfstein, importlib.metadata as m; "
        "print(derive.__version__, numeric.__version__, sim.__version__, mfstein.__version__, "
        "m.version('mfstein'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=deadline(60),
    ).stdout.split()
    assert len(set(out)) == 1 and out[0] != "0+unknown", out
    assert out[0] == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_licence_and_citation_agree_with_the_metadata() -> None:
    yaml = pytest.importorskip("yaml")
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert cff["license"] == project["license"] == "MIT"
    assert cff["version"] == project["version"]
    titles = {" ".join(r["title"].split()) for r in cff["references"]}
    design = " ".join((ROOT / "docs" / "design.md").read_text().split())
    for title in titles:  # the papers the design document cites, and no other
        assert title in design.replace('"', ""), title
    assert all(r["authors"] for r in cff["references"])


def test_the_shipped_example_loads_by_module_name(tmp_path, monkeypatch) -> None:
    from derive.models import examples, load_model

    monkeypatch.chdir(tmp_path)  # no examples/ folder here
    m = load_model(examples.EXAMPLES["birth_death"], cap=2)
    assert m.n == 1 and m.name == "birth-death"
    assert (
        examples.path("birth_death").read_text() == (ROOT / "examples/birth_death.py").read_text()
    )
