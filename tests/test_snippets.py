"""Every Python example of README.md and docs/*.md prints what the text shows.

The examples are ``pycon`` blocks (docs/snippets.py): each runs on its own, in a
fresh namespace, under :mod:`doctest`; a line it prints that differs from the
one written below it fails the test.  ``python docs/snippets.py FILE`` rewrites
the outputs after an example changes.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("snippets", ROOT / "docs" / "snippets.py")
assert _spec is not None and _spec.loader is not None
snippets = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(snippets)

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CASES = [
    pytest.param(body, f"{page.name}:{line}", id=f"{page.name}:{line}")
    for page in PAGES
    for line, body in snippets.blocks(page.read_text())
]


def test_python_examples_are_checked_blocks() -> None:
    """No example escapes the check: Python is written as ``pycon``, never ``python``."""
    for page in PAGES:
        if page.name == "internal-api.md":  # signatures of the contracts, not examples
            continue
        assert not re.search(r"```python\n", page.read_text()), page.name
    assert sum(name.startswith("README") for _, name in (c.values for c in CASES)) >= 5


@pytest.mark.parametrize(("body", "name"), CASES)
def test_example_prints_what_the_text_shows(body: str, name: str, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)  # examples name files relative to the repository's root
    assert ">>>" in body
    failures = snippets.check(body, name)
    assert not failures, failures[0]


def test_float64_tails_are_elided_and_high_precision_kept() -> None:
    out = snippets.shorten_floats("2.441082924819175 [0.008464634065 3.5] 1.05380975362300350609")
    assert out == "2.441082924... [0.008464634065 3.5] 1.05380975362300350609"
    assert snippets.shorten_floats("-1.5377814929642384e-13") == "-1.537781492...e-13"
