"""Density-dependent population processes and the supermarket (power-of-d) family.

A model of dimension ``b`` is a list of transitions ``l`` with jump vectors
``l in Z^b`` and intensities ``beta_l(s)``: from state ``s`` the finite-N chain
jumps to ``s + l/N`` at rate ``N beta_l(s)`` (seed 000, Section 3).  Everything
else -- drift, Jacobian, Hessian, diffusion matrix, Stein's equation -- is
derived from that list in :mod:`derive.objects`.

Symbols are plain SymPy symbols without assumptions (``s1 .. sb``, ``lam``,
``mu``, ``N``) so that every expression printed by mfstein parses back with
:func:`sympy.sympify` to the identical object.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import sympy as sp

from mfstein.errors import ParameterError, check_int

#: The arrival-rate symbol (lambda in the paper).
LAM = sp.Symbol("lam")
#: The service-rate symbol (1 in seed 000; general in seed 001).
MU = sp.Symbol("mu")
#: The number of servers, a parameter only of N-dependent models.
N = sp.Symbol("N")


def state_symbols(b: int) -> tuple[sp.Symbol, ...]:
    """The state symbols ``s1 .. sb`` (fractions of servers with at least k jobs)."""
    return tuple(sp.Symbol(f"s{k}") for k in range(1, b + 1))


@dataclass(frozen=True)
class Transition:
    """One transition of a density-dependent population process.

    Parameters
    ----------
    jump:
        The integer jump vector ``l``; the state moves from ``s`` to ``s + l/N``.
    rate:
        The intensity ``beta_l(s)``; the finite-N chain makes the jump at rate
        ``N * beta_l(s)``.
    label:
        A short human-readable name (used in LaTeX and in error messages).
    """

    jump: tuple[int, ...]
    rate: sp.Expr
    label: str = ""


class Model:
    """A density-dependent population process ``s -> s + l/N`` at rate ``N beta_l(s)``.

    Parameters
    ----------
    name:
        Identifier, e.g. ``"supermarket"``.
    states:
        The state symbols, in order; their number is the dimension ``b``.
    params:
        The free parameters (SymPy symbols) in the order numeric kernels take them.
    transitions:
        The transitions; each jump vector must have length ``b`` and each rate may
        only involve the state symbols and ``params``.
    key:
        A hashable identity used for caching derived objects and generated kernels.
        Defaults to a digest of the transitions' ``srepr``.
    """

    def __init__(
        self,
        name: str,
        states: Sequence[sp.Symbol],
        params: Sequence[sp.Symbol],
        transitions: Iterable[Transition],
        *,
        key: tuple | None = None,
    ) -> None:
        self.name = name
        self.states: tuple[sp.Symbol, ...] = tuple(states)
        self.params: tuple[sp.Symbol, ...] = tuple(params)
        self.transitions: tuple[Transition, ...] = tuple(transitions)
        b = len(self.states)
        if b < 1:
            raise ParameterError("states must hold at least one symbol (b >= 1).")
        allowed = set(self.states) | set(self.params)
        for t in self.transitions:
            if len(t.jump) != b:
                raise ParameterError(
                    f"transition {t.label or t.jump} has a jump of length {len(t.jump)}; "
                    f"it must have length b = {b}."
                )
            extra = sp.sympify(t.rate).free_symbols - allowed
            if extra:
                names = ", ".join(sorted(map(str, extra)))
                raise ParameterError(
                    f"transition {t.label or t.jump} uses symbols {names} that are neither "
                    "states nor declared params."
                )
        if key is None:
            blob = repr(
                (
                    name,
                    self.states,
                    self.params,
                    [(t.jump, sp.srepr(t.rate)) for t in self.transitions],
                )
            )
            key = ("custom", hashlib.sha256(blob.encode()).hexdigest()[:16])
        self.key = key

    # -- basic facts ---------------------------------------------------------
    @property
    def b(self) -> int:
        """The dimension of the state (the buffer size for the supermarket model)."""
        return len(self.states)

    def __repr__(self) -> str:
        params = ", ".join(map(str, self.params))
        return (
            f"<Model {self.name} b={self.b} params=({params}) transitions={len(self.transitions)}>"
        )

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Model) and other.key == self.key

    # -- derived symbolic objects (cached; see derive.objects for the math) ---
    @cached_property
    def drift(self) -> sp.Matrix:
        """The mean-field drift ``f(s) = sum_l l beta_l(s)`` as a ``b x 1`` matrix."""
        from derive import objects

        return objects.drift(self)

    @cached_property
    def jacobian(self) -> sp.Matrix:
        """The Jacobian ``J(s) = df/ds`` (``b x b``)."""
        from derive import objects

        return objects.jacobian(self)

    @cached_property
    def hessian(self) -> sp.MutableSparseNDimArray:
        """The Hessian ``H[i, j, k] = d^2 f_i / ds_j ds_k`` as a sparse rank-3 array."""
        from derive import objects

        return objects.hessian(self)

    @cached_property
    def diffusion(self) -> sp.Matrix:
        """The diffusion matrix ``Q(s) = sum_l l l^T beta_l(s)`` (``b x b``)."""
        from derive import objects

        return objects.diffusion(self)

    @cached_property
    def ftilde(self) -> sp.Matrix:
        """``f~(s) = diag(Q(s)) / 2``; for the supermarket model the paper's ``f~``.

        Seed 000 (Theorem 1): ``f~_i = 1/2 [lam (s_{i-1}^2 - s_i^2) + (s_i - s_{i+1})]``,
        and ``Q = 2 diag(f~)`` because every jump moves one coordinate by one.
        """
        from derive import objects

        return objects.ftilde(self)

    def subs_params(self, values: Mapping[sp.Symbol | str, object]) -> dict[sp.Symbol, object]:
        """Map parameter names or symbols to values, checking that each is a parameter."""
        out: dict[sp.Symbol, object] = {}
        by_name = {str(p): p for p in self.params}
        for k, v in values.items():
            sym = by_name.get(str(k))
            if sym is None:
                raise ParameterError(
                    f"{k} is not a parameter of this model; its parameters are "
                    f"{', '.join(by_name) or 'none'}."
                )
            out[sym] = v
        return out

    def kernels(self, backend: str = "numba"):
        """Generated numeric kernels for this model (see :func:`derive.kernels.kernels`)."""
        from derive.kernels import kernels

        return kernels(self, backend)


class SupermarketModel(Model):
    """A :class:`Model` built by :func:`supermarket`; remembers ``d``, ``mu`` and the
    sampling scheme so that numeric code can use the model's structure."""

    def __init__(self, *args, d: int, mu: sp.Expr, replacement: bool, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.d = d
        self.mu = mu
        self.replacement = replacement


def _binomial_fraction(x: sp.Expr, d: int) -> sp.Expr:
    """``C(N x, d) / C(N, d) = prod_{j<d} (N x - j) / (N - j)``: the chance that d
    servers drawn without replacement all lie in a set holding the fraction x."""
    return sp.Mul(*[(N * x - j) / (N - j) for j in range(d)])


def supermarket(
    b: int,
    d: int = 2,
    *,
    mu: object = 1,
    replacement: bool = True,
) -> Model:
    """The supermarket model with buffer ``b`` under power-of-``d`` choices.

    State ``s_k`` = fraction of servers holding at least ``k`` jobs, with
    ``s_0 = 1`` and ``s_{b+1} = 0`` (seed 000, Section 3).  Transitions:

    * arrival joining a server with ``k-1`` jobs, ``l = +e_k``, intensity
      ``lam (s_{k-1}^d - s_k^d)`` (with replacement), or
      ``lam [C(N s_{k-1}, d) - C(N s_k, d)] / C(N, d)`` (d distinct servers);
    * departure from a server with ``k`` jobs, ``l = -e_k``, intensity
      ``mu (s_k - s_{k+1})``.

    With ``d = 2``, ``mu = 1`` and replacement this is seed 000's CTMC, whose
    drift is the paper's ``f_k(s) = lam (s_{k-1}^2 - s_k^2) - (s_k - s_{k+1})``.

    Parameters
    ----------
    b:
        Buffer size (jobs per server, including the one in service), ``b >= 1``.
    d:
        Number of servers sampled per arrival, ``d >= 1`` (``d = 1`` is random
        dispatch).
    mu:
        Service rate: a positive number, or ``"mu"`` (or the symbol ``MU``) to keep
        it as a free parameter.
    replacement:
        ``True`` samples with replacement (the paper's chain); ``False`` samples d
        distinct servers, which makes the rates depend on ``N`` (a parameter of
        the returned model; needs ``N >= d`` when evaluated).
    """
    b = check_int("b", b, 1)
    d = check_int("d", d, 1)
    if isinstance(mu, str):
        if mu != "mu":
            raise ParameterError(f"mu must be a positive number or 'mu', got {mu!r}.")
        mu = MU
    mu_expr = sp.sympify(mu)
    if mu_expr != MU:
        if not (mu_expr.is_number and mu_expr.is_positive):
            raise ParameterError(f"mu must be a positive number or 'mu', got {mu!r}.")
    states = state_symbols(b)
    padded = (sp.Integer(1), *states, sp.Integer(0))
    if replacement:

        def sample(x: sp.Expr) -> sp.Expr:
            return x**d
    else:

        def sample(x: sp.Expr) -> sp.Expr:
            return _binomial_fraction(x, d) if x != 0 else sp.Integer(0)

    transitions = []
    for k in range(1, b + 1):
        up = tuple(1 if j == k - 1 else 0 for j in range(b))
        down = tuple(-1 if j == k - 1 else 0 for j in range(b))
        transitions.append(
            Transition(
                up, LAM * (sample(padded[k - 1]) - sample(padded[k])), f"arrival to level {k}"
            )
        )
        transitions.append(
            Transition(down, mu_expr * (padded[k] - padded[k + 1]), f"departure from level {k}")
        )
    params: list[sp.Symbol] = [LAM]
    if mu_expr == MU:
        params.append(MU)
    if not replacement:
        params.append(N)
    name = "supermarket" if replacement else "supermarket-without-replacement"
    return SupermarketModel(
        name,
        states,
        params,
        transitions,
        key=(name, b, d, sp.srepr(mu_expr)),
        d=d,
        mu=mu_expr,
        replacement=replacement,
    )
