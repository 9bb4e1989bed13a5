"""The accuracy table of a heterogeneous population's observable over K.

For a heterogeneous population the number of objects K plays the role of N:
each row is one K, the model built again with that K (its factory option ``K``),
with the declared observable's mean field ``g0``, refined estimate
``g0 + g1/K`` (:mod:`numeric.heterogeneous.observables`; the float64 route, each
figure with the digits it earns), the exact value on the
product chain of the K objects (``--exact``, while ``S^K`` is within the exact
solver's limit) and a simulation estimate with its 95% CI (``--simulate``).  The
rows are those of :class:`sim.accuracy.AccuracyTable` (column ``N`` holds K).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from mfstein.ground.display import estimate_figures
from sim.accuracy import COLUMNS, AccuracyTable, AccuracyTables

#: What the table says about its first column.
K_NOTE = "K (the number of objects) plays the role of N: each row is the model with that K"


@dataclass(frozen=True, repr=False)
class HeterogeneousTable(AccuracyTable):
    """:class:`sim.accuracy.AccuracyTable` of a heterogeneous population (``N`` is K;
    ``order1`` is the refined estimate ``g0 + g1/K``)."""

    def to_dict(self) -> dict[str, Any]:
        """The table's dict with ``"N": "K"`` saying what the rows' ``N`` is."""
        return {**super().to_dict(), "N": "K", "note": K_NOTE}

    #: No 1/K^2 column: order 2 is not available for a heterogeneous population.
    _columns: ClassVar[tuple[tuple[str, str], ...]] = tuple(
        c for c in COLUMNS if c[0] != "order2"
    )

    def _title(self) -> str:
        return (f"AccuracyTable: {self.observable}, {self.model} (heterogeneous population), "
                "order 1")

    def to_text(self) -> str:
        """The table with ``K`` for ``N`` and the sentence saying so."""
        text = super().to_text()
        head, _, rest = text.partition("\n")
        columns, _, body = rest.partition("\n")
        columns = columns.replace("N", "K", 1).replace("1/N", "1/K")
        return "\n".join([head, columns, body, f"note: {K_NOTE}"])


def heterogeneous_table(build: Callable[[int], Any], params: Mapping[str, Any] | None,
                        observables: str | Sequence[str], Ks: Sequence[int], *, exact: bool,
                        simulate: bool, steps: int, reps: int,
                        seed: int) -> HeterogeneousTable | AccuracyTables:
    """The table of each observable over ``Ks``; ``build(K)`` is the model with K objects.

    One name gives its :class:`HeterogeneousTable`; a list of names one table each
    (:class:`sim.accuracy.AccuracyTables`), computed together: one solve, one exact
    chain and one simulation per K, so each table equals the one-name run.
    """
    import numeric
    import numeric.exact
    from mfstein.ground.errors import NumericalError, ParameterError
    from numeric.exact.product import MAX_STATES
    from numeric.heterogeneous.observables import find, observe

    names = [observables] if isinstance(observables, str) else list(observables)
    rows: dict[str, list[dict[str, Any]]] = {g: [] for g in names}
    name = None
    for K in Ks:
        model = build(K)
        name = re.sub(r"K=\d+", "K", model.name) if name is None else name
        find(model, names)
        sol = numeric.solve(model, params, precision="float64", observables=names)
        exact_values: dict[str, Any] = {}
        exact_note = None
        if exact:
            if model.S**model.K > MAX_STATES:
                exact_note = (f"the product chain has {model.S}^{model.K} states, more "
                              f"than {MAX_STATES:,}")
            else:
                try:
                    ex = numeric.exact.solve(model, params, N=K)
                    exact_values = observe(model, params, ex, names)
                except (NumericalError, ParameterError) as exc:
                    exact_note = str(exc)
        simulated: dict[str, Any] = {}
        if simulate:
            import sim as simulation

            r = simulation.simulate(model, params, N=K, steps=steps, reps=reps, seed=seed)
            simulated = observe(model, params, r, names)
        for g in names:
            value = sol.observables[g]
            row: dict[str, Any] = {
                "N": K, "mean_field": value.g0, "order1": value.refined, "order2": None,
                "exact": f"{exact_values[g].value:.10g}" if g in exact_values else None,
                "exact_note": exact_note, "simulation": None, "simulation_note": None,
                "simulation_seed": None, "params": dict(sol.params),
            }
            if simulate:
                v = simulated[g]
                mean, ci95 = estimate_figures(v.value, v.ci95)
                row["simulation"] = {"mean": repr(mean), "ci95": repr(ci95)}
                row["simulation_seed"] = seed
            rows[g].append(row)
    tables = tuple(
        HeterogeneousTable(
            str(name), g, None, 1, rows[g],
            seed=seed if simulate else None, steps=steps if simulate else None,
            reps=reps if simulate else None,
        )
        for g in names
    )
    return tables[0] if isinstance(observables, str) else AccuracyTables(tables)
