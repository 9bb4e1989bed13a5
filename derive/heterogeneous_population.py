"""Heterogeneous population processes: K objects, each with its own rates.

The description of rmftool 0.5's ``HetPP`` (N. Gast and S. Allmeier): object
``k`` (``0 <= k < K``) is in one of ``S`` states; it moves ``s -> s'`` at rate
``A[k, s, s']``, and an ordered pair of distinct objects ``(k, k1)`` in states
``(s, s1)`` jumps to ``(s', s1')`` at rate ``B[k, k1, s, s1, s', s1']``, the
rate of that ordered pair as given (the ``1/K`` of a mean-field interaction is
written inside ``B``, as in rmftool's examples).  A pair of an object with
itself never fires, so ``B[k, k, ...]`` must be zero; diagonal entries
``A[k, s, s]`` (no move) are ignored.  Entries are numbers or SymPy
expressions in the model's parameters.

The general object-level form: an entry ``A[k, s, s']`` may also be a SymPy
expression of the occupancy averages (:func:`occupancy`): ``mean[u] =
(1/K) sum_j X_{j,u}`` (all objects) and ``others[u] = (1/(K-1)) sum_{j != k}
X_{j,u}`` (the objects other than ``k``), so that object ``k`` moves
``s -> s'`` at rate ``r_k(X)`` for any smooth ``r_k`` of the averages: interactions
of any order (power-of-d for any d, :mod:`derive.models.power_of_d_servers`), not
only pairs.  Such moves are kept apart (``averaged``); the mean field replaces
``X`` by its expectation in ``r_k(X) X_{k,s}`` and the refined term adds the
second-order Taylor term of the rate against the covariance
(:mod:`numeric.heterogeneous.averaged`).

The mean field lives on ``K x S`` coordinates ``x[k*S + s] = P(object k in s)``
(object-major order); see :mod:`numeric.heterogeneous` for the numbers.

>>> import numpy as np
>>> A = np.zeros((2, 2, 2)); A[:, 0, 1] = [1, 2]; A[:, 1, 0] = 1
>>> m = heterogeneous(A)
>>> m.K, m.S, len(m.unilateral), m.pairwise
(2, 2, 4, ())
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp

from derive.heterogeneous_observables import HeterogeneousObservable, check_observables
from derive.spec import ModelInfo, Parameter
from mfstein.ground.errors import ParameterError, check_int

#: Most objects a heterogeneous population may have (the mean field is dense on
#: K x S coordinates).
MAX_OBJECTS = 5000


def occupancy(S: int) -> tuple[tuple[sp.Symbol, ...], tuple[sp.Symbol, ...]]:
    """The symbols of the occupancy averages an entry of ``A`` may use: ``mean[u]``
    (the fraction of all K objects in state ``u``) and ``others[u]`` (the fraction of
    the K - 1 objects other than the moving one), ``u = 0..S-1``."""
    return (tuple(sp.Symbol(f"mean[{u}]") for u in range(S)),
            tuple(sp.Symbol(f"others[{u}]") for u in range(S)))


def _is_average(symbol: sp.Basic) -> bool:
    return str(symbol).startswith(("mean[", "others["))


@dataclass(frozen=True, eq=False, repr=False)
class HeterogeneousModel:
    """``K`` objects with ``S`` states each and their sparse rate tensors.

    ``unilateral`` holds ``(k, s, s', rate)`` and ``pairwise``
    ``(k, k1, s, s1, s', s1', rate)`` for the nonzero moves only, each ``rate`` a
    SymPy expression (a number or an expression in ``params``); ``averaged``
    holds ``(k, s, s', rate)`` whose rate also depends on the occupancy averages
    (:func:`occupancy`); ``observables`` the declared
    :class:`~derive.heterogeneous_observables.HeterogeneousObservable`.
    """

    #: The population's name.
    name: str
    #: The number of objects.
    K: int
    #: The number of states of each object.
    S: int
    #: ``(k, s, s', rate)`` of each nonzero move of one object whose rate does not depend on the
    #: occupancy averages.
    unilateral: tuple[tuple[int, int, int, sp.Expr], ...]
    #: ``(k, k1, s, s1, s', s1', rate)`` of each nonzero move of an ordered pair of distinct
    #: objects.
    pairwise: tuple[tuple[int, int, int, int, int, int, sp.Expr], ...]
    #: The parameter names.
    params: tuple[str, ...]
    #: The names of the ``S`` states (default ``0..S-1``).
    state_names: tuple[str, ...]
    #: The names of the ``K`` objects (default ``0..K-1``).
    object_names: tuple[str, ...]
    #: The :class:`derive.spec.ModelInfo` holding the parameters (with their ranges).
    info: ModelInfo
    #: Where the population comes from (a reference); ``""`` for none.
    citation: str = ""
    #: ``(k, s, s', rate)`` of each nonzero move of one object whose rate depends on the occupancy
    #: averages (:func:`occupancy`).
    averaged: tuple[tuple[int, int, int, sp.Expr], ...] = ()
    #: The declared observables
    #: (:class:`derive.heterogeneous_observables.HeterogeneousObservable`).
    observables: tuple[HeterogeneousObservable, ...] = ()

    @property
    def dimension(self) -> int:
        """``K * S``, the number of mean-field coordinates."""
        return self.K * self.S

    def coordinate_names(self) -> list[str]:
        """``object[state]`` for each coordinate, in object-major order."""
        return [f"{o}[{s}]" for o in self.object_names for s in self.state_names]

    def __repr__(self) -> str:
        return (
            f"HeterogeneousModel({self.name!r}, K={self.K}, S={self.S}, "
            f"{len(self.unilateral)} unilateral, {len(self.pairwise)} pairwise and "
            f"{len(self.averaged)} averaged moves, "
            f"params={list(self.params)})"
        )


def _rate(name: str, value: Any, where: str) -> sp.Expr | None:
    """One tensor entry as a SymPy expression, ``None`` when it is zero."""
    if isinstance(value, bool):
        raise ParameterError(
            f"{name}{where} must be a number or a SymPy expression, got {value!r}."
        )
    given = value
    if isinstance(value, float | np.floating):
        if not np.isfinite(value):
            raise ParameterError(f"{name}{where} must be a finite rate, got {value!r}.")
        value = Fraction(float(value))
    try:
        expr = sp.sympify(value)
    except (sp.SympifyError, TypeError, ValueError):
        raise ParameterError(
            f"{name}{where} must be a number or a SymPy expression, got {value!r}."
        ) from None
    if expr.is_number:
        if not expr.is_real or not expr.is_finite:
            raise ParameterError(f"{name}{where} must be a finite real rate, got {given!r}.")
        if expr < 0:
            raise ParameterError(f"{name}{where} must be a rate >= 0, got {given!r}.")
        if expr == 0:
            return None
    return expr


def _tensor(name: str, value: Any, shape: tuple[int, ...] | None, ndim: int) -> np.ndarray:
    try:
        arr = np.asarray(value)
        if arr.dtype.kind not in "iuf":  # numbers stay numbers: a fast scan
            arr = np.asarray(value, dtype=object)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.ndim != ndim or (shape is not None and arr.shape != shape):
        want = "K x S x S" if ndim == 3 else "K x K x S x S x S x S"
        got = "a scalar" if arr is None or arr.ndim == 0 else " x ".join(map(str, arr.shape))
        raise ParameterError(
            f"{name} must be a {want} array (the shape of A fixes K, S), got {got}."
        )
    return arr


def _nonzero_entries(name: str, arr: np.ndarray) -> list[tuple[tuple[int, ...], sp.Expr]]:
    """The nonzero entries of ``arr``, each distinct value converted once."""
    flat = arr.ravel()
    try:
        where = np.flatnonzero(np.asarray(arr != 0, dtype=bool))
    except (TypeError, ValueError):  # an entry that does not compare with 0
        where = np.arange(flat.size)
    index = np.stack(np.unravel_index(where, arr.shape), axis=1).tolist()
    seen: dict[Any, sp.Expr | None] = {}
    out = []
    for i, ix in zip(where.tolist(), index, strict=True):
        value = flat[i]
        try:
            key = (type(value), value)
            hit = key in seen
        except TypeError:  # an unhashable entry
            key, hit = None, False
        if hit:
            rate = seen[key]
        else:
            rate = _rate(name, value, f"[{', '.join(map(str, ix))}]")
            if key is not None:
                seen[key] = rate
        if rate is not None:
            out.append((tuple(ix), rate))
    return out


def heterogeneous(
    A: Any,
    B: Any = None,
    *,
    parameters: Sequence[Parameter | str] | None = None,
    states: Sequence[str] | None = None,
    objects: Sequence[str] | None = None,
    name: str = "heterogeneous population",
    citation: str = "",
    observables: Sequence[HeterogeneousObservable] = (),
) -> HeterogeneousModel:
    """A heterogeneous population from rmftool's ``HetPP`` rate tensors.

    Parameters
    ----------
    A:
        ``K x S x S`` rates, ``A[k, s, s']`` of object ``k`` moving ``s -> s'``;
        an entry may depend on the occupancy averages (:func:`occupancy`).
    B:
        ``K x K x S x S x S x S`` rates of ordered pairs of distinct objects
        (``None``: no interaction); ``B[k, k, ...]`` must be zero.
    parameters:
        The parameters, as :class:`derive.spec.Parameter` (with a range) or
        names; default the free symbols of the entries, by name.
    states, objects:
        Names of the ``S`` states and of the ``K`` objects (default ``0..S-1``
        and ``0..K-1``).
    """
    a = _tensor("A", A, None, 3)
    K, S = a.shape[0], a.shape[1]
    check_int("K (the first dimension of A)", K, 1, MAX_OBJECTS)
    if a.shape[2] != S or S < 2:
        raise ParameterError(f"A must be a K x S x S array with S >= 2, got shape {a.shape}.")
    moves = [(k, s, t, r) for (k, s, t), r in _nonzero_entries("A", a) if s != t]
    unilateral = tuple(m for m in moves if not any(map(_is_average, m[-1].free_symbols)))
    averaged = tuple(m for m in moves if any(map(_is_average, m[-1].free_symbols)))
    _check_averages(averaged, K, S)
    pairwise: tuple = ()
    if B is not None:
        b = _tensor("B", B, (K, K, S, S, S, S), 6)
        entries = _nonzero_entries("B", b)
        for (k, k1, *_), _r in entries:
            if k == k1:
                raise ParameterError(
                    f"B[{k}, {k}, ...] must be 0: an object never interacts with itself."
                )
        pairwise = tuple(
            (k, k1, s, s1, t, t1, r) for (k, k1, s, s1, t, t1), r in entries if (s, s1) != (t, t1)
        )
    distinct = {r for *_, r in (*unilateral, *pairwise, *averaged)}
    free = sorted({str(x) for r in distinct for x in r.free_symbols if not _is_average(x)})
    declared = [p if isinstance(p, Parameter) else Parameter(str(p)) for p in parameters or ()]
    names = tuple(p.name for p in declared) if parameters is not None else tuple(free)
    missing = sorted(set(free) - set(names))
    if missing:
        raise ParameterError(
            f"the rates use {', '.join(missing)}, which is not among the parameters "
            f"{', '.join(names) or '(none)'}."
        )
    state_names = _names("states", states, S)
    object_names = _names("objects", objects, K)
    info = ModelInfo(parameters=tuple(declared) or tuple(Parameter(n) for n in names))
    return HeterogeneousModel(
        name, K, S, unilateral, pairwise, names, state_names, object_names, info, citation,
        averaged, check_observables(observables, K * S, names),
    )


def _check_averages(averaged: Sequence[tuple[int, int, int, sp.Expr]], K: int, S: int) -> None:
    """Refuse an average symbol outside ``0..S-1`` and ``others`` with one object."""
    mean, others = occupancy(S)
    allowed = set(mean) | set(others)
    for k, s, t, r in averaged:
        bad = sorted(str(x) for x in r.free_symbols if _is_average(x) and x not in allowed)
        if bad:
            raise ParameterError(
                f"A[{k}, {s}, {t}] uses {bad[0]}, but the states are 0..{S - 1}."
            )
        if K < 2 and r.free_symbols & set(others):
            raise ParameterError(
                f"A[{k}, {s}, {t}] uses the others' averages, which need K >= 2 objects."
            )


def _names(what: str, given: Sequence[str] | None, n: int) -> tuple[str, ...]:
    if given is None:
        return tuple(str(i) for i in range(n))
    names = tuple(str(x) for x in given)
    if len(names) != n or len(set(names)) != n:
        raise ParameterError(f"{what} must be {n} distinct names, got {len(names)}.")
    return names


def as_density_model(model: HeterogeneousModel) -> Any:
    """The same drift, noise and derivatives as an ordinary :class:`derive.Model` on
    the reduced coordinates ``y[k, s] = x[k*S + s]``, ``s < S - 1`` (each object's last
    probability is one minus the others), with transitions' intensities the moves'
    rates (``a x_{k,s}``, ``b x_{k,s} x_{k1,s1}``).

    Every first-order formula of a :class:`derive.Model` then holds with ``N = 1``:
    its ``V`` is ``E[X] - x*`` to first order, that is this population's ``V / K``,
    and its ``W`` is ``Cov(X)``.  Its transitions grow like ``K^2``: meant for
    small populations (the transient at any precision, an independent route).
    """
    from derive.model import Model, Transition
    from derive.spec import ModelInfo, StateSpace

    K, S = model.K, model.S
    y = [[sp.Symbol(f"x{k}_{s}") for s in range(S - 1)] for k in range(K)]
    full = [[*row, 1 - sum(row)] for row in y]
    index = {(k, s): k * (S - 1) + s for k in range(K) for s in range(S - 1)}
    n = K * (S - 1)

    def jump(*moves: tuple[int, int, int]) -> tuple[int, ...]:
        vec = [0] * n
        for k, s, t in moves:
            if s < S - 1:
                vec[index[k, s]] -= 1
            if t < S - 1:
                vec[index[k, t]] += 1
        return tuple(vec)

    moves = [Transition(jump((k, s, t)), r * full[k][s], f"{k}:{s}->{t}")
             for k, s, t, r in model.unilateral]
    mean, others = occupancy(S)
    total = [sum(full[j][u] for j in range(K)) for u in range(S)]
    for k, s, t, r in model.averaged:
        at = {mean[u]: total[u] / K for u in range(S)}
        if K > 1:
            at.update({others[u]: (total[u] - full[k][u]) / (K - 1) for u in range(S)})
        moves.append(Transition(jump((k, s, t)), r.xreplace(at) * full[k][s], f"{k}:{s}->{t}"))
    moves += [
        Transition(jump((k, s, t), (k1, s1, t1)), r * full[k][s] * full[k1][s1],
                   f"{k},{k1}:{s},{s1}->{t},{t1}")
        for k, k1, s, s1, t, t1, r in model.pairwise
    ]
    start = [1 if s == 0 else 0 for _ in range(K) for s in range(S - 1)]
    # the orthant: every move out of a kept coordinate has a rate that vanishes with it
    info = ModelInfo(parameters=model.info.parameters, state_space=StateSpace("orthant"),
                     reference=start)
    states = [v for row in y for v in row]
    params = [sp.Symbol(p) for p in model.params]
    return Model(f"{model.name} (as a density model)", states, params, moves, info=info)


def heterogeneous_classes(
    A: Any,
    B: Any = None,
    *,
    counts: Sequence[int],
    parameters: Sequence[Parameter | str] | None = None,
    states: Sequence[str] | None = None,
    name: str = "heterogeneous population",
    citation: str = "",
    observables: Sequence[HeterogeneousObservable] = (),
) -> HeterogeneousModel:
    """``C`` classes of objects with multiplicities ``counts``: object ``k`` of class
    ``c`` moves at ``A[c, s, s']`` and an ordered pair of distinct objects of classes
    ``(c, c1)`` at ``B[c, c1, s, s1, s', s1']`` (``C x C x S x S x S x S``, the rate of
    each such pair; unlike :func:`heterogeneous`, ``B[c, c, ...]`` is the rate of two
    distinct objects of one class).  Objects are numbered class by class and named
    ``c.i``; the result is the :class:`HeterogeneousModel` of the ``sum(counts)`` objects.
    """
    a = _tensor("A", A, None, 3)
    C = a.shape[0]
    if not isinstance(counts, Sequence) or len(counts) != C:
        raise ParameterError(f"counts must give one multiplicity per class of A ({C}).")
    sizes = [check_int(f"counts[{c}]", n, 1, MAX_OBJECTS) for c, n in enumerate(counts)]
    cls = np.repeat(np.arange(C), sizes)
    K = len(cls)
    check_int("K (the sum of counts)", K, 1, MAX_OBJECTS)
    big_b = None
    if B is not None:
        S = a.shape[1]
        b = _tensor("B", B, (C, C, S, S, S, S), 6)
        big_b = b[cls[:, None], cls[None, :]].copy()
        big_b[np.arange(K), np.arange(K)] = 0  # an object never meets itself
    objects = [f"{c}.{i}" for c, n in enumerate(sizes) for i in range(n)]
    return heterogeneous(a[cls], big_b, parameters=parameters, states=states, objects=objects,
                         name=name, citation=citation, observables=observables)
