"""The command line for heterogeneous populations (K objects, issue 33).

``solve``, ``exact``, ``simulate`` and ``transient`` hand a model built by
``--model`` that is a :class:`derive.heterogeneous_population.HeterogeneousModel`
to the functions here (the Python entries do the work: ``numeric.solve``,
``numeric.exact.solve``, ``sim.simulate``, ``numeric.transient``); ``--observable``
names the model's declared observables
(:mod:`numeric.heterogeneous.observables`).  ``table`` is
:func:`sim.heterogeneous_table.heterogeneous_table`.  Importing this module loads
only the standard library.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from mfstein.ground.streams import write_json


def is_heterogeneous(model: Any) -> bool:
    """Whether ``model`` is a heterogeneous population (imports nothing new)."""
    from numeric.heterogeneous.entry import is_heterogeneous as test

    return test(model)


def _object_lines(names: tuple[str, ...], cells: list[str], S: int, label: str) -> list[str]:
    width = max(len(n) for n in names)
    return [f"{label} {n:<{width}}  " + ", ".join(cells[k * S:(k + 1) * S])
            for k, n in enumerate(names)]


def _heading(r: Any, model: Any) -> str:
    params = ", ".join(f"{k} = {v}" for k, v in r.params.items()) or "none"
    return (f"model {r.model}: heterogeneous population of K = {r.K} objects with "
            f"S = {r.S} states ({', '.join(model.state_names)}); {params}")


def _observable_lines(values: dict[str, Any]) -> list[str]:
    return [f"  {v.text()}" for v in values.values()]


def solve(args: argparse.Namespace, model: Any, params: dict[str, str], dps: int,
          observables: list[str]) -> int:
    """``mfstein solve`` of a heterogeneous population."""
    import mpmath

    from mfstein.cli.constant_options import precision_of
    from mfstein.ground.errors import ParameterError
    from numeric.meanfield.entry import solve as solve_entry

    if getattr(args, "certify", False):
        raise ParameterError("--certify is not available for a heterogeneous population.")
    if str(args.M).strip() != "identity":
        raise ParameterError(
            "--M is not available for a heterogeneous population; name its declared "
            "observables with --observable."
        )
    if args.route != "auto":
        raise ParameterError("--route must be auto for a heterogeneous population.")
    sol = solve_entry(model, params, dps=dps, order=int(args.order), start=args.start,
                      precision=precision_of(args),
                      observables=observables)
    if args.json:
        write_json(sol)
        return 0
    with mpmath.workdps(dps + 20):
        s, v = sol.texts("s_star"), sol.texts("V")
    out = [_heading(sol, model),
           f"E[X_(k,s)] = s*_(k,s) + V_(k,s)/K + O(1/K^2) (K plays the role of N); "
           f"{sol.precision}, {sol.digits} digits at most, each entry only its earned ones"]
    out += _object_lines(model.object_names, s, model.S, "s* object")
    out += _object_lines(model.object_names, v, model.S, "V  object")
    if sol.observables:
        out.append("observables (g0 + g1/K):")
        out += _observable_lines(sol.observables)
    print("\n".join(out))
    return 0


def exact(args: argparse.Namespace, model: Any, params: dict[str, str], N: int,
          observables: list[str]) -> int:
    """``mfstein exact`` of a heterogeneous population (``--N`` is K)."""
    from numeric.exact.general import solve as exact_entry
    from numeric.heterogeneous.observables import find, observe

    find(model, observables)
    r = exact_entry(model, params, N=N, start=args.start, truncation=args.truncation)
    r = dataclasses.replace(r, observables=observe(model, params, r, observables))
    values = r.observables
    if args.json:
        write_json(r)
        return 0
    out = [_heading(r, model),
           f"exact product chain of the K = {r.K} objects (--N is K): {r.states:,} states, "
           f"||pi Q||_1 = {r.residual:.1e} (float64)"]
    out += _object_lines(model.object_names, [f"{x:.10g}" for x in r.mean], model.S,
                         "P(in s) object")
    if values:
        out.append("observables:")
        out += _observable_lines(values)
    print("\n".join(out))
    return 0


def simulate(args: argparse.Namespace, model: Any, params: dict[str, str], N: int,
             observables: list[str], keywords: dict[str, Any]) -> int:
    """``mfstein simulate`` of a heterogeneous population (``--N`` is K)."""
    from sim.api import simulate as simulate_entry

    r = simulate_entry(model, params, N=N, start=args.start, steps=args.steps,
                       observables=observables, **keywords)
    values = r.observables
    if args.json:
        write_json(r)
        return 0
    from sim.heterogeneous import plus_minus

    out = [_heading(r, model),
           f"simulation of the K = {r.K} objects (--N is K): seed {r.seed}, {r.reps} x "
           f"{r.steps:,} events, 95% CIs over replications x batches"]
    cells = [plus_minus(m, h) for m, h in zip(r.mean, r.ci95, strict=True)]
    out += _object_lines(model.object_names, cells, model.S, "P(in s) object")
    if values:
        out.append("observables:")
        out += _observable_lines(values)
    print("\n".join(out))
    return 0


def table(args: argparse.Namespace, model: Any, params: dict[str, str], *, steps: int,
          reps: int) -> Any:
    """``mfstein table --model`` of a heterogeneous population: one row per ``--N``
    value, which is K (the model rebuilt with the factory option ``K``)."""
    from derive.models import factory, factory_keywords, load_model, split_values
    from mfstein.cli.model_args import observables_from_args, parse_pairs
    from mfstein.ground.errors import ParameterError
    from numeric.heterogeneous.entry import NO_ORDER_2
    from sim.heterogeneous_table import heterogeneous_table

    if args.order == 2:
        raise ParameterError(NO_ORDER_2)
    if args.start is not None:
        raise ParameterError(
            "--start is not available in the table of a heterogeneous population (its size "
            "changes with K)."
        )
    options, _ = split_values(args.model, parse_pairs(args.param))
    if "K" in options:
        raise ParameterError(
            "K is given by --N in the table of a heterogeneous population; drop --param K=..."
        )
    takes_k = "K" in factory_keywords(factory(args.model))
    texts = [t.strip() for t in observables_from_args(args)]

    def build(K: int) -> Any:
        if takes_k:
            return load_model(args.model, **options, K=K)
        if K != model.K:
            raise ParameterError(
                f"N must be the number of objects K = {model.K} of {model.name} (its factory "
                f"takes no option K), got {K}."
            )
        return model

    return heterogeneous_table(
        build, params, texts[0] if len(texts) == 1 else texts, args.N, exact=args.exact,
        simulate=args.simulate_flag, steps=steps, reps=reps, seed=args.seed,
    )
