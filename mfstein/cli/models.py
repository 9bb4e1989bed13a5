"""``mfstein models``: the model library -- each family's options with their defaults,
parameters with their ranges, declared observables and the paper it comes from;
``mfstein models NAME`` one model in detail (its states and transitions too).

The list is read from :mod:`derive.models.catalogue_data` (standard library only:
no SymPy, as light as ``--help``); the detail builds the model.
"""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``mfstein models`` to the dispatcher."""
    p = subparsers.add_parser(
        "models",
        help="the model library: options, parameters, observables, papers (NAME: one model)",
        description=(
            "List the built-in models: each one's factory options (--param NAME=VALUE, with "
            "their defaults), parameters with their allowed ranges, declared observables "
            "(--observable NAME) and the paper it comes from.  With NAME (a built-in model "
            "or FILE.py:FACTORY), that model in detail, with its states and transitions."
        ),
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="one model to show in detail")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``mfstein models``: prints :func:`derive.models.catalogue_view.library`
    or, with NAME, :func:`derive.models.catalogue_view.model_entry` (``to_json()`` with
    ``--json``, else ``to_text()``)."""
    from mfstein.ground.streams import show, write_json

    if args.name is None:
        from derive.models.catalogue_view import library

        models = library()
        if args.json:
            write_json(models)
        else:
            print(models.to_text())
            print("\n(mfstein models NAME for one model in detail; --json for all fields)")
        return 0
    from derive.models.catalogue_view import model_entry

    return show(model_entry(args.name), args.json)
