"""Executed notebooks for the documentation site.

The notebooks are jupytext percent-format scripts in ``notebooks/`` without
outputs.  The site shows them executed at CI size (``MFSTEIN_NOTEBOOK_SIZE=ci``:
the same small runs the test suite checks), with their figures (matplotlib's
inline back end).  The test suite stores every notebook it executes
(:func:`store_executed`) under ``$MFSTEIN_EXECUTED_NOTEBOOKS`` (the tests point
it into pytest's cache), keyed by a digest of the notebook's source; the
documentation build (:func:`stage`) takes those copies and executes only the
notebooks that have none, so a test run followed by the build runs each
notebook once.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
#: matplotlib's inline back end: figures become PNG outputs, no display needed.
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
SIZE = "ci"


def executed_dir() -> Path:
    """Where executed notebooks are kept: ``$MFSTEIN_EXECUTED_NOTEBOOKS``, else
    ``docs/_build/executed``."""
    where = os.environ.get("MFSTEIN_EXECUTED_NOTEBOOKS")
    return Path(where) if where else ROOT / "docs" / "_build" / "executed"


def _key(name: str) -> str:
    text = (NOTEBOOKS / f"{name}.py").read_bytes()
    return hashlib.sha256(text + SIZE.encode()).hexdigest()[:16]


def store_executed(name: str, nb: Any) -> Path:
    """Keep the executed notebook ``name`` (a ``nbformat`` node) for the site."""
    import nbformat

    path = executed_dir() / f"{name}-{_key(name)}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    nbformat.write(nb, tmp)
    os.replace(tmp, path)
    return path


def execute(name: str) -> Path:
    """Execute ``notebooks/<name>.py`` at CI size in a fresh kernel and store it."""
    import jupytext
    from nbclient import NotebookClient

    nb = jupytext.read(NOTEBOOKS / f"{name}.py")
    old = os.environ.copy()
    os.environ.update(MFSTEIN_NOTEBOOK_SIZE=SIZE, MPLBACKEND=INLINE_BACKEND)
    os.environ.pop("MFSTEIN_NOTEBOOK_RESULT", None)
    try:
        with tempfile.TemporaryDirectory() as cwd:
            NotebookClient(
                nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": cwd}}
            ).execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    return store_executed(name, nb)


def stage(dest: Path) -> list[str]:
    """Copy every notebook, executed, to ``dest/<name>.ipynb``; return the names."""
    dest.mkdir(parents=True, exist_ok=True)
    names = sorted(p.stem for p in NOTEBOOKS.glob("*.py"))
    for old in dest.glob("*.ipynb"):
        if old.stem not in names:
            old.unlink()
    for name in names:
        done = executed_dir() / f"{name}-{_key(name)}.ipynb"
        if not done.is_file():
            done = execute(name)
        _with_size_note(done, dest / f"{name}.ipynb")
    return names


#: Shown under each notebook's title on the site.
SIZE_NOTE = (
    "*This page shows the notebook executed at CI size (`MFSTEIN_NOTEBOOK_SIZE=ci`: "
    "the short runs the test suite checks, so intervals are wider and grids coarser "
    "than in a full run).*"
)


def _with_size_note(src: Path, dest: Path) -> None:
    import nbformat

    nb = nbformat.read(src, as_version=4)
    nb.cells.insert(1, nbformat.v4.new_markdown_cell(SIZE_NOTE, id="mfstein-size-note"))
    nbformat.write(nb, dest)
