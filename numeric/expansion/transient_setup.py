"""The transient's own state, read from the problem every route starts from.

:func:`transient_setup` reads the prepared problem of the inputs
(:func:`numeric.prepared.problem.prepare_problem`: the parameter names checked, the
values and the start ``s0`` read at 30 digits and checked against the state space,
the conservation laws ``C s = q`` and the free coordinates ``s = s0 + T x``) and adds
only what the transient alone needs, as one frozen :class:`TransientSetup`:

* the drift and Jacobian on the free coordinates with the compiled (numba)
  kernels, which the right-hand side of the moment equations evaluates thousands
  of times (:class:`numeric.meanfield.fixed_point.ReducedModel`);
* the conserved values ``q = C s0`` in float64;
* the model's reference point in float64 (where :func:`numeric.expansion.basin.fate`
  looks for the stationary fixed point);
* two checks at the start: every rate is finite and non-negative at ``s0``
  (:func:`numeric.rate_signs.check_rates`, 30 digits) and the drift has a finite
  Jacobian there (a rate ``sqrt(y)`` at ``y = 0`` has none).

The setups are kept by the prepared problem's key (:data:`SETUPS`, counted as
``COUNTS["prepared:transient"]``, :mod:`numeric.prepared.cache`) and found again by
the inputs as given: a warm transient prepares nothing and reads no problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from mpmath import mpf

from mfstein.ground.errors import ParameterError
from numeric.prepared.cache import PreparedCache, inputs_key

#: Transient setups kept in this process (least recently used dropped first).
SETUPS = 16
#: Only setups of models of at most this many states are kept.
KEEP_MAX_B = 256


@dataclass(frozen=True)
class TransientSetup:
    """What the transient reads at one ``(model, params, start)``, made once."""

    #: The prepared problem (:class:`numeric.prepared.problem.PreparedProblem`) with the
    #: model, parameter values, start and conservation laws.
    problem: Any
    #: Drift and Jacobian on the free coordinates with the numba kernels.
    rm: Any
    #: The kernels' parameter vector.
    p64: np.ndarray
    #: The start in float64 (the route's own writable copies of the problem's).
    s0_64: np.ndarray
    #: The conserved values ``q = C s0`` in float64.
    q64: np.ndarray
    #: The model's reference point in float64 (``None`` when the state space
    #: refuses it at these parameters).
    ref64: np.ndarray | None
    #: ``T = ds/dx`` (``b x n``) as exact fractions.
    Tfrac: list[list[Fraction]]
    #: The free coordinates (indices into the model's states).
    free: list[int]
    #: The model's state names.
    states: list[str]

    @property
    def model(self) -> Any:
        """The finite :class:`derive.model.Model`."""
        return self.problem.model

    @property
    def params(self) -> Mapping[str, Any]:
        """Parameter name -> value as given, names checked (read-only)."""
        return self.problem.params

    @property
    def red(self) -> Any:
        """The conservation laws and the free coordinates
        (:class:`numeric.invariants.Reduction`)."""
        return self.problem.reduction

    @property
    def n(self) -> int:
        """The number of free coordinates."""
        return len(self.free)

    @property
    def T64(self) -> np.ndarray:
        """``T`` in float64."""
        return self.rm.T64

    def values_mp(self) -> tuple[list[mpf], list[mpf], list[mpf]]:
        """Parameters (kernel order), start and conserved values at the current precision."""
        from numeric.params import kernel_vector

        s0 = self.problem.start_now()
        return kernel_vector(self.model, self.problem.values_now()), s0, self.red.values(s0)

    def notes(self) -> list[str]:
        """The note on the conservation laws removed (none without laws)."""
        laws = self.red.laws
        if not laws:
            return []
        kept = ", ".join(self.states[j] for j in self.free)
        return [
            f"{len(laws)} conservation law(s) removed: integrated on {kept}; "
            "x, V, W (A, B) are exact images in all coordinates."
        ]


_SETUPS: PreparedCache[TransientSetup] = PreparedCache("prepared:transient", SETUPS)
#: The same setups by the inputs as given (``COUNTS["keyed:transient"]`` counts the
#: misses): a warm call finds its setup without reading the prepared problem again.
_GIVEN: PreparedCache[TransientSetup] = PreparedCache("keyed:transient", SETUPS)


def transient_setup(model: Any, params: Mapping[str, Any] | None, start: Any) -> TransientSetup:
    """The :class:`TransientSetup` of these inputs, from this process's cache when made
    before: by the inputs as given, else by the prepared problem's key (two spellings
    of one start, ``"0.9"`` and ``"9/10"``, share one setup).

    Raises :class:`mfstein.ground.errors.ParameterError` in one sentence for a family
    with an unbounded state, a parameter or start the prepared problem refuses, a
    negative or non-finite rate at the start, or a start where the drift has no
    finite Jacobian.
    """
    key = inputs_key(model, dict(params or {}), start, None)  # None: a family, refused below
    keep = model.n <= KEEP_MAX_B if key is not None else False
    return _GIVEN.get(key, lambda: _from_problem(model, params, start), keep=keep)


def _from_problem(model: Any, params: Mapping[str, Any] | None, start: Any) -> TransientSetup:
    """The setup kept by the prepared problem's key, else made from the problem."""
    from numeric.params import check_finite_model
    from numeric.prepared.problem import prepare_problem

    check_finite_model(
        model,
        f"model {getattr(model, 'name', '?')} has an unbounded state; give a finite "
        "buffer (e.g. --param b=10) for the transient.",
    )
    problem = prepare_problem(model, params, start)
    return _SETUPS.get(problem.key, lambda: _build(problem), keep=model.n <= KEEP_MAX_B)


def _build(problem: Any) -> TransientSetup:
    from numeric.prepared.reduced import ReducedModel

    model, red = problem.model, problem.reduction
    s0_64 = np.array(problem.s64)
    rm = ReducedModel(model, red, model.kernels("numba"))
    setup = TransientSetup(
        problem=problem,
        rm=rm,
        p64=np.array(problem.p64),
        s0_64=s0_64,
        q64=np.array(problem.q64),
        ref64=problem.reference64,
        Tfrac=red.T(),
        free=list(red.free),
        states=[str(s) for s in model.states],
    )
    problem.check_start_rates()
    _check_smooth_start(setup)
    return setup


def _check_smooth_start(st: TransientSetup) -> None:
    """Refuse, in one sentence, a start where the drift has no finite Jacobian (a
    rate ``sqrt(y)`` at ``y = 0``): every moment equation and every stiff solver
    needs ``J(x(t))``, from ``t = 0`` on."""
    from numeric.rate_signs import singular_derivative, state_text

    try:
        with np.errstate(all="ignore"):
            J = st.rm.jac64(st.s0_64[st.free], st.q64, st.p64)
        finite = bool(np.all(np.isfinite(J)))
    except (ZeroDivisionError, ValueError, OverflowError):
        finite = False
    if not finite:
        s0 = st.s0_64.tolist()
        why = singular_derivative(st.model, s0, st.p64.tolist())
        raise ParameterError(
            f"the drift of model {st.model.name} has no finite derivative at the start "
            f"({state_text(st.model, s0)}): "
            f"{why or 'a rate such as sqrt(y) at y = 0 has none'}; the transient needs the "
            "Jacobian along x(t) from t = 0, so give a start inside the state space."
        )
