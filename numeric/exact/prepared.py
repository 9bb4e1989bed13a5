"""A model prepared once for a population of ``N``: the form exact, sim and numeric read.

The finite-N chain of a model jumps ``n -> n + l`` at rate ``N beta_l(n / N)``
on the lattice of ``n = N s`` (Section 3 of "Beyond Scaling: Calculable Error
Bound of the Power-of-Two-Choices Mean-Field Model in Heavy-Traffic").  Every
consumer of that chain -- the exact solver (:mod:`numeric.exact`), the
simulators (:mod:`sim`) -- starts from the same three steps, written here once:

1. :func:`prepare` checks the model and ``N`` and reads the parameters' record
   (:func:`numeric.prepared.parameters.prepare_params`: names, declared ranges,
   ``N`` filled in for N-dependent models such as sampling without
   replacement; kept per point) and returns a :class:`PreparedModel`;
2. :meth:`PreparedModel.place` fixes the lattice (bounds from the declared
   state space, the conservation laws and their values) and the start ``n0``
   (the start of the problem every route starts from,
   :func:`numeric.prepared.problem.prepare_problem`: the caller's start, else the
   model's reference point, else the origin; times ``N`` rounded consistently
   with the laws): a :class:`Placement`;
3. :meth:`Placement.mean_field` (or :func:`mean_field`) solves the mean field
   with the same values of the conservation laws: its fixed point ``s*`` is the
   centre of the chain's statistics.  For an N-dependent model whose finite-N
   mean field is refused, the ``N -> infinity`` limit model (:func:`limit_model`)
   is solved instead and a note says so.

This module imports nothing heavy; SymPy, the lattice and the mean field are
imported when used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from mfstein.ground.errors import ParameterError, check_int

if TYPE_CHECKING:  # imported where used: a chain kept on disk needs no Fraction
    from fractions import Fraction

#: Digits of the mean-field solution used as the centre.
CENTRE_DPS = 20


class PreparedModel(NamedTuple):
    """A model whose parameters are checked for a population of ``N`` (a named tuple,
    as :class:`Placement`: a frozen dataclass costs a new process some 0.4 ms to
    create, and a first exact call makes both)."""

    #: The :class:`derive.model.Model`.
    model: Any
    #: Population size (number of servers), ``N >= 1``.
    N: int
    #: Parameter name -> value as given (``N`` filled in when the model has an
    #: ``N`` parameter).
    params: dict[str, Any]
    #: Parameter name -> parsed ``mpf`` (30 digits), declared ranges enforced.
    values: dict[str, Any]

    def place(self, start: Sequence[Any] | str | None = None, truncation: Any = None) -> Placement:
        """The lattice of the chain and its start ``n0`` (see the module docstring).

        ``start`` is in fractions (as in :func:`numeric.solve`); ``truncation``
        keeps ``n_k <= floor(N truncation)`` on an unbounded state space.
        """
        return self.place_problem(self.problem(start), truncation)  # the start checked first

    def place_problem(self, problem: Any, truncation: Any = None) -> Placement:
        """:meth:`place` of a problem prepared already
        (:class:`numeric.prepared.problem.PreparedProblem` of this model at these
        parameters, its start as given in ``problem.start``): nothing is read again."""
        from numeric.exact.space import make_lattice, round_to_lattice

        lattice = make_lattice(self.model, self.N, truncation)
        n0 = round_to_lattice(lattice, problem.lattice_start())
        return Placement(self, lattice, n0, problem.start is not None, problem)

    def problem(self, start: Sequence[Any] | str | None = None) -> Any:
        """The problem every route starts from at these parameters (``N`` filled in) and
        ``start`` (:func:`numeric.prepared.problem.prepare_problem`: one per distinct
        ``(params, start)`` in this process, shared with the mean field's routes)."""
        from numeric.prepared.problem import prepare_problem

        return prepare_problem(self.model, self.params, start)

    def start_fractions(self, start: Sequence[Any] | str | None = None) -> list[Fraction]:
        """The start in fractions, to 25 digits, before it is rounded to a lattice:
        ``start`` (as in :func:`numeric.solve`), else the model's reference point, else
        the origin (the same for every ``N`` unless the model has an ``N`` parameter):
        the start of the problem every route starts from
        (:meth:`numeric.prepared.problem.PreparedProblem.lattice_start`)."""
        return self.problem(start).lattice_start()


class Placement(NamedTuple):
    """A prepared model on its lattice (a named tuple: :meth:`_replace` gives it on
    another lattice)."""

    #: The :class:`PreparedModel`.
    prepared: PreparedModel
    #: The :class:`numeric.exact.lattice.Lattice` (bounds, conservation laws
    #: ``lattice.laws`` and their values ``lattice.values``).
    lattice: Any
    #: ``n0`` -- the start in counts, on the lattice.
    start: np.ndarray
    #: Whether the caller gave the start (else it is the model's reference
    #: point or the origin).
    start_given: bool
    #: The prepared problem of the start as given
    #: (:meth:`PreparedModel.problem`; ``None`` for a chain read back from its record,
    #: :mod:`numeric.exact.kept`, which reaches it when first asked:
    #: :meth:`prepared_problem`).
    problem: Any = None

    def prepared_problem(self) -> Any:
        """The prepared problem of the chain's call: :attr:`problem`, or for a chain read
        back from its record the call's problem reached through its kept model
        (:meth:`numeric.exact.kept.KeptModel.problem`: the one this process prepared
        for the same call, else prepared now, once)."""
        if self.problem is not None:
            return self.problem
        return self.prepared.model.problem()

    def mean_field(self) -> tuple[Any, str | None]:
        """The mean field with the chain's values of the conservation laws
        (:func:`mean_field`)."""
        p = self.prepared
        return mean_field(
            p.model, p.params, self.start, p.N, bool(self.lattice.laws), self.start_given
        )

    def centre(self) -> tuple[Any, str | None]:
        """:meth:`mean_field`, solved from the chain's own problem (:attr:`problem`) when
        it is the problem :meth:`mean_field` would prepare but for its key: no start was
        given, the model has no fast path (a start given or not takes the same route),
        it is solved whole (fewer than
        :data:`numeric.meanfield.truncation.MIN_B` coordinates, so no restriction reads
        the start) and the start ``n0 / N`` handed to the mean field reads, at 30
        digits, as the problem's start ``s0`` exactly.  The same numbers, one problem
        prepared instead of two."""
        problem = self.problem
        if problem is None or problem.start is not None or not self.lattice.laws:
            return self.mean_field()  # (mean_field prepares no second problem here)
        from numeric.meanfield.truncation import MIN_B

        model = problem.model
        if model.info.fast_path is not None or model.n >= MIN_B:
            return self.mean_field()
        from fractions import Fraction

        import mpmath

        from numeric.prepared.problem import DPS
        from numeric.prepared.start import start_point

        N = self.prepared.N
        frac = [str(Fraction(int(v), N)) for v in self.start]
        with mpmath.workdps(DPS):  # as the problem of that start would read it
            same = tuple(start_point(model, frac, dict(problem.values))) == problem.s0
        if not same:
            return self.mean_field()
        from numeric.meanfield.entry import solve_prepared

        try:
            return solve_prepared(problem, dps=CENTRE_DPS), None
        except ParameterError:  # mean_field's own answer (the limit model of an N-model)
            return self.mean_field()


def prepare(model: Any, N: int, params: Mapping[str, Any] | None) -> PreparedModel:
    """Check the model, ``N`` and the parameters; fill ``N`` for N-dependent models.

    Refused with one sentence (:class:`mfstein.ground.errors.ParameterError`): a
    model with infinite buffers (:class:`derive.spec.Truncated`), anything that
    is not a :class:`derive.model.Model`, ``N < 1``, a parameter ``N`` other
    than the lattice size, unknown or missing parameters, values outside the
    declared ranges (so ``N < d`` without replacement is refused here, with the
    model's own sentence).
    """
    from numeric.params import check_finite_model
    from numeric.prepared.parameters import prepare_params

    check_finite_model(
        model,
        f"model {getattr(model, 'name', '?')} has infinite buffers (an unbounded state space) "
        "and no truncation for the finite-N chain; give a finite buffer (e.g. b=20).",
    )
    N = check_int("N", N, 1)
    point = prepare_params(model, params, N=N)  # names, values and N, read once per point
    return PreparedModel(model, int(N), dict(point.params), dict(point.values))


def mean_field(
    model: Any,
    params: Mapping[str, Any],
    start: np.ndarray,
    N: int,
    laws: bool,
    given: bool,
) -> tuple[Any, str | None]:
    """The mean-field solution used as the centre of the chain's statistics, and a note.

    ``start`` (counts on the lattice of size ``N``) is passed to
    :func:`numeric.solve` as the fractions ``start / N`` when the model has
    conservation laws (``laws``: the fixed point must carry the chain's values
    of them) or the start was ``given`` by the caller; otherwise the mean field
    chooses its own start.  An N-dependent model whose finite-N mean field is
    refused is solved as its ``N -> infinity`` limit (:func:`limit_model`), and
    the note says that the statistics are centred there; the note is ``None``
    otherwise.  Solved at :data:`CENTRE_DPS` digits from the prepared problem at that
    start (:func:`numeric.prepared.problem.prepare_problem`; the chain's own problem
    when ``start / N`` is its start, :func:`numeric.meanfield.entry.solve_prepared`:
    no second reading of the names and values).
    """
    from fractions import Fraction

    from numeric.meanfield.entry import solve, solve_prepared
    from numeric.prepared.problem import prepare_problem

    frac = None if not laws and not given else [str(Fraction(int(v), N)) for v in start]
    try:
        return solve_prepared(prepare_problem(model, params, frac), dps=CENTRE_DPS), None
    except ParameterError as exc:
        if "N" not in [str(q) for q in model.params]:
            raise
        lim = limit_model(model)
        rest = {k: v for k, v in params.items() if k != "N"}
        note = f"{exc} Statistics are centred at the N -> infinity mean field instead."
        return solve(lim, rest, dps=CENTRE_DPS, start=frac), note


_LIMITS: dict[Any, Any] = {}


def limit_model(model: Any) -> Any:
    """The ``N -> infinity`` limit of an N-dependent model: every intensity replaced by
    its limit (e.g. ``C(N x, d) / C(N, d) -> x^d``), ``N`` removed from the parameters,
    no fast path.  Built once per model (by its key)."""
    hit = _LIMITS.get(model.key)
    if hit is None:
        hit = _LIMITS[model.key] = _limit_model(model)
    return hit


def _limit_model(model: Any) -> Any:
    import dataclasses

    import sympy as sp

    from derive.model import Model, Transition
    from derive.model import N as N_SYM

    transitions = [
        Transition(t.jump, sp.simplify(sp.limit(t.rate, N_SYM, sp.oo)), t.label)
        for t in model.transitions
    ]
    info = dataclasses.replace(
        model.info,
        parameters=tuple(p for p in model.info.parameters if p.name != "N"),
        fast_path=None,
    )
    params = [q for q in model.params if q != N_SYM]
    return Model(f"{model.name}-limit", model.states, params, transitions, info=info)
