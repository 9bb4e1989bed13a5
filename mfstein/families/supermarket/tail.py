"""The supermarket's negligible tail: a smaller buffer that gives the same float64 numbers.

For the power-of-d supermarket sampled with replacement the fixed point falls
doubly exponentially in the level (``s*_k = lam^((d^k - 1)/(d - 1))`` for an
infinite buffer, M. Mitzenmacher, "The Power of Two Choices in Randomized Load
Balancing"; the core paper's eq. (1) for a finite one).  Level ``k`` drives the
bias and the ``1/N^2`` terms of level ``k + 1`` only through the variance of
level ``k`` (``V_{k+1} ~ W_kk ~ s*_k``), so once ``s*_k0 < 10^-20`` two more
levels hold everything above float64 resolution (``10^-16``): the member with
buffer ``k0 + 3`` gives the same float64 order-2 numbers, padded with zeros.

:func:`negligible_tail` is the family's ``negligible_tail`` route in
:data:`mfstein.ground.fast_paths.FAST_PATHS`; the float64 order 2
(:func:`numeric.meanfield.stationary.second_order_float64`) asks the table for it
and never names the family.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: A level whose fixed-point mass is below this is negligible for float64.
NEGLIGIBLE = 1e-20


def negligible_tail(problem: Any, params: Mapping[str, Any] | None = None) -> Any:
    """The family member with the smallest buffer ``K < b`` beyond which every level's
    contribution is below :data:`NEGLIGIBLE` (module docstring), or ``None`` when
    there is none (sampling without replacement, or no level that small), for the
    prepared problem ``problem`` (:class:`numeric.prepared.problem.PreparedProblem`:
    its model, and its parameters as given, read as text by the shooting).  ``s*``
    comes from the family's O(b) shooting solver
    (:func:`mfstein.families.supermarket.equilibrium.equilibrium`) at 20 digits.
    ``negligible_tail(model, params)`` (the older form) prepares the problem first
    and warns."""
    from derive.models.supermarket import with_buffer
    from derive.models.supermarket_structure import SupermarketStructure
    from mfstein.families.supermarket.equilibrium import equilibrium

    if params is not None:
        from numeric.prepared.problem import problem_of_older_call

        problem = problem_of_older_call("negligible_tail", problem, params)
    model, params = problem.model, problem.params
    if not SupermarketStructure.declared(model.info.structure):
        return None
    st = SupermarketStructure.read(model.info.structure)
    if not st.replacement:
        return None
    mu = params[st.service] if st.service else str(st.mu)
    s = equilibrium(params[st.arrival], model.n, st.d, dps=20, mu=mu)
    small = [k for k, v in enumerate(s) if abs(v) < NEGLIGIBLE]
    if not small or small[0] + 3 >= model.n:
        return None
    return with_buffer(model, int(small[0] + 3))
