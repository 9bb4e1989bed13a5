"""Result types of heterogeneous populations: the mean-field expansion and the exact law."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import mpmath
import numpy as np

from mfstein.ground.display import Presentable, error_figure, heading_rows, printed_to_error


def _mp(v: Any) -> mpmath.mpf:
    return v if isinstance(v, mpmath.mpf) else mpmath.mpf(float(v))


@dataclass(frozen=True, repr=False)
class HeterogeneousSolution(Presentable):
    """The steady-state mean field of K objects and its refined ``1/K`` term.

    ``s_star`` and ``V`` are flat in object-major order (index ``k*S + s``):
    ``E[X_{k,s}] = s_star[k*S+s] + V[k*S+s] / K + O(1/K^2)`` (Allmeier and Gast,
    SIGMETRICS 2022); ``W`` is ``Cov(X)`` to first order (``K S x K S``, its
    cross-object entries ``O(1/K)``).  ``precision`` is ``"float64"`` or
    ``"dps"``; every entry prints with the digits its error estimate (``errors``,
    absolute, per entry of ``s_star`` and ``V``) allows, at most ``digits``.
    """

    #: The heterogeneous population's name.
    model: str
    #: The number of objects.
    K: int
    #: The number of states of each object.
    S: int
    #: Every parameter of the model, as given, as strings.
    params: dict[str, str]
    #: ``"float64"`` (one float64 solve) or ``"dps"`` (digits earned at two working precisions,
    #: :func:`numeric.precision.earn_digits`).
    precision: str
    #: The requested decimal digits (15 for ``"float64"``).
    dps: int
    #: The digits earned, at most ``dps`` (for ``"float64"``, from the condition of the Jacobian
    #: and the agreement of the float64 solve,
    #: :func:`numeric.heterogeneous.steady.float64_digits`).
    digits: int
    #: The fixed point ``x*`` of the mean-field ODE, ``K S`` entries in object-major order (index
    #: ``k*S + s``): float64 numbers or ``mpf``.
    s_star: list[Any]
    #: The refined term, ``E[X_{k,s}] = s_star[k*S+s] + V[k*S+s] / K + O(1/K^2)``, same order and
    #: type as ``s_star``.
    V: list[Any]
    #: ``Cov(X)`` to first order, a ``K S x K S`` array (its cross-object entries ``O(1/K)``).
    W: np.ndarray = field(repr=False)
    #: The absolute error estimate of each entry of ``s_star`` and ``V`` (keys ``"s_star"`` and
    #: ``"V"``): for ``"float64"`` ``10^-digits`` times the largest entry's magnitude, for
    #: ``"dps"`` the difference of the values at the two working precisions, at least
    #: ``|value| 10^-wp_low`` (:func:`numeric.precision.entry_errors`).
    errors: dict[str, list[Any]] = field(repr=False)
    #: The condition number (2-norm) of the Jacobian on the reduced coordinates at ``x*``.
    condition: float = 1.0
    #: The objects' names, in order (``K`` of them).
    object_names: tuple[str, ...] = ()
    #: The states' names, in order (``S`` of them).
    state_names: tuple[str, ...] = ()
    #: Each requested observable of the model on this steady state, by name
    #: (:class:`numeric.heterogeneous.observables.ObservableValue`); empty when none was asked for.
    observables: dict[str, Any] = field(default_factory=dict)

    _MORE = "all numbers: .s_star, .V, .W, .refined(), .by_object(); .to_dict() for JSON"

    def refined(self) -> list[Any]:
        """``s_star + V / K``, the refined estimate of ``E[X_{k,s}]``."""
        return [s + v / self.K for s, v in zip(self.s_star, self.V, strict=True)]

    def by_object(self, name: str = "s_star") -> np.ndarray:
        """``s_star`` (or ``V``, ``refined``) as a ``K x S`` float64 array."""
        flat = self.refined() if name == "refined" else getattr(self, name)
        return np.array([float(v) for v in flat]).reshape(self.K, self.S)

    def utilisation(self) -> np.ndarray:
        """``1 - P(object k in its first state)`` by the refined estimate, per object:
        each server's utilisation when the first state is an empty queue (float64)."""
        return 1.0 - self.by_object("refined")[:, 0]

    def texts(self, name: str) -> list[str]:
        """Decimal strings of ``s_star`` or ``V`` with only their earned digits."""
        from numeric.precision import format_entries

        with mpmath.workdps(self.dps + 20):
            values = [_mp(v) for v in getattr(self, name)]
            errs = [_mp(e) for e in self.errors[name]]
            return format_entries(values, errs, self.digits)[0]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ``s_star`` and ``V`` as decimal strings of their earned
        digits, ``W`` as float64 nested lists with at most ``digits`` digits
        (:func:`mfstein.ground.display.claimed`), the condition with 3."""
        from mfstein.ground.display import claimed, measured

        return {
            "model": self.model,
            "K": self.K,
            "S": self.S,
            "params": dict(self.params),
            "precision": self.precision,
            "digits": self.digits,
            "condition": measured(self.condition),
            "s_star": self.texts("s_star"),
            "V": self.texts("V"),
            "W": claimed(np.asarray(self.W, dtype=float).tolist(), self.digits),
            "observables": {k: v.to_dict() for k, v in self.observables.items()},
        }

    def _rows(self) -> list[tuple[str, str]]:
        S = self.S
        s, v = self.texts("s_star"), self.texts("V")
        rows = heading_rows(self.model, self.params)
        rows.append(("objects", f"K = {self.K}, S = {S} states each"))
        rows.append(("precision", f"{self.precision} ({self.digits} digits)"))
        for k in range(min(self.K, 3)):
            rows.append((f"s* object {k}", ", ".join(s[k * S:(k + 1) * S])))
            rows.append((f"V object {k}", ", ".join(v[k * S:(k + 1) * S])))
        for name, g in self.observables.items():
            rows.append((name, g.text().partition(" = ")[2]))
        return rows

    def to_text(self) -> str:
        """What ``mfstein solve`` prints: the heading, the expansion's line, ``s*`` and
        ``V`` by object (each entry with its earned digits) and the observables."""
        from numeric.heterogeneous.text import heading, object_lines, observable_lines

        with mpmath.workdps(self.dps + 20):
            s, v = self.texts("s_star"), self.texts("V")
        out = [
            heading(self),
            f"E[X_(k,s)] = s*_(k,s) + V_(k,s)/K + O(1/K^2) (K plays the role of N); "
            f"{self.precision}, {self.digits} digits at most, each entry only its earned ones",
        ]
        out += object_lines(self, s, "s* object")
        out += object_lines(self, v, "V  object")
        out += observable_lines("observables (g0 + g1/K):", self.observables)
        return "\n".join(out)


@dataclass(frozen=True, repr=False)
class HeterogeneousExact(Presentable):
    """The stationary law of the K objects' product chain (``S^K`` states, float64).

    ``mean[k*S + s] = P(object k in s)``; ``cov`` the ``K S x K S`` covariance of
    the indicators; ``residual`` is ``||pi Q||_1``.  Printed numbers carry the digits
    their error allows (:meth:`errors`): the law's error ``||pi - pi_true||_1 <= 2
    kappa ||pi Q||_1`` (:attr:`law_error`, :class:`numeric.exact.law_error.LawSystem`: ``system``
    is the pinned system it is estimated from, ``None`` when not kept) times half
    the range of an indicator, ``1/2``; a covariance adds the product of two means'
    errors.
    """

    #: The heterogeneous population's name.
    model: str
    #: The number of objects.
    K: int
    #: The number of states of each object.
    S: int
    #: Every parameter of the model, as given, as strings.
    params: dict[str, str]
    #: The number of states of the product chain, ``S^K``.
    states: int
    #: ``||pi Q||_1`` of the computed law (float64).
    residual: float
    #: ``P(object k in s)`` at index ``k*S + s``, ``K S`` float64 numbers.
    mean: np.ndarray
    #: The ``K S x K S`` covariance of the indicators ``X_{k,s} = [object k in s]``.
    cov: np.ndarray = field(repr=False)
    #: The stationary law, ``S^K`` float64 probabilities, one per state of the product chain.
    pi: np.ndarray = field(repr=False)
    #: The pinned system the law's error is estimated from
    #: (:class:`numeric.exact.law_error.LawSystem`); ``None`` when not kept (then :attr:`law_error`
    #: is ``None``).
    system: Any = field(default=None, repr=False, compare=False)
    #: Each requested observable of the model on this law, by name
    #: (:class:`numeric.heterogeneous.observables.ObservableValue`; ``dataclasses.replace(r,
    #: observables=observe(model, params, r, names))``, as ``mfstein exact --observable``
    #: does); empty when none was asked for.
    observables: dict[str, Any] = field(default_factory=dict)
    #: The objects' names, in order (``K`` of them).
    object_names: tuple[str, ...] = ()
    #: The states' names, in order (``S`` of them).
    state_names: tuple[str, ...] = ()

    _MORE = "all numbers: .mean, .cov, .pi, .by_object(); .to_dict() for JSON"

    @property
    def law_error(self) -> float | None:
        """The estimate of ``||pi - pi_true||_1`` (:func:`numeric.exact.law_error.law_error`)."""
        return None if self.system is None else self.system.law_error(self.residual, self.states)

    def errors(self) -> dict[str, float]:
        """The absolute error of ``mean`` and of ``cov`` (class docstring); empty
        without an estimate."""
        L = self.law_error
        if L is None:
            return {}
        # |E_pi X - E X| <= L/2 for an indicator; Cov adds e^2, its centred products lie in [-1, 1]
        return {"mean": L / 2.0, "cov": L + (L / 2.0) ** 2}

    def printed(self, name: str) -> Any:
        """``mean`` or ``cov`` as :meth:`to_dict` prints it (:meth:`errors`)."""
        value = np.asarray(getattr(self, name), dtype=float)
        return printed_to_error(value, self.errors().get(name))

    def by_object(self) -> np.ndarray:
        """``mean`` as a ``K x S`` array."""
        return np.asarray(self.mean).reshape(self.K, self.S)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (float64 numbers with the digits their ``errors`` allow)."""
        return {
            "model": self.model,
            "K": self.K,
            "S": self.S,
            "params": dict(self.params),
            "states": self.states,
            "residual": error_figure(self.residual),
            "law_error": error_figure(self.law_error),
            "errors": error_figure(self.errors()),
            "mean": self.printed("mean"),
            "cov": self.printed("cov"),
            "observables": {k: v.to_dict() for k, v in self.observables.items()},
        }

    def _rows(self) -> list[tuple[str, str]]:
        rows = heading_rows(self.model, self.params)
        rows.append(("objects", f"K = {self.K}, S = {self.S}: {self.states} states"))
        rows.append(("residual", f"||pi Q||_1 = {self.residual:.2e} (float64)"))
        rows.append(("law error", f"||pi - pi_true||_1 <= {error_figure(self.law_error)!r}"))
        mean = self.printed("mean")
        for k in range(min(self.K, 4)):
            m = mean[k * self.S:(k + 1) * self.S]
            rows.append((f"P(object {k} in s)", ", ".join(repr(x) for x in m)))
        return rows

    def to_text(self) -> str:
        """What ``mfstein exact`` prints: the heading, the chain's size and residual,
        ``P(object k in s)`` by object and the observables."""
        from numeric.heterogeneous.text import heading, object_lines, observable_lines

        out = [
            heading(self),
            f"exact product chain of the K = {self.K} objects (--N is K): {self.states:,} "
            f"states, ||pi Q||_1 = {self.residual:.1e} (float64)",
        ]
        cells = [f"{x:.10g}" for x in self.mean]
        out += object_lines(self, cells, "P(in s) object")
        out += observable_lines("observables:", self.observables)
        return "\n".join(out)
