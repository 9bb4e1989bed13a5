"""A supermarket-family model with its rates: the one form the fast path carries.

The fast path of :func:`numeric.solve` receives a derive model of the power-of-d
family (the supermarket model with or without replacement, JSQ(L)) and its
parameter values; the short forms (``numeric.bound(lam, b, d)``,
:func:`mfstein.families.supermarket.solver.solve_supermarket`) build that model once at their entry
(:func:`supermarket_member`).  From there on a :class:`Member` travels down:

* the shooting and the truncation estimates read its numbers ``lam``, ``mu``,
  ``d`` and ``N`` (drift ``f_k = lam (s_{k-1}^d - s_k^d) - mu (s_k - s_{k+1})``
  with replacement);
* the kernels evaluated are the model's own, on the parameter vector taken from
  the model's ``params`` in their kernel order (:meth:`Member.params`);
* a truncated head of ``K`` levels is the same family member with buffer ``K``
  (:func:`derive.models.supermarket.with_buffer`), whose key -- hence whose
  generated kernels -- is the one a model built with buffer ``K`` has.

No layer below rebuilds a model from the numbers.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any

from mpmath import mpf

from mfstein.ground.errors import ParameterError


@functools.lru_cache(maxsize=64)
def _supermarket(b: int, d: int, unit_rate: bool, replacement: bool) -> Any:
    """derive's supermarket model, built once per shape (SymPy construction is slow at large b)."""
    from derive.models.supermarket import supermarket

    return supermarket(b, d, mu=1 if unit_rate else "mu", replacement=replacement)


@dataclass(frozen=True, eq=False)
class Member:
    """A power-of-d family model with the values of its rates.

    ``lam`` is the arrival rate per server, ``mu`` the service rate (a free
    parameter of the model or built into it), ``N`` the number of servers when
    the ``d`` servers are sampled without replacement (``None`` with).
    """

    #: The power-of-d family's model (:class:`derive.model.Model`, ``b = model.n`` levels).
    model: Any
    #: The arrival rate per server.
    lam: mpf
    #: The service rate (a free parameter of the model or built into it).
    mu: mpf
    #: The number of servers when the ``d`` servers are sampled without replacement; ``None`` with
    #: replacement.
    N: int | None = None

    @property
    def b(self) -> int:
        """The model's buffer size."""
        return self.model.n

    @property
    def d(self) -> int:
        """Servers sampled per arrival."""
        return _structure(self.model).d

    def rounded(self) -> Member:
        """The same member with ``lam`` and ``mu`` rounded to the current precision."""
        return replace(self, lam=+self.lam, mu=+self.mu)

    def head(self, levels: int) -> Any:
        """The model of the ``levels`` leading levels (the model itself for all ``b``)."""
        from derive.models.supermarket import with_buffer  # (kept once per model and levels)

        return self.model if levels == self.model.n else with_buffer(self.model, levels)

    def params(self) -> list[mpf]:
        """The parameter vector of the model's kernels: its ``params`` in order,
        the arrival rate ``lam``, the service rate ``mu`` where it is free, ``N``."""
        st = _structure(self.model)
        values: dict[str, mpf] = {st.arrival: self.lam}
        if st.service:
            values[st.service] = self.mu
        if self.N is not None:
            values["N"] = mpf(self.N)
        try:
            return [values[str(p)] for p in self.model.params]
        except KeyError as exc:
            raise ParameterError(
                f"model {self.model.name} has a parameter {exc.args[0]} the supermarket "
                "fast path does not know."
            ) from None

    def kernels(self, levels: int, group: str = "mean_field") -> Any:
        """derive's mpmath kernels of :meth:`head` ``(levels)`` (``group`` as in
        :func:`derive.kernels.kernels`: ``"mean_field"`` generates only ``jac``,
        ``Q``, ``ftilde`` and the Hessian values, ``"base"`` the drift too)."""
        from derive.kernels import kernels

        return kernels(self.head(levels), "mpmath", group)


def supermarket_member(b: int, d: int, lam: mpf, mu: mpf, N: int | None = None) -> Member:
    """The short form's model, built once: derive's supermarket model with buffer
    ``b`` and its rates.  ``mu = 1`` uses the model with the rate built in (the one
    other packages use, so generated kernels are shared); other rates keep ``mu``
    as a parameter; ``N`` given samples without replacement."""
    return Member(_supermarket(b, d, mu == 1, N is None), lam, mu, N)


def _structure(model: Any) -> Any:
    """The family's facts of ``model``
    (:class:`derive.models.supermarket.SupermarketStructure`)."""
    from derive.models.supermarket_structure import SupermarketStructure

    return SupermarketStructure.read(model.info.structure)
