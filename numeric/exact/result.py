"""The one result type of the exact finite-N solver (:func:`numeric.exact.solve`
and its supermarket short form :func:`numeric.exact.solve_exact`)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from mfstein.ground.arguments import renamed_attribute
from mfstein.ground.display import (
    FamilyField,
    Presentable,
    count_row,
    error_figure,
    heading_rows,
    measured,
    printed_to_error,
    shape_text,
)
from mfstein.ground.result_tasks import ResultTasks, task
from numeric.exact import law_error as claim


def _floats(v: Any) -> Any:
    """Plain floats for JSON: a float for a scalar, nested lists for an array, ``None``
    for ``None``."""
    if v is None:
        return None
    a = np.asarray(v, dtype=float)
    return a.tolist()


def _head(v: Any, n: int = 4) -> str:
    """The first ``n`` entries of a printed vector (:meth:`ExactResult.printed`)."""
    a = list(v)
    return ", ".join(repr(x) for x in a[:n]) + (", ..." if len(a) > n else "")


class _Factory:
    """The default of a field whose dataclass default is a factory (a new list or dict
    per result), shown as the generated ``__init__`` shows it."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY: Any = _Factory()


@dataclass(frozen=True, repr=False, init=False, eq=False)
class ExactResult(Presentable):
    """Exact finite-N results of a model (float64, each printed with its error estimate).

    Every number of the law (``mean``, ``n_bias``, ``n_cov``, ``n_mse``, the pmfs,
    ``mean_jobs``, ``up_rate``, ``blocking``) is printed down to the decimal place its
    absolute error in :meth:`errors` allows (:func:`mfstein.ground.display.printed_to_error`):
    the law's error ``||pi - pi_true||_1 <= 2 kappa ||pi Q||_1`` (:attr:`law_error`,
    ``kappa`` the 1-norm of the pinned system's inverse, estimated with
    :func:`scipy.sparse.linalg.onenormest` when the result is first printed, plus the
    truncation's cut mass) times half the range of each number's function of the
    state (:mod:`numeric.exact.law_error`).  Above
    :data:`numeric.exact.law_error.MAX_STATES` states no estimate is made and the
    numbers keep 10 significant digits (the solver's tolerance, not a bound).
    """

    #: The model's name.
    model: str
    #: The population size (number of servers) of the chain solved.
    N: int
    #: The parameter values as given, as strings.
    params: dict[str, str]
    #: The state's dimension (``b`` is its deprecated name, warns; ``"b"`` its
    #: key in :meth:`to_dict`, the documented ``--json`` output).
    n: int
    #: Number of (reachable) states.
    states: int
    #: ``||pi Q||_1`` of the computed ``pi`` (:attr:`law_error` turns it into the
    #: error of every number here).
    residual: float
    #: Stationary probabilities.
    pi: np.ndarray = field(repr=False)
    #: The states ``n`` (rows; ``S = n / N``).
    state_array: np.ndarray = field(repr=False)
    #: The mean-field fixed point the moments are centred on.
    s_star: np.ndarray
    #: ``E[S]``.
    mean: np.ndarray
    #: ``N (E[S] - s*)``.
    n_bias: np.ndarray
    #: ``N E||S - s*||^2``.
    n_mse: float
    #: ``N Cov(S)``.
    n_cov: np.ndarray
    #: Wall time.
    seconds: float
    #: The linear solver that ran (``"direct"``, ``"bicgstab"``, ``"gmres"``;
    #: ``method`` is its deprecated name, warns; ``"method"`` its key in
    #: :meth:`to_dict`).
    solver: str
    #: The linear solver's iterations.
    iterations: int
    #: ``residual`` divided by the largest exit rate.
    relative_residual: float | None = None
    #: The tolerance the relative residual met.
    tolerance: float | None = None
    #: The lattice start (integers).
    start: list[int] | None = None
    #: The conserved values ``c . n``.
    law_values: list[str] = field(default_factory=list)
    #: The mean-field refined bias ``V`` (:func:`numeric.solve`), when the solve computed
    #: it.
    V: np.ndarray | None = None
    #: The mean-field (Ornstein--Uhlenbeck) covariance ``W`` (:func:`numeric.solve`), when
    #: the solve computed it.
    W: np.ndarray | None = None
    #: The mean-field constant ``c = tr(W)`` (:func:`numeric.solve`), when the solve
    #: computed it.
    constant: float | None = None
    #: ``marginal_pmf[k][j] = P(n_k = j)``.
    marginal_pmf: list[np.ndarray] | None = field(default=None, repr=False)
    #: For monotone (queueing) models the queue-length law
    #: ``P(Q = k) = E[S_k] - E[S_{k+1}]``; ``None`` otherwise.
    queue_length_pmf: np.ndarray | None = None
    #: For monotone (queueing) models the mean number of jobs per server,
    #: ``sum_k E[S_k]``; ``None`` otherwise.
    mean_jobs: float | None = None
    #: For monotone (queueing) models the fraction of arrivals blocked; ``None``
    #: otherwise.
    blocking: float | None = None
    #: ``E[sum of the intensities of the transitions with sum(l) > 0]``.
    up_rate: float | None = None
    #: States whose rates needed exact evaluation.
    exact_states: int = 0
    #: Remarks.
    notes: list[str] = field(default_factory=list)
    #: The truncation of an unbounded state space and the stationary mass it cuts
    #: (:class:`numeric.exact.truncation.Cut`: chosen for ``truncation_tol`` or
    #: given), which bounds the law's error in total variation beside the
    #: residual; ``None`` when nothing is cut.
    truncation: Any = None
    #: What only the model's family defines, name -> value.  For the supermarket short
    #: form ``{"lam": lam, "d": d, "replacement": replacement}`` (the arrival rate as the
    #: decimal string given, the number of choices, whether the ``d`` servers are drawn
    #: with replacement); empty for other models.  Read through :attr:`lam`, :attr:`d`
    #: and :attr:`replacement`.
    family_fields: dict[str, Any] = field(default_factory=dict)
    #: The :class:`derive.Model` solved (for :meth:`expect`).
    source_model: Any = field(default=None, repr=False, compare=False)
    #: Name -> :class:`numeric.meanfield.observables.ExactExpectation` of the
    #: observables asked for with the result (``dataclasses.replace(r,
    #: observables={g: r.expect(g)})``, as ``mfstein exact --observable`` does);
    #: ``to_dict()`` adds them under ``"observables"``.  Empty by default.
    observables: dict[str, Any] = field(default_factory=dict)
    #: ``Q^T`` pinned at one state (:class:`numeric.exact.law_error.LawSystem`), the input of
    #: :attr:`condition` and so of :attr:`law_error` and :meth:`errors`; ``None`` when not kept
    #: (above :data:`numeric.exact.law_error.MAX_STATES` states, for one).
    law_system: Any = field(default=None, repr=False, compare=False)
    #: Half the range over the states of ``up_rate``'s function of the state (the intensity of the
    #: transitions with ``sum(l) > 0``; for the supermarket short form the arrival intensity):
    #: :meth:`errors` multiplies it by :attr:`law_error` for ``up_rate`` and ``blocking``; ``None``
    #: when not computed.
    up_rate_half_range: float | None = None
    #: What :meth:`expect` asks of the routes, attached by the entry that built the result
    #: (:data:`numeric.meanfield.result_tasks.EXACT_TASKS`); ``None`` when built by hand.
    #: Not part of the JSON or of ``==``.
    tasks: ResultTasks | None = field(default=None, repr=False, compare=False)
    _errors: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __init__(
        self,
        model: str,
        N: int,
        params: dict[str, str],
        n: int,
        states: int,
        residual: float,
        pi: np.ndarray,
        state_array: np.ndarray,
        s_star: np.ndarray,
        mean: np.ndarray,
        n_bias: np.ndarray,
        n_mse: float,
        n_cov: np.ndarray,
        seconds: float,
        solver: str,
        iterations: int,
        relative_residual: float | None = None,
        tolerance: float | None = None,
        start: list[int] | None = None,
        law_values: list[str] = _FACTORY,
        V: np.ndarray | None = None,
        W: np.ndarray | None = None,
        constant: float | None = None,
        marginal_pmf: list[np.ndarray] | None = None,
        queue_length_pmf: np.ndarray | None = None,
        mean_jobs: float | None = None,
        blocking: float | None = None,
        up_rate: float | None = None,
        exact_states: int = 0,
        notes: list[str] = _FACTORY,
        truncation: Any = None,
        family_fields: dict[str, Any] = _FACTORY,
        source_model: Any = None,
        observables: dict[str, Any] = _FACTORY,
        law_system: Any = None,
        up_rate_half_range: float | None = None,
        tasks: ResultTasks | None = None,
    ) -> None:
        # The dataclass's own __init__, written out (init=False): the generated one, of 37
        # arguments, costs every new process some 0.7-1.7 ms to compile.  The fields' names,
        # order, annotations and defaults are the dataclass's (tests/numeric/exact/
        # test_route_classes.py); a field whose default is a factory gets a new list or dict.
        vars(self).update(
            model=model, N=N, params=params, n=n, states=states, residual=residual, pi=pi,
            state_array=state_array, s_star=s_star, mean=mean, n_bias=n_bias, n_mse=n_mse,
            n_cov=n_cov, seconds=seconds, solver=solver, iterations=iterations,
            relative_residual=relative_residual, tolerance=tolerance, start=start,
            law_values=[] if law_values is _FACTORY else law_values, V=V, W=W,
            constant=constant, marginal_pmf=marginal_pmf, queue_length_pmf=queue_length_pmf,
            mean_jobs=mean_jobs, blocking=blocking, up_rate=up_rate, exact_states=exact_states,
            notes=[] if notes is _FACTORY else notes, truncation=truncation,
            family_fields={} if family_fields is _FACTORY else family_fields,
            source_model=source_model,
            observables={} if observables is _FACTORY else observables,
            law_system=law_system, up_rate_half_range=up_rate_half_range, tasks=tasks,
            _errors={},
        )  # fmt: skip

    def __eq__(self, other: object) -> bool:
        """Field by field (those compared: not :attr:`source_model`, :attr:`law_system`,
        :attr:`tasks`), as the ``==`` the dataclass would generate (``eq=False``: the
        generated ``__eq__`` and ``__hash__``, of 37 fields, cost every new process some
        0.3 ms to compile)."""
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._compared() == other._compared()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        """The hash of the compared fields, as a frozen dataclass's generated one (an
        error: :attr:`params` is a dict)."""
        return hash(self._compared())

    def _compared(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in _COMPARED)

    b = renamed_attribute("ExactResult", "b", "n")
    method = renamed_attribute("ExactResult", "method", "solver")

    lam = FamilyField("The family's arrival rate as given (:attr:`family_fields`).")
    d = FamilyField("The family's number of choices (:attr:`family_fields`).")
    replacement = FamilyField(
        "Whether the family draws its ``d`` servers with replacement (:attr:`family_fields`)."
    )

    def expect(self, g: Any, model: Any = None) -> Any:
        """``E[g(S_N)]``, ``Var g(S_N)`` (:func:`numeric.meanfield.observables.expect_exact`,
        the ``expect`` of :attr:`tasks`)."""
        instead = "numeric.exact.solve(model, params, N=...).expect(g)"
        return task(self, "expect", instead)(self, g, model)

    @property
    def condition(self) -> float | None:
        """``||A^-1||_1`` of the pinned system (estimated), ``None`` when not kept."""
        return None if self.law_system is None else self.law_system.condition()

    @property
    def law_error(self) -> float | None:
        """The estimate of ``||pi - pi_true||_1`` (:func:`numeric.exact.law_error.law_error`)."""
        mass = 0.0 if self.truncation is None else float(self.truncation.mass)
        return claim.law_error(self.residual, self.condition, self.states, mass)

    def errors(self) -> dict[str, float]:
        """The absolute error of every printed number of the law, by field (the largest
        over a field's entries; module :mod:`numeric.exact.law_error`); empty without
        an estimate."""
        if "law" not in self._errors:
            self._errors["law"] = self._field_errors()
        return dict(self._errors["law"])

    def _field_errors(self) -> dict[str, float]:
        L = self.law_error
        if L is None:
            return {}
        X = np.asarray(self.state_array, dtype=float) / self.N
        e_mean = claim.moment_error(X, L)
        top = float(np.max(e_mean)) if e_mean.size else 0.0
        # |Cov_pi - Cov_true| <= L max|S_i - m_i| max|S_j - m_j| + e_i e_j (module law_error)
        spread = np.abs(X - np.asarray(self.mean, dtype=float)).max(axis=0)
        cov_error = L * np.outer(spread, spread) + np.outer(e_mean, e_mean)
        dev = X - np.asarray(self.s_star, dtype=float)
        out = {
            "mean": top,
            "n_bias": self.N * top,
            "n_mse": self.N * float(claim.moment_error(np.einsum("ij,ij->i", dev, dev), L)),
            "n_cov": self.N * float(np.max(cov_error)),
            "marginal_pmf": L / 2.0,
        }
        if self.queue_length_pmf is not None:
            out["queue_length_pmf"] = 2.0 * top
        if self.mean_jobs is not None:
            out["mean_jobs"] = float(claim.moment_error(X.sum(axis=1), L))
        if self.up_rate_half_range is not None:
            out["up_rate"] = self.up_rate_half_range * L
            if self.blocking is not None and self.up_rate and self.blocking < 1.0:
                arrival = self.up_rate / (1.0 - self.blocking)  # blocking = 1 - up / arrival
                out["blocking"] = out["up_rate"] / arrival
        return out

    def printed(self, name: str) -> Any:
        """The field ``name`` as :meth:`to_dict` prints it (floats or nested lists, down
        to the place its error in :meth:`errors` allows)."""
        value = getattr(self, name)
        if value is None:
            return None
        if name == "marginal_pmf":
            return [self.printed_with(m, name) for m in value]
        return self.printed_with(value, name)

    def printed_with(self, value: Any, name: str) -> Any:
        """``value`` printed with the error of the field ``name``."""
        scalar = np.ndim(value) == 0
        return printed_to_error(float(value) if scalar else value, self.errors().get(name))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the keys of ``mfstein exact --json`` (plain floats;
        ``lam`` as the decimal string given).  The supermarket short form adds
        ``lam`` and ``d``.  The law's numbers carry the digits their error in
        ``errors`` (3 digits, rounded up) allows; ``law_error`` and ``condition``
        state the estimate (class docstring)."""
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
                "residual": error_figure(float(self.residual)),
                "relative_residual": error_figure(_floats(self.relative_residual)),
                "condition": error_figure(self.condition),
                "law_error": error_figure(self.law_error),
                "errors": error_figure(self.errors()),
                "tolerance": self.tolerance,
                "start": self.start,
                "law_values": list(self.law_values),
                "s_star": _floats(self.s_star),
                "V": _floats(self.V),
                "constant": _floats(self.constant),
                "n_mse": self.printed("n_mse"),
                "mean": self.printed("mean"),
                "n_bias": self.printed("n_bias"),
                "n_cov": self.printed("n_cov"),
                "marginal_pmf": self.printed("marginal_pmf"),
                "queue_length_pmf": self.printed("queue_length_pmf"),
                "mean_jobs": self.printed("mean_jobs"),
                "blocking": self.printed("blocking"),
                "up_rate": self.printed("up_rate"),
                "seconds": measured(float(self.seconds)),
                "method": self.solver,  # the documented key of --json (the solver)
                "iterations": self.iterations,
                "truncation": None if self.truncation is None else self.truncation.to_dict(),
                "notes": list(self.notes),
            }
        )
        if self.observables:
            out["observables"] = {k: v.to_dict() for k, v in self.observables.items()}
        return out

    def to_text(self, *, short_form: bool = False) -> str:
        """What ``mfstein exact`` prints (:func:`numeric.exact.text.exact_text`): the
        heading, the table of ``s*_k``, ``E[S_k]``, ``N(E[S_k] - s*_k)``, ``V_k``,
        ``N Var(S_k)`` and ``W_kk``, ``N E||S - s*||^2`` beside ``c``, the queueing numbers
        and the :attr:`observables`.  ``short_form=True``: the layout of the family's
        short form (``mfstein exact --N --lam --b``), its heading from
        :attr:`family_fields` (a :class:`ParameterError` when they are empty)."""
        from numeric.exact.text import exact_text

        return exact_text(self, short_form=short_form)

    def _rows(self) -> list[tuple[str, str]]:
        rows = [
            *heading_rows(f"{self.model}, N = {self.N}", self.params),
            ("states", f"{self.states:,} (dimension {self.n})"),
            ("residual", f"{error_figure(float(self.residual))!r} = ||pi Q||_1"),
            ("law error", self._law_text()),
            ("N E||S-s*||^2", repr(self.printed("n_mse"))),
            ("E[S]", _head(self.printed("mean"))),
            ("n_bias, n_cov", f"{shape_text(self.n_bias)}, {shape_text(self.n_cov)}"),
        ]
        if self.truncation is not None:
            rows.append(("truncation", self.truncation.text()))
        if self.blocking is not None:
            rows.append(("blocking", repr(self.printed("blocking"))))
        solver = f"{self.solver}, {self.iterations} iterations, {self.seconds:.3g} s"
        rows.append(("solver", solver))
        if self.notes:
            rows.append(count_row("notes", self.notes))
        return rows

    def _law_text(self) -> str:
        """The ``law error`` row: the estimate and how it was made."""
        L = self.law_error
        if L is None:
            return "not estimated (too many states); numbers keep 10 digits"
        cut = ", + 2 x the truncation's cut" if self.truncation is not None else ""
        return (
            f"||pi - pi_true||_1 <= {error_figure(L)!r} "
            f"(2 x condition {error_figure(self.condition)!r} x residual{cut})"
        )

    _MORE = "all numbers: .pi, .state_array, .mean, .n_cov, .marginal_pmf; .to_dict() for JSON"


#: The fields :meth:`ExactResult.__eq__` compares, in order (``compare=True``).
_COMPARED = tuple(f.name for f in fields(ExactResult) if f.compare)
