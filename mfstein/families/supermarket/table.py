"""The core paper's Tables 1 and 2: simulation against Theorem 1's bound (and the exact value).

For each ``N`` the heavy-traffic rate ``lam = 1 - gamma / N^alpha``
(:func:`numeric.heavy_traffic_lambda`), the simulated ``N E||S - s*||^2`` with
its 95% confidence interval (:func:`sim.simulate`), the asymptotically tight
bound ``c = tr(P Q)`` of Theorem 1 (:func:`numeric.bound`, with the digits it
certifies) and, where the state space is small enough, the exact stationary
value (:func:`numeric.exact.solve_exact`).

The paper does not say which buffer it simulated; by default the simulation uses
the buffer ``b`` that ``bound(b="auto")`` settles on (beyond it the constant no
longer changes), and the table prints it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from math import comb
from typing import Any, ClassVar

from mfstein.ground.display import Presentable, estimate_figures, estimate_text, renamed_to_text
from mfstein.ground.limits import (
    EXACT_MAX_STATES,  # the exact solver's one limit (6 million states)
)


@dataclass(frozen=True, repr=False)
class Row(Presentable):
    """One column of the paper's table (one system size ``N``)."""

    #: The system size (number of servers).
    N: int
    #: The arrival rate ``lam = 1 - gamma / N^alpha`` (:func:`numeric.heavy_traffic_lambda`), a
    #: decimal string of at most ``dps`` significant digits.
    lam: str
    #: The buffer simulated, the one ``numeric.bound(b="auto")`` settles on, or the ``b`` given.
    b: int
    #: The simulated ``N E||S - s*||^2`` (float64; :class:`sim.stats.Estimate`'s mean).
    sim_mean: float
    #: The 95% confidence half-width of ``sim_mean`` (batch means).
    sim_ci95: float
    #: The simulated fraction of arrivals blocked.
    sim_blocking: float
    #: Theorem 1's constant ``c = tr(P Q)`` (:func:`numeric.bound`), the asymptotically tight bound
    #: on ``N E||S - s*||^2``: a decimal string of its ``bound_digits`` digits.
    bound: str
    #: The significant digits of ``bound`` that :func:`numeric.bound` earns.
    bound_digits: int
    #: The exact finite-N ``N E||S - s*||^2`` (:func:`numeric.exact.solve_exact`) with the digits
    #: its error estimate allows; ``None`` when not requested, above
    #: :data:`mfstein.ground.limits.EXACT_MAX_STATES` states or refused.
    exact: str | None
    #: The exact chain's number of states and residual, or why ``exact`` is ``None``.
    exact_note: str
    #: The simulation's warnings, but for the withheld covariance (the table prints none).
    warnings: list[str]
    #: The next term of the size expansion, ``N E||S - s*||^2 = c + c2/N + O(1/N^2)``
    #: (:func:`numeric.second_order`): a decimal string of its ``c2_digits`` digits.
    c2: str = ""
    #: The significant digits of ``c2`` that :func:`numeric.second_order` earns.
    c2_digits: int = 0
    #: ``c + c2/N`` as a decimal string of the fewer of the two's digits (at least 1); not a bound.
    second_order: str = ""
    #: The 95% confidence half-width of ``sim_blocking``; ``None`` when not given.
    sim_blocking_ci95: float | None = None

    _MORE: ClassVar[str] = "c2, notes and warnings in to_dict()"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON: bound and exact as decimal strings, simulation as floats;
        ``bound_digits``, ``c2_digits``, ``sim_ci95`` and ``sim_blocking_ci95`` state
        their precision (a mean printed down to the place of its CI's second digit,
        :class:`sim.stats.Estimate`); ``exact`` carries the digits its error estimate
        allows (:meth:`numeric.exact.ExactResult.errors`)."""
        mean, ci95 = estimate_figures(self.sim_mean, self.sim_ci95)
        blocking, blocking_ci95 = estimate_figures(self.sim_blocking, self.sim_blocking_ci95)
        return dict(self.__dict__) | {
            "sim_mean": mean,
            "sim_ci95": ci95,
            "sim_blocking": blocking,
            "sim_blocking_ci95": blocking_ci95,
        }

    def _rows(self) -> list[tuple[str, str]]:
        from sim.stats import Estimate

        return [
            ("N", f"{self.N:,}"),
            ("lam", self.lam),
            ("b (simulated)", str(self.b)),
            ("simulation", Estimate(self.sim_mean, self.sim_ci95).text()),
            ("bound", f"{self.bound} ({self.bound_digits} digits)"),
            ("c + c2/N", self.second_order or "-"),
            ("exact", self.exact or f"- ({self.exact_note})"),
        ]


@dataclass(frozen=True, repr=False)
class PaperTable(Presentable):
    """The whole table: the :class:`Row` of each ``N`` and the run's settings (the
    heavy-traffic ``gamma``, ``alpha``, ``d``, the seed, steps and replications)."""

    #: One :class:`Row` per ``N``, in the order given (each ``N`` once).
    rows: list[Row]
    #: The heavy-traffic ``gamma`` of ``lam = 1 - gamma / N^alpha``, as given.
    gamma: Any
    #: The heavy-traffic ``alpha`` of ``lam = 1 - gamma / N^alpha``, as given.
    alpha: Any
    #: The number of servers each arrival samples (the power of ``d`` choices).
    d: int
    #: The simulation's seed, the same at each ``N``.
    seed: int
    #: The simulation's events per replication at each ``N``.
    steps: int
    #: The simulation's replications at each ``N``.
    reps: int

    _MORE: ClassVar[str] = "each N's Row in .rows; render(), to_csv() and plot(path)"

    def to_dict(self) -> dict[str, Any]:
        """``mfstein table --json``'s object: the settings and each row's :meth:`Row.to_dict`."""
        return {**self._meta(), "steps": self.steps, "reps": self.reps,
                "rows": [r.to_dict() for r in self.rows]}  # fmt: skip

    def _meta(self) -> dict[str, Any]:
        return {"gamma": self.gamma, "alpha": self.alpha, "d": self.d, "seed": self.seed}

    def _rows(self) -> list[tuple[str, str]]:
        from sim.stats import Estimate

        return [
            (f"N = {r.N:,}", f"simulation {Estimate(r.sim_mean, r.sim_ci95).text()}; "
                             f"bound {_short(r.bound, 8)} ({r.bound_digits} digits)")
            for r in self.rows
        ]  # fmt: skip

    render = renamed_to_text("render")

    def to_text(self) -> str:
        """The paper's layout (:func:`render`)."""
        return render(self.rows, steps=self.steps, reps=self.reps, **self._meta())

    def to_csv(self) -> str:
        """One line per ``N`` (:func:`to_csv`)."""
        return to_csv(self.rows)

    def plot(self, path: str | os.PathLike) -> None:
        """The figure of the table (:func:`plot`)."""
        plot(self.rows, path, **self._meta())


def _exact(model: Any, params: dict[str, Any], N: int) -> tuple[str | None, str]:
    """The exact column of ``N``: :func:`numeric.exact.solve` of the row's model at its
    parameters (the supermarket's exact fast path, reading the row's prepared problem),
    or why not."""
    b = model.n
    states = comb(N + b, b)
    if states > EXACT_MAX_STATES:
        size = f"{states:.3g}" if states < 10**300 else f"10^{len(str(states)) - 1}"
        return None, f"state space C(N+b, b) = {size} > {EXACT_MAX_STATES:,} states"
    import numeric.exact
    from mfstein.ground.errors import NumericalError, ParameterError

    try:
        r = numeric.exact.solve(model, params, N=N, route="fast")
    except (ParameterError, NumericalError) as exc:
        return None, str(exc)
    return repr(r.printed("n_mse")), f"{states:,} states, residual {float(r.residual):.1e}"


@dataclass(frozen=True)
class Columns:
    """What every column of one ``N`` reads: the row's supermarket model and parameters,
    their one prepared problem and its mean-field solution (order 1 by the family's fast
    path, extended by order 2)."""

    #: The power-of-``d`` supermarket model with the row's buffer.
    model: Any
    #: ``{"lam": lam}``, the row's rate as decimal text.
    params: dict[str, Any]
    #: The :class:`numeric.prepared.problem.PreparedProblem` of (model, params): the one
    #: set-up of the row.
    problem: Any
    #: The :class:`numeric.MeanFieldSolution` with ``c2`` and ``digits2`` filled in.
    solution: Any


def columns(lam: str, b: int | str, d: int, dps: int) -> Columns:
    """The row's model at the buffer ``b`` (``"auto"``: the smallest at which ``c`` stops
    changing, :func:`mfstein.families.supermarket.solver.auto_buffer`, as ``numeric.bound`` finds
    it), prepared once (:func:`numeric.prepared.problem.prepare_problem`) and solved on
    that problem: order 1 by :func:`numeric.solve` (the family's fast path, what
    ``numeric.bound(lam, b, d)`` runs), order 2 by
    :func:`numeric.meanfield.stationary.order2_working` (what
    ``numeric.second_order(model, params)`` runs) attached to it."""
    import numeric
    from mfstein.families.supermarket.short_form import supermarket_model
    from mfstein.families.supermarket.solver import auto_buffer
    from numeric.meanfield.stationary import order2_working
    from numeric.meanfield.truncation import attach_second_order
    from numeric.prepared.problem import prepare_problem

    bb = auto_buffer(lam, d, dps=dps) if b == "auto" else int(b)
    model, params = supermarket_model(bb, d, lam=lam)
    problem = prepare_problem(model, params)
    first = numeric.solve(model, params, dps=dps)  # reads `problem` (the same inputs)
    solution = attach_second_order(first, order2_working(problem, dps=dps))
    return Columns(model, params, problem, solution)


def build(
    gamma: Any,
    alpha: Any,
    Ns: list[int],
    *,
    b: int | str = "auto",
    d: int = 2,
    steps: int,
    reps: int,
    seed: int,
    workers: int | None = None,
    scheduler: str | None = None,
    exact: bool = False,
    progress: bool = False,
    dps: int = 30,
) -> list[Row]:
    """Compute the table's columns, one :class:`Row` per ``N``: each ``N``'s model is
    prepared once (:func:`columns`) and the bound, ``c2``, the simulation (centred at
    the order-1 ``s*``) and the exact chain all read it."""
    import mpmath

    import numeric
    from mfstein.families.supermarket.fast_path import simulate_centred
    from mfstein.families.supermarket.simulate import MAX_B, check_inputs
    from mfstein.ground.errors import ParameterError, check_int
    from numeric.precision import check_dps
    from sim import stats
    from sim.summary import whole

    dps = check_dps(dps)
    Ns = list(dict.fromkeys(check_int("N", n, 1) for n in Ns))  # each N once, as lemmas does
    if not Ns:
        raise ParameterError("N must list at least one integer >= 1.")
    if b != "auto":
        b = check_int("b", b, 1, MAX_B)
    for N in Ns:  # every size is checked before the first computation
        numeric.heavy_traffic_lambda(gamma, alpha, N, dps=dps)
        check_inputs(N, 1 if b == "auto" else b, d, reps, seed, 20, steps, workers)
    rows = []
    for N in Ns:
        lam_mp = numeric.heavy_traffic_lambda(gamma, alpha, N, dps=dps)
        lam = mpmath.nstr(lam_mp, dps, strip_zeros=True)
        row = columns(lam, b, d, dps)
        sol = row.solution
        # the 1/N^2 term of the size expansion: N E||S - s*||^2 = c + c2/N + O(1/N^2)
        digits2 = max(1, min(int(sol.digits), int(sol.digits2)))
        res = whole(
            simulate_centred(
                row.model, row.params, N, sol.s_star, steps=steps, reps=reps, seed=seed,
                workers=workers, scheduler=scheduler, progress=progress,
            )
        )  # fmt: skip
        ex, note = (None, "not requested (--exact)")
        if exact:
            ex, note = _exact(row.model, row.params, N)
        rows.append(
            Row(
                N=N,
                lam=lam,
                b=row.model.n,
                sim_mean=float(res.n_mse.mean),
                sim_ci95=float(res.n_mse.ci95),
                sim_blocking=float(res.blocking.mean),
                sim_blocking_ci95=float(res.blocking.ci95),
                bound=mpmath.nstr(sol.constant, max(int(sol.digits), 1)),
                bound_digits=int(sol.digits),
                exact=ex,
                exact_note=note,
                # the table prints no covariance: its withholding is no news here
                warnings=[w for w in res.warnings if stats.WITHHELD not in w],
                c2=mpmath.nstr(sol.c2, max(int(sol.digits2), 1)),
                c2_digits=int(sol.digits2),
                second_order=mpmath.nstr(sol.constant + sol.c2 / N, digits2),
            )
        )
    return rows


def render(rows: list[Row], *, gamma: Any, alpha: Any, d: int, steps: int, reps: int, seed: int):
    """The paper's layout: one column per ``N``; rows lam, b, simulation, bound, exact."""
    head = (
        f"N E||S - s*||^2, gamma = {gamma}, alpha = {alpha}, d = {d}, seed = {seed}, "
        f"{reps} replications x {steps:.3g} steps, 95% CI"
    )
    cells = {
        "N": [f"{r.N:,}" for r in rows],
        "lambda": [f"{float(r.lam):.4f}" for r in rows],
        "b (simulated)": [str(r.b) for r in rows],
        "Simulation": [estimate_text(r.sim_mean, r.sim_ci95) for r in rows],
        "Asymptotic tight bound": [_short(r.bound, 8) + f" ({r.bound_digits} d)" for r in rows],
        "c + c2/N": [_short(r.second_order, 8) for r in rows],
        "Exact": [f"{float(r.exact):.4f}" if r.exact else "—" for r in rows],
    }
    w0 = max(len(k) for k in cells)
    widths = [max(len(v[i]) for v in cells.values()) for i in range(len(rows))]
    lines = [head]
    for k, vals in cells.items():
        lines.append(
            k.ljust(w0) + "  " + "  ".join(v.rjust(w) for v, w in zip(vals, widths, strict=True))
        )
    notes = [f"N = {r.N:,}: exact — {r.exact_note}" for r in rows if not r.exact]
    notes += [f"N = {r.N:,}: {w}" for r in rows for w in r.warnings]
    notes.append("bound: numeric.bound(b='auto'); '(k d)' = correct significant digits.")
    notes.append(
        "c + c2/N: the next term of the size expansion (numeric.bound(..., order=2)); "
        "not a bound, and in heavy traffic at small N it can overshoot."
    )
    return "\n".join([*lines, "", *notes])


def _short(text: str, sig: int) -> str:
    """Round a decimal string to ``sig`` significant digits for display (trailing zeros
    kept: each is a digit the row claims)."""
    import mpmath

    return mpmath.nstr(mpmath.mpf(text), sig, strip_zeros=False)


def to_csv(rows: list[Row]) -> str:
    """One line per ``N``."""
    import csv
    import io

    buf = io.StringIO()
    fields = [
        "N",
        "lam",
        "b",
        "sim_mean",
        "sim_ci95",
        "sim_blocking",
        "sim_blocking_ci95",
        "bound",
        "bound_digits",
        "exact",
        "exact_note",
        "c2",
        "second_order",
    ]
    w = csv.DictWriter(buf, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if v is None else v) for k, v in r.to_dict().items()})
    return buf.getvalue()


def plot(rows: list[Row], path: str | os.PathLike, *, gamma, alpha, d: int, seed: int) -> None:
    """``N E||S - s*||^2`` against ``N`` (log x): simulation with 95% error bars, the
    bound, and exact values where present.  Written atomically (temp + rename)."""
    from sim.figures import new_figure, save_figure

    Ns = [r.N for r in rows]
    bs = sorted({r.b for r in rows})
    fig, ax = new_figure()
    ax.errorbar(
        Ns,
        [r.sim_mean for r in rows],
        yerr=[r.sim_ci95 for r in rows],
        fmt="o",
        capsize=4,
        label=f"simulation (95% CI), b = {','.join(map(str, bs))}, d = {d}, seed = {seed}",
    )
    ax.plot(Ns, [float(r.bound) for r in rows], "s--", label="asymptotic tight bound (Thm 1)")
    if all(r.second_order for r in rows):
        ax.plot(Ns, [float(r.second_order) for r in rows], "^:", label="c + c2/N (size expansion)")
    ex = [(r.N, float(r.exact)) for r in rows if r.exact]
    if ex:
        ax.plot(
            *zip(*ex, strict=True),
            linestyle="none",
            marker="D",
            markersize=11,
            markerfacecolor="none",
            markeredgecolor="k",
            zorder=5,
            label="exact (finite N)",
        )
    save_figure(
        fig,
        ax,
        path,
        "number of servers N",
        r"$N\,E\|S - s^*\|^2$",
        rf"$\gamma = {gamma}$, $\alpha = {alpha}$, $\lambda = 1 - \gamma/N^\alpha$",
    )
