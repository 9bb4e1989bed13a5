"""``mfstein models``: the model library -- each family's options with their defaults,
parameters with their ranges, declared observables and the paper it comes from;
``mfstein models NAME`` one model in detail (its states and transitions too).

The list is read from :mod:`derive.models.catalogue_data` (standard library only:
no SymPy, as light as ``--help``); the detail builds the model.
"""

from __future__ import annotations

import argparse
from typing import Any


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
    """Handler of ``mfstein models``."""
    from mfstein.ground.streams import write_json

    if args.name is None:
        from derive.models.catalogue_data import CATALOGUE

        entries = list(CATALOGUE.values())
        if args.json:
            write_json({"models": entries})
        else:
            print("\n\n".join(_entry_text(e, detail=False) for e in entries))
            print("\n(mfstein models NAME for one model in detail; --json for all fields)")
        return 0
    from derive.models.catalogue import describe

    entry = describe(args.name.strip(), transitions=True)
    if args.json:
        write_json(entry)
    else:
        print(_entry_text(entry, detail=True))
    return 0


def _options_text(entry: dict[str, Any]) -> str:
    parts = []
    for name, default in entry["options"].items():
        if default is None:
            example = entry["built_with"].get(name)
            parts.append(f"{name} (required; shown for {name} = {example})")
        else:
            parts.append(f"{name} = {default}")
    return ", ".join(parts) or "none"


def _entry_text(entry: dict[str, Any], *, detail: bool) -> str:
    """One model's block of text: the list's summary, or with ``detail`` every field."""
    params = entry["parameters"]
    summary = entry["summary"] or "(no docstring)"
    lines = [f"{entry['name']}: {summary}" if not detail else entry["name"]]
    if detail:
        lines.append(f"  {summary}")
        lines.append(f"  factory:     {entry['factory']}")
    lines.append(f"  options:     {_options_text(entry)}")
    if detail:
        lines.append("  parameters:" + ("" if params else "  none"))
        lines += [f"    {p['name']}: {p['range']}" + (f" ({p['doc']})" if p["doc"] else "")
                  for p in params]  # fmt: skip
    else:
        shown = ", ".join(f"{p['name']} ({p['range']})" for p in params)
        lines.append(f"  parameters:  {shown or 'none'}")
    observables = entry["observables"]
    if detail:
        lines.append("  observables:" + ("" if observables else " none"))
        lines += [f"    {k} = {v}" for k, v in observables.items()]
    else:
        names = list(observables)
        shown = ", ".join(names[:8]) + (f", ... ({len(names)} in all)" if len(names) > 8 else "")
        lines.append(f"  observables: {shown or 'none'}")
    if detail:
        states = entry["states"]
        lines.append(f"  states:      {', '.join(states) if states else 'unbounded (truncated)'}")
        for t in entry.get("transitions") or []:
            label = f" ({t['label']})" if t["label"] else ""
            lines.append(f"    jump {tuple(t['jump'])}{label} at rate {t['rate']}")
    lines.append(f"  paper:       {entry['citation'] or 'none given'}")
    return "\n".join(lines)
