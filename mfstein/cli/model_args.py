"""Command-line options that name a model: ``--model`` and repeatable ``--param``.

``--model`` is a built-in family (``supermarket``, ``jsq_L``, ``sir``; see
:mod:`derive.models`) or ``path/to/file.py:factory``; ``--param name=value``
sets a factory option (e.g. ``b=10``) or a model parameter (e.g. ``lam=0.9``),
whichever the name is.  Importing this module loads only the standard library.
"""

from __future__ import annotations

import argparse
from typing import Any

from mfstein.errors import ParameterError


def add_model_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``--model`` and ``--param`` to a subcommand."""
    p.add_argument(
        "--model",
        required=True,
        metavar="NAME|FILE.py:FACTORY",
        help="a built-in model (supermarket, jsq_L, sir) or a factory in a Python file",
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a factory option (e.g. b=10) or a model parameter (e.g. lam=0.9); repeatable",
    )


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

    options, params = split_values(args.model, parse_pairs(args.param))
    check_size_options(options)
    return load_model(args.model, **options), params


#: Factory options that set a model's size (its number of levels or choices), with
#: the largest value accepted: building a model is linear in them and every route
#: after it at least quadratic, so beyond these nothing finishes (``b = 10^6``
#: spends minutes building symbols before any check could count the work).
SIZE_OPTIONS = {"b": "NUMERIC_MAX_B", "d": "MAX_D", "L": "MAX_D"}


def check_size_options(options: dict[str, Any]) -> None:
    """Refuse a size-setting factory option (``b``, ``d``, ``L``) beyond its declared
    limit in :mod:`mfstein.limits` before the model is built (one sentence,
    :class:`ParameterError`).  ``b = inf`` (a truncated family) is left to the model."""
    import mfstein.limits as limits

    for name, limit_name in SIZE_OPTIONS.items():
        value = options.get(name)
        if value is None or value == "inf" or isinstance(value, bool):
            continue
        limit = getattr(limits, limit_name)
        if not isinstance(value, int) or not 1 <= value <= limit:
            raise ParameterError(
                f"--param {name} must be an integer from 1 to {limit:,} (the model's size), "
                f"got {value!r}."
            )
