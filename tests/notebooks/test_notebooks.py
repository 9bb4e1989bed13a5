"""Execute every notebook top to bottom in a fresh kernel, at CI size.

Notebooks live in ``notebooks/`` as jupytext percent-format ``.py`` files (reviewable
diffs, no stored outputs).  Each reads ``MFSTEIN_NOTEBOOK_SIZE`` (``ci`` or
``full``) in its parameter cell, and its last cell prints one JSON line,
``MFSTEIN_RESULT {...}``, holding numbers it computed; the tests below check those
numbers against independent computations.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import jupytext
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def run_notebook(name: str, tmp_path: Path) -> dict:
    """Execute ``notebooks/<name>.py`` and return the JSON it reports."""
    nb = jupytext.read(NOTEBOOKS / f"{name}.py")
    env = dict(os.environ, MFSTEIN_NOTEBOOK_SIZE="ci", MPLBACKEND="Agg")
    old = os.environ.copy()
    os.environ.update(env)
    try:
        client = NotebookClient(
            nb,
            timeout=600,
            kernel_name="python3",
            resources={"metadata": {"path": str(tmp_path)}},
        )
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    for cell in reversed(nb.cells):
        for out in cell.get("outputs", []):
            text = out.get("text", "")
            for line in text.splitlines():
                if line.startswith("MFSTEIN_RESULT "):
                    return json.loads(line[len("MFSTEIN_RESULT "):])
    raise AssertionError(f"notebook {name} printed no MFSTEIN_RESULT line")


def test_python_kernel_is_this_interpreter() -> None:
    # nbclient's "python3" kernel must be the venv's interpreter, or the notebooks
    # would import a different mfstein.
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    assert spec.argv[0] in (sys.executable, "python", "python3") or Path(
        spec.argv[0]
    ).resolve() == Path(sys.executable).resolve()


def test_notebooks_exist() -> None:
    names = sorted(p.stem for p in NOTEBOOKS.glob("*.py"))
    assert names == sorted(EXPECTED), names


EXPECTED = ["01_tables", "02_closed_forms", "03_lemmas", "04_heavy_traffic"]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    return {}


def _result(results: dict, name: str, tmp_path: Path) -> dict:
    if name not in results:
        results[name] = run_notebook(name, tmp_path)
    return results[name]
