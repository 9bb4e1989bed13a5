"""Executed notebooks for the documentation site.

The notebooks are jupytext percent-format scripts in ``notebooks/`` without
outputs; each reads ``MFSTEIN_NOTEBOOK_SIZE`` (``ci`` or ``full``).  Two kinds of
executed copies exist:

- **full size**, stored with the documentation in ``docs/notebooks_full/`` and
  committed: ``python docs/run_full_notebooks.py [NAME ...]`` executes them
  (:func:`execute_full`).  Each records a digest of the notebook's code cells
  (:func:`code_digest`), so a copy stays valid while only prose or cell tags
  change, and is stale once any code changes;
- **CI size**, the short runs the test suite checks: the tests store every
  notebook they execute (:func:`store_executed`) under
  ``$MFSTEIN_EXECUTED_NOTEBOOKS`` (pytest's cache), keyed by a digest of the
  whole source, so that a test run followed by the build runs each notebook once.

The site (:func:`stage`) renders the full-size copy when it is current, with the
notebook's present markdown and tags (:func:`merged`), and otherwise the CI-size
copy (executing it when none is stored).  A note under each title says which.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
FULL_DIR = ROOT / "docs" / "notebooks_full"
#: matplotlib's inline back end: figures become PNG outputs, no display needed.
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
SIZE = "ci"
#: Seconds one cell of a full-size run may take.
FULL_CELL_TIMEOUT = 3600


def names() -> list[str]:
    """The notebooks, by file stem, sorted."""
    return sorted(p.stem for p in NOTEBOOKS.glob("*.py"))


def read_source(name: str) -> Any:
    """``notebooks/<name>.py`` as an ``nbformat`` node without outputs."""
    import jupytext

    return jupytext.read(NOTEBOOKS / f"{name}.py")


def code_digest(nb: Any) -> str:
    """A digest of the code cells of ``nb``, in order (not markdown, not metadata)."""
    sources = [c.source.strip() for c in nb.cells if c.cell_type == "code"]
    return hashlib.sha256("\n# %% --\n".join(sources).encode()).hexdigest()[:16]


@contextlib.contextmanager
def _environment(**values: str) -> Iterator[None]:
    """Set environment variables for the kernel (it inherits them); drop the result file."""
    old = os.environ.copy()
    os.environ.update(values)
    if "MFSTEIN_NOTEBOOK_RESULT" not in values:
        os.environ.pop("MFSTEIN_NOTEBOOK_RESULT", None)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(old)


def run(nb: Any, size: str, cwd: Path, timeout: int = 900, **env: str) -> Any:
    """Execute ``nb`` in place at ``size`` in a fresh kernel working in ``cwd``.

    The kernel talks to the client over IPC sockets in a private temporary
    directory (over TCP, ipykernel logs a warning about unencrypted traffic).
    ``env`` adds environment variables (e.g. ``MFSTEIN_NOTEBOOK_RESULT``).
    """
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    with (
        tempfile.TemporaryDirectory(prefix="mfstein-kernel-") as sockets,
        _environment(MFSTEIN_NOTEBOOK_SIZE=size, MPLBACKEND=INLINE_BACKEND, **env),
    ):
        km = KernelManager(kernel_name="python3", transport="ipc", ip=str(Path(sockets) / "k"))
        try:
            NotebookClient(
                nb,
                km=km,
                timeout=timeout,
                record_timing=False,
                resources={"metadata": {"path": str(cwd)}},
            ).execute()
        finally:  # nbclient shuts down only the kernels it creates itself
            if km.has_kernel:
                km.shutdown_kernel(now=True)
    return nb


# -- CI size: the test suite's runs ------------------------------------------------
def executed_dir() -> Path:
    """Where CI-size executed notebooks are kept: ``$MFSTEIN_EXECUTED_NOTEBOOKS``,
    else ``docs/_build/executed``."""
    where = os.environ.get("MFSTEIN_EXECUTED_NOTEBOOKS")
    return Path(where) if where else ROOT / "docs" / "_build" / "executed"


def _key(name: str) -> str:
    text = (NOTEBOOKS / f"{name}.py").read_bytes()
    return hashlib.sha256(text + SIZE.encode()).hexdigest()[:16]


def store_executed(name: str, nb: Any) -> Path:
    """Keep the CI-size executed notebook ``name`` (a ``nbformat`` node) for the site."""
    import nbformat

    path = executed_dir() / f"{name}-{_key(name)}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    nbformat.write(nb, tmp)
    os.replace(tmp, path)
    return path


def execute(name: str) -> Path:
    """Execute ``notebooks/<name>.py`` at CI size in a fresh kernel and store it."""
    nb = read_source(name)
    with tempfile.TemporaryDirectory() as cwd:
        run(nb, SIZE, Path(cwd))
    return store_executed(name, nb)


# -- full size: stored with the documentation -------------------------------------
def full_path(name: str) -> Path:
    """The stored full-size run of ``name``."""
    return FULL_DIR / f"{name}.ipynb"


def execute_full(name: str) -> Path:
    """Execute ``notebooks/<name>.py`` at full size and store it in ``docs/notebooks_full``.

    The copy's metadata (``mfstein``) records the code digest, the wall time and
    the date; cells keep no timing metadata, so a re-run changes only outputs.
    """
    import nbformat

    import mfstein
    from mfstein.ground.io import atomic_write

    nb = read_source(name)
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as cwd:
        run(nb, "full", Path(cwd), timeout=FULL_CELL_TIMEOUT)
    nb.metadata["mfstein"] = {
        "size": "full",
        "code_digest": code_digest(nb),
        "seconds": round(time.monotonic() - start),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "version": mfstein.__version__,
    }
    return atomic_write(full_path(name), nbformat.writes(nb) + "\n")


def current_full(name: str) -> Any | None:
    """The stored full-size run of ``name`` if its code matches the notebook's, else None."""
    import nbformat

    path = full_path(name)
    if not path.is_file():
        return None
    stored = nbformat.read(path, as_version=4)
    digest = stored.metadata.get("mfstein", {}).get("code_digest")
    return stored if digest == code_digest(read_source(name)) else None


def merged(source: Any, stored: Any) -> Any:
    """``source``'s cells (prose, tags) with the outputs of ``stored``'s code cells.

    The two must have the same code (:func:`code_digest`); the result carries
    ``stored``'s notebook metadata (kernel, language, run record).
    """
    import copy

    if code_digest(source) != code_digest(stored):
        raise ValueError("the stored run's code differs from the notebook's")
    nb = copy.deepcopy(source)
    ran = iter(c for c in stored.cells if c.cell_type == "code")
    for cell in nb.cells:
        if cell.cell_type == "code":
            done = next(ran)
            cell.outputs = copy.deepcopy(done.outputs)
            cell.execution_count = done.execution_count
    nb.metadata = copy.deepcopy(stored.metadata)
    return nb


#: Shown under each notebook's title on the site, for a CI-size copy.
SIZE_NOTE = (
    "*This page shows the notebook executed at CI size (`MFSTEIN_NOTEBOOK_SIZE=ci`: "
    "the short runs the test suite checks, so intervals are wider and grids coarser "
    "than in a full run).*"
)
#: The same for a full-size copy; filled in with its run record.
FULL_NOTE = (
    "*This page shows the notebook executed at full size (`MFSTEIN_NOTEBOOK_SIZE=full`) "
    "on {date} with mfstein {version}, stored in "
    "`docs/notebooks_full/` by `python docs/run_full_notebooks.py`.*"
)


def stage(dest: Path) -> list[str]:
    """Write every notebook, executed, to ``dest/<name>.ipynb``; return the names."""
    import nbformat

    dest.mkdir(parents=True, exist_ok=True)
    every = names()
    for old in dest.glob("*.ipynb"):
        if old.stem not in every:
            old.unlink()
    for name in every:
        stored = current_full(name)
        if stored is not None:
            nb = merged(read_source(name), stored)
            record = nb.metadata["mfstein"]
            note = FULL_NOTE.format(date=record["date"], version=record["version"])
        else:
            done = executed_dir() / f"{name}-{_key(name)}.ipynb"
            if not done.is_file():
                done = execute(name)
            nb, note = nbformat.read(done, as_version=4), SIZE_NOTE
        nb.cells.insert(1, nbformat.v4.new_markdown_cell(note, id="mfstein-size-note"))
        nbformat.write(nb, dest / f"{name}.ipynb")
    return every
