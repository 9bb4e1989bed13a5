"""The accuracy table of an observable for any model: the rows behind
``mfstein table --model ... --observable G`` (the command itself is a thin
wrapper over :func:`accuracy_table`).

For each N the row holds the mean-field value ``g(s*)``, the refined values
``g0 + g1/N`` and ``g0 + g1/N + g2/N^2`` (:mod:`numeric.meanfield.observables`), the exact
stationary value of the finite-N chain where its state count allows
(:mod:`numeric.exact`; otherwise ``None`` with the reason), and a simulation
estimate with its 95% confidence interval (:mod:`sim.observables`). A
parameter may be an expression in ``N`` (``lam = "1 - 0.1/N**0.05"``, the
heavy-traffic regime of "Beyond Scaling: Calculable Error Bound of the
Power-of-Two-Choices Mean-Field Model in Heavy-Traffic"), evaluated at each N
to the working precision; the model is then solved at each N.

Numbers are decimal strings: the expansion's with the digits it earns (its
error bounds include the rounding of evaluating ``g`` and its derivatives), the
exact value with the digits it earns, at most
:data:`numeric.meanfield.observables.EXACT_DIGITS` (float64 solve to a relative
residual of at most ``1e-10``; the rounding of ``g`` on the states counted), the
simulation's mean to the decimal place of its CI's second significant digit.
A value that earns no digit is ``None``, and ``expansion_note``/``exact_note``
say how large it may be.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

import mpmath

from mfstein.ground.display import estimate_figures
from mfstein.ground.errors import NumericalError, ParameterError


def parameter_at(name: str, value: Any, N: int, dps: int) -> Any:
    """``value`` with ``N`` substituted: a number (kept as given), or a string
    expression in ``N`` evaluated to ``dps`` digits (a decimal string)."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise ParameterError(f"parameter {name} = {value!r} is not a valid expression.") from None
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    if not names:
        return text
    from derive.observables import FUNCTIONS, check_syntax

    check_syntax(text, f"parameter {name}")
    unknown = sorted(names - {"N"} - set(FUNCTIONS))
    if unknown:
        raise ParameterError(
            f"parameter {name} = {value!r} may only depend on N, not on {', '.join(unknown)}."
        )
    import sympy as sp
    from sympy.parsing.sympy_parser import (
        convert_xor,
        parse_expr,
        rationalize,
        standard_transformations,
    )

    expr = parse_expr(
        text,
        local_dict={"N": sp.Symbol("N")},
        global_dict={
            "__builtins__": {},
            "Integer": sp.Integer,
            "Float": sp.Float,
            "Rational": sp.Rational,
            **FUNCTIONS,
        },
        # decimals as exact rationals ("0.05" = 1/20), not 15-digit floats, so that
        # the value holds to every one of the dps + 5 digits printed
        transformations=(*standard_transformations, convert_xor, rationalize),
    )
    v = sp.N(expr.subs(sp.Symbol("N"), sp.Integer(N)), dps + 10)
    if not v.is_real or not v.is_finite:
        raise ParameterError(
            f"parameter {name} = {value!r} is not a finite real number at N = {N}."
        )
    with mpmath.workdps(dps + 10):  # not the default 15 digits: all dps + 5 printed hold
        return mpmath.nstr(mpmath.mpf(str(v)), dps + 5, strip_zeros=False)


def _uses_N(value: Any) -> bool:
    """Whether a parameter value is a string expression naming ``N``."""
    if not isinstance(value, str):
        return False
    try:
        tree = ast.parse(value.strip(), mode="eval")
    except SyntaxError:
        return False  # parameter_at refuses it in one sentence
    return any(isinstance(n, ast.Name) and n.id == "N" for n in ast.walk(tree))


def _sim_text(est: Any) -> dict[str, str]:
    """A simulated estimate as printed (:func:`mfstein.ground.display.estimate_figures`:
    the CI with two significant digits, the mean down to that place)."""
    mean, ci = estimate_figures(float(est.mean), float(est.ci95))
    return {"mean": repr(mean), "ci95": repr(ci)}


def accuracy_table(
    model: Any,
    params: Mapping[str, Any],
    g: Any,
    Ns: Sequence[int],
    **options: Any,
) -> dict[str, Any]:
    """Rows ``{"N", "params", "mean_field", "order1", "order2", "exact",
    "exact_note", "simulation": {"mean", "ci95"}, "simulation_note"}`` of the
    accuracy table of ``g``: :func:`accuracy_tables` of the one observable
    (``options`` are its keywords)."""
    return accuracy_tables(model, params, [g], Ns, **options)[0]


def accuracy_tables(
    model: Any,
    params: Mapping[str, Any],
    gs: Sequence[Any],
    Ns: Sequence[int],
    *,
    order: int = 2,
    exact: bool = True,
    simulate: bool = False,
    dps: int = 20,
    exact_max_states: int = 2_000_000,
    sim_options: Mapping[str, Any] | None = None,
    start: Sequence[Any] | str | None = None,
) -> list[dict[str, Any]]:
    """The accuracy table of each observable of ``gs``, from one mean-field solve,
    one exact chain and one simulation per N (each observable's row equals the one
    its own table would have: the simulation draws the same events whatever it
    observes).

    Parameters
    ----------
    model:
        A :class:`derive.model.Model` or :class:`derive.spec.Truncated` family.
    params:
        Parameter values; strings may be expressions in ``N``.
    gs:
        The observables (each as :func:`derive.observables.observable` takes it).
    Ns:
        The population sizes.
    order:
        ``1`` or ``2`` (``order2`` is ``None`` with ``order=1``).
    exact:
        Solve the exact chain where it has at most ``exact_max_states`` states
        (else ``exact`` is ``None`` and ``exact_note`` says why).
    simulate:
        Simulate each N (:func:`sim.simulate` with ``sim_options``, e.g.
        ``{"steps": 10**7, "reps": 4, "seed": 0}``).
    dps:
        Digits requested of the expansion.
    start:
        Initial state in fractions (starts the fixed-point search and fixes the
        conservation laws), given to every column: the mean field, the exact
        chain and the simulation.

    Returns
    -------
    list of dict
        Per observable ``{"model", "observable", "expression", "order", "rows":
        [...]}``, every number a decimal string and ``None`` where a value is
        absent: an exact value or a simulation that cannot be computed at some N
        (a chain too large, an absorbing state, a rate that is no number there)
        is ``None`` with its reason in ``exact_note`` / ``simulation_note``, and
        the other columns are kept.
    """
    from numeric import solve
    from numeric.meanfield.observables import expand, resolve_model

    if order not in (1, 2):
        raise ParameterError(f"order must be 1 or 2, got {order!r}.")
    Ns = [int(n) for n in Ns]
    if not Ns or any(n < 1 for n in Ns):
        raise ParameterError(f"N must be a list of integers >= 1, got {Ns!r}.")
    gs = list(gs)
    if not gs:
        raise ParameterError("observable: give at least one.")
    keys = [g.strip() if isinstance(g, str) else repr(g) for g in gs]
    twice = [k for j, k in enumerate(keys) if k in keys[:j]]
    if twice:
        raise ParameterError(f"observable {twice[0]} is given twice; give each once.")
    depends = any(_uses_N(v) for v in params.values())
    if simulate:  # an observable the simulator cannot estimate: refused before any work
        for g in gs:
            _check_simulable(model, params, g, Ns[0], dps)
    tables: list[dict[str, Any]] = [{"rows": []} for _ in gs]
    sol = None
    for N in Ns:
        values = {k: parameter_at(k, v, N, dps) for k, v in params.items()}
        if sol is None or depends:
            sol = solve(model, values, dps=dps, order=order, start=start)
        finite = resolve_model(model, sol.n)
        rows = []
        for g, tab in zip(gs, tables, strict=True):
            e = expand(sol, finite, g, values)
            tab["observable"], tab["expression"] = e.observable, e.expression
            rows.append(
                {
                    "N": N,
                    "params": {k: str(v) for k, v in values.items()},
                    "mean_field": e.text("g0", N, 0),
                    "order1": e.text("g1", N, 1) if e.g1 is not None else None,
                    "order2": e.text("g2", N, 2) if e.g2 is not None else None,
                    "expansion_note": _expansion_note(e, N, dps),
                    "exact": None,
                    "exact_note": None,
                    "simulation": None,
                    "simulation_note": None,
                }
            )
        if exact:
            cells = _exact(finite, N, values, gs, exact_max_states, start)
            for row, (value, note) in zip(rows, cells, strict=True):
                row["exact"], row["exact_note"] = value, note
        if simulate:
            opts = {**(sim_options or {}), "start": start}
            cells = _simulated(finite, values, N, gs, opts, sol.s_star)
            for row, (value, note) in zip(rows, cells, strict=True):
                row["simulation"], row["simulation_note"] = value, note
        for row, tab in zip(rows, tables, strict=True):
            tab["rows"].append(row)
    name = model.name if hasattr(model, "name") else str(model)  # (no printing of a model)
    return [
        {
            "model": name,
            "observable": tab["observable"],
            "expression": tab["expression"],
            "order": order,
            "rows": tab["rows"],
        }
        for tab in tables
    ]


def _check_simulable(model: Any, params: Mapping[str, Any], g: Any, N: int, dps: int) -> None:
    """Raise the simulator's one sentence now if it cannot estimate ``g`` (a model
    family, whose dimension the solve fixes, is checked at its first row)."""
    from numeric.prepared.observables import prepare_observable
    from sim.observables import prepare

    if not hasattr(model, "states") or prepare_observable(model, g).quadratic:
        return
    prepare(model, g, {k: parameter_at(k, v, N, dps) for k, v in params.items()})


def _simulated(
    model: Any,
    values: Mapping[str, Any],
    N: int,
    gs: Sequence[Any],
    sim_options: Mapping[str, Any],
    s_star: Sequence[Any],
) -> list[tuple[dict[str, str] | None, str | None]]:
    """``(simulation, note)`` of each observable's row at ``N``: :func:`sim.simulate`'s
    estimate of ``E[g(S_N)]`` (the quadratic observable ``N E[(S - s*)^T M (S - s*)]``
    as the simulator's own ``n_mse`` when ``M = I``, else as ``N`` times the estimate
    of the expression :func:`centred_quadratic` at the mean-field point ``s_star``),
    or why there is none (the simulator's one sentence: the table keeps the other
    columns).  One run estimates every observable; when it is refused and there are
    several, each is run alone, so that one observable's refusal is its own."""
    from numeric.prepared.observables import prepare_observable
    from sim import simulate
    from sim.stats import Estimate
    from sim.summary import whole

    parsed = [prepare_observable(model, g).observable for g in gs]
    exprs = [
        None
        if o.quadratic and o.M is None
        else (centred_quadratic(model, o.M, s_star) if o.quadratic else g)
        for o, g in zip(parsed, gs, strict=True)
    ]
    watched = [x for x in exprs if x is not None]
    try:
        r = whole(simulate(model, values, N=N, observables=watched, **sim_options))
    except (ParameterError, NumericalError) as exc:
        if len(gs) == 1:
            return [(None, str(exc))]
        return [_simulated(model, values, N, [g], sim_options, s_star)[0] for g in gs]
    estimates = iter(r.observables.values())
    out: list[tuple[dict[str, str] | None, str | None]] = []
    for o, x in zip(parsed, exprs, strict=True):
        if x is None:
            out.append((_sim_text(r.n_mse), None))
            continue
        est = next(estimates)
        if o.quadratic:
            est = Estimate(N * est.mean, N * est.ci95)
        out.append((_sim_text(est), None))
    return out


def centred_quadratic(model: Any, M: Any, s_star: Sequence[Any]) -> Any:
    """``(s - s*)^T M (s - s*)`` as an expression in the model's states (``M`` in
    any form :func:`numeric.quadratic_form.quadratic_form` takes; ``s*`` and the
    entries of ``M`` as exact rationals of their 25-digit decimals)."""
    import sympy as sp

    from numeric.quadratic_form import quadratic_form

    with mpmath.workdps(30):
        Mb = quadratic_form(M)(model.n)

        def exact(x: Any) -> sp.Rational:
            return sp.Rational(mpmath.nstr(mpmath.mpf(x), 25))

        d = [x - exact(c) for x, c in zip(model.states, s_star, strict=True)]
        return sp.Add(
            *(exact(Mb[i, j]) * d[i] * d[j] for i in range(model.n) for j in range(model.n)
              if Mb[i, j] != 0)
        )  # fmt: skip


def _exact(
    model: Any,
    N: int,
    values: Mapping[str, Any],
    gs: Sequence[Any],
    max_states: int,
    start: Sequence[Any] | str | None = None,
) -> list[tuple[str | None, str | None]]:
    """``(value, None)`` or ``(None, reason)`` of each observable of ``gs`` at ``N``
    (one exact chain for all of them).  A chain on an unbounded orthant chooses its
    truncation (:func:`numeric.exact.solve`, whose memory policy then decides); the
    lattice's ``max_states`` bound applies to the others."""
    from numeric.exact import solve as exact_solve
    from numeric.exact.general import Chain

    try:
        lattice = Chain.setup(model, N, values, start, None, None).lattice
        chosen = getattr(lattice, "kind", None) == "orthant" and not lattice.truncated
        bound = None if chosen or not hasattr(lattice, "bound") else lattice.bound(model.n)
        if bound is not None and bound > max_states:
            raise ParameterError(
                f"the chain has up to {bound:,} states (more than {max_states:,})."
            )
        law = exact_solve(model, values, N=N, start=start)
    except (ParameterError, NumericalError) as exc:
        return [(None, str(exc))] * len(gs)
    return [_exact_value(law, model, g) for g in gs]


def _exact_value(law: Any, model: Any, g: Any) -> tuple[str | None, str | None]:
    """``(value, None)`` of ``E[g]`` under the exact ``law``, or ``(None, reason)``."""
    try:
        x = law.expect(g, model)
    except (ParameterError, NumericalError) as exc:
        return None, str(exc)
    text = x.text()
    if text is None:
        return None, (
            f"not one digit of E[g] is earned (|E[g]| <= {abs(x.mean) + x.error:.2g}: "
            "cancellation in g or in the mean)."
        )
    return text, None


def _expansion_note(e: Any, N: int, dps: int) -> str | None:
    """Which expansion values earn no digit at ``dps`` digits and how large they may be."""
    bounds = []
    columns = (("mean field", "g0"), ("+ 1/N", "g1"), ("+ 1/N^2", "g2"))
    for order, (label, term) in enumerate(columns):
        if getattr(e, term) is None or e.value_digits(N, order) >= 1:
            continue
        err = sum(e.error(k) / N**j for j, k in enumerate(("g0", "g1", "g2")[: order + 1]))
        bounds.append(f"{label} |value| <= {mpmath.nstr(abs(e.value(N, order)) + err, 2)}")
    if not bounds:
        return None
    return f"not one digit earned at {dps} digits: {'; '.join(bounds)}."
