"""The paper's short form for the supermarket family: ``numeric.bound(lam, b, d)``.

``bound(lam, b, d)`` is :func:`numeric.solve` for the power-of-``d`` supermarket
model with buffer ``b``, run by the family's own solver
(:func:`mfstein.families.supermarket.solver.solve_supermarket`), which also takes ``b = "auto"`` and
``b = "inf"``; :func:`supermarket_model` is the model and parameter mapping behind
it (used by :mod:`mfstein.families.supermarket.table`).  They live beside the family, so that
the general
entry :mod:`numeric.meanfield.entry` names no family.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mfstein.ground.errors import ParameterError, check_bool
from numeric.meanfield.solution import MeanFieldSolution


def supermarket_model(
    b: int, d: int = 2, *, mu: Any = 1, replacement: bool = True, N: Any = None, lam: Any = None
) -> tuple[Any, dict[str, Any]]:
    """The model and parameter mapping behind ``solve(lam, b, d, mu=, replacement=, N=)``."""
    from derive.models.supermarket import supermarket

    params = _supermarket_params(mu, replacement, N, lam)
    model = supermarket(b, d, mu="mu" if "mu" in params else 1, replacement=replacement)
    return model, params


def _supermarket_params(mu: Any, replacement: bool, N: Any, lam: Any) -> dict[str, Any]:
    """The parameter values of the supermarket model of :func:`supermarket_model`."""
    params: dict[str, Any] = {"lam": lam}
    if not (isinstance(mu, int | str) and str(mu).strip() == "1"):
        params["mu"] = mu
    if not replacement:
        params["N"] = N
    return params


def bound(
    lam: Any,
    b: int | str = "auto",
    d: int = 2,
    *,
    dps: int = 30,
    order: int = 1,
    M: Any = None,
    mu: Any = 1,
    replacement: bool = True,
    N: Any = None,
    truncate: bool = True,
) -> MeanFieldSolution:
    """The paper's short form: Theorem 1's constant of the supermarket model.

    ``bound(lam, b, d)`` is :func:`numeric.solve` for the power-of-``d`` supermarket
    model with buffer ``b`` ("Beyond Scaling: Calculable Error Bound of the
    Power-of-Two-Choices Mean-Field Model in Heavy-Traffic", Theorem 1 with the
    sign of the Kronecker form corrected: ``E||S - s*||^2 ~ c/N``), by the
    family's own solver
    (:func:`mfstein.families.supermarket.solver.solve_supermarket`); ``b`` may also be
    ``"auto"`` (the smallest buffer at which ``c`` stops changing, reported in ``.b``)
    or ``"inf"``.  ``mu``, ``replacement`` and ``N`` as in
    :func:`~mfstein.families.supermarket.solver.solve_supermarket`; ``order=2`` adds the
    1/N^2 terms; ``truncate`` cuts negligible tail levels.
    """
    from mfstein.families.supermarket.solver import auto_buffer, check_b, solve_supermarket
    from numeric.meanfield.truncation import add_second_order

    if order not in (1, 2):
        raise ParameterError(f"order must be 1 or 2, got {order!r}.")
    replacement = check_bool("replacement", replacement)
    truncate = check_bool("truncate", truncate)
    b = check_b(b, allow=("auto", "inf"))
    if b == "auto":
        b = auto_buffer(lam, d, dps=dps, M=M)
    sol = solve_supermarket(
        lam, b, d, dps=dps, M=M, mu=mu, replacement=replacement, N=N, truncate=truncate
    )
    model = sol.get_model()  # built once by the short form, kept with the solution
    names = {str(p) for p in model.params}
    given = {"lam": lam, "mu": mu, "N": N}
    params = {k: v for k, v in given.items() if k in names}
    if order == 2:
        sol = add_second_order(sol, model, params, dps=sol.dps, M=M, start=None)
    return replace(sol, inputs=params, M=M)
