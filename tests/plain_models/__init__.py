"""Models written the plain way, as the field writes them: states, parameters and
transitions only (no ``ModelInfo``: no reference point, no parameter ranges, no
declared state space).  ``tests/test_plain_models.py`` runs each through every task.

Each module defines one factory of the same name as the module;
:data:`CASES` gives, per model, parameter values and a start that fixes its
conserved sums.
"""

from __future__ import annotations

#: model -> (parameter values, start): what every task is run with.
CASES: dict[str, tuple[dict[str, str], str]] = {
    "sis": ({}, "0.5"),
    "mmc": ({"lam": "1.5"}, "0.5"),
    "tandem": ({"lam": "0.5"}, "0.3,0.3"),
    "cache": ({}, "0.2,0.2"),
    "sirs": ({"beta": "3", "gamma": "1", "nu": "0.5"}, "0.9,0.1,0"),
    "two_class": ({"lam": "1.2", "mu1": "1", "mu2": "0.5"}, "0.1,0.1"),
    "thirty": ({"lam": "0.8"}, ",".join(["0.3"] * 30)),
    "sympy_names": ({"I": "1", "E": "0.5", "pi": "0.25"}, "0.5"),
}
