"""The model library as results (``mfstein models``): the list of families
(:func:`library`, standard library only: no SymPy, as light as ``--help``) and one
model in detail (:func:`model_entry`, which builds the model)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mfstein.ground.display import Presentable, count_row


def _options_text(entry: dict[str, Any]) -> str:
    """A family's factory options: ``name = default``, or for a required one the value
    its entry was built with."""
    parts = []
    for name, default in entry["options"].items():
        if default is None:
            example = entry["built_with"].get(name)
            parts.append(f"{name} (required; shown for {name} = {example})")
        else:
            parts.append(f"{name} = {default}")
    return ", ".join(parts) or "none"


def entry_text(entry: dict[str, Any], *, detail: bool) -> str:
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


@dataclass(frozen=True, repr=False)
class ModelEntry(Presentable):
    """One model in detail (``mfstein models NAME``): its catalogue entry
    (:func:`derive.models.catalogue.describe`) with its transitions."""

    #: The catalogue entry, with the keys ``name``, ``factory``, ``summary``, ``options``,
    #: ``built_with``, ``states``, ``parameters``, ``observables``, ``citation`` and
    #: ``transitions``.
    entry: dict[str, Any]

    _MORE = "all fields: .entry; .to_text() for the detail; .to_dict() for JSON"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: the entry itself."""
        return dict(self.entry)

    def _title(self) -> str:
        return f"ModelEntry {self.entry['name']}"

    def _rows(self) -> list[tuple[str, str]]:
        e = self.entry
        return [
            ("summary", e["summary"] or "(no docstring)"),
            ("options", _options_text(e)),
            ("parameters", ", ".join(p["name"] for p in e["parameters"]) or "none"),
            ("observables", ", ".join(e["observables"]) or "none"),
            ("paper", e["citation"] or "none given"),
        ]

    def to_text(self) -> str:
        """Every field, one per line (``mfstein models NAME``)."""
        return entry_text(self.entry, detail=True)


@dataclass(frozen=True, repr=False)
class ModelLibrary(Presentable):
    """The built-in model families (``mfstein models``), in the catalogue's order."""

    #: Each family's catalogue entry (:class:`ModelEntry`'s fields, without transitions).
    entries: tuple[dict[str, Any], ...]

    _MORE = "all entries: .entries; .to_text() for the list; .to_dict() for JSON"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ``{"models": [each entry]}``."""
        return {"models": list(self.entries)}

    def _rows(self) -> list[tuple[str, str]]:
        names = [e["name"] for e in self.entries]
        shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
        return [count_row("entries", self.entries), ("families", shown or "none")]

    def to_text(self) -> str:
        """Each family's summary block (options, parameters, observables, paper)."""
        return "\n\n".join(entry_text(e, detail=False) for e in self.entries)


def library() -> ModelLibrary:
    """The built-in families (:data:`derive.models.catalogue_data.CATALOGUE`; no SymPy)."""
    from derive.models.catalogue_data import CATALOGUE

    return ModelLibrary(tuple(CATALOGUE.values()))


def model_entry(name: str) -> ModelEntry:
    """One model in detail, with its transitions (:func:`derive.models.catalogue.describe`;
    ``name`` a built-in family or ``FILE.py:FACTORY``)."""
    from derive.models.catalogue import describe

    return ModelEntry(describe(name.strip(), transitions=True))
