"""The accuracy table of an observable for any model: the rows behind
``mfstein table --model ... --observable G`` (the command itself is a thin
wrapper over :func:`accuracy_table`).

For each N the row holds the mean-field value ``g(s*)``, the refined values
``g0 + g1/N`` and ``g0 + g1/N + g2/N^2`` (:mod:`numeric.expansion.observables`), the exact
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
:data:`numeric.expansion.observables.EXACT_DIGITS` (float64 solve to a relative
residual of at most ``1e-10``; the rounding of ``g`` on the states counted), the
simulation's mean to the decimal place of its CI's second significant digit.
A value that earns no digit is ``None``, and ``expansion_note``/``exact_note``
say how large it may be.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping, Sequence
from typing import Any

import mpmath

from mfstein.errors import NumericalError, ParameterError


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
    mean, ci = float(est.mean), float(est.ci95)
    if not math.isfinite(ci) or ci <= 0:
        return {"mean": repr(mean), "ci95": repr(ci)}
    place = 1 - math.floor(math.log10(ci))  # two significant digits of the CI
    place = max(place, 0)
    return {"mean": f"{mean:.{place}f}", "ci95": f"{ci:.{place}f}"}


def accuracy_table(
    model: Any,
    params: Mapping[str, Any],
    g: Any,
    Ns: Sequence[int],
    *,
    order: int = 2,
    exact: bool = True,
    simulate: bool = False,
    dps: int = 20,
    exact_max_states: int = 2_000_000,
    sim_options: Mapping[str, Any] | None = None,
    start: Sequence[Any] | str | None = None,
) -> dict[str, Any]:
    """Rows ``{"N", "params", "mean_field", "order1", "order2", "exact",
    "exact_note", "simulation": {"mean", "ci95"}, "simulation_note"}`` of the
    accuracy table of ``g``.

    Parameters
    ----------
    model:
        A :class:`derive.model.Model` or :class:`derive.spec.Truncated` family.
    params:
        Parameter values; strings may be expressions in ``N``.
    g:
        The observable (:func:`derive.observables.observable`).
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
    dict
        ``{"model", "observable", "expression", "order", "rows": [...]}``, every
        number a decimal string and ``None`` where a value is absent: an exact
        value or a simulation that cannot be computed at some N (a chain too
        large, an absorbing state, a rate that is no number there) is ``None``
        with its reason in ``exact_note`` / ``simulation_note``, and the other
        columns are kept.
    """
    from numeric import solve
    from numeric.expansion.observables import expand, resolve_model

    if order not in (1, 2):
        raise ParameterError(f"order must be 1 or 2, got {order!r}.")
    Ns = [int(n) for n in Ns]
    if not Ns or any(n < 1 for n in Ns):
        raise ParameterError(f"N must be a list of integers >= 1, got {Ns!r}.")
    depends = any(_uses_N(v) for v in params.values())
    if simulate:  # an observable the simulator cannot estimate: refused before any work
        _check_simulable(model, params, g, Ns[0], dps)
    rows = []
    cached = None
    name = expression = None
    for N in Ns:
        values = {k: parameter_at(k, v, N, dps) for k, v in params.items()}
        if cached is None or depends:
            sol = solve(model, values, dps=dps, order=order, start=start)
            cached = sol
        sol = cached
        finite = resolve_model(model, sol.b)
        e = expand(sol, finite, g, values)
        name, expression = e.observable, e.expression
        row: dict[str, Any] = {
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
        if exact:
            row["exact"], row["exact_note"] = _exact(
                finite, N, values, g, exact_max_states, start
            )
        if simulate:
            row["simulation"], row["simulation_note"] = _simulated(
                finite, values, N, g, {**(sim_options or {}), "start": start}, sol.s_star
            )
        rows.append(row)
    return {
        "model": getattr(model, "name", str(model)),
        "observable": name,
        "expression": expression,
        "order": order,
        "rows": rows,
    }


def _check_simulable(model: Any, params: Mapping[str, Any], g: Any, N: int, dps: int) -> None:
    """Raise the simulator's one sentence now if it cannot estimate ``g`` (a model
    family, whose dimension the solve fixes, is checked at its first row)."""
    from derive.observables import observable
    from sim.observables import prepare

    if not hasattr(model, "states") or observable(model, g).quadratic:
        return
    prepare(model, g, {k: parameter_at(k, v, N, dps) for k, v in params.items()})


def _simulated(
    model: Any,
    values: Mapping[str, Any],
    N: int,
    g: Any,
    sim_options: Mapping[str, Any],
    s_star: Sequence[Any],
) -> tuple[dict[str, str] | None, str | None]:
    """``(simulation, note)`` of a row: :func:`sim.simulate`'s estimate of ``E[g(S_N)]``
    (the quadratic observable ``N E[(S - s*)^T M (S - s*)]`` as the simulator's own
    ``n_mse`` when ``M = I``, else as ``N`` times the estimate of the expression
    :func:`centred_quadratic` at the mean-field point ``s_star``), or why there is
    none (the simulator's one sentence: the table keeps the other columns)."""
    from derive.observables import observable
    from sim import simulate
    from sim.stats import Estimate
    from sim.summary import whole

    obs = observable(model, g)
    try:
        if obs.quadratic and obs.M is None:
            return _sim_text(whole(simulate(model, values, N=N, **sim_options)).n_mse), None
        expr = centred_quadratic(model, obs.M, s_star) if obs.quadratic else g
        r = whole(simulate(model, values, N=N, observables=[expr], **sim_options))
    except (ParameterError, NumericalError) as exc:
        return None, str(exc)
    est = next(iter(r.observables.values()))
    if obs.quadratic:
        est = Estimate(N * est.mean, N * est.ci95)
    return _sim_text(est), None


def centred_quadratic(model: Any, M: Any, s_star: Sequence[Any]) -> Any:
    """``(s - s*)^T M (s - s*)`` as an expression in the model's states (``M`` in
    any form :func:`numeric.quadratic_form.quadratic_form` takes; ``s*`` and the
    entries of ``M`` as exact rationals of their 25-digit decimals)."""
    import sympy as sp

    from numeric.quadratic_form import quadratic_form

    with mpmath.workdps(30):
        Mb = quadratic_form(M)(model.b)

        def exact(x: Any) -> sp.Rational:
            return sp.Rational(mpmath.nstr(mpmath.mpf(x), 25))

        d = [x - exact(c) for x, c in zip(model.states, s_star, strict=True)]
        return sp.Add(
            *(exact(Mb[i, j]) * d[i] * d[j] for i in range(model.b) for j in range(model.b)
              if Mb[i, j] != 0)
        )  # fmt: skip


def _exact(
    model: Any,
    N: int,
    values: Mapping[str, Any],
    g: Any,
    max_states: int,
    start: Sequence[Any] | str | None = None,
) -> tuple[str | None, str | None]:
    """``(value, None)`` or ``(None, reason)``."""
    from numeric.exact import solve as exact_solve
    from numeric.exact.general import Chain

    try:
        ch = Chain.setup(model, N, values, start, None, None)
        bound = ch.lattice.bound(model.b) if hasattr(ch.lattice, "bound") else None
    except ParameterError as exc:
        return None, str(exc)
    if bound is not None and bound > max_states:
        return None, f"the chain has up to {bound:,} states (more than {max_states:,})."
    try:
        x = exact_solve(model, values, N=N, start=start).expect(g, model)
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
