"""Every example in a docstring of the library runs (issue 31).

The examples of README.md and docs/*.md run in ``tests/test_snippets.py``; this
file runs those of the docstrings.  Every module of ``derive``, ``numeric``,
``sim`` and ``mfstein`` whose source holds ``>>>`` is imported and its examples
are run by :mod:`doctest` (each docstring in its module's namespace, as
``python -m doctest`` would); an example that prints something else than the
text shows fails.  An example that needs a long run says ``# doctest: +SKIP``
where it stands; a module whose examples need a long compile in a fresh process
is in the slow tier (:data:`SLOW`, with its reason).
"""

from __future__ import annotations

import doctest
import importlib

import pytest
from test_layers import LIBRARY, ROOT, module_name

#: Modules whose examples take long in a fresh process, with the reason.
SLOW: dict[str, str] = {
    "numeric.exact": "solve_exact compiles the supermarket's lattice (about 25 s cold)",
}


def modules_with_examples() -> list[str]:
    files = sorted(p for top in LIBRARY for p in (ROOT / top).rglob("*.py"))
    return [
        module_name(f)
        for f in files
        if "__pycache__" not in f.parts and ">>>" in f.read_text()
    ]


def run_examples(name: str) -> doctest.TestResults:
    """Run the docstring examples of module ``name``; the failures are reported
    in the runner's own words on the captured output."""
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in finder.find(module, name):
        runner.run(test)
    return runner.summarize(verbose=False)


CASES = [
    pytest.param(name, id=name, marks=[pytest.mark.slow] if name in SLOW else [])
    for name in modules_with_examples()
]


def test_the_collection_sees_the_examples_of_the_library() -> None:
    names = modules_with_examples()
    assert {"derive", "numeric.exact", "mfstein.ground.fast_paths"} <= set(names)
    assert set(SLOW) <= set(names)


def test_a_failing_example_fails(tmp_path, monkeypatch) -> None:
    (tmp_path / "c31_doctest_probe.py").write_text(
        '"""\n>>> 1 + 1\n3\n>>> print("a long line")  # doctest: +ELLIPSIS\na long ...\n"""\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    result = run_examples("c31_doctest_probe")
    assert (result.failed, result.attempted) == (1, 2)


@pytest.mark.parametrize("name", CASES)
def test_docstring_examples_print_what_they_show(name: str, capsys) -> None:
    result = run_examples(name)
    report = capsys.readouterr().out
    assert result.failed == 0, report
