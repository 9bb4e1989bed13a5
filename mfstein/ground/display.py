"""How results present themselves: a short ``repr``, an HTML table, JSON text.

Every result type of mfstein (:class:`numeric.MeanFieldSolution`,
:class:`numeric.exact.ExactResult`, :class:`sim.SimulationResult`,
:class:`numeric.expansion.transient.TransientResult`, :class:`numeric.CertifiedSolution`,
the claim reports, the tail, Persistent-Idle and table results; the list is
``tests/test_api.py``'s) derives from :class:`Presentable`: it declares only what is its own -- its
``to_dict()`` and its ``_rows()``, a list of ``(label, text)`` pairs of its
headline numbers already formatted with the digits the result claims -- and the
base writes from them the JSON text, the short ``repr`` and the notebook's HTML
table, so that the three agree.  Standard library only.
"""

from __future__ import annotations

import html
import json
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

#: Most lines a result's ``repr`` prints (its headline numbers; the rest is in
#: ``to_dict()``).
MAX_REPR_LINES = 12


def text_block(title: str, rows: Sequence[tuple[str, str]], more: str = "") -> str:
    """``title`` and ``label: text`` rows, at most :data:`MAX_REPR_LINES` lines."""
    body = list(rows)[: MAX_REPR_LINES - 1 - bool(more)]
    width = max((len(label) for label, _ in body), default=0)
    lines = [title] + [f"  {label.ljust(width)}  {text}" for label, text in body]
    if more:
        lines.append(f"  ({more})")
    return "\n".join(lines)


def html_table(title: str, rows: Sequence[tuple[str, str]], more: str = "") -> str:
    """The same rows as a small HTML table (for Jupyter's ``_repr_html_``)."""
    esc = html.escape
    cells = "".join(
        f"<tr><th style=\"text-align:left\">{esc(label)}</th><td>{esc(text)}</td></tr>"
        for label, text in rows
    )
    foot = f"<tr><td colspan=\"2\"><i>{esc(more)}</i></td></tr>" if more else ""
    return (
        f"<table><caption style=\"text-align:left\"><b>{esc(title)}</b></caption>"
        f"<tbody>{cells}{foot}</tbody></table>"
    )


def shape_text(value: Any) -> str:
    """``"3 x 3"`` for a matrix-like value, ``"4"`` for a vector, ``"-"`` for none."""
    if value is None:
        return "-"
    shape = getattr(value, "shape", None)
    if shape is None and hasattr(value, "rows") and hasattr(value, "cols"):
        shape = (value.rows, value.cols)
    if shape is None and hasattr(value, "nrows"):
        shape = (value.nrows(), value.ncols())
    if shape is None:
        shape = (len(value),)
    return " x ".join(str(int(n)) for n in shape)


def dumps(data: Mapping[str, Any], *, indent: int | None = 1) -> str:
    """JSON text of a result's ``to_dict()`` (``indent=None``: one line).

    Always strict JSON: a float that is not finite (NaN, an infinity), which JSON
    cannot represent, is written as ``null`` and named in a note appended to the
    document's ``notes`` (:func:`finite_data`); the encoder then refuses any other
    (``allow_nan=False``), so no ``NaN`` or ``Infinity`` token is ever written.
    """
    return json.dumps(finite_data(data), indent=indent, allow_nan=False)


#: Most places a note on non-finite values names (the rest are counted).
MAX_NOTED_PLACES = 8


def finite_data(data: Any) -> Any:
    """``data`` (nested dicts, lists and tuples) with every float that is not finite
    replaced by ``None``; when there was one and ``data`` is a dict, a copy whose
    ``notes`` list (created if absent) ends with one sentence naming where, e.g.
    ``"not finite, written as null: s_star (1 NaN), constant (NaN)."``."""
    places: dict[str, list[str]] = {}
    clean = _finite(data, "", places)
    if not places or not isinstance(clean, dict):
        return clean
    where = [
        f"{path} ({len(kinds)} {_kinds(kinds)})" if "[]" in path else f"{path} ({kinds[0]})"
        for path, kinds in places.items()
    ]
    more = len(where) - MAX_NOTED_PLACES
    text = ", ".join(where[:MAX_NOTED_PLACES]) + (f" and {more} more" if more > 0 else "")
    note = f"not finite, written as null (JSON has no NaN or Infinity): {text}."
    notes = clean.get("notes", [])
    if isinstance(notes, list):
        clean["notes"] = [*notes, note]
    else:  # a result whose "notes" is not a list keeps it; the note goes beside it
        clean["json_notes"] = [note]
    return clean


def _kinds(kinds: list[str]) -> str:
    """The kinds found at one place, e.g. ``"NaN"`` or ``"-Infinity or NaN"``."""
    found = sorted(set(kinds))
    return found[0] if len(found) == 1 else " or ".join(found)


def _finite(value: Any, path: str, places: dict[str, list[str]]) -> Any:
    """A copy of ``value`` with non-finite floats as ``None``, recording each one's
    ``path`` (dict keys joined by ``.``, ``[]`` for a list) and kind in ``places``."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        kind = "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
        places.setdefault(path, []).append(kind)
        return None
    if isinstance(value, Mapping):
        return {k: _finite(v, f"{path}.{k}" if path else str(k), places) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v, f"{path}[]", places) for v in value]
    return value


def params_text(params: Mapping[str, Any]) -> str:
    """A result's parameters as ``"k = v, ..."`` (``"none"`` for no parameters)."""
    return ", ".join(f"{k} = {v}" for k, v in params.items()) or "none"


def heading_rows(model: str, params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The first rows of a result about one model: ``("model", model)`` and its
    parameters (:func:`params_text`)."""
    return [("model", model), ("params", params_text(params))]


def count_row(name: str, items: Sequence[Any] | Mapping[str, Any]) -> tuple[str, str]:
    """The row ``(name, "<how many> (see .name)")`` for a list a result holds in full."""
    return (name, f"{len(items)} (see .{name})")


class Presentable(ABC):
    """The presentation every result type shares, written once.

    A subclass declares what is its own:

    - ``to_dict()``: the JSON-ready dict (the keys of its ``--json`` command);
    - ``_rows()``: its headline numbers as ``(label, text)`` rows, formatted;
    - ``_MORE``: the footer line saying where the rest is;
    - ``_title()``, optionally: the heading (by default the class name).

    and inherits ``to_json`` (:func:`dumps` of ``to_dict()``), ``repr`` (the
    heading over the rows, :func:`text_block`) and ``_repr_html_``
    (:func:`html_table`).  A ``@dataclass`` subclass is declared with
    ``repr=False``, else the dataclass writes its own ``__repr__`` over this one.
    """

    #: The footer of ``repr`` and of the HTML table.
    _MORE: ClassVar[str] = ""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the result (each result type writes its own)."""

    @abstractmethod
    def _rows(self) -> list[tuple[str, str]]:
        """The headline rows ``(label, text)`` of ``repr`` and the HTML table."""

    def _title(self) -> str:
        """The heading of ``repr`` and the HTML table: the class name."""
        return type(self).__name__

    def to_json(self, *, indent: int | None = 1) -> str:
        """:meth:`to_dict` as JSON text (``indent=None``: one line)."""
        return dumps(self.to_dict(), indent=indent)

    def __repr__(self) -> str:
        return text_block(self._title(), self._rows(), self._MORE)

    def _repr_html_(self) -> str:
        return html_table(self._title(), self._rows(), self._MORE)


def columns(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    """A plain-text table: ``header`` and ``rows`` right-aligned in columns two spaces apart."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)
