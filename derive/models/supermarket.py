"""The supermarket model under power-of-d choices (and JSQ(L), its relabelling).

State ``s_k`` = fraction of servers holding at least ``k`` jobs, ``k = 1..b``,
with ``s_0 = 1`` and ``s_{b+1} = 0``.  Transitions (Section 3 of "Beyond
Scaling: Calculable Error Bound of the Power-of-Two-Choices Mean-Field Model in
Heavy-Traffic"):

* arrival joining a server with ``k - 1`` jobs, ``l = +e_k``, intensity
  ``lam (s_{k-1}^d - s_k^d)`` with replacement, or
  ``lam [C(N s_{k-1}, d) - C(N s_k, d)] / C(N, d)`` for ``d`` distinct servers;
* departure from a server with ``k`` jobs, ``l = -e_k``, intensity
  ``mu (s_k - s_{k+1})``.

With ``d = 2``, ``mu = 1`` and replacement this is that paper's chain, whose
drift is ``f_k(s) = lam (s_{k-1}^2 - s_k^2) - (s_k - s_{k+1})`` (eq. (1)).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import sympy as sp

from derive.model import LAM, MU, Model, N, Transition, state_symbols
from derive.models.occupancy_levels import (  # noqa: F401  (their old import path)
    levels_above,
    levels_for,
    occupancy_exponent,
)
from derive.models.supermarket_structure import SupermarketStructure
from derive.spec import ModelInfo, Parameter, StateSpace
from mfstein.ground.errors import ParameterError, check_bool, check_int

CITATION = (
    "Beyond Scaling: Calculable Error Bound of the Power-of-Two-Choices Mean-Field "
    "Model in Heavy-Traffic"
)


#: Part of every model key of this family: editing the family's transitions
#: invalidates its cached kernels (and only its own).
SOURCE_DIGEST = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


class SupermarketModel(Model):
    """A :class:`Model` built by :func:`supermarket`; remembers ``d``, ``mu`` and the
    sampling scheme so that numeric code can use the model's structure."""

    def __init__(self, *args: Any, d: int, mu: sp.Expr, replacement: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.d = d
        self.mu = mu
        self.replacement = replacement

    @property
    def b(self) -> int:
        """The buffer size: the largest queue length, the dimension :attr:`n` of the
        state ``s_1 .. s_b`` (the family's own name for it, not deprecated)."""
        return self.n


def binomial_fraction(x: sp.Expr, d: int) -> sp.Expr:
    """``C(N x, d) / C(N, d) = prod_{j<d} (N x - j) / (N - j)``: the chance that d
    servers drawn without replacement all lie in a set holding the fraction x."""
    return sp.Mul(*[(N * x - j) / (N - j) for j in range(d)])


def parse_rate(name: str, value: Any, symbol: sp.Symbol) -> sp.Expr:
    """A service or arrival rate given to a factory: a positive number (kept exact:
    strings and floats become rationals), or the symbol's name to keep it free."""
    if isinstance(value, sp.Symbol) and value == symbol:
        return symbol
    if isinstance(value, str):
        if value.strip() == str(symbol):
            return symbol
        try:
            value = sp.Rational(value.strip())
        except (TypeError, ValueError):
            raise ParameterError(
                f"{name} must be a positive number or '{symbol}', got {value!r}."
            ) from None
    if isinstance(value, float):
        value = sp.Rational(str(value))
    expr = sp.sympify(value)
    if not (expr.is_number and expr.is_positive):
        raise ParameterError(f"{name} must be a positive number or '{symbol}', got {value!r}.")
    return expr


def queue_transitions(
    b: int, d: int, arrival: sp.Expr, service: sp.Expr, replacement: bool
) -> tuple[tuple[sp.Symbol, ...], list[Transition]]:
    """State symbols and transitions of the power-of-d (JSQ(d)) family."""
    states = state_symbols(b)
    padded = (sp.Integer(1), *states, sp.Integer(0))
    if replacement:

        def sample(x: sp.Expr) -> sp.Expr:
            return x**d
    else:

        def sample(x: sp.Expr) -> sp.Expr:
            return binomial_fraction(x, d) if x != 0 else sp.Integer(0)

    transitions = []
    zeros = (0,) * b
    for k in range(1, b + 1):
        up = (*zeros[: k - 1], 1, *zeros[k:])
        down = (*zeros[: k - 1], -1, *zeros[k:])
        transitions.append(
            Transition(
                up, arrival * (sample(padded[k - 1]) - sample(padded[k])), f"arrival to level {k}"
            )
        )
        transitions.append(
            Transition(down, service * (padded[k] - padded[k + 1]), f"departure from level {k}")
        )
    return states, transitions


def queue_parameters(
    arrival: sp.Symbol, service: sp.Expr, d: int, replacement: bool
) -> tuple[list[sp.Symbol], tuple[Parameter, ...]]:
    """Free symbols (kernel order) and their declared ranges."""
    from mfstein.ground.limits import MAX_LAM  # rates beyond it overflow float64 kernels

    params = [arrival]
    declared = [
        Parameter(
            str(arrival), low=0, high=MAX_LAM, high_inclusive=True, doc="arrival rate per server"
        )
    ]
    if isinstance(service, sp.Symbol):
        params.append(service)
        declared.append(
            Parameter(str(service), low=0, high=MAX_LAM, high_inclusive=True, doc="service rate")
        )
    if not replacement:
        params.append(N)
        declared.append(
            Parameter("N", low=d, low_inclusive=True, integer=True, doc="number of servers")
        )
    return params, tuple(declared)


def supermarket(
    b: int | str,
    d: int = 2,
    *,
    mu: object = 1,
    replacement: bool = True,
) -> Any:
    """The supermarket model with buffer ``b`` under power-of-``d`` choices.

    Parameters
    ----------
    b:
        Buffer size (jobs per server, including the one in service), ``b >= 1``;
        or ``"auto"`` (the smallest buffer at which Theorem 1's constant stops
        changing at the requested digits) or ``"inf"`` (infinite buffers), each a
        :class:`derive.spec.Truncated` family resolved once ``lam`` (and ``mu``)
        and the precision are known (:mod:`derive.models.open_buffers`; needs
        ``lam < mu`` and sampling with replacement).
    d:
        Number of servers sampled per arrival, ``d >= 1`` (``d = 1`` is random
        dispatch).
    mu:
        Service rate: a positive number, or ``"mu"`` (or the symbol ``MU``) to keep it
        as a free parameter.
    replacement:
        ``True`` samples with replacement (the paper's chain); ``False`` samples d
        distinct servers, which makes the rates depend on ``N`` (a parameter of
        the returned model; needs ``N >= d`` when evaluated).

    Returns
    -------
    SupermarketModel or derive.spec.Truncated
        Free parameter ``lam`` (arrival rate per server, ``> 0``), then ``mu`` if
        kept symbolic, then ``N`` without replacement.  State space
        ``1 >= s_1 >= ... >= s_b >= 0``; reference point the empty system; fast
        path ``"supermarket"`` (the structure-aware solver of :mod:`numeric`).
    """
    from derive.models.open_buffers import open_buffer, open_family

    d = check_int("d", d, 1)
    replacement = check_bool("replacement", replacement)
    mu_expr = parse_rate("mu", mu, MU)
    kind = open_buffer(b)
    if kind is not None:
        if not replacement:
            raise ParameterError(
                f"b must be a finite integer >= 1 when replacement is False (the N-dependent "
                f"rates have no b = {kind}), got {b!r}."
            )
        probe = supermarket(1, d, mu=mu)
        build = lambda n: supermarket(n, d, mu=mu)  # noqa: E731
        return open_family(kind, "supermarket", build, d, LAM, mu_expr, probe.info)
    try:
        b = check_int("b", b, 1)
    except ParameterError:
        raise ParameterError(f"b must be an integer >= 1, auto or inf, got {b!r}.") from None
    name = "supermarket" if replacement else "supermarket-without-replacement"
    return queue_model(
        name, b, d, LAM, mu_expr, replacement, key=(name, b, d, sp.srepr(mu_expr), SOURCE_DIGEST)
    )


#: Members kept by :func:`with_buffer` (least recently used dropped first).
MEMBERS = 64
_MEMBERS: OrderedDict[tuple[int, int], tuple[SupermarketModel, SupermarketModel]] = OrderedDict()
_MEMBERS_LOCK = threading.Lock()


def with_buffer(model: SupermarketModel, b: int) -> SupermarketModel:
    """The same power-of-d family member (name, d, rates, sampling) with buffer ``b``.

    Built once per ``(model, b)`` and shared, as :func:`derive.models.load_model`
    shares one model between the calls that name it: what a later layer keeps by the
    member's identity (its prepared problems and float64 fixed point,
    :mod:`numeric.prepared`) then serves the next call with the same member -- e.g. the
    float64 order 2 that solves a negligible tail's smaller member at every call
    (:mod:`mfstein.families.supermarket.tail`).  Kept by the model's identity (and
    holding it, so that identity is not reused), since what the member copies
    (structure, parameters, citation) is more than the model's key."""
    key = (id(model), b)
    with _MEMBERS_LOCK:
        seen = _MEMBERS.get(key)
        if seen is not None and seen[0] is model:
            _MEMBERS.move_to_end(key)
            return seen[1]
    member = _with_buffer(model, b)
    with _MEMBERS_LOCK:  # (another thread's, when it was first)
        seen = _MEMBERS.get(key)
        if seen is not None and seen[0] is model:
            return seen[1]
        _MEMBERS[key] = (model, member)
        while len(_MEMBERS) > MEMBERS:
            _MEMBERS.popitem(last=False)
    return member


def _with_buffer(model: SupermarketModel, b: int) -> SupermarketModel:
    """:func:`with_buffer` built."""
    st = SupermarketStructure.read(model.info.structure)
    arrival = next(p for p in model.params if str(p) == st.arrival)
    key = (*model.key[:1], b, *model.key[2:])
    return queue_model(
        model.name,
        b,
        st.d,
        arrival,
        st.mu,
        st.replacement,
        key=key,
        citation=model.info.citation,
    )


def first_levels(problem: Any, kept: list[int]) -> SupermarketModel | None:
    """The prepared problem's member (``problem.model``) restricted to ``kept``:
    :func:`with_buffer` ``K`` when ``kept`` are the first ``K`` levels ``0 .. K-1``
    (the levels above set to zero), else ``None`` (no member of the family lives on
    other coordinates).  The family's restriction ``r(problem, kept)`` in
    :data:`mfstein.ground.fast_paths.FAST_PATHS`, read by the truncated order 2
    (:mod:`numeric.meanfield.truncation`); structural, it reads the model only.
    ``first_levels(model, kept)`` (the older form) still works, with a
    :class:`DeprecationWarning`."""
    model = getattr(problem, "model", None)
    if model is None:  # the older form: the model itself
        import warnings

        warnings.warn(
            "first_levels(model, kept) is deprecated; pass the prepared problem.",
            DeprecationWarning,
            stacklevel=2,
        )
        model = problem
    if not kept or list(kept) != list(range(len(kept))):
        return None
    return with_buffer(model, len(kept))


def queue_model(
    name: str,
    b: int,
    d: int,
    arrival: sp.Symbol,
    service: sp.Expr,
    replacement: bool,
    *,
    key: tuple,
    citation: str = CITATION,
) -> SupermarketModel:
    """A power-of-d (JSQ(d)) model with the given arrival symbol and service rate,
    its parameters declared and the ``supermarket`` fast path registered."""
    states, transitions = queue_transitions(b, d, arrival, service, replacement)
    params, declared = queue_parameters(arrival, service, d, replacement)
    info = ModelInfo(
        parameters=declared,
        state_space=StateSpace("monotone"),
        reference=None,
        fast_path="supermarket",
        structure=SupermarketStructure(
            b=b,
            d=d,
            mu=service,
            replacement=replacement,
            arrival=str(arrival),
            service=str(service) if isinstance(service, sp.Symbol) else None,
        ),
        citation=citation,
        # With replacement the fixed point is unique: summing f_k = 0 from level k to b
        # gives s_k = rho (s_{k-1}^d - s_b^d), s_0 = 1, so every s_k is a decreasing
        # function of x = s_b on the state space, and s_b(x) = x has one root at most.
        unique_fixed_point=replacement,
        observables=queue_observables(states, d, replacement),
    )
    return SupermarketModel(
        name,
        states,
        params,
        transitions,
        info=info,
        key=key,
        d=d,
        mu=service,
        replacement=replacement,
    )


def queue_observables(
    states: tuple[sp.Symbol, ...], d: int, replacement: bool
) -> dict[str, sp.Expr]:
    """The family's usual measures: ``queue_length`` = sum of ``s_k`` (mean jobs per
    server), ``busy`` = ``s_1`` (utilisation), ``tail_k`` = ``s_k``, and with
    replacement ``blocking`` = ``s_b^d`` (an arrival's d samples are all full)."""
    obs: dict[str, sp.Expr] = {"queue_length": sp.Add(*states), "busy": states[0]}
    obs.update({f"tail_{k}": s for k, s in enumerate(states, start=1)})
    if replacement:
        obs["blocking"] = states[-1] ** d
    return obs
