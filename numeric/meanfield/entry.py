"""``numeric.solve``: the mean-field solution of any model (the paper's short form
``numeric.bound(lam, b, d)`` for the supermarket model is the family's own,
:mod:`mfstein.families.supermarket.short_form`), and ``numeric.certify``, that solution's
certificate (:meth:`MeanFieldSolution.certify`).

``solve(model, params, *, dps, order, M, start, route)`` takes a
:class:`derive.model.Model` (or a :class:`derive.spec.Truncated` family, which
is resolved to the dimension the requested precision needs, or a model name
that :func:`derive.models.load_model` takes) and a mapping of parameter
values.  A model whose family registered a *fast path* (a structure-aware
solver, :data:`mfstein.ground.fast_paths.FAST_PATHS`) is solved by it unless ``route="general"``
or a
``start`` is given; otherwise the general route of :mod:`numeric.meanfield.general`
runs.

The inputs are read once: the parameter point
(:func:`numeric.prepared.parameters.prepare_params`: names, then values and declared
ranges at ``dps + 20`` digits and at 30), then ``order`` and ``observables``, then
the problem of that point and the start
(:func:`numeric.prepared.problem.problem_at`), which every route takes
(:func:`_solve_problem`, shared with :func:`solve_prepared`); ``M`` is checked by the
route.  A warm call with the same inputs reads none of them again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import mpmath

from mfstein.ground.arguments import check_keywords, check_params, check_start, renamed_keywords
from mfstein.ground.errors import ParameterError
from mfstein.ground.progress import stage
from numeric.meanfield.fast_paths import fast_path
from numeric.meanfield.result_tasks import SOLUTION_TASKS
from numeric.meanfield.solution import MeanFieldSolution
from numeric.params import parse_params
from numeric.precision import check_dps, check_precision

if TYPE_CHECKING:
    from numeric.certified.enclosures import CertifiedSolution
    from numeric.prepared.problem import PreparedProblem

#: Values of ``route=`` (``method=`` before issue 31, still taken with a DeprecationWarning).
ROUTES = ("auto", "general", "fast")


@renamed_keywords(method="route")
@check_keywords
def solve(
    model: Any,
    params: Mapping[str, Any] | None = None,
    *,
    dps: int = 30,
    order: int = 1,
    M: Any = None,
    start: Sequence[Any] | str | None = None,
    route: str = "auto",
    precision: str = "dps",
    observables: Sequence[Any] | str = (),
) -> MeanFieldSolution:
    """Fixed point, ``P``, ``W``, ``V`` and the constant ``c`` of any model.

    Parameters
    ----------
    model:
        A :class:`derive.model.Model`, a :class:`derive.spec.Truncated` family
        (resolved to the dimension the requested precision needs), or a name
        :func:`derive.models.load_model` takes (``"sir"``, ``"file.py:factory"``;
        entries of ``params`` that are factory keywords build it).
    params:
        Parameter name -> value (``{}`` for a model without parameters).
    dps:
        Requested significant digits, ``>= 5``.
    order:
        ``1`` (default) or ``2``: also the 1/N^2 coefficients ``A``, ``B`` and
        ``c2`` (:mod:`numeric.meanfield.stationary`).
    M:
        The quadratic observable (default the identity).
    start:
        Initial state in the model's coordinates (starts the fixed-point search
        and fixes the conservation laws); default the model's reference point.
    route:
        ``"auto"`` (fast path when registered and no start is given),
        ``"general"`` or ``"fast"`` (``method=`` is its deprecated alias).
    precision:
        ``"dps"`` (default: ``dps`` digits earned by two working precisions) or
        ``"float64"``: the float64 route of :mod:`numeric.meanfield.float64_route` for any
        model (``dps`` is then ignored and ``digits`` is estimated from the
        conditioning and two independent routes).  The same rule in every task
        (``docs/design.md``, "One rule for choosing float64"); only
        :func:`numeric.transient` defaults to float64 when ``dps`` is not given.
    observables:
        Observables ``g`` (a name the model declares, an expression in its
        state symbols and parameters, ``"quadratic"``; one or a list; see
        :mod:`derive.observables`), parsed before any work: each one's expansion
        ``E[g(S_N)] = g0 + g1/N + g2/N^2 + O(1/N^3)`` and ``lim N Var g(S_N)``
        (:func:`numeric.meanfield.observables.expand`; ``g2`` with ``order=2``) is in
        ``solution.observables`` by name, and in its ``to_dict``.

    Returns
    -------
    MeanFieldSolution
        In the model's own coordinates, carrying the model it belongs to (so
        that its :meth:`~numeric.MeanFieldSolution.certify` needs nothing else); see
        :mod:`numeric.meanfield.general` for how ``digits`` is earned.
    """
    from derive.spec import Truncated

    dps = check_dps(dps)
    check_start(start)
    if route not in ROUTES:
        raise ParameterError(f"route must be one of {', '.join(ROUTES)}, got {route!r}.")
    precision = check_precision(precision)
    if precision == "float64" and route == "fast":
        raise ParameterError(
            "route 'fast' cannot be combined with the float64 route (precision='float64', "
            "--float64), which solves any model without a fast path; use route 'auto' or "
            "'general'."
        )
    name = model if isinstance(model, str) else None
    model, params, save = _model_of(model, params, order == 1 and not observables)
    if model is None:  # K objects each with its own rates: their own numerics
        if M is not None or route != "auto":
            raise ParameterError("M and route are not available for a heterogeneous population.")
        from numeric.heterogeneous.entry import solve_heterogeneous

        return solve_heterogeneous(
            params[0],
            params[1],
            dps=dps,
            order=order,
            start=start,
            precision=precision,
            observables=observables,
        )
    if isinstance(model, Truncated):
        with mpmath.workdps(dps + 20):
            values = parse_params(model, params)
        model = model.resolve(values, dps)
    from numeric.prepared.parameters import prepare_params
    from numeric.prepared.problem import problem_at

    # names, then values and declared ranges at dps + 20 and at 30 digits, read once
    # (kept with the parameter point: a warm call reads nothing), before any work
    point = prepare_params(model, params, at=dps + 20)
    if order not in (1, 2):
        raise ParameterError(f"order must be 1 or 2, got {order!r}.")
    wanted = parse_observables(model, observables)
    fast = None
    if precision != "float64":
        fast = _working_checks(model, dps, order, start, route)  # before the start is read
    problem = problem_at(point, start)  # the start read and checked, once
    sol = _solve_problem(problem, dps, order, M, fast, precision)
    if wanted:
        from numeric.meanfield.observables import expand_prepared

        expanded = {g.name: expand_prepared(sol, problem, g) for g in wanted}
        sol = replace(sol, observables=expanded)
    if save:
        from derive.models.stored import save as save_record

        save_record(name, model)
    return sol


@renamed_keywords(method="route")
@check_keywords
def certify(
    model: Any,
    params: Mapping[str, Any] | None = None,
    *,
    dps: int = 30,
    M: Any = None,
    start: Sequence[Any] | str | None = None,
    route: str = "auto",
    precision: str = "dps",
) -> CertifiedSolution:
    """Rigorous Arb enclosures of the mean-field objects of ``model`` at ``params``.

    ``solve(model, params, dps=, M=, start=, route=).certify()``: the float
    solution first (:func:`numeric.solve`; ``method=`` is ``route``'s deprecated
    alias), then its certificate (:meth:`numeric.MeanFieldSolution.certify`, the one
    certification), so the two entries are one computation.  ``model`` and
    ``params`` as in :func:`numeric.solve`; parameter values are taken exactly
    (decimal strings, fractions, ``mpf``; a ``flint.arb`` ball for every value in
    it).  ``precision`` is ``"dps"``, the only one that certifies digits:
    ``"float64"`` is refused in one sentence.
    """
    from derive.models import as_model

    if check_precision(precision) == "float64":
        raise ParameterError(
            "precision must be 'dps' for certify (Arb proves dps digits around a "
            "working-precision solution), got 'float64'."
        )
    model, params = as_model(model, params)
    return solve(model, params, dps=dps, M=M, start=start, route=route).certify()


def _model_of(model: Any, params: Any, covered: bool) -> tuple[Any, Any, bool]:
    """``(model, params, save)``: a library model named without options read from disk
    when its record is there and the call is ``covered`` (the routes the record serves:
    the working precision and float64 at order 1 without observables;
    :mod:`derive.models.stored`, no SymPy) and this process has not built it (the one
    model of that name, :func:`derive.models.kept_model`, whose problem the first call
    prepared), else built (:func:`derive.models.as_model`),
    ``save`` telling whether to write its record after the solve; ``(None, (model,
    params), False)`` for a heterogeneous population."""
    from derive.models import as_model, kept_model
    from numeric.heterogeneous.entry import is_heterogeneous

    check_params(params)  # as as_model does first: a refusal is the same sentence
    named = isinstance(model, str)  # a model object: nothing read from disk or saved
    covered = covered and named and params is not None
    # the model this process built by that name: its problem is prepared already
    known = kept_model(model) if covered else None
    if covered and known is None:
        from derive.models.stored import stored

        hit = stored(model, params)
        if hit is not None:
            return hit, dict(params), False
    given = set(map(str, params or {})) if named else set()
    names = {getattr(q, "name", q) for q in getattr(known, "params", ())}  # (str: SymPy's printer)
    if known is not None and given <= names:
        built, params = known, dict(params)  # as_model's answer, without its checks
    else:
        built, params = as_model(model, params)
    if is_heterogeneous(built):
        return None, (built, params), False
    save = False
    if covered and known is None:
        from numeric.meanfield.fixed_point import LAMBDA_MAX_B

        # the record keeps the lambdified float64 kernels, which serve up to LAMBDA_MAX_B
        # states
        small = getattr(built, "n", LAMBDA_MAX_B + 1) <= LAMBDA_MAX_B
        save = small and given <= set(map(str, built.params))
    return built, params, save


def parse_observables(model: Any, observables: Sequence[Any] | str) -> list[Any]:
    """The requested observables parsed against ``model`` (one sentence on a bad
    one, before any work), without repeated names; each parsed once per model
    (:func:`numeric.prepared.observables.prepare_observable`)."""
    if isinstance(observables, list | tuple) and not observables:
        return []
    from numeric.prepared.observables import prepare_observable

    if isinstance(observables, str) or (
        isinstance(observables, tuple) and len(observables) == 2 and observables[0] == "quadratic"
    ):
        observables = [observables]
    try:
        items = list(observables or ())
    except TypeError:
        raise ParameterError(
            f"observables must be a list of names or expressions, got {type(observables).__name__}."
        ) from None
    parsed = [prepare_observable(model, g) for g in items]
    names = [g.name for g in parsed]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ParameterError(f"observables must be distinct; {', '.join(repeated)} is repeated.")
    return parsed


def _working_checks(model: Any, dps: int, order: int, start: Any, route: str) -> Any:
    """The refusals of the working-precision routes that come before the start is read
    (the order-2 cost of a model solved whole, a fast route asked of a model without
    one), and the fast path to take (``None``: the general route)."""
    from numeric.meanfield.truncation import MIN_B

    if order == 2 and model.n < MIN_B:
        # solved whole at order 2: its cost is known before the first-order work starts
        from numeric.meanfield.stationary import check_order2_cost

        check_order2_cost(model.name, model.n, dps)
    stage(f"mean field at {dps} digits")
    fast = fast_path(model)
    if route == "fast" and fast is None:
        raise ParameterError(f"model {model.name} has no registered fast path; use route='auto'.")
    return fast if route != "general" and start is None else None


def _solve_problem(
    problem: PreparedProblem, dps: int, order: int, M: Any, fast: Any, precision: str
) -> MeanFieldSolution:
    """The solution of a prepared problem, carrying its inputs: the float64 route, the
    fast path ``fast`` (when not ``None``), the truncated general route or the general
    route (``dps`` digits) -- the one path of :func:`solve` and :func:`solve_prepared`."""
    if precision == "float64":
        from numeric.meanfield.float64_route import float64_of

        return float64_of(problem, M=M, order=order)  # with its inputs
    model, start = problem.model, problem.start
    if fast is not None:
        sol = fast(problem, dps=dps, M=M)  # the family reads the problem prepared here
    else:
        from numeric.meanfield.general import general_of
        from numeric.meanfield.truncation import solve_truncated

        sol = solve_truncated(problem, dps=dps, M=M, order=order)
        if sol is None:
            sol = general_of(problem, dps=dps, M=M)
        elif order == 2:
            order = 1  # the truncated route's order 2 is in it
    if order == 2:
        from numeric.meanfield.truncation import second_order_of

        stage("order 2")
        sol = second_order_of(sol, problem, dps=dps, M=M)
    inputs = dict(problem.params)
    return replace(sol, source_model=model, inputs=inputs, start=start, M=M, tasks=SOLUTION_TASKS)


def solve_prepared(problem: PreparedProblem, *, dps: int = 30) -> MeanFieldSolution:
    """``solve(problem.model, problem.params, dps=dps, start=problem.start)`` (order 1,
    the identity ``M``, route ``"auto"``) of a prepared problem
    (:class:`numeric.prepared.problem.PreparedProblem`), whose names and values were
    checked once when it was prepared: the same solution, without reading them again.
    The finite-N chain's and the simulators' centre
    (:func:`numeric.exact.prepared.mean_field`)."""
    dps = check_dps(dps)
    fast = _working_checks(problem.model, dps, 1, problem.start, "auto")
    return _solve_problem(problem, dps, 1, None, fast, "dps")
