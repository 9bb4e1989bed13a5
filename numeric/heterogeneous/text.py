"""The text form of the results of a heterogeneous population (``to_text()`` of
:class:`numeric.heterogeneous.result.HeterogeneousSolution`,
:class:`numeric.heterogeneous.result.HeterogeneousExact` and
:class:`sim.heterogeneous.HeterogeneousSimulation`; ``mfstein solve``, ``exact`` and
``simulate`` print it): a heading naming K, S and the parameters, a line on the method,
one line per object and the observables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mfstein.ground.display import params_text


def heading(result: Any) -> str:
    """``model NAME: heterogeneous population of K = .. objects with S = .. states
    (..); params``."""
    return (
        f"model {result.model}: heterogeneous population of K = {result.K} objects with "
        f"S = {result.S} states ({', '.join(result.state_names)}); {params_text(result.params)}"
    )


def object_lines(result: Any, cells: Sequence[str], label: str) -> list[str]:
    """One line per object: ``label``, the object's name and its ``S`` cells (``cells``
    flat in object-major order, index ``k*S + s``)."""
    names, S = result.object_names, result.S
    width = max(len(n) for n in names)
    return [
        f"{label} {n:<{width}}  " + ", ".join(cells[k * S : (k + 1) * S])
        for k, n in enumerate(names)
    ]


def observable_lines(title: str, values: Mapping[str, Any]) -> list[str]:
    """``title`` and one line per observable (:meth:`ObservableValue.text`), or nothing
    when there is none."""
    if not values:
        return []
    return [title] + [f"  {v.text()}" for v in values.values()]
