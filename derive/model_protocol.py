"""What the derivations read of a model: the protocol below :class:`derive.model.Model`.

:mod:`derive.objects`, :mod:`derive.expansion`, :mod:`derive.backends` and
:mod:`derive.kernels` compute from a model's description; :class:`Model` offers
their results as convenience accessors (``model.drift``, ``model.kernels()``).
So that the derivations do not import the module that imports them, they are
typed on :class:`ModelLike`, the part of a :class:`derive.model.Model` they
read, which every ``Model`` satisfies.  Nothing of the project is imported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import sympy as sp

__all__ = ["ModelLike", "TransitionLike"]


class TransitionLike(Protocol):
    """One transition as the derivations read it (:class:`derive.model.Transition`)."""

    @property
    def jump(self) -> tuple[int, ...]: ...

    @property
    def rate(self) -> sp.Expr: ...


class ModelLike(Protocol):
    """A model as the derivations read it (:class:`derive.model.Model`)."""

    @property
    def name(self) -> str: ...

    @property
    def key(self) -> tuple: ...

    @property
    def n(self) -> int: ...

    @property
    def states(self) -> tuple[sp.Symbol, ...]: ...

    @property
    def params(self) -> tuple[sp.Symbol, ...]: ...

    @property
    def transitions(self) -> Sequence[TransitionLike]: ...

    @property
    def drift(self) -> sp.Matrix: ...

    @property
    def jacobian(self) -> sp.Matrix: ...

    @property
    def hessian(self) -> sp.MutableSparseNDimArray: ...

    @property
    def diffusion(self) -> sp.Matrix: ...

    @property
    def ftilde(self) -> sp.Matrix: ...

    def kernels(self, backend: str = "numba") -> Any: ...
