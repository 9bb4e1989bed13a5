"""Density-dependent population processes: the plain model description.

A model of dimension ``b`` is a list of transitions ``l`` with jump vectors
``l in Z^b`` and intensities ``beta_l(s)``: from state ``s`` the finite-N chain
jumps to ``s + l/N`` at rate ``N beta_l(s)`` (Section 3 of "Beyond Scaling:
Calculable Error Bound of the Power-of-Two-Choices Mean-Field Model in
Heavy-Traffic").  A :class:`Model` is only that description plus its metadata
(:class:`derive.spec.ModelInfo`); everything else -- drift, Jacobian, Hessian,
diffusion matrix, Stein's equation, generated kernels -- is derived from it by
:mod:`derive.objects` and :mod:`derive.kernels`, which read the model.  The
model families of the library (supermarket, JSQ(L), SIR, ...) live in
:mod:`derive.models`.

Symbols are plain SymPy symbols without assumptions (``s1 .. sb``, ``lam``,
``mu``, ``N``) so that every expression printed by mfstein parses back with
:func:`sympy.sympify` to the identical object.

References
----------
"Beyond Scaling: Calculable Error Bound of the Power-of-Two-Choices Mean-Field
Model in Heavy-Traffic" (the core paper; cited by section, lemma and equation).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import sympy as sp

from derive.spec import ModelInfo
from mfstein.errors import ParameterError

if TYPE_CHECKING:
    from derive.kernels import Kernels

#: The arrival-rate symbol (lambda in the paper).
LAM = sp.Symbol("lam")
#: The service-rate symbol (1 in the core paper; beta in Graham's JSQ(L)).
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
    info:
        Metadata for the numeric layers (parameter ranges, state space,
        conservation laws, reference point, fast path); see
        :class:`derive.spec.ModelInfo`.  Defaults to an empty declaration.
    key:
        A hashable identity used for caching derived objects and generated kernels.
        Defaults to a digest of the name, symbols and transitions (``srepr``), so
        two models with the same transitions share kernels and any change to a
        transition gives a new key.
    """

    def __init__(
        self,
        name: str,
        states: Sequence[sp.Symbol],
        params: Sequence[sp.Symbol],
        transitions: Iterable[Transition],
        *,
        info: ModelInfo | None = None,
        key: tuple | None = None,
    ) -> None:
        self.name = name
        self.info: ModelInfo = info if info is not None else ModelInfo()
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

    def structure(self, name: str, default: Any = None) -> Any:
        """A structural fact declared by the model's factory (``info.structure``)."""
        return self.info.structure.get(name, default)

    # -- derived symbolic objects ---------------------------------------------
    # Convenience accessors: the objects are computed by derive.objects, which
    # reads the model (the model itself holds only its description).
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

        The core paper (Theorem 1): ``f~_i = 1/2 [lam (s_{i-1}^2 - s_i^2) + (s_i - s_{i+1})]``,
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

    def kernels(self, backend: str = "numba") -> Kernels:
        """Generated numeric kernels for this model (see :func:`derive.kernels.kernels`)."""
        from derive.kernels import kernels

        return kernels(self, backend)


def __getattr__(name: str) -> Any:
    # The supermarket family moved to derive.models.supermarket; these names stay
    # importable from here for older callers.
    if name in ("supermarket", "SupermarketModel"):
        import importlib

        return getattr(importlib.import_module("derive.models.supermarket"), name)
    raise AttributeError(f"module 'derive.model' has no attribute {name!r}")
