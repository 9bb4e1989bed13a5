"""Start-up: ``mfstein --help`` and every ``mfstein COMMAND --help`` import no
SymPy, numba or SciPy (the package ``__init__``s are lazy, see mfstein.ground.lazy)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from deadlines import deadline

HEAVY = ("sympy", "numba", "scipy")

PROBE = """
import sys
import mfstein.cli
parser = mfstein.cli.build_parser()
argv = sys.argv[1:]
try:
    mfstein.cli.main(argv)
except SystemExit:
    pass
print("LOADED:" + ",".join(m for m in {heavy!r} if m in sys.modules))
"""


def _commands() -> list[str]:
    import argparse

    import mfstein.cli

    parser = mfstein.cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(sub.choices)


@pytest.mark.parametrize("argv", [["--help"]] + [[c, "--help"] for c in _commands()])
def test_help_imports_no_numeric_stack(argv: list[str]) -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *argv],
        capture_output=True,
        text=True,
        timeout=deadline(60),
        check=True,
    )
    loaded = out.stdout.strip().splitlines()[-1].removeprefix("LOADED:")
    assert loaded == "", f"mfstein {' '.join(argv)} imported {loaded}"


def test_lazy_exports_resolve() -> None:
    import derive
    import derive.kernels  # binds the submodule attribute; the function must win
    import numeric

    assert callable(numeric.equilibrium)
    assert callable(derive.kernels)
    assert set(numeric.__all__) <= set(dir(numeric))
    for name in derive.__all__:
        assert getattr(derive, name) is not None
