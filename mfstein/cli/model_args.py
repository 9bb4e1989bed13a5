"""Command-line options that name a model: ``--model``, repeatable ``--param``,
``--start`` and repeatable ``--observable``, declared once for every task.

``--model`` is a built-in family (``mfstein models`` lists them; see
:mod:`derive.models`) or ``path/to/file.py:factory``; ``--param name=value``
sets a factory option (e.g. ``b=10``) or a model parameter (e.g. ``lam=0.9``),
whichever the name is; ``--start`` is the initial state; ``--observable G``
names a function of the state whose value each task prints beside its usual
output (:func:`add_task_model_options`, read by :func:`observables_from_args`
and parsed by the one observable parser, :func:`derive.observables.observable`).
Importing this module loads only the standard library.
"""

from __future__ import annotations

import argparse
from typing import Any

from mfstein.cli.option_types import real
from mfstein.cli.short_options import check_states, declares, owner
from mfstein.ground.errors import ParameterError
from mfstein.ground.limits import FLOAT_MIN_RATE, MAX_LAM

#: ``--model``'s help, for every command that takes a model.
MODEL_HELP = "a built-in model ('mfstein models' lists them) or a factory in a Python file"
#: ``--param``'s help.
PARAM_HELP = "a factory option (e.g. b=10) or a model parameter (e.g. lam=0.9); repeatable"


def add_model_options(
    target: argparse.ArgumentParser | argparse._ArgumentGroup,
    *,
    required: bool = False,
    param_help: str = PARAM_HELP,
) -> None:
    """Add ``--model`` and repeatable ``--param`` to a command (or one of its groups):
    the one declaration of these two options."""
    target.add_argument(
        "--model", required=required, metavar="NAME|FILE.py:FACTORY", help=MODEL_HELP
    )
    target.add_argument(
        "--param", action="append", default=[], metavar="NAME=VALUE", help=param_help
    )


def add_model_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``--model`` (required) and ``--param`` to a subcommand."""
    add_model_options(p, required=True)


#: ``--observable``'s help, for every command that takes one.
OBSERVABLE_HELP = (
    "a declared observable (e.g. queue_length, busy, infected), 'quadratic', or an "
    "expression in the state symbols and parameters"
)


def add_observable_option(target: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Add the repeatable ``--observable G``: the one declaration of this option."""
    target.add_argument(
        "--observable",
        action="append",
        default=[],
        metavar="G",
        help=OBSERVABLE_HELP + "; repeatable",
    )


def add_task_model_options(
    target: argparse.ArgumentParser | argparse._ArgumentGroup,
    *,
    required: bool = False,
    start_help: str = "initial state in the model's coordinates, comma-separated",
) -> None:
    """The model options every task takes, declared once: ``--model``, repeatable
    ``--param``, ``--start`` and repeatable ``--observable`` (``solve``,
    ``transient``, ``exact``, ``simulate``)."""
    add_model_options(target, required=required)
    target.add_argument("--start", default=None, metavar="X1,X2,...", help=start_help)
    add_observable_option(target)


def observables_from_args(args: argparse.Namespace) -> list[str]:
    """The ``--observable`` texts given, in order; the same one twice is refused
    (one sentence)."""
    texts = [str(t).strip() for t in (getattr(args, "observable", None) or [])]
    twice = sorted({t for t in texts if texts.count(t) > 1})
    if twice:
        raise ParameterError(f"--observable {twice[0]} is given twice; give each once.")
    return texts


def parse_observables(model: Any, texts: list[str], *, quadratic: bool = True) -> list[Any]:
    """The ``--observable`` texts parsed against ``model`` by the one parser
    (:func:`derive.observables.observable`, once per model and text:
    :func:`numeric.prepared.observables.prepare_observable`, which the task's route then
    reads), before any work; ``quadratic`` false refuses ``quadratic`` (a command that
    cannot evaluate it) in one sentence."""
    from numeric.prepared.observables import prepare_observable

    out = [prepare_observable(model, t) for t in texts]
    if not quadratic and any(g.quadratic for g in out):
        raise ParameterError(
            "--observable quadratic is not available here; give an expression in the state "
            "(e.g. the sum of the squared deviations you want)."
        )
    return out


def parse_pairs(items: list[str]) -> dict[str, str]:
    """``["a=1", "b=2"]`` -> ``{"a": "1", "b": "2"}`` (each name once)."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise ParameterError(f"--param must look like NAME=VALUE, got {item!r}.")
        if name in out:
            raise ParameterError(f"--param {name} is given twice.")
        out[name] = value
    return out


def model_from_args(args: argparse.Namespace) -> tuple[Any, dict[str, str]]:
    """The model named by ``--model`` built with its options, and the parameter values."""
    from derive.models import load_model, split_values

    pairs = parse_pairs(args.param)
    options, params = split_values(args.model, pairs)
    check_size_options({k: pairs[k] for k in options})
    return command_line_model(load_model(args.model, **options)), params


def command_line_model(model: Any) -> Any:
    """``model`` as the commands take it: any model a factory returns, a heterogeneous
    population included (:mod:`mfstein.cli.heterogeneous`)."""
    return model


#: Factory options that set a model's size (its number of levels or choices), with
#: the largest value accepted: building a model is linear in them and every route
#: after it at least quadratic, so beyond these nothing finishes (``b = 10^6``
#: spends minutes building symbols before any check could count the work).
SIZE_OPTIONS = {"b": "NUMERIC_MAX_B", "d": "MAX_D", "L": "MAX_D"}


def check_size_options(options: dict[str, str]) -> None:
    """Refuse a size-setting factory option (``b``, ``d``, ``L``), given as the text
    of ``--param``, that is not an integer within its declared limit in
    :mod:`mfstein.ground.limits`, before the model is built (the one integer parser,
    :func:`mfstein.ground.numbers.parse_integer`: ``b=3.0`` is 3, ``b=3.5`` is refused
    quoting what was written).  ``b = auto`` and ``b = inf`` (a truncated family, where
    the factory has one) are left to the model."""
    import mfstein.ground.limits as limits
    from mfstein.ground.numbers import parse_integer

    for name, limit_name in SIZE_OPTIONS.items():
        text = options.get(name)
        if text is None or str(text).strip().lower() in ("auto", "inf"):
            continue
        parse_integer(f"--param {name}", str(text), 1, getattr(limits, limit_name))


def add_finite_n_model_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``--model`` (optional: without it, the supermarket options of the command),
    ``--param``, ``--start``, ``--observable`` (:func:`add_task_model_options`),
    ``--truncation`` and ``--mu`` to a finite-N command (``exact``, ``simulate``)."""
    g = p.add_argument_group("any model (give --model; --N as above)")
    add_task_model_options(g, start_help="initial state in fractions, comma-separated")
    g.add_argument(
        "--truncation",
        type=real("truncation", 0, low_open=True),
        help="unbounded state spaces: keep n_k <= N * TRUNCATION",
    )
    g.add_argument(
        "--mu",
        type=real("mu", FLOAT_MIN_RATE, MAX_LAM),
        help=f"service rate of the {owner('mu')} model (default 1; with --model {owner('mu')})",
    )


#: The options of :func:`add_finite_n_model_arguments` that only a run with
#: ``--model`` reads (``--mu`` and ``--observable`` select that run by themselves).
MODEL_ONLY_OPTIONS = ("param", "start", "truncation")


def refuse_model_options(args: argparse.Namespace) -> None:
    """Refuse, in one sentence, the options of the ``--model`` run given to the
    supermarket run of ``exact`` or ``simulate`` (which would ignore them)."""
    from mfstein.cli.option_scope import refuse_unused

    refuse_unused(args, MODEL_ONLY_OPTIONS, "with --model")


def finite_n_task(args: argparse.Namespace) -> tuple[Any, dict[str, str], dict[str, Any]]:
    """The model and parameters of a finite-N command run with ``--model`` (``exact``,
    ``simulate``; :func:`model_and_params`) and the keywords its task takes from the
    options :func:`add_finite_n_model_arguments` declares: ``N`` (an integer >= 1),
    ``start`` and ``truncation``."""
    from mfstein.ground.errors import check_int

    model, params = model_and_params(args)
    keywords = dict(N=check_int("N", args.N, 1), start=args.start, truncation=args.truncation)
    return model, params, keywords


def add_choice_options(p: argparse.ArgumentParser) -> None:
    """The supermarket's dispatch choices of a finite-N command (``exact``,
    ``simulate``): ``--d`` (no default, so that ``--d 2 --param d=3`` is seen as
    the conflict it is) and ``--without-replacement``."""
    from mfstein.cli.option_types import integer
    from mfstein.ground.limits import MAX_D

    p.add_argument(
        "--d", type=integer("d", 1, MAX_D), help="servers sampled per arrival (default 2)"
    )
    p.add_argument(
        "--without-replacement",
        action="store_true",
        help="sample d distinct servers (default: with replacement, the paper's chain)",
    )


def _refuse_conflicts(args: argparse.Namespace, pairs: dict[str, str]) -> None:
    """One value per quantity: ``--lam``/``--gamma``, ``--b`` or an explicit ``--d``
    next to ``--param`` of the same name is refused (one sentence), as are
    ``--lam``/``--gamma``/``--alpha``, ``--d`` and ``--without-replacement`` for a
    model other than the supermarket (whose rates and options are ``--param``),
    instead of silently using one of them or ignoring them."""
    from mfstein.cli.option_scope import refuse_unused

    hint = f"model {args.model} takes its options and parameters as --param NAME=VALUE"
    for dest in ("d", "without_replacement", "alpha"):
        if not declares(args.model, dest):
            refuse_unused(args, (dest,), f"by the {owner(dest)} model", hint)
    rate = next((f for f in ("lam", "gamma") if getattr(args, f, None) is not None), None)
    if rate is not None and not declares(args.model, rate):
        raise ParameterError(
            f"--{rate} is the {owner(rate)}'s arrival rate; model {args.model} takes its "
            "parameters as --param NAME=VALUE."
        )
    if rate is not None and "lam" in pairs:
        raise ParameterError(
            f"the arrival rate is given twice (--{rate} and --param lam=...); give one."
        )
    if getattr(args, "b", None) is not None and "b" in pairs:
        raise ParameterError("b is given twice (--b and --param b=...); give one.")
    d = getattr(args, "d", None)
    if d is not None and "d" in pairs:  # --d has no default: given means given
        raise ParameterError("d is given twice (--d and --param d=...); give one.")


def model_and_params(args: argparse.Namespace) -> tuple[Any, dict[str, str]]:
    """The model and parameters named by ``--model``/``--param`` (and ``--b``, and the
    family's own options of :mod:`mfstein.cli.short_options` when given)."""
    pairs = parse_pairs(list(getattr(args, "param", []) or []))
    _refuse_conflicts(args, pairs)
    b = getattr(args, "b", None)
    if b is not None and "b" not in pairs:
        pairs["b"] = str(b)  # refused with one sentence if the model has no option b
    d = getattr(args, "d", None)
    if d is not None and declares(args.model, "d") and "d" not in pairs:
        pairs["d"] = str(d)
    given_rate = getattr(args, "lam", None) is not None or getattr(args, "gamma", None) is not None
    if given_rate and declares(args.model, "lam") and "lam" not in pairs:
        from mfstein.cli.arrival import arrival_rate_text
        from mfstein.ground.errors import check_int

        pairs["lam"] = arrival_rate_text(args, check_int("N", args.N, 1))
    mu = getattr(args, "mu", None)
    if mu is not None:
        if not declares(args.model, "mu"):
            raise ParameterError(
                f"--mu is the {owner('mu')}'s service rate; model {args.model} takes its "
                "rates as --param."
            )
        if "mu" in pairs:
            raise ParameterError("mu is given twice (--mu and --param mu=...).")
        pairs["mu"] = str(mu)
    from derive.models import load_model, split_values

    options, params = split_values(args.model, pairs)
    check_size_options({k: pairs[k] for k in options})
    check_states(args.model, args.N, options)
    if declares(args.model, "mu") and "mu" in pairs:
        options["mu"] = "mu"  # a free parameter, so that its range is checked
        params["mu"] = pairs["mu"]
    if declares(args.model, "without_replacement") and getattr(args, "without_replacement", False):
        options["replacement"] = False
    return command_line_model(load_model(args.model, **options)), params
