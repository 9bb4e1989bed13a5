"""Sphinx configuration of the mfstein documentation site.

Build it (offline; warnings are errors) with::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The user guide is the Markdown of README.md and docs/ (MyST), the API
reference is generated from the packages' export lists (``docs/api_pages.py``)
and docstrings (autodoc, autosummary, napoleon for the NumPy docstring style),
and the notebooks are rendered executed with their figures (MyST-NB without
re-execution): the full-size runs stored in ``docs/notebooks_full/`` (made by
``python docs/run_full_notebooks.py``), or the test suite's CI-size runs where a
notebook's code has changed since (``docs/notebooks_build.py``).  MathJax is served
from the build itself (``sphinx-mathjax-offline``), so pages render without
network access.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import api_pages  # noqa: E402
import notebooks_build  # noqa: E402

import mfstein  # noqa: E402

project = "mfstein"
author = "the mfstein developers"
copyright = "2026, the mfstein developers"
release = version = mfstein.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",
]

root_doc = "index"
exclude_patterns = ["_build", "internal-api.md", "notebooks_full", "**.ipynb_checkpoints"]
templates_path: list[str] = []
html_theme = "alabaster"
html_title = "mfstein"
# A wider body than alabaster's 940 px page (a 1280 px window holds 1240 px):
# CLI help (100 columns, docs/make_cli_reference.py) and the notebooks' printed
# tables fit without clipping; tests/test_docs.py measures every <pre> in Chromium.
html_theme_options = {
    "page_width": "1240px",
    "sidebar_width": "230px",
    "body_max_width": "none",
    "code_font_size": "0.8em",
}
html_static_path = ["_static"]
html_css_files = ["mfstein.css"]

# MyST: $...$ and $$...$$ math, anchors for headings (links to sections)
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
# the notebooks are staged executed (notebooks_build): never execute here
nb_execution_mode = "off"
nb_output_stderr = "remove"
# a cell's printed lines in one box, not one box per flush of the kernel's stdout
nb_merge_streams = True

autosummary_generate = True
# no default members: each directive says its own (api_pages: ``:no-members:`` on a
# package, ``:members:`` on a class); Sphinx 9 lets a default ``"members": False``
# override a class's explicit ``:members:``, which hid every field and method
autodoc_default_options: dict[str, object] = {}
autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_numpy_docstring = True
napoleon_google_docstring = False

suppress_warnings = ["myst.header"]


def _generate(app: object, config: object) -> None:
    api_pages.write(HERE / "api")
    notebooks_build.stage(HERE / "notebooks")


def setup(app: object) -> dict[str, bool]:
    app.connect("config-inited", _generate)  # type: ignore[attr-defined]
    return {"parallel_read_safe": True}
