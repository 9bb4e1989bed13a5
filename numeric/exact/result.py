"""The one result type of the exact finite-N solver (:func:`numeric.exact.solve`
and its supermarket short form :func:`numeric.exact.solve_exact`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mfstein.ground.arguments import renamed_attribute
from mfstein.ground.display import Presentable, count_row, heading_rows, shape_text


def _floats(v: Any) -> Any:
    """Plain floats for JSON: a float for a scalar, nested lists for an array, ``None``
    for ``None``."""
    if v is None:
        return None
    a = np.asarray(v, dtype=float)
    return a.tolist()


def _head(v: Any, n: int = 4) -> str:
    a = np.asarray(v, dtype=float)
    return ", ".join(f"{x:.8g}" for x in a[:n]) + (", ..." if a.size > n else "")


@dataclass(frozen=True, repr=False)
class ExactResult(Presentable):
    """Exact finite-N results of a model (float64; the precision is stated by the residual).

    Attributes
    ----------
    model, N, params:
        The system (parameters as given, as strings).
    n:
        The state's dimension (``b`` is its deprecated name, warns; ``"b"`` its
        key in :meth:`to_dict`, the documented ``--json`` output).
    states:
        Number of (reachable) states.
    residual:
        ``||pi Q||_1`` of the computed ``pi``: the precision of every number here.
    pi, state_array:
        Stationary probabilities and the states ``n`` (rows; ``S = n / N``).
    s_star:
        The mean-field fixed point the moments are centred on.
    mean, n_bias, n_cov, n_mse:
        ``E[S]``, ``N (E[S] - s*)``, ``N Cov(S)``, ``N E||S - s*||^2``.
    seconds, solver, iterations:
        Wall time, the linear solver that ran (``"direct"``, ``"bicgstab"``,
        ``"gmres"``; ``method`` is its deprecated name, warns; ``"method"`` its key
        in :meth:`to_dict`) and its iterations.
    relative_residual, tolerance:
        ``residual`` divided by the largest exit rate, and the tolerance it met.
    start, law_values:
        The lattice start (integers) and the conserved values ``c . n``.
    V, W, constant:
        Mean-field refined bias, OU covariance and ``c = tr(W)``
        (:func:`numeric.solve`), when the solve computed them.
    marginal_pmf:
        ``marginal_pmf[k][j] = P(n_k = j)``.
    queue_length_pmf, mean_jobs, blocking:
        For monotone (queueing) models ``P(Q = k) = E[S_k] - E[S_{k+1}]``,
        ``sum_k E[S_k]`` and the fraction of arrivals blocked; ``None`` otherwise.
    up_rate:
        ``E[sum of the intensities of the transitions with sum(l) > 0]``.
    exact_states, notes:
        States whose rates needed exact evaluation; remarks.
    truncation:
        The truncation of an unbounded state space and the stationary mass it cuts
        (:class:`numeric.exact.truncation.Cut`: chosen for ``truncation_tol`` or
        given), which bounds the law's error in total variation beside the
        residual; ``None`` when nothing is cut.
    lam, d, replacement:
        The supermarket short form's arrival rate (decimal string as given),
        choices and sampling; ``None`` for other models.
    source_model:
        The :class:`derive.Model` solved (for :meth:`expect`).
    observables:
        Name -> :class:`numeric.meanfield.observables.ExactExpectation` of the
        observables asked for with the result (``dataclasses.replace(r,
        observables={g: r.expect(g)})``, as ``mfstein exact --observable`` does);
        ``to_dict()`` adds them under ``"observables"``.  Empty by default.
    """

    model: str
    N: int
    params: dict[str, str]
    n: int
    states: int
    residual: float
    pi: np.ndarray = field(repr=False)
    state_array: np.ndarray = field(repr=False)
    s_star: np.ndarray
    mean: np.ndarray
    n_bias: np.ndarray
    n_mse: float
    n_cov: np.ndarray
    seconds: float
    solver: str
    iterations: int
    relative_residual: float | None = None
    tolerance: float | None = None
    start: list[int] | None = None
    law_values: list[str] = field(default_factory=list)
    V: np.ndarray | None = None
    W: np.ndarray | None = None
    constant: float | None = None
    marginal_pmf: list[np.ndarray] | None = field(default=None, repr=False)
    queue_length_pmf: np.ndarray | None = None
    mean_jobs: float | None = None
    blocking: float | None = None
    up_rate: float | None = None
    exact_states: int = 0
    notes: list[str] = field(default_factory=list)
    truncation: Any = None
    lam: str | None = None
    d: int | None = None
    replacement: bool | None = None
    source_model: Any = field(default=None, repr=False, compare=False)
    observables: dict[str, Any] = field(default_factory=dict)

    b = renamed_attribute("ExactResult", "b", "n")
    method = renamed_attribute("ExactResult", "method", "solver")

    def expect(self, g: Any, model: Any = None) -> Any:
        """``E[g(S_N)]``, ``Var g(S_N)`` (:func:`numeric.meanfield.observables.expect_exact`)."""
        from numeric.meanfield.observables import expect_exact

        return expect_exact(self, g, model)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the keys of ``mfstein exact --json`` (plain floats;
        ``lam`` as the decimal string given).  The supermarket short form adds
        ``lam`` and ``d``."""
        out: dict[str, Any] = {"model": self.model, "N": self.N}
        if self.lam is not None:
            out["lam"] = self.lam
        out["params"] = dict(self.params)
        out["b"] = self.n  # the documented key of --json (the dimension, `n`)
        if self.d is not None:
            out["d"] = self.d
        out.update(
            {
                "states": self.states,
                "residual": float(self.residual),
                "relative_residual": _floats(self.relative_residual),
                "tolerance": self.tolerance,
                "start": self.start,
                "law_values": list(self.law_values),
                "s_star": _floats(self.s_star),
                "V": _floats(self.V),
                "constant": _floats(self.constant),
                "n_mse": float(self.n_mse),
                "mean": _floats(self.mean),
                "n_bias": _floats(self.n_bias),
                "n_cov": _floats(self.n_cov),
                "marginal_pmf": None
                if self.marginal_pmf is None
                else [_floats(m) for m in self.marginal_pmf],
                "queue_length_pmf": _floats(self.queue_length_pmf),
                "mean_jobs": _floats(self.mean_jobs),
                "blocking": _floats(self.blocking),
                "up_rate": _floats(self.up_rate),
                "seconds": float(self.seconds),
                "method": self.solver,  # the documented key of --json (the solver)
                "iterations": self.iterations,
                "truncation": None if self.truncation is None else self.truncation.to_dict(),
                "notes": list(self.notes),
            }
        )
        if self.observables:
            out["observables"] = {k: v.to_dict() for k, v in self.observables.items()}
        return out

    def _rows(self) -> list[tuple[str, str]]:
        rows = [
            *heading_rows(f"{self.model}, N = {self.N}", self.params),
            ("states", f"{self.states:,} (dimension {self.n})"),
            ("residual", f"{self.residual:.3g} = ||pi Q||_1 (the precision of every number"
             + (", beside the truncation's cut)" if self.truncation is not None else ")")),
            ("N E||S-s*||^2", f"{self.n_mse:.10g}"),
            ("E[S]", _head(self.mean)),
            ("n_bias, n_cov", f"{shape_text(self.n_bias)}, {shape_text(self.n_cov)}"),
        ]
        if self.truncation is not None:
            rows.append(("truncation", self.truncation.text()))
        if self.blocking is not None:
            rows.append(("blocking", f"{self.blocking:.6g}"))
        solver = f"{self.solver}, {self.iterations} iterations, {self.seconds:.3g} s"
        rows.append(("solver", solver))
        if self.notes:
            rows.append(count_row("notes", self.notes))
        return rows

    _MORE = "all numbers: .pi, .state_array, .mean, .n_cov, .marginal_pmf; .to_dict() for JSON"
