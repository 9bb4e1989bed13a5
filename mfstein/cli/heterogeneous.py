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

from mfstein.ground.streams import show


def is_heterogeneous(model: Any) -> bool:
    """Whether ``model`` is a heterogeneous population (imports nothing new)."""
    from numeric.heterogeneous.entry import is_heterogeneous as test

    return test(model)


def solve(args: argparse.Namespace, model: Any, params: dict[str, str], dps: int,
          observables: list[str]) -> int:
    """``mfstein solve`` of a heterogeneous population."""
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
    return show(sol, args.json)


def exact(args: argparse.Namespace, model: Any, params: dict[str, str], N: int,
          observables: list[str]) -> int:
    """``mfstein exact`` of a heterogeneous population (``--N`` is K)."""
    from numeric.exact.general import solve as exact_entry
    from numeric.heterogeneous.observables import find, observe

    find(model, observables)
    r = exact_entry(model, params, N=N, start=args.start, truncation=args.truncation)
    r = dataclasses.replace(r, observables=observe(model, params, r, observables))
    return show(r, args.json)


def simulate(args: argparse.Namespace, model: Any, params: dict[str, str], N: int,
             observables: list[str], keywords: dict[str, Any]) -> int:
    """``mfstein simulate`` of a heterogeneous population (``--N`` is K)."""
    from sim.api import simulate as simulate_entry

    r = simulate_entry(model, params, N=N, start=args.start, steps=args.steps,
                       observables=observables, **keywords)
    return show(r, args.json)


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
