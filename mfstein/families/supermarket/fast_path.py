"""The supermarket family's registered simulator: :class:`SupermarketFastPath`.

Named by ``FAST_PATHS["supermarket"].simulation`` (:mod:`mfstein.ground.fast_paths`);
general code reaches it only through that table.  It runs the supermarket family
(and JSQ(L) of C. Graham, "Functional central limit theorems for a large network in
which customers join the shortest of several queues") on the aggregated simulator
:mod:`mfstein.families.supermarket.aggregated`.  A service rate ``mu != 1`` only
rescales time, so the stationary law is that of the ``mu = 1`` chain with ``lam / mu``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mfstein.families.supermarket.engine import POLICIES
from mfstein.families.supermarket.simulate import Rate, run_supermarket
from mfstein.ground.errors import ParameterError
from sim.base import RunOptions, SimulationResult, Simulator


class SupermarketFastPath(Simulator):
    """The supermarket family on its own engines
    (:func:`mfstein.families.supermarket.simulate.run_supermarket`).

    Accepts models whose ``info.fast_path`` is ``"supermarket"`` with a numeric
    service rate or a service-rate parameter; runs the ``mu = 1`` chain with
    arrival rate ``lam / mu`` (the same stationary law: the generator is
    ``mu`` times that chain's generator).  As the registered fast path
    (``engine="auto"`` or ``"fast"``) it runs the aggregated CTMC on the counts
    and reports itself as ``"supermarket"``; :func:`sim.simulate` with
    ``engine="aggregated"`` or ``"per-server"`` (and a ``policy``) sets
    :attr:`engine` and :attr:`policy`, and the result names that engine.
    """

    name = "supermarket"
    capabilities = frozenset({"workers", "dask", "checkpoint", "interrupt"})
    engines = ("aggregated", "per-server")
    policy_engine = "per-server"
    policies = POLICIES
    #: ``None`` (the fast path), ``"aggregated"`` or ``"per-server"``.
    engine: str | None = None
    policy: str = "pod"
    #: The centre ``s*`` (``b`` floats) when the caller has it (:func:`simulate_centred`);
    #: ``None``: :func:`~mfstein.families.supermarket.simulate.reference_point` of the
    #: problem's rate.
    centre: tuple[float, ...] | None = None

    @classmethod
    def accepts(cls, model: Any, params: Mapping[str, Any]) -> bool:
        from derive.models.supermarket_structure import SupermarketStructure

        return SupermarketStructure.declared(model.info.structure) and model.n <= 200

    def _prepare(self) -> None:
        import mpmath

        from mfstein.families.supermarket.solver import problem_rates
        from numeric.exact.lattice import to_fraction

        if self.start is not None or self.truncation is not None:
            raise ParameterError(
                "the supermarket fast path starts at N s* and has no truncation; use "
                "engine='generic' to give a start or a truncation."
            )
        from derive.models.supermarket_structure import SupermarketStructure

        model, values = self.model, self.values
        st = SupermarketStructure.read(model.info.structure)
        service = st.service
        with mpmath.workdps(40):
            lam = values[st.arrival]
            if service:
                mu = values[service]
            else:
                f = to_fraction("mu", st.mu)
                if f is None:
                    raise ParameterError(f"mu must be a positive number, got {st.mu!r}.")
                mu = mpmath.mpf(f.numerator) / f.denominator
            given = self.params[st.arrival]
            if mu == 1 and not service and isinstance(given, str):
                # no rescaling: the prepared problem's reading of the exact rate
                rates = problem_rates(self.problem)
                rate = Rate.read(given, lambda: rates()[0])
            elif mu == 1 and not service:  # a number: read as its float's repr, as always
                rate = Rate.of(given)
            else:  # lam / mu of the 30-digit values, to 30 digits (as it always was)
                rate = Rate.of(mpmath.nstr(lam / mu, 30))
        #: The rate of the ``mu = 1`` chain run
        #: (:class:`mfstein.families.supermarket.simulate.Rate`).
        self.rate = rate
        self.lam_text = rate.text
        self.d = int(st.d)
        self.replacement = bool(st.replacement)

    def _run(self, options: RunOptions) -> SimulationResult:
        """Run :func:`mfstein.families.supermarket.simulate.run_supermarket` and label the
        result with the model."""
        import dataclasses

        r = run_supermarket(
            self.N, self.rate, self.model.n, self.d, options,
            replacement=self.replacement, policy=self.policy,
            engine=self.engine or "aggregated", s_star=self.centre,
        )  # fmt: skip
        out = dataclasses.replace(
            r, model=self.model.name, params={k: str(v) for k, v in self.params.items()}
        )
        if self.engine is None:  # the fast path, as it has always reported itself
            out = dataclasses.replace(
                out, engine=self.name, start=[round(self.N * x) for x in r.s_star]
            )
        return out


def simulate_centred(
    model: Any, params: Mapping[str, Any], N: int, s_star: Any, **options: Any
) -> SimulationResult:
    """The aggregated engine of :class:`SupermarketFastPath` on ``model`` at ``params``
    (what ``simulate_supermarket(N, lam, b, d)`` runs), centred at the caller's ``s*``
    (the order-1 solution it already has, e.g. :mod:`mfstein.families.supermarket.table`'s)
    instead of :func:`mfstein.families.supermarket.simulate.reference_point` computed again;
    ``options`` are those of
    :func:`sim.simulate` (``steps``, ``reps``, ``seed``, ``workers``, ...)."""
    sim = SupermarketFastPath(model, N, params)
    sim.engine = "aggregated"
    sim.centre = tuple(float(x) for x in s_star)
    return sim.run(**options)
