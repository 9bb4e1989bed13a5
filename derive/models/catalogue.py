"""What the model library holds, for ``mfstein models``: one entry per built-in family.

An entry (:func:`describe`) names the family, its factory, the first line of the
factory's docstring, the factory's options with their defaults, the model's
parameters with their allowed ranges, its states, its declared observables
(name -> expression) and the paper it cites -- everything read from the model
the factory builds (with its default options; an option without a default takes
the value in :data:`EXAMPLE_OPTIONS`, and the entry says so).

Listing must not import SymPy (``mfstein models`` is as light as ``--help``), so
the entries are kept, generated, as data in ``catalogue.json`` beside this file
(read by :mod:`derive.models.catalogue_data`);
``tests/derive/test_catalogue.py`` checks that they equal what the factories
build now.  After changing a factory, write them again with::

    python -m derive.models.catalogue
"""

from __future__ import annotations

import inspect
import json
import re
import sys
from pathlib import Path
from typing import Any

#: Values for factory options that have no default, used to build the entry.
EXAMPLE_OPTIONS: dict[str, dict[str, Any]] = {"supermarket": {"b": 3}}


def _default_text(value: Any) -> str | None:
    """A default as the text ``--param`` takes (``None`` for a required option)."""
    if value is inspect.Parameter.empty:
        return None
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def describe(name: str, *, transitions: bool = False) -> dict[str, Any]:
    """The catalogue entry of the built-in family ``name``, or of any model spec
    :func:`derive.models.load_model` takes (``FILE.py:FACTORY``), built with its
    default options; ``transitions`` adds each transition's jump, rate and label
    (``None`` for a family with an unbounded state)."""
    from derive.models import MODELS, factory, load_model

    fn = factory(name)
    options = {
        p.name: _default_text(p.default)
        for p in inspect.signature(fn).parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    example = dict(EXAMPLE_OPTIONS.get(name, {}))
    model = load_model(name, **example)
    info = model.info
    declared = {q.name: q for q in info.parameters}
    params = [str(p) for p in model.params]
    observables = {k: str(v) for k, v in (info.observables or {}).items()}
    citation, states = info.citation, [str(s) for s in getattr(model, "states", ())] or None
    if hasattr(model, "coordinate_names"):  # a heterogeneous population (K objects)
        observables = {g.name: g.doc for g in model.observables}
        citation, states = model.citation, model.coordinate_names()
    return {
        "name": name,
        "factory": MODELS.get(name, name),
        "summary": _plain_text((inspect.getdoc(fn) or "").split("\n\n")[0]),
        "options": options,
        "built_with": {k: str(v) for k, v in example.items()},
        "states": states,
        "parameters": [
            {
                "name": p,
                "range": declared[p].describe() if p in declared else "any real number",
                "doc": declared[p].doc if p in declared else "",
            }
            for p in params
        ],
        "observables": observables,
        "citation": citation,
    } | ({"transitions": _transitions(model)} if transitions else {})


def _plain_text(docstring: str) -> str:
    """The first paragraph of a factory's docstring as one line of plain text.

    The docstrings are reStructuredText for Sphinx; a terminal shows ``x`` as
    it is, so inline literals and roles (``:func:`name` ``) lose their markup.
    """
    text = " ".join(docstring.split())
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", text)
    return re.sub(r"``([^`]+)``", r"\1", text)


def _transitions(model: Any) -> list[dict[str, Any]] | None:
    if not hasattr(model, "transitions"):
        return None
    return [
        {"jump": list(t.jump), "rate": str(t.rate), "label": t.label} for t in model.transitions
    ]


def build() -> dict[str, dict[str, Any]]:
    """Every built-in family's entry, by name (sorted)."""
    from derive.models import available

    return {name: describe(name) for name in available()}


def source(entries: dict[str, dict[str, Any]]) -> str:
    """The text of ``catalogue.json`` holding ``entries`` (one JSON object, by name)."""
    return json.dumps(entries, indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    """Write ``catalogue.json`` (read by :mod:`derive.models.catalogue_data`) from
    the factories."""
    path = Path(__file__).with_name("catalogue.json")
    path.write_text(source(build()))
    print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
